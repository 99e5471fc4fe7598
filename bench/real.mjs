// The real-shaped variant of each case (`chat-real`, `tools-real`,
// `big-real`): the same content as the case, in frames that follow the
// recorded conformance streams of each format (tests/fixtures/conformance/)
// field for field, with the spacing of the provider's own JSON printer.
// bench/README.md says which recording each shape comes from.
import { ALNUM, compact, content, google, pick, prng, python } from "./content.mjs";
import { responsesFrames } from "./responses.mjs";

/** The SSE frames of the real-shaped `kind` in `wire`, and its content. */
export function realFrames(wire, kind) {
  if (wire === "openai") return openai(content(kind, python));
  if (wire === "anthropic") return anthropic(content(kind, python));
  if (wire === "gemini") return gemini(content(kind, compact));
  if (wire !== "responses") throw new Error(`bench/real.mjs: no real-shaped frames for ${wire}`);
  const c = content(kind, compact);
  return { frames: responsesFrames(c, true), c };
}

/**
 * OpenAI Chat Completions as `openai/openai-text.stream` records it:
 * `service_tier`, `system_fingerprint`, `logprobs`, `usage: null` and an
 * `obfuscation` string on every chunk; the usage chunk at the end with
 * its token details. Argument text as the models and the Python servers
 * write it (`", "`, `": "`; `openaicompat/deepseek-tool-call.stream`).
 */
function openai(c) {
  const rand = prng(11);
  const base = {
    id: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
    object: "chat.completion.chunk",
    created: 1770933892,
    model: "gpt-4.1-nano-2025-04-14",
    service_tier: "default",
    system_fingerprint: "fp_de604bd877",
  };
  const obfuscation = () => pick(rand, ALNUM, 1 + Math.floor(rand() * 14));
  const chunk = (delta, finish = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
    obfuscation: obfuscation(),
  });
  const out = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const d of c.deltas) out.push(chunk({ content: d }));
  c.calls.forEach((call, index) => {
    const id = `call_${pick(rand, ALNUM, 24)}`;
    const fn = { name: call.name, arguments: "" };
    out.push(chunk({ tool_calls: [{ index, id, type: "function", function: fn }] }));
    for (const f of c.frags[index])
      out.push(chunk({ tool_calls: [{ index, function: { arguments: f } }] }));
  });
  out.push(chunk({}, c.calls.length ? "tool_calls" : "stop"));
  out.push({
    ...base,
    choices: [],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 2000,
      total_tokens: 2100,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    obfuscation: obfuscation(),
  });
  return {
    frames: out.map((f) => `data: ${JSON.stringify(f)}\n\n`).concat(["data: [DONE]\n\n"]),
    c,
  };
}

/**
 * Anthropic Messages as `anthropic/anthropic-text.stream` and
 * `anthropic-json-tool.2.stream` record them: `message_start` with the
 * model first and usage with `cache_creation`, `service_tier` and
 * `inference_geo`; a `ping` after the first block starts and in each tool
 * block after its first, empty `partial_json`; tool input written with
 * `", "` and `": "`; `message_delta` usage with the input and cache counts.
 */
function anthropic(c) {
  const out = [];
  const ev = (e) => out.push(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  const ping = () => ev({ type: "ping" });
  const usage = { input_tokens: 849, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  ev({
    type: "message_start",
    message: {
      model: "claude-haiku-4-5-20251001",
      id: "msg_01K2JbSUMYhez5RHoK9ZCj9U",
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        ...usage,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 10,
        service_tier: "standard",
        inference_geo: "not_available",
      },
    },
  });
  ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  ping();
  for (const d of c.deltas)
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: d } });
  ev({ type: "content_block_stop", index: 0 });
  c.calls.forEach((call, i) => {
    const index = i + 1;
    const id = `toolu_01${call.id.slice(5)}KFbKqPYSuAKu`;
    const block = { type: "tool_use", id, name: call.name, input: {} };
    ev({ type: "content_block_start", index, content_block: block });
    const json = (partial_json) =>
      ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
    json("");
    ping();
    for (const f of c.frags[i]) json(f);
    ev({ type: "content_block_stop", index });
  });
  ev({
    type: "message_delta",
    delta: { stop_reason: c.calls.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { ...usage, output_tokens: 2000 },
  });
  ev({ type: "message_stop" });
  return { frames: out, c };
}

/**
 * Gemini as every recording in `gemini/` has it (`google-text.stream`,
 * `google-tool-call-gemini3.stream`): `usageMetadata` with
 * `promptTokensDetails` and `thoughtsTokenCount`, `modelVersion` and
 * `responseId` on every frame, the output count growing frame by frame;
 * `role` after `parts`, the candidate's `index`; a `thoughtSignature` on
 * the first call and on the last, empty text part. Written by Google's
 * printer (`"key": value`, members joined by `,`), as the API sends it.
 */
function gemini(c) {
  const rand = prng(13);
  const signature = pick(rand, `${ALNUM}+/`, 1300);
  let tokens = 0;
  const frame = (parts, finish) => {
    tokens += 4;
    const candidate = { content: { parts, role: "model" } };
    if (finish) candidate.finishReason = finish;
    candidate.index = 0;
    return {
      candidates: [candidate],
      usageMetadata: {
        promptTokenCount: 100,
        candidatesTokenCount: tokens,
        totalTokenCount: 100 + tokens + 185,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: 100 }],
        thoughtsTokenCount: 185,
      },
      modelVersion: "gemini-3-pro-preview",
      responseId: "bH6LaZW8Fp_3nsEPqtaSwQ4",
    };
  };
  const out = [];
  for (const d of c.deltas) out.push(frame([{ text: d }]));
  c.calls.forEach((call, i) => {
    const part = { functionCall: { name: call.name, args: JSON.parse(call.args) } };
    if (i === 0) part.thoughtSignature = signature;
    out.push(frame([part]));
  });
  const last = c.calls.length ? { text: "" } : { text: "", thoughtSignature: signature };
  out.push(frame([last], "STOP"));
  return { frames: out.map((f) => `data: ${google(f)}\r\n\r\n`), c };
}
