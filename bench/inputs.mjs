// Realistic generated streams, deterministic (seeded), per wire format
// (OpenAI Chat Completions, Anthropic Messages, Gemini, OpenAI Responses):
//   chat:  ~2,000 text deltas
//   tools: 8 parallel tool calls with ~2 KB arguments each, streamed in
//          1-12 character fragments (Gemini sends each call whole)
//   big:   the tools case ten times over (80 calls)
// Each comes with what a correct client assembles (text, calls), and is
// delivered either in 1-4 KB chunks or one SSE event per chunk.

const WORDS =
  "the of and to in is that for it as with was on be by this are from at or an not which have has but they their can more all one about also into other some time these than would only when may its new first over such after most make like between through".split(
    " ",
  );

function prng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function textDeltas(rand, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const w = WORDS[Math.floor(rand() * WORDS.length)];
    out.push(i === 0 ? w[0].toUpperCase() + w.slice(1) : (rand() < 0.08 ? ". " : " ") + w);
  }
  return out;
}

function toolArgs(rand, i) {
  const rows = [];
  let json;
  do {
    rows.push({
      id: `row-${i}-${rows.length}`,
      label: textDeltas(rand, 6).join("").trim(),
      value: Math.round(rand() * 1e6) / 100,
      tags: ["a", "b", "c"].slice(0, 1 + Math.floor(rand() * 3)),
    });
    json = JSON.stringify({ query: `lookup ${i}`, limit: 10 + i, rows });
  } while (json.length < 2000);
  return json;
}

function fragments(rand, s) {
  const out = [];
  for (let i = 0; i < s.length; ) {
    const n = 1 + Math.floor(rand() * 12);
    out.push(s.slice(i, i + n));
    i += n;
  }
  return out;
}

/** The neutral content of a case: { text, calls: [{id, name, args}] } and how it streams. */
function content(kind) {
  const rand = prng(kind === "chat" ? 1 : kind === "tools" ? 2 : 3);
  if (kind === "chat") return { deltas: textDeltas(rand, 2000), calls: [] };
  const n = kind === "tools" ? 8 : 80;
  const calls = [];
  for (let i = 0; i < n; i++)
    calls.push({
      id: `call_${i.toString(36).padStart(6, "0")}abc`,
      name: ["search_rows", "fetch_page", "summarize"][i % 3],
      args: toolArgs(rand, i),
    });
  return { deltas: textDeltas(rand, 20), calls, frags: calls.map((c) => fragments(rand, c.args)) };
}

/** The SSE frames of a case in a wire format. */
function frames(wire, kind) {
  const c = content(kind);
  const out = [];
  if (wire === "openai") {
    const chunk = (delta, extra = {}) => ({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1767225600,
      model: "gpt-bench",
      system_fingerprint: "fp_bench",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
      usage: null,
      ...extra,
    });
    out.push(chunk({ role: "assistant", content: "", refusal: null }));
    for (const d of c.deltas) out.push(chunk({ content: d }));
    c.calls.forEach((call, index) => {
      out.push(
        chunk({
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        }),
      );
      for (const f of c.frags[index])
        out.push(chunk({ tool_calls: [{ index, function: { arguments: f } }] }));
    });
    const fin = chunk({});
    fin.choices[0].finish_reason = c.calls.length ? "tool_calls" : "stop";
    out.push(fin);
    out.push({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1767225600,
      model: "gpt-bench",
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: 2000, total_tokens: 2100 },
    });
    return {
      frames: out.map((f) => `data: ${JSON.stringify(f)}\n\n`).concat(["data: [DONE]\n\n"]),
      c,
    };
  }
  if (wire === "anthropic") {
    const ev = (e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    out.push(
      ev({
        type: "message_start",
        message: {
          id: "msg_bench",
          type: "message",
          role: "assistant",
          model: "claude-bench",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 1,
          },
        },
      }),
    );
    out.push(
      ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    );
    for (const d of c.deltas)
      out.push(
        ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: d } }),
      );
    out.push(ev({ type: "content_block_stop", index: 0 }));
    c.calls.forEach((call, i) => {
      const index = i + 1;
      out.push(
        ev({
          type: "content_block_start",
          index,
          content_block: {
            type: "tool_use",
            id: call.id.replace("call_", "toolu_"),
            name: call.name,
            input: {},
          },
        }),
      );
      for (const f of c.frags[i])
        out.push(
          ev({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: f },
          }),
        );
      out.push(ev({ type: "content_block_stop", index }));
    });
    out.push(
      ev({
        type: "message_delta",
        delta: { stop_reason: c.calls.length ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 2000 },
      }),
    );
    out.push(ev({ type: "message_stop" }));
    return { frames: out, c };
  }
  if (wire === "responses") return { frames: responsesFrames(c), c };
  // gemini
  const frame = (parts, extra = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    usageMetadata: { promptTokenCount: 100, totalTokenCount: 100 },
    modelVersion: "gemini-bench",
    responseId: "resp-bench",
  });
  for (const d of c.deltas) out.push(frame([{ text: d }]));
  for (const call of c.calls)
    out.push(frame([{ functionCall: { name: call.name, args: JSON.parse(call.args) } }]));
  const last = frame([{ text: "" }], { finishReason: "STOP" });
  last.usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 2000, totalTokenCount: 2100 };
  out.push(last);
  return { frames: out.map((f) => `data: ${JSON.stringify(f)}\r\n\r\n`), c };
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const pick = (rand, alphabet, n) => {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
  return s;
};

