// The mock provider's wire renderers: a turn as each provider streams it or
// answers it whole, and each provider's error bodies. A turn is
//   { reasoning, text, calls: [{id, name, args}], usage: {input, output, reasoning},
//     encrypted (Responses: send encrypted_content) }
// and `reasoning` (empty: none) goes first, in the form each format has:
// Anthropic a `thinking` block closed by a `signature_delta`, Gemini
// `thought: true` parts and a `thoughtSignature`, Responses a `reasoning`
// item with summary events, an OpenAI-compatible server `reasoning_content`
// deltas (DeepSeek's form), Bedrock a `reasoningContent` block closed by a
// signature delta. Chat Completions itself has none. The shapes follow the
// recordings in tests/fixtures/conformance. Bedrock's wire, binary (AWS's
// event stream), is in mock-wire-bedrock.mjs. A turn with an `image` (a
// drawing; Gemini and Responses only) is written by mock-wire-images.mjs.

import {
  bedrockErrorBody,
  bedrockErrorHeaders,
  bedrockWithInbandError,
  renderBedrock,
} from "./mock-wire-bedrock.mjs";
import { IMAGE_TOOL, renderGeminiImage, responsesImageItem } from "./mock-wire-images.mjs";

/** `s` in pieces of `n` characters (an empty string: one empty piece). */
export const pieces = (s, n = 5) => {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out.length ? out : [""];
};

/** Reasoning streams in larger pieces than text, as real streams do. */
export const REASONING_PIECE = 16;

/** A signature for reasoning text: opaque and deterministic (base64). */
export function signature(kind, text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return Buffer.from(`skyl-mock-${kind}:${h.toString(16)}:${text.length}`).toString("base64");
}

/** The Gemini call signature the mock has always sent on a turn's first call. */
const CALL_SIGNATURE = "bW9jay1zaWduYXR1cmU=";

/** A turn in the wire format: { stream: string (Bedrock: a Buffer), json: object }. */
export function renderTurn(wire, model, turn) {
  if (wire === "bedrock") return renderBedrock(turn);
  if (wire === "openai") return renderChat(model, turn);
  if (wire === "anthropic") return renderAnthropic(model, turn);
  if (wire === "responses") return renderResponses(model, turn);
  if (turn.image) return renderGeminiImage(model, turn);
  return renderGemini(model, turn);
}

