// A mock LLM provider for tests and demos: Node standard library only,
// listening on 127.0.0.1. It speaks all five wire formats skyl supports:
//
//   POST /v1/chat/completions                      openai, openaicompat
//   POST /v1/messages                              anthropic
//   POST /v1beta/models/{model}:generateContent    gemini
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//   POST /v1/responses                             responses (streamed when
//                                                  the body says stream: true)
//
// What it answers is chosen per request, by query parameters on the base URL
// or `x-mock-*` headers (headers win):
//
//   fixture=<adapter>/<case>   replay a recorded body from
//                              tests/fixtures/conformance (status from the
//                              case's http_status for error cases)
//   chunk=<n>                  write the body in n-byte pieces (default: whole)
//   delay=<ms>                 wait this long before each piece
//   first_byte_delay=<ms>      wait before the response headers
//   fail=<status>[,<status>…]  answer the first requests of this scenario
//                              with these statuses (then succeed); see
//                              `scenario`
//   retry_after=<s>            retry-after header on injected failures
//   retry_after_ms=<ms>        retry-after-ms header on injected failures
//   scenario=<name>            key for counting attempts (default: the URL)
//   disconnect_after=<n>       destroy the socket after n body bytes
//   inband_error=<when>        `start`: an in-band error before any content;
//                              `after_text`: after the first text
//   hang=1                     send headers, then nothing
//   huge_event=<bytes>         one SSE event this big (streamed in 64 KiB pieces)
//   comments_ms=<ms>           keep-alive comments for this long, then end
//                              without a terminal frame
//   tiny_events=<n>            an OpenAI-format stream of n one-character deltas
//   echo_key=1                 injected failures quote the credential they
//                              received (some servers do; skyl must scrub it)
//
// Without `fixture`, it runs a scripted tool loop in the wire format of the
// endpoint: if the request carries no tool result, the model calls the first
// declared tool (or `get_weather`) with arguments streamed in small pieces;
// once the request carries tool results, it answers in text quoting them.
//
// Control endpoints: GET /_requests (everything received, with
// `closedEarly` for connections the client closed before the end), POST
// /_reset. CORS is open so a page on another loopback port can call it.
//
// Run alone: `node tests/js/mock-server.mjs [port]` prints its URL.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CONFORMANCE = path.resolve(here, "../fixtures/conformance");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Reads a conformance case: { body: Buffer, expected, stream }. */
export function readCase(id) {
  const [adapter, name] = id.split("/");
  const dir = path.join(CONFORMANCE, adapter);
  const expected = JSON.parse(fs.readFileSync(path.join(dir, `${name}.expected.json`), "utf8"));
  const sse = path.join(dir, `${name}.sse`);
  const stream = fs.existsSync(sse);
  const body = fs.readFileSync(stream ? sse : path.join(dir, `${name}.json`));
  return { body, expected, stream };
}

/** Every case id, e.g. "anthropic/anthropic-text.stream". */
export function listCases() {
  const out = [];
  for (const adapter of ["openai", "openaicompat", "anthropic", "gemini", "responses"]) {
    for (const f of fs.readdirSync(path.join(CONFORMANCE, adapter)).sort()) {
      if (f.endsWith(".expected.json"))
        out.push(`${adapter}/${f.slice(0, -".expected.json".length)}`);
    }
  }
  return out;
}

function wireOf(url) {
  if (url.pathname.endsWith("/chat/completions")) return "openai";
  if (url.pathname.endsWith("/responses")) return "responses";
  if (url.pathname.endsWith("/messages")) return "anthropic";
  if (url.pathname.includes(":streamGenerateContent") || url.pathname.includes(":generateContent"))
    return "gemini";
  return null;
}

// ---------------------------------------------------------------- tool loop