/**
 * The OpenAI Responses API's events, shaped like the recorded streams in
 * tests/fixtures/conformance/responses/ (OpenAI's field order and every
 * field a real frame carries; see bench/README.md): the whole response in
 * response.created and response.in_progress, a message item (added,
 * content_part.added, output_text deltas, output_text.done,
 * content_part.done, done), then each function call as its own output item
 * one after another, as OpenAI streams parallel calls (added, argument
 * deltas, function_call_arguments.done, done), each keyed by its
 * output_index, and response.completed repeating the whole response with
 * its output and usage. Deltas carry `obfuscation` padding as on the wire.
 */
function responsesFrames(c) {
  const rand = prng(7);
  const hex = (n) => pick(rand, "0123456789abcdef", n);
  const prefix = hex(16);
  const itemId = (kind) => `${kind}_${prefix}${hex(34)}`;
  // Short deltas are padded to 16 characters, longer ones get 1-15 more.
  const obfuscation = (delta) =>
    pick(rand, ALNUM, delta.length < 16 ? 16 - delta.length : 1 + Math.floor(rand() * 15));
  const created = 1767225600;
  const response = (status, output, usage) => ({
    id: `resp_${prefix}${hex(34)}`,
    object: "response",
    created_at: created,
    status,
    background: false,
    completed_at: status === "completed" ? created + 9 : null,
    error: null,
    frequency_penalty: 0,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: "gpt-bench-2026-01-01",
    output,
    parallel_tool_calls: true,
    presence_penalty: 0,
    previous_response_id: null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: "none", summary: null },
    safety_identifier: null,
    service_tier: status === "completed" ? "default" : "auto",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: ["search_rows", "fetch_page", "summarize"].map((name) => ({
      type: "function",
      description: null,
      name,
      parameters: { type: "object", properties: {} },
      strict: false,
    })),
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  });
  const respId = response("in_progress", [], null).id;
  const whole = (status, output, usage) => ({ ...response(status, output, usage), id: respId });
  const out = [];
  const ev = (type, fields) => {
    out.push({ type, sequence_number: out.length, ...fields });
  };
  ev("response.created", { response: whole("in_progress", [], null) });
  ev("response.in_progress", { response: whole("in_progress", [], null) });
  const output = [];
  // The message.
  const msgId = itemId("msg");
  const text = c.deltas.join("");
  const part = (t) => ({ type: "output_text", annotations: [], logprobs: [], text: t });
  const message = (status, content) => ({
    id: msgId,
    type: "message",
    status,
    content,
    role: "assistant",
  });
  const at = { item_id: msgId, output_index: 0, content_index: 0 };
  ev("response.output_item.added", { output_index: 0, item: message("in_progress", []) });
  ev("response.content_part.added", { ...at, part: part("") });
  for (const delta of c.deltas)
    ev("response.output_text.delta", {
      ...at,
      delta,
      logprobs: [],
      obfuscation: obfuscation(delta),
    });
  ev("response.output_text.done", { ...at, text, logprobs: [] });
  ev("response.content_part.done", { ...at, part: part(text) });
  const done = message("completed", [part(text)]);
  ev("response.output_item.done", { output_index: 0, item: done });
  output.push(done);
  // The calls, one output item each.
  c.calls.forEach((call, i) => {
    const output_index = i + 1;
    const id = itemId("fc");
    const item = (status, args) => ({
      id,
      type: "function_call",
      status,
      arguments: args,
      call_id: `call_${pick(rand, ALNUM, 24)}`,
      name: call.name,
    });
    const added = item("in_progress", "");
    ev("response.output_item.added", { output_index, item: added });
    for (const delta of c.frags[i])
      ev("response.function_call_arguments.delta", {
        item_id: id,
        output_index,
        delta,
        obfuscation: obfuscation(delta),
      });
    ev("response.function_call_arguments.done", {
      item_id: id,
      output_index,
      arguments: call.args,
    });
    const finished = { ...item("completed", call.args), call_id: added.call_id };
    ev("response.output_item.done", { output_index, item: finished });
    output.push(finished);
  });
  const outputTokens = 2000;
  ev("response.completed", {
    response: whole("completed", output, {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 100 + outputTokens,
    }),
  });
  return out.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`);
}

/**
 * A benchmark input: { body: Uint8Array, chunks: Uint8Array[], events,
 * expected: { text, calls: [{name, args}] } }.
 */
export function makeInput(wire, kind, delivery) {
  const { frames: fr, c } = frames(wire, kind);
  const enc = new TextEncoder();
  const body = enc.encode(fr.join(""));
  const chunks = [];
  if (delivery === "event") {
    for (const f of fr) chunks.push(enc.encode(f));
  } else {
    const rand = prng(99);
    for (let i = 0; i < body.length; ) {
      const n = 1024 + Math.floor(rand() * 3072);
      chunks.push(body.subarray(i, i + n));
      i += n;
    }
  }
  return {
    body,
    chunks,
    events: fr.length,
    expected: {
      text: c.deltas.join(""),
      calls: c.calls.map((x) => ({ name: x.name, args: JSON.parse(x.args) })),
    },
  };
}

/** A fetch whose Response streams `chunks` (one per pull). */
export function fakeFetch(chunks, contentType = "text/event-stream") {
  return async () => {
    let i = 0;
    const body = new ReadableStream({
      pull(ctl) {
        if (i < chunks.length) ctl.enqueue(chunks[i++]);
        else ctl.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": contentType } });
  };
}

export const WIRES = ["openai", "anthropic", "gemini", "responses"];
export const KINDS = ["chat", "tools", "big"];
export const DELIVERIES = ["chunks", "event"];
