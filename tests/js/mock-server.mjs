// A mock LLM provider for tests and demos: Node standard library only,
// listening on 127.0.0.1. It speaks all six wire formats skyl supports:
//
//   POST /v1/chat/completions                      openai, openaicompat
//   POST /v1/messages                              anthropic
//   POST /v1beta/models/{model}:generateContent    gemini
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//   POST /v1/responses                             responses (streamed when
//                                                  the body says stream: true)
//   POST /model/{modelId}/converse-stream          bedrock (AWS's binary event
//   POST /model/{modelId}/converse                 stream; the id percent-encoded)
//   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:
//        streamGenerateContent?alt=sse, :generateContent
//                                                  gemini on Vertex AI (and
//        /v1/publishers/google/models/..., express mode)
//   POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:
//        streamRawPredict, :rawPredict             anthropic on Vertex AI
//   POST /oauth2/token                             a Google token endpoint: a
//                                                  service account's JWT for a
//                                                  token (mock-oauth.mjs)
//                                                  (Vertex AI's paths answer
//                                                  401 without a bearer token
//                                                  or express mode's key, and
//                                                  to a mock token it never
//                                                  issued)
//   POST /v1/embeddings, /v1beta/models/{model}:batchEmbedContents and
//        :embedContent                             embeddings (mock-embed.mjs)
//
// What it answers is chosen per request, by query parameters on the base URL
// or `x-mock-*` headers (headers win; a header may spell an option's `_` as
// `-` or `_`: `x-mock-inband-error` and `x-mock-inband_error` are the same):
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
//   inband_exception=<type>    Bedrock: the exception message's type
//                              (default serviceUnavailableException)
//   hang=1                     send headers, then nothing
//   huge_event=<bytes>         one SSE event this big (streamed in 64 KiB pieces)
//   comments_ms=<ms>           keep-alive comments for this long, then end
//                              without a terminal frame
//   tiny_events=<n>            an OpenAI-format stream of n one-character deltas
//                              (these three in Bedrock's framing on its paths)
//   echo_key=1                 injected failures quote the credential they
//                              received (some servers do; skyl must scrub it)
//   cut_off=1                  the turn ends at the output limit (its calls
//                              whole): length, max_tokens, MAX_TOKENS,
//                              response.incomplete, Bedrock's max_tokens
//   reasoning=0|1              leave out (0) or send (1) the reasoning block;
//                              the default is below
//
// Without `fixture`, a small rule-based model answers (mock-model.mjs), in
// the wire format of the endpoint. It reads the last user message and asks
// for the declared tools it needs, with arguments from the question ("the
// weather in Kampala, and convert 30 km to miles" → get_weather {city:
// "Kampala"} and convert_units {value: 30, from: "km", to: "mi"}, in
// parallel), streamed in small pieces; once the results are in the request,
// it answers from them in words. Without a fitting tool it says what it can
// do. It answers JSON of the schema when structured output is asked for,
// and about the file when one is attached. Asked to "draw a …", it answers
// with a small generated PNG in the Gemini format (an inlineData part) and
// the Responses format (an image_generation_call item, two partial images
// first), in the shape of the recorded image streams (mock-wire-images.mjs);
// the other formats say they cannot draw. It streams a short reasoning
// block first in the formats that have one: Anthropic, Gemini, Responses,
// Bedrock, and Chat Completions from an OpenAI-compatible client (skyl's
// `openaicompat`: `max_tokens`, or streamed without `stream_options`), as
// DeepSeek's `reasoning_content`; not to OpenAI's own Chat Completions
// clients, and not when the request turns thinking off.
//
// Credentials are not checked, on any path (an API key, a Bedrock bearer
// key or a SigV4 signature are all taken); `echo_key` quotes them.
//
// Control endpoints: GET /_requests (everything received, with
// `closedEarly` for connections the client closed before the end), POST
// /_reset. CORS is open so a page on another loopback port can call it.
//
// Run alone: `node tests/js/mock-server.mjs [port]` prints its URL.
//
// The parts: mock-requests.mjs reads a request of any format,
// mock-model.mjs decides the turn, mock-wire.mjs writes it in the format.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PROVIDERS } from "./fixtures.mjs";
import { modelTurn } from "./mock-model.mjs";
import { looksCompat, readRequest } from "./mock-requests.mjs";
import { httpErrorBody, httpErrorHeaders, renderTurn, withInbandError } from "./mock-wire.mjs";
import { imageFor } from "./mock-wire-images.mjs";
import { BEDROCK_RESOURCES } from "./mock-wire-bedrock.mjs";
import { EVENTSTREAM } from "./mock-eventstream.mjs";
import { embedAnswer, embedWire } from "./mock-embed.mjs";
import { oauthAnswer, testKey, vertexProblem } from "./mock-oauth.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CONFORMANCE = path.resolve(here, "../fixtures/conformance");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads a conformance case: { body: Buffer, expected, stream }. A stream
 * is `<name>.sse`, or Bedrock's `<name>.eventstream`; else `<name>.json`.
 */