/** Tool results found in a request body of any format: [{name?, content}]. */
function toolResults(wire, req) {
  const out = [];
  if (wire === "openai") {
    for (const m of req.messages ?? [])
      if (m.role === "tool") out.push({ id: m.tool_call_id, content: String(m.content) });
  } else if (wire === "responses") {
    for (const item of Array.isArray(req.input) ? req.input : [])
      if (item.type === "function_call_output" || item.type === "custom_tool_call_output")
        out.push({
          id: item.call_id,
          content: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
        });
  } else if (wire === "anthropic") {
    for (const m of req.messages ?? [])
      for (const b of Array.isArray(m.content) ? m.content : [])
        if (b.type === "tool_result")
          out.push({
            id: b.tool_use_id,
            content: typeof b.content === "string" ? b.content : JSON.stringify(b.content),
          });
  } else {
    for (const c of req.contents ?? [])
      for (const p of c.parts ?? [])
        if (p.functionResponse)
          out.push({
            id: p.functionResponse.name,
            content: JSON.stringify(p.functionResponse.response),
          });
  }
  return out;
}

/** A tool result as a phrase: JSON objects become "key: value" lists (Gemini's {output} unwrapped). */
function describe(content) {
  let v = content;
  for (let i = 0; i < 3 && typeof v === "string"; i++) {
    try {
      v = JSON.parse(v);
    } catch {
      break;
    }
  }
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (Object.keys(v).length === 1 && ("output" in v || "error" in v))
      return describe(
        typeof v.output === "string" ? v.output : JSON.stringify(v.output ?? v.error),
      );
    return Object.entries(v)
      .map(([k, x]) => `${k} ${typeof x === "object" ? JSON.stringify(x) : x}`)
      .join(", ");
  }
  return String(v);
}

/** The declared tools in any format: [{name, description, schema}]. */
function declaredTools(wire, req) {
  if (wire === "gemini")
    return (req.tools ?? [])
      .flatMap((t) => t.functionDeclarations ?? [])
      .map((d) => ({
        name: d.name,
        description: d.description ?? "",
        schema: d.parametersJsonSchema ?? d.parameters,
      }));
  if (wire === "anthropic")
    return (req.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? "",
      schema: t.input_schema,
    }));
  if (wire === "responses")
    // Flat function tools; hosted tools ({type: "web_search"}, ...) are not the client's.
    return (req.tools ?? [])
      .filter((t) => t.type === "function")
      .map((t) => ({ name: t.name, description: t.description ?? "", schema: t.parameters }));
  return (req.tools ?? []).map((t) => ({
    name: t.function?.name,
    description: t.function?.description ?? "",
    schema: t.function?.parameters,
  }));
}

/** The last user text of a request in any format. */
function lastUserText(wire, req) {
  const texts = [];
  if (wire === "gemini") {
    for (const c of req.contents ?? [])
      if (c.role === "user") for (const p of c.parts ?? []) if (p.text) texts.push(p.text);
  } else if (wire === "responses") {
    for (const item of Array.isArray(req.input) ? req.input : []) {
      if (item.role !== "user") continue;
      if (typeof item.content === "string") texts.push(item.content);
      else for (const c of item.content ?? []) if (c.type === "input_text") texts.push(c.text);
    }
    if (typeof req.input === "string") texts.push(req.input);
  } else {
    for (const m of req.messages ?? []) {
      if (m.role !== "user") continue;
      if (typeof m.content === "string") texts.push(m.content);
      else for (const b of m.content ?? []) if (b.type === "text") texts.push(b.text);
    }
  }
  return texts.at(-1) ?? "";
}

/** The tool the user's words point at (its name or description), else the first. */
function chooseTool(wire, req) {
  const tools = declaredTools(wire, req);
  const words =
    lastUserText(wire, req)
      .toLowerCase()
      .match(/[a-z]{3,}/g) ?? [];
  const score = (t) =>
    words.filter((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)).length;
  return [...tools].sort((a, b) => score(b) - score(a))[0] ?? { name: "get_weather", schema: null };
}