/** Chat Completions; reasoning as an OpenAI-compatible server's reasoning_content. */
function renderChat(model, turn) {
  const { usage } = turn;
  const head = (delta, extra = {}) => ({
    id: "chatcmpl-mock",
    object: "chat.completion.chunk",
    model,
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  });
  const frames = [];
  if (turn.reasoning) {
    frames.push(head({ role: "assistant", content: null, reasoning_content: "" }));
    for (const p of pieces(turn.reasoning, REASONING_PIECE))
      frames.push(head({ content: null, reasoning_content: p }));
    for (const p of turn.text ? pieces(turn.text) : [])
      frames.push(head({ content: p, reasoning_content: null }));
  } else {
    frames.push(head({ role: "assistant", content: "" }));
    for (const p of pieces(turn.text)) frames.push(head({ content: p }));
  }
  turn.calls.forEach((c, index) => {
    frames.push(
      head({
        tool_calls: [
          { index, id: c.id, type: "function", function: { name: c.name, arguments: "" } },
        ],
      }),
    );
    for (const p of pieces(JSON.stringify(c.args), 4))
      frames.push(head({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  const last = head({});
  last.choices[0].finish_reason = turn.cutOff
    ? "length"
    : turn.calls.length
      ? "tool_calls"
      : "stop";
  frames.push(last);
  const counts = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  if (turn.reasoning) counts.completion_tokens_details = { reasoning_tokens: usage.reasoning };
  frames.push({
    id: "chatcmpl-mock",
    object: "chat.completion.chunk",
    model,
    choices: [],
    usage: counts,
  });
  const message = { role: "assistant", content: turn.text };
  if (turn.reasoning) message.reasoning_content = turn.reasoning;
  if (turn.calls.length)
    message.tool_calls = turn.calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
  const body = { prompt_tokens: usage.input, completion_tokens: usage.output };
  if (turn.reasoning) body.completion_tokens_details = counts.completion_tokens_details;
  return {
    stream: frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("") + "data: [DONE]\n\n",
    json: {
      id: "chatcmpl-mock",
      object: "chat.completion",
      model,
      choices: [{ index: 0, message, finish_reason: last.choices[0].finish_reason }],
      usage: body,
    },
  };
}

/** Anthropic Messages; reasoning as a thinking block. */
function renderAnthropic(model, turn) {
  const { usage } = turn;
  const ev = (e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  let out = ev({
    type: "message_start",
    message: {
      id: "msg_mock",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      usage: { input_tokens: usage.input, output_tokens: 1 },
    },
  });
  const content = [];
  let index = 0;
  const block = (start, deltas, whole) => {
    out += ev({ type: "content_block_start", index, content_block: start });
    for (const delta of deltas) out += ev({ type: "content_block_delta", index, delta });
    out += ev({ type: "content_block_stop", index });
    content.push(whole);
    index++;
  };
  if (turn.reasoning) {
    const sig = signature("thinking", turn.reasoning);
    block(
      { type: "thinking", thinking: "", signature: "" },
      [
        ...pieces(turn.reasoning, REASONING_PIECE).map((p) => ({
          type: "thinking_delta",
          thinking: p,
        })),
        { type: "signature_delta", signature: sig },
      ],
      { type: "thinking", thinking: turn.reasoning, signature: sig },
    );
  }
  if (turn.text)
    block(
      { type: "text", text: "" },
      pieces(turn.text).map((p) => ({ type: "text_delta", text: p })),
      { type: "text", text: turn.text },
    );
  for (const c of turn.calls)
    block(
      { type: "tool_use", id: c.id, name: c.name, input: {} },
      pieces(JSON.stringify(c.args), 4).map((p) => ({ type: "input_json_delta", partial_json: p })),
      { type: "tool_use", id: c.id, name: c.name, input: c.args },
    );
  const stop = turn.cutOff ? "max_tokens" : turn.calls.length ? "tool_use" : "end_turn";
  out += ev({ type: "ping" });
  out += ev({
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  out += ev({ type: "message_stop" });
  return {
    stream: out,
    json: {
      id: "msg_mock",
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: stop,
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    },
  };
}

/** Gemini; reasoning as thought parts, its signature on the first call or a last empty part. */
function renderGemini(model, turn) {
  const { usage } = turn;
  const frame = (parts, extra = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    modelVersion: model,
    responseId: "resp-mock",
  });
  const thoughts = turn.reasoning ? pieces(turn.reasoning, REASONING_PIECE) : [];
  const frames = thoughts.map((p) => frame([{ text: p, thought: true }]));
  frames.push(...pieces(turn.text).map((p) => frame([{ text: p }])));
  const callParts = turn.calls.map((c, i) => ({
    functionCall: { name: c.name, args: c.args },
    ...(i === 0 ? { thoughtSignature: CALL_SIGNATURE } : {}),
  }));
  if (callParts.length) frames.push(frame(callParts));
  // A text answer after thinking ends with the signature on an empty part.
  const textSignature =
    turn.reasoning && !callParts.length ? signature("thought", turn.reasoning) : null;
  if (textSignature) frames.push(frame([{ text: "", thoughtSignature: textSignature }]));
  const finishReason = turn.cutOff ? "MAX_TOKENS" : "STOP";
  const last = frame([], { finishReason });
  last.usageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output - usage.reasoning,
    totalTokenCount: usage.input + usage.output,
  };
  if (turn.reasoning) last.usageMetadata.thoughtsTokenCount = usage.reasoning;
  frames.push(last);
  const parts = [];
  if (turn.reasoning) parts.push({ text: turn.reasoning, thought: true });
  parts.push(
    textSignature ? { text: turn.text, thoughtSignature: textSignature } : { text: turn.text },
  );
  return {
    stream: frames.map((f) => `data: ${JSON.stringify(f)}\r\n\r\n`).join(""),
    json: {
      candidates: [
        {
          content: { role: "model", parts: [...parts, ...callParts] },
          finishReason,
          index: 0,
        },
      ],
      usageMetadata: last.usageMetadata,
      modelVersion: model,
      responseId: "resp-mock",
    },
  };
}

/** The padding real streams put on deltas (`obfuscation`), deterministic here. */
const obfuscation = (seq, delta) =>
  `${"mOcKpAdDiNgXyZ".slice(0, Math.max(1, 14 - delta.length))}${seq % 10}`;

/**
 * A turn in the Responses wire, shaped like the recorded streams: every
 * event named and numbered (`sequence_number`), the response object in
 * `response.created` / `in_progress` and whole again in `response.completed`,
 * no [DONE]; reasoning as a `reasoning` item with one summary part (and
 * `encrypted_content` when the request includes it). The body form is that
 * final response object.
 */
function renderResponses(model, turn) {
  const { usage } = turn;
  const base = {
    id: "resp_mock",
    object: "response",
    created_at: 1780000000,
    status: "in_progress",
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model,
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: turn.reasoning
      ? { effort: "medium", summary: "auto" }
      : { effort: null, summary: null },
    service_tier: "default",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: turn.image ? [IMAGE_TOOL] : [],
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage: null,
    user: null,
    metadata: {},
  };
  let seq = 0;
  let out = "";
  const ev = (type, fields) => {
    const e = { type, sequence_number: seq++, ...fields };
    out += `event: ${type}\ndata: ${JSON.stringify(e)}\n\n`;
  };
  ev("response.created", { response: base });
  ev("response.in_progress", { response: base });
  const output = [];
  if (turn.reasoning) {
    const output_index = output.length;
    const item_id = "rs_mock";
    const summary_index = 0;
    const summary = { type: "summary_text", text: turn.reasoning };
    const item = (summaries, encrypted) => ({
      id: item_id,
      type: "reasoning",
      ...(turn.encrypted ? { encrypted_content: encrypted } : {}),
      summary: summaries,
    });
    ev("response.output_item.added", {
      output_index,
      item: item([], signature("reasoning-started", turn.reasoning)),
    });
    const at = { item_id, output_index, summary_index };
    ev("response.reasoning_summary_part.added", { ...at, part: { ...summary, text: "" } });
    for (const delta of pieces(turn.reasoning, REASONING_PIECE))
      ev("response.reasoning_summary_text.delta", {
        ...at,
        delta,
        obfuscation: obfuscation(seq, delta),
      });
    ev("response.reasoning_summary_text.done", { ...at, text: turn.reasoning });
    ev("response.reasoning_summary_part.done", { ...at, part: summary });
    const done = item([summary], signature("reasoning", turn.reasoning));
    ev("response.output_item.done", { output_index, item: done });
    output.push(done);
  }
  // A drawing: the image_generation_call item, its partial images first.
  if (turn.image) output.push(responsesImageItem(ev, output.length, turn.image));
  if (turn.text) {
    const output_index = output.length;
    const item_id = "msg_mock";
    const part = (text) => ({ type: "output_text", annotations: [], logprobs: [], text });
    const item = (status, content) => ({
      id: item_id,
      type: "message",
      status,
      content,
      role: "assistant",
    });
    ev("response.output_item.added", { output_index, item: item("in_progress", []) });
    ev("response.content_part.added", { item_id, output_index, content_index: 0, part: part("") });
    for (const delta of pieces(turn.text))
      ev("response.output_text.delta", {
        item_id,
        output_index,
        content_index: 0,
        delta,
        logprobs: [],
        obfuscation: obfuscation(seq, delta),
      });
    ev("response.output_text.done", {
      item_id,
      output_index,
      content_index: 0,
      text: turn.text,
      logprobs: [],
    });
    ev("response.content_part.done", {
      item_id,
      output_index,
      content_index: 0,
      part: part(turn.text),
    });
    const done = item("completed", [part(turn.text)]);
    ev("response.output_item.done", { output_index, item: done });
    output.push(done);
  }
  turn.calls.forEach((c, i) => {
    const output_index = output.length;
    const item_id = `fc_mock_${i + 1}`;
    const args = JSON.stringify(c.args);
    const item = (status, argumentsText) => ({
      id: item_id,
      type: "function_call",
      status,
      arguments: argumentsText,
      call_id: c.id,
      name: c.name,
    });
    ev("response.output_item.added", { output_index, item: item("in_progress", "") });
    for (const delta of pieces(args, 4))
      ev("response.function_call_arguments.delta", {
        item_id,
        output_index,
        delta,
        obfuscation: obfuscation(seq, delta),
      });
    ev("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    const done = item("completed", args);
    ev("response.output_item.done", { output_index, item: done });
    output.push(done);
  });
  const final = {
    ...base,
    status: turn.cutOff ? "incomplete" : "completed",
    ...(turn.cutOff ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
    completed_at: 1780000001,
    output,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning },
      total_tokens: usage.input + usage.output,
    },
  };
  ev(turn.cutOff ? "response.incomplete" : "response.completed", { response: final });
  return { stream: out, json: final };
}

export function inbandError(wire, seq = 2) {
  if (wire === "responses")
    // The nested shape real streams send (the documented one is flat).
    return `event: error\ndata: ${JSON.stringify({
      type: "error",
      sequence_number: seq,
      error: {
        type: "server_error",
        code: "server_error",
        message: "The server had an error while processing your request.",
        param: null,
      },
    })}\n\n`;
  if (wire === "anthropic")
    return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`;
  if (wire === "gemini")
    return `data: ${JSON.stringify({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } })}\r\n\r\n`;
  return `data: ${JSON.stringify({ error: { message: "The server had an error while processing your request.", type: "server_error" } })}\n\n`;
}

/** The headers an HTTP error carries besides its body: Bedrock names its exception in one. */
export const httpErrorHeaders = (wire, status) =>
  wire === "bedrock" ? bedrockErrorHeaders(status) : {};

/** An HTTP error's body; the message is at `.error.message`, Bedrock's at `.message`. */
export function httpErrorBody(wire, status) {
  if (wire === "bedrock") return bedrockErrorBody(status);
  const message =
    status === 429
      ? "Rate limit reached"
      : status === 529
        ? "Overloaded"
        : status === 401
          ? "invalid x-api-key"
          : `mock error ${status}`;
  if (wire === "anthropic") {
    const type =
      {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
      }[status] ?? "api_error";
    return { type: "error", error: { type, message } };
  }
  if (wire === "gemini") {
    const st =
      {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        503: "UNAVAILABLE",
      }[status] ?? "INTERNAL";
    return { error: { code: status, message, status: st } };
  }
  // openai, openaicompat and responses: {"error": {message, type, param, code}}.
  const type =
    { 400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_error" }[
      status
    ] ?? "server_error";
  return { error: { message, type, param: null, code: status === 401 ? "invalid_api_key" : null } };
}

/** Whether one frame of a stream carries answer text (not reasoning). */
function carriesText(wire, frame) {
  const data = frame
    .split(/\r?\n/)
    .find((l) => l.startsWith("data: "))
    ?.slice(6);
  let e;
  try {
    e = JSON.parse(data ?? "null");
  } catch {
    return false;
  }
  if (wire === "openai")
    return typeof e?.choices?.[0]?.delta?.content === "string" && e.choices[0].delta.content !== "";
  if (wire === "anthropic")
    return e?.type === "content_block_delta" && e.delta?.type === "text_delta";
  if (wire === "responses") return e?.type === "response.output_text.delta";
  return (e?.candidates?.[0]?.content?.parts ?? []).some((p) => p.text && !p.thought);
}

/**
 * A stream cut by an in-band error: `start`, before any content (a
 * Responses stream has said response.created and in_progress by then), or
 * `after_text`, after the first frame that carries answer text. `stream`
 * is a string or a Buffer; Bedrock's is binary and stays a Buffer, with an
 * exception message of the type `exception` names.
 */
export function withInbandError(wire, body, when, exception) {
  if (wire === "bedrock") return bedrockWithInbandError(body, when, exception);
  const stream = String(body);
  const sep = wire === "gemini" ? "\r\n\r\n" : "\n\n";
  const frames = stream.split(sep).filter(Boolean);
  const cut =
    when === "start"
      ? wire === "responses"
        ? frames.findIndex((f) => f.startsWith("event: response.output_item.added"))
        : 0
      : frames.findIndex((f) => carriesText(wire, f)) + 1;
  return (
    frames
      .slice(0, cut)
      .map((f) => f + sep)
      .join("") + inbandError(wire, cut)
  );
}