export function readCase(id) {
  const [adapter, name] = id.split("/");
  const dir = path.join(CONFORMANCE, adapter);
  const expected = JSON.parse(fs.readFileSync(path.join(dir, `${name}.expected.json`), "utf8"));
  const streamFile = [`${name}.sse`, `${name}.eventstream`]
    .map((f) => path.join(dir, f))
    .find((f) => fs.existsSync(f));
  const body = fs.readFileSync(streamFile ?? path.join(dir, `${name}.json`));
  return { body, expected, stream: streamFile !== undefined };
}

/** Every case id, e.g. "anthropic/anthropic-text.stream". */
export function listCases() {
  const out = [];
  for (const adapter of PROVIDERS) {
    for (const f of fs.readdirSync(path.join(CONFORMANCE, adapter)).sort()) {
      if (f.endsWith(".expected.json"))
        out.push(`${adapter}/${f.slice(0, -".expected.json".length)}`);
    }
  }
  return out;
}

/**
 * A Bedrock path, /model/{modelId}/converse-stream or /converse, as
 * { model (decoded), stream }; null for any other path.
 */
function bedrockRoute(url) {
  const m = /\/model\/([^/]+)\/(converse|converse-stream)$/.exec(url.pathname);
  if (!m) return null;
  let model = m[1];
  try {
    model = decodeURIComponent(model);
  } catch {
    // A malformed escape: the id as sent.
  }
  return { model, stream: m[2] === "converse-stream" };
}