/** Arguments for the scripted call: each property's example or default, else a plausible value. */
function scriptedArgs(tool) {
  const { name, schema } = tool;
  const args = {};
  const props = schema?.properties ?? {};
  for (const [k, v] of Object.entries(props)) {
    if (Array.isArray(v?.examples) && v.examples.length) args[k] = v.examples[0];
    else if (v?.default !== undefined) args[k] = v.default;
    else if (v?.type === "number" || v?.type === "integer") args[k] = 42;
    else if (v?.type === "boolean") args[k] = true;
    else if (Array.isArray(v?.enum)) args[k] = v.enum[0];
    else args[k] = k === "city" || k === "location" ? "Paris" : `${k} value`;
  }
  if (Object.keys(args).length === 0 && name === "get_weather") args.city = "Paris";
  return args;
}

/** The scripted turn: { text, calls: [{id, name, args}] }. */
function scriptedTurn(wire, req) {
  const results = toolResults(wire, req);
  if (results.length > 0) {
    return {
      text: `Here is what I found: ${results.map((r) => describe(r.content)).join("; ")}.`,
      calls: [],
    };
  }
  const declared =
    wire === "gemini"
      ? req.tools?.[0]?.functionDeclarations?.length
      : wire === "responses"
        ? declaredTools(wire, req).length
        : req.tools?.length;
  if (!declared) return { text: "Hello from the mock provider.", calls: [] };
  const tool = chooseTool(wire, req);
  return {
    text: "Let me look that up.",
    calls: [
      {
        id: wire === "gemini" ? null : `call_${tool.name}_1`,
        name: tool.name,
        args: scriptedArgs(tool),
      },
    ],
  };
}

const pieces = (s, n = 5) => {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out.length ? out : [""];
};

/** A scripted turn in the wire format: { stream: string, json: object }. */
function renderTurn(wire, model, turn) {
  const usage = { input: 12, output: 34 };
  if (wire === "openai") {
    const head = (delta, extra = {}) => ({
      id: "chatcmpl-mock",
      object: "chat.completion.chunk",
      model,
      choices: [{ index: 0, delta, finish_reason: null }],
      ...extra,
    });
    const frames = [head({ role: "assistant", content: "" })];
    for (const p of pieces(turn.text)) frames.push(head({ content: p }));
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
    last.choices[0].finish_reason = turn.calls.length ? "tool_calls" : "stop";
    frames.push(last);
    frames.push({
      id: "chatcmpl-mock",
      object: "chat.completion.chunk",
      model,
      choices: [],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    });
    const message = { role: "assistant", content: turn.text };
    if (turn.calls.length)
      message.tool_calls = turn.calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
    return {
      stream: frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("") + "data: [DONE]\n\n",
      json: {
        id: "chatcmpl-mock",
        object: "chat.completion",
        model,
        choices: [{ index: 0, message, finish_reason: last.choices[0].finish_reason }],
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output },
      },
    };
  }
  if (wire === "anthropic") {
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
    if (turn.text) {
      out += ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const p of pieces(turn.text))
        out += ev({ type: "content_block_delta", index, delta: { type: "text_delta", text: p } });
      out += ev({ type: "content_block_stop", index });
      content.push({ type: "text", text: turn.text });
      index++;
    }
    for (const c of turn.calls) {
      out += ev({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: c.id, name: c.name, input: {} },
      });
      for (const p of pieces(JSON.stringify(c.args), 4))
        out += ev({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: p },
        });
      out += ev({ type: "content_block_stop", index });
      content.push({ type: "tool_use", id: c.id, name: c.name, input: c.args });
      index++;
    }
    const stop = turn.calls.length ? "tool_use" : "end_turn";
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
  if (wire === "responses") return renderResponses(model, turn, usage);
  // gemini
  const frame = (parts, extra = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    modelVersion: model,
    responseId: "resp-mock",
  });
  const frames = pieces(turn.text).map((p) => frame([{ text: p }]));
  const callParts = turn.calls.map((c, i) => ({
    functionCall: { name: c.name, args: c.args },
    ...(i === 0 ? { thoughtSignature: "bW9jay1zaWduYXR1cmU=" } : {}),
  }));
  if (callParts.length) frames.push(frame(callParts));
  const last = frame([], { finishReason: "STOP" });
  last.usageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.output,
  };
  frames.push(last);
  return {
    stream: frames.map((f) => `data: ${JSON.stringify(f)}\r\n\r\n`).join(""),
    json: {
      candidates: [
        {
          content: { role: "model", parts: [{ text: turn.text }, ...callParts] },
          finishReason: "STOP",
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
 * A scripted turn in the Responses wire, shaped like the recorded streams:
 * every event named and numbered (`sequence_number`), the response object in
 * `response.created` / `in_progress` and whole again in `response.completed`,
 * no [DONE]. The body form is that final response object.
 */
function renderResponses(model, turn, usage) {
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
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
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
    status: "completed",
    completed_at: 1780000001,
    output,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
  };
  ev("response.completed", { response: final });
  return { stream: out, json: final };
}

function inbandError(wire, seq = 2) {
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

function httpErrorBody(wire, status) {
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

/** Writes `buf`, waiting for the socket to drain; false if the client left. */
async function send(res, buf) {
  if (res.destroyed) return false;
  if (!res.write(buf)) {
    await new Promise((r) => {
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        r();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  }
  return !res.destroyed;
}

/** The resource-bound streams: a huge event, endless comments, many tiny events. */
async function resourceStream(res, { huge, commentsMs, tiny }) {
  if (huge) {
    await send(res, "data: ");
    const piece = Buffer.alloc(64 * 1024, "x");
    for (let sent = 0; sent < huge; sent += piece.length) if (!(await send(res, piece))) return;
    await send(res, "\n\n");
  }
  if (commentsMs) {
    const end = Date.now() + commentsMs;
    const burst = ": keep-alive\n".repeat(64);
    while (Date.now() < end) {
      if (!(await send(res, burst))) return;
      await sleep(1);
    }
  }
  if (tiny) {
    const one = 'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n';
    const batch = one.repeat(1000);
    for (let i = 0; i < tiny; i += 1000)
      if (!(await send(res, i + 1000 <= tiny ? batch : one.repeat(tiny - i)))) return;
    await send(
      res,
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    );
  }
}

// ------------------------------------------------------------------- server

/** Starts the mock on 127.0.0.1 (port 0 = any). Returns { url, port, requests, reset, close }. */
export async function startMock({ port = 0, quiet = true } = {}) {
  const requests = [];
  const attempts = new Map();
  const sockets = new Set();

  const server = http.createServer(async (req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "*");
    res.setHeader("access-control-allow-methods", "GET, POST, OPTIONS");
    res.setHeader("access-control-expose-headers", "*");
    if (req.method === "OPTIONS") return res.writeHead(204).end();
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname === "/_requests") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(requests));
    }
    if (url.pathname === "/_reset") {
      requests.length = 0;
      attempts.clear();
      return res.writeHead(204).end();
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = null;
    }
    const opt = (name) =>
      req.headers[`x-mock-${name.replace(/_/g, "-")}`] ?? url.searchParams.get(name);
    const record = {
      method: req.method,
      path: url.pathname,
      search: url.search,
      headers: req.headers,
      body,
      closedEarly: false,
      completed: false,
    };
    requests.push(record);
    if (!quiet) console.log(`mock: ${req.method} ${url.pathname}${url.search}`);

    const wire = wireOf(url);
    if (!wire)
      return res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: `no route ${url.pathname}` } }));
    const streaming =
      wire === "gemini" ? url.pathname.includes(":streamGenerateContent") : body?.stream === true;

    res.on("close", () => {
      if (!res.writableFinished) record.closedEarly = true;
    });

    const scenario = opt("scenario") ?? `${url.pathname}${url.search}`;
    const n = (attempts.get(scenario) ?? 0) + 1;
    attempts.set(scenario, n);
    const fail = (opt("fail") ?? "").split(",").filter(Boolean).map(Number);
    if (n <= fail.length) {
      const status = fail[n - 1];
      const headers = { "content-type": "application/json", "x-request-id": `req_mock_${n}` };
      if (opt("retry_after")) headers["retry-after"] = opt("retry_after");
      if (opt("retry_after_ms")) headers["retry-after-ms"] = opt("retry_after_ms");
      res.writeHead(status, headers);
      const errBody = httpErrorBody(wire, status);
      if (opt("echo_key")) {
        const cred =
          req.headers.authorization ??
          req.headers["x-api-key"] ??
          req.headers["x-goog-api-key"] ??
          "";
        const target = errBody.error;
        target.message = `${target.message}: credential ${cred} was rejected`;
      }
      return res.end(JSON.stringify(errBody));
    }

    let status = 200;
    let payload;
    let stream = streaming;
    const fixture = opt("fixture");
    if (fixture) {
      const c = readCase(fixture);
      payload = c.body;
      stream = c.stream;
      status = c.expected.http_status ?? 200;
    } else {
      const model =
        body?.model ??
        decodeURIComponent(url.pathname.split("/models/")[1]?.split(":")[0] ?? "mock-model");
      const turn = renderTurn(wire, model, scriptedTurn(wire, body ?? {}));
      payload = Buffer.from(stream ? turn.stream : JSON.stringify(turn.json));
      const inband = opt("inband_error");
      if (inband && stream) {
        const text = payload.toString("utf8");
        const sep = wire === "gemini" ? "\r\n\r\n" : "\n\n";
        const frames = text.split(sep).filter(Boolean);
        // Before any content (a Responses stream has said response.created
        // and in_progress by then), or after the first text-bearing frame.
        const cut =
          inband === "start"
            ? wire === "responses"
              ? frames.findIndex((f) => f.startsWith("event: response.output_item.added"))
              : 0
            : frames.findIndex((f) =>
                /"content":"[^"]|text_delta|"text":"[^"]|output_text\.delta/.test(f),
              ) + 1;
        payload = Buffer.from(
          frames
            .slice(0, cut)
            .map((f) => f + sep)
            .join("") + inbandError(wire, cut),
        );
      }
    }

    if (opt("huge_event") || opt("comments_ms") || opt("tiny_events")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      await resourceStream(res, {
        huge: Number(opt("huge_event") ?? 0),
        commentsMs: Number(opt("comments_ms") ?? 0),
        tiny: Number(opt("tiny_events") ?? 0),
      });
      record.completed = !res.destroyed;
      return res.end();
    }

    const firstByte = Number(opt("first_byte_delay") ?? 0);
    if (firstByte) await sleep(firstByte);
    res.writeHead(status, {
      "content-type": stream ? "text/event-stream" : "application/json",
      "cache-control": "no-cache",
      "x-request-id": `req_mock_${requests.length}`,
    });
    if (opt("hang")) {
      res.flushHeaders();
      return;
    }
    const chunk = Number(opt("chunk") ?? 0) || payload.length || 1;
    const delay = Number(opt("delay") ?? 0);
    const cutAt = opt("disconnect_after") != null ? Number(opt("disconnect_after")) : Infinity;
    let sent = 0;
    for (let i = 0; i < payload.length; i += chunk) {
      if (res.destroyed) return;
      if (delay) await sleep(delay);
      let piece = payload.subarray(i, i + chunk);
      if (sent + piece.length > cutAt) {
        piece = piece.subarray(0, Math.max(0, cutAt - sent));
        if (piece.length) res.write(piece);
        await new Promise((r) => res.once("drain", r).write("", r));
        res.socket?.destroy();
        return;
      }
      sent += piece.length;
      if (!res.write(piece)) await new Promise((r) => res.once("drain", r));
    }
    if (cutAt !== Infinity && sent >= cutAt) {
      res.socket?.destroy();
      return;
    }
    record.completed = true;
    res.end();
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  const actual = server.address().port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    reset() {
      requests.length = 0;
      attempts.clear();
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const mock = await startMock({ port: Number(process.argv[2] ?? 0), quiet: false });
  console.log(`mock provider listening on ${mock.url}`);
}