function wireOf(url) {
  if (bedrockRoute(url)) return "bedrock";
  if (url.pathname.endsWith("/chat/completions")) return "openai";
  if (url.pathname.endsWith("/responses")) return "responses";
  if (url.pathname.endsWith("/messages")) return "anthropic";
  // Claude on Vertex AI: Anthropic's body without `model`.
  if (/:(streamRawPredict|rawPredict)$/.test(url.pathname)) return "anthropic";
  if (url.pathname.includes(":streamGenerateContent") || url.pathname.includes(":generateContent"))
    return "gemini";
  return null;
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

/** The resource-bound streams in SSE (OpenAI's format); Bedrock's are in mock-wire-bedrock.mjs. */
const SSE_RESOURCES = {
  contentType: "text/event-stream",
  *huge(bytes) {
    yield "data: ";
    const piece = Buffer.alloc(64 * 1024, "x");
    for (let sent = 0; sent < bytes; sent += piece.length) yield piece;
    yield "\n\n";
  },
  keepAlive: ": keep-alive\n".repeat(64),
  *tiny(n) {
    const one = 'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n';
    const batch = one.repeat(1000);
    for (let i = 0; i < n; i += 1000) yield i + 1000 <= n ? batch : one.repeat(n - i);
    yield 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
  },
};

/** Sends each piece `pieces` yields; false if the client left. */
async function sendAll(res, pieces) {
  for (const piece of pieces) if (!(await send(res, piece))) return false;
  return true;
}

/** The resource-bound streams: a huge event, endless keep-alives, many tiny events. */
async function resourceStream(res, form, { huge, commentsMs, tiny }) {
  if (huge && !(await sendAll(res, form.huge(huge)))) return;
  if (commentsMs) {
    const end = Date.now() + commentsMs;
    while (Date.now() < end) {
      if (!(await send(res, form.keepAlive))) return;
      await sleep(1);
    }
  }
  if (tiny) await sendAll(res, form.tiny(tiny));
}

// -------------------------------------------------------------------- model

const tokens = (s) => Math.ceil(s.length / 4);

/**
 * The model's turn for a request, ready to render: call ids (unique in the
 * conversation; Gemini's calls have none), rough token counts, and the
 * reasoning kept only where the format has it and the request did not turn
 * it off (`reasoning`: the mock option, "0" or "1", wins).
 */
function answer(wire, body, raw, reasoning, imageBytes) {
  const view = readRequest(wire, body);
  const turn = modelTurn(view, { draws: wire === "gemini" || wire === "responses" });
  const before = view.entries.filter((e) => e.kind === "call").length;
  // Bedrock's ids look like AWS's (`tooluse_...`).
  const prefix = wire === "bedrock" ? "tooluse" : "call";
  const calls = turn.calls.map((c, i) => ({
    id: wire === "gemini" ? null : `${prefix}_${c.name}_${before + i + 1}`,
    ...c,
  }));
  const wanted =
    reasoning != null
      ? reasoning !== "0"
      : view.thinking !== false && (wire !== "openai" || looksCompat(body));
  const thought = wanted ? turn.reasoning : "";
  const output = tokens(turn.text) + tokens(JSON.stringify(calls.map((c) => c.args)));
  return {
    reasoning: thought,
    text: turn.text,
    calls,
    usage: {
      input: Math.max(1, tokens(raw)),
      output: output + tokens(thought),
      reasoning: tokens(thought),
    },
    encrypted: Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content"),
    image: turn.draw ? imageFor(turn.draw, imageBytes) : undefined,
  };
}

// ------------------------------------------------------------------- server

/** Starts the mock on 127.0.0.1 (port 0 = any). Returns { url, port, requests, reset, close }. */
export async function startMock({ port = 0, quiet = true } = {}) {
  const requests = [];
  const attempts = new Map();
  const sockets = new Set();
  const embedStats = { inflight: 0, maxInflight: 0 };
  const oauth = { exchanges: 0 };

  const server = http.createServer(async (req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    // (`*` does not cover `authorization` in a browser's preflight.)
    res.setHeader(
      "access-control-allow-headers",
      req.headers["access-control-request-headers"] ?? "*",
    );
    res.setHeader("access-control-allow-methods", "GET, POST, OPTIONS");
    res.setHeader("access-control-expose-headers", "*");
    if (req.method === "OPTIONS") return res.writeHead(204).end();
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname === "/_requests") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(requests));
    }
    if (url.pathname === "/oauth2/_test-key") return testKey(req, res);
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
      req.headers[`x-mock-${name.replace(/_/g, "-")}`] ??
      req.headers[`x-mock-${name}`] ??
      url.searchParams.get(name);
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
    if (url.pathname === "/oauth2/token") return oauthAnswer(req, res, raw, oauth);

    const embed = embedWire(url);
    const wire = embed ? (embed === "openai" ? "openai" : "gemini") : wireOf(url);
    if (!wire)
      return res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: `no route ${url.pathname}` } }));
    // Vertex AI: Google's 401 without a bearer token (or express mode's key).
    const refused = vertexProblem(url, req.headers, oauth);
    if (refused)
      return res
        .writeHead(401, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: 401, message: refused, status: "UNAUTHENTICATED" } }));
    // Gemini and Bedrock say it in the path; the others in the body.
    const streaming =
      wire === "gemini"
        ? url.pathname.includes(":streamGenerateContent")
        : wire === "bedrock"
          ? bedrockRoute(url).stream
          : body?.stream === true;

    res.on("close", () => {
      if (!res.writableFinished) record.closedEarly = true;
    });

    const scenario = opt("scenario") ?? `${url.pathname}${url.search}`;
    const n = (attempts.get(scenario) ?? 0) + 1;
    attempts.set(scenario, n);
    const fail = (opt("fail") ?? "").split(",").filter(Boolean).map(Number);
    if (n <= fail.length) {
      const status = fail[n - 1];
      const headers = {
        "content-type": "application/json",
        "x-request-id": `req_mock_${n}`,
        ...httpErrorHeaders(wire, status),
      };
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
        const target = errBody.error ?? errBody;
        target.message = `${target.message}: credential ${cred} was rejected`;
      }
      return res.end(JSON.stringify(errBody));
    }

    if (embed) return embedAnswer(res, embed, body, opt, embedStats);

    let status = 200;
    let payload;
    let stream = streaming;
    let errorHeaders = {};
    const fixture = opt("fixture");
    if (fixture) {
      const c = readCase(fixture);
      payload = c.body;
      stream = c.stream;
      status = c.expected.http_status ?? 200;
    } else {
      const model =
        bedrockRoute(url)?.model ??
        body?.model ??
        decodeURIComponent(url.pathname.split("/models/")[1]?.split(":")[0] ?? "mock-model");
      const request = body && typeof body === "object" && !Array.isArray(body) ? body : {};
      try {
        const decided = answer(wire, request, raw, opt("reasoning"), opt("image_bytes"));
        decided.cutOff = opt("cut_off") === "1";
        const turn = renderTurn(wire, String(model), decided);
        payload = Buffer.from(stream ? turn.stream : JSON.stringify(turn.json));
      } catch (e) {
        // The readers take any JSON; should one still fail, say so as a
        // provider would (a 400), rather than leave the request hanging.
        const err = httpErrorBody(wire, 400);
        (err.error ?? err).message = `mock: cannot answer this request: ${e.message}`;
        payload = Buffer.from(JSON.stringify(err));
        status = 400;
        errorHeaders = httpErrorHeaders(wire, 400);
        stream = false;
      }
      const inband = opt("inband_error");
      if (inband && stream)
        payload = Buffer.from(withInbandError(wire, payload, inband, opt("inband_exception")));
    }

    if (opt("huge_event") || opt("comments_ms") || opt("tiny_events")) {
      const form = wire === "bedrock" ? BEDROCK_RESOURCES : SSE_RESOURCES;
      res.writeHead(200, { "content-type": form.contentType });
      await resourceStream(res, form, {
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
      "content-type": !stream
        ? "application/json"
        : wire === "bedrock"
          ? EVENTSTREAM
          : "text/event-stream",
      "cache-control": "no-cache",
      "x-request-id": `req_mock_${requests.length}`,
      ...errorHeaders,
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
    embedStats,
    reset() {
      requests.length = 0;
      attempts.clear();
      embedStats.maxInflight = 0;
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
