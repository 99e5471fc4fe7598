// skyl's JavaScript API: the JS half of the shell. It owns what belongs to
// the JS runtime (fetch, the body reader, timers, AbortSignal, the async
// iterator, Error classes); every protocol decision (encoding, decoding,
// error typing, retry policy) is made by the Rust core in WebAssembly.
//
// The runtime entries (node.js, browser.js, workerd.js) instantiate the
// WebAssembly module, then re-export this module.

import * as wasm from "./skyl_wasm.js";
import { wasmState } from "./load.js";
// Written by scripts/build beside each entry's wasm: the adapters it has.
import { ADAPTERS, ENTRY } from "./adapters.js";

/** The providers this entry speaks (all four from "skyl"; one family from "skyl/openai", ...). */
export const PROVIDERS = Object.freeze([...ADAPTERS]);

/** The option error for a provider this entry does not speak. */
function providerError(provider) {
  const known = ["openai", "openaicompat", "anthropic", "gemini"].includes(provider);
  const hint =
    known && ENTRY !== "skyl"
      ? `; ${ENTRY} is built without the ${provider} adapter: import "skyl" for all four`
      : "";
  return optionError(
    "provider",
    `must be one of ${PROVIDERS.join(", ")}; got ${JSON.stringify(provider)}${hint}`,
  );
}

// ------------------------------------------------------------------ errors

/** The base class of every error skyl throws. */
export class SkylError extends Error {
  constructor(info, options) {
    super(info.message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = info.name ?? "SkylError";
    this.code = info.code ?? "error";
    this.provider = info.provider;
    this.retryable = Boolean(info.retryable);
    for (const k of [
      "status",
      "providerType",
      "providerCode",
      "param",
      "requestId",
      "retryAfterMs",
      "path",
      "partial",
      "body",
    ]) {
      if (info[k] !== undefined && info[k] !== null) this[k] = info[k];
    }
    if (info.inBand) this.inBand = true;
    if (info.eventsEmitted !== undefined) this.eventsEmitted = Boolean(info.eventsEmitted);
  }
}
/** The provider answered with an error (HTTP status or in-band). */
export class APIError extends SkylError {}
export class BadRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
export class RateLimitError extends APIError {}
export class OverloadedError extends APIError {}
export class InternalServerError extends APIError {}
/** The request could not be sent or the connection broke. */
export class ConnectionError extends SkylError {}
/** A first-byte, idle or total timeout. */
export class TimeoutError extends SkylError {}
/** The caller aborted: `signal`, `stream.abort()`, or leaving `for await`. */
export class AbortError extends SkylError {}
/** The stream ended before its terminal frame; `partial` has what came. */
export class StreamEndedEarlyError extends SkylError {}
/** The stream broke its protocol. */
export class MalformedStreamError extends SkylError {}
/** The provider blocked the prompt or output. */
export class ContentFilterError extends SkylError {}
/** The request or options are invalid; nothing was sent. */
export class InvalidRequestError extends SkylError {}
/** skyl's WebAssembly instance panicked (a bug); reload the module. */
export class PanicError extends SkylError {}

const CLASSES = {
  APIError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  RateLimitError,
  OverloadedError,
  InternalServerError,
  ConnectionError,
  TimeoutError,
  AbortError,
  StreamEndedEarlyError,
  MalformedStreamError,
  ContentFilterError,
  InvalidRequestError,
  PanicError,
};

/** Removes every occurrence of `secret` from strings inside `value`. */
function scrub(value, secret) {
  if (!secret || secret.length < 4) return value;
  if (typeof value === "string") return value.split(secret).join("[redacted]");
  if (Array.isArray(value)) return value.map((v) => scrub(v, secret));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrub(v, secret);
    return out;
  }
  return value;
}

/** `cause`, or a copy without the secret if its message or stack shows it. */
function scrubCause(cause, secret) {
  if (!secret || secret.length < 4 || !(cause instanceof Error)) return cause;
  const shown = [
    cause.message,
    cause.stack,
    cause.cause instanceof Error ? cause.cause.message : "",
  ].join("\n");
  if (!shown.includes(secret)) return cause;
  const copy = new Error(scrub(String(cause.message), secret));
  copy.name = cause.name;
  copy.stack = scrub(String(cause.stack ?? ""), secret);
  return copy;
}

function makeError(info, secret, cause) {
  const clean = scrub(info, secret);
  const Class = CLASSES[clean.name] ?? SkylError;
  return new Class(clean, cause === undefined ? undefined : { cause: scrubCause(cause, secret) });
}

const localError = (name, code, message, extra = {}) => ({
  name,
  code,
  message,
  retryable: false,
  ...extra,
});

// ------------------------------------------------- calling the wasm safely

let panicMessage = null;
let hookInstalled = false;

/**
 * Resolves once the WebAssembly module is instantiated. Node and Workers
 * are ready at import; in a browser the module loads on first use, and the
 * synchronous helpers (validate*) need this awaited first.
 */
export function ready() {
  if (wasmState.done) return Promise.resolve();
  wasmState.promise ??= Promise.resolve()
    .then(() => wasmState.loader?.())
    .then(() => {
      wasmState.done = true;
    });
  return wasmState.promise;
}

/** Calls into WebAssembly; a trap after a panic becomes a PanicError. */
function call(fn) {
  if (panicMessage !== null) throw panicError();
  if (!wasmState.done) {
    throw new SkylError(
      localError(
        "SkylError",
        "not_ready",
        "skyl's WebAssembly module is still loading: await ready() before calling this synchronously",
      ),
    );
  }
  if (!hookInstalled) {
    hookInstalled = true;
    wasm.setPanicHook((msg) => {
      panicMessage = String(msg);
    });
  }
  try {
    return fn();
  } catch (e) {
    if (panicMessage !== null || e instanceof WebAssembly.RuntimeError) {
      panicMessage ??= String(e?.message ?? e);
      throw panicError(e);
    }
    throw e;
  }
}

function panicError(cause) {
  return new PanicError(
    localError(
      "PanicError",
      "panic",
      `skyl panicked: ${panicMessage}. This is a bug; the WebAssembly instance is unusable: load the module again.`,
    ),
    cause === undefined ? undefined : { cause },
  );
}

const parse = (json) => JSON.parse(json);

/**
 * Completes a `finish` event's response: the decoder leaves out what the
 * message already holds (text, reasoning, tool calls), exactly as the core
 * derives them, and it is rebuilt here in the documented key order.
 */
function completeResponse(r) {
  let text = "";
  let reasoning = "";
  const toolCalls = [];
  for (const p of r.message.parts) {
    if (p.type === "text") text += p.text;
    else if (p.type === "reasoning") reasoning += p.text;
    else if (p.type === "tool_call")
      toolCalls.push({ id: p.id, name: p.name, arguments: p.arguments });
  }
  const out = {};
  if (r.id !== undefined) out.id = r.id;
  if (r.model !== undefined) out.model = r.model;
  out.message = r.message;
  out.text = text;
  if (reasoning) out.reasoning = reasoning;
  out.toolCalls = toolCalls;
  for (const k of ["incompleteToolCalls", "refusal", "usage", "finishReason", "rawFinishReason"]) {
    if (r[k] !== undefined) out[k] = r[k];
  }
  return out;
}

/**
 * A decoder result: JSON, then (after a NUL) the events' strings,
 * concatenated, `lens` giving each one's length: every event's `raw`, the
 * `text` of text and reasoning events, a tool call's `arguments` and, in a
 * finish event, the text and arguments of the message's parts, in that
 * order (see `JsonDecoder::feed` in src/jsapi.rs). They are empty in the
 * JSON and sliced in here: never escaped into JSON or parsed back out. With
 * `argsFromEvents`, the finish message's tool-call arguments are those of
 * the decoder's tool_call events, in order (`sent`, kept across results).
 * Text and reasoning events come as 0 and 1 and are built here.
 */
function decoded(text, sent) {
  const cut = text.indexOf("\0");
  const out = JSON.parse(text.slice(0, cut));
  const lens = out.lens;
  let at = cut + 1;
  let k = 0;
  const next = () => {
    const from = at;
    at += lens[k++];
    return text.slice(from, at);
  };
  const events = out.events;
  for (let i = 0; i < events.length; i++) {
    const ev = events[i];
    if (typeof ev === "number") {
      // A text (0) or reasoning (1) event: its frame, then its text.
      const raw = next();
      events[i] = { type: ev === 0 ? "text" : "reasoning", text: next(), raw };
      continue;
    }
    ev.raw = next();
    switch (ev.type) {
      case "tool_call":
        ev.call.arguments = next();
        sent.push(ev.call.arguments);
        break;
      case "finish": {
        let c = 0;
        for (const p of ev.response.message.parts) {
          if (p.type === "text" || p.type === "reasoning") p.text = next();
          else if (p.type === "tool_call") p.arguments = out.argsFromEvents ? sent[c++] : next();
        }
        ev.response = completeResponse(ev.response);
      }
    }
  }
  // (lens stays: `delete` would drop the object into V8's slow mode.)
  if (out.done) out.response = out.events.at(-1)?.response;
  return out;
}

/** The result of a chunk that completed no event (`feedInput` returned 0). */
const NOTHING = Object.freeze({ events: Object.freeze([]) });

/** The module's memory as bytes (a new view after the memory grows). */
let memoryView = null;
function memoryBytes() {
  if (memoryView === null || memoryView.byteLength === 0)
    memoryView = new Uint8Array(wasm.wasmMemory().buffer);
  return memoryView;
}

/** A wasm stream decoder with the state its results refer back to. */
class Decoding {
  #d;
  #sent = [];
  #input = 0;
  #capacity = 0;
  constructor(provider) {
    this.#d = call(() => new wasm.Decoder(provider));
  }
  /**
   * Copies the chunk into the decoder's input buffer in wasm memory (no
   * allocation per chunk) and reads a result only if it has events.
   */
  feed(chunk) {
    const n = chunk.length;
    if (n > this.#capacity) {
      this.#input = call(() => this.#d.inputBuffer(n));
      this.#capacity = n;
    }
    memoryBytes().set(chunk, this.#input);
    const len = call(() => this.#d.feedInput(n));
    return len === 0
      ? NOTHING
      : decoded(
          call(() => this.#d.takeOutput()),
          this.#sent,
        );
  }
  finish() {
    return decoded(
      call(() => this.#d.finish()),
      this.#sent,
    );
  }
  isComplete() {
    return call(() => this.#d.isComplete());
  }
  partial() {
    return parse(call(() => this.#d.partial()));
  }
  free() {
    // (After a panic this throws too; the error already in flight is the
    // one to report.)
    try {
      this.#d.free();
    } catch {
      /* the instance is unusable anyway */
    }
  }
}

// ----------------------------------------------------------------- helpers

/** A `tool` message answering `callId` with `content`. */
export function toolResultMessage(callId, content) {
  return {
    role: "tool",
    parts: [
      {
        type: "tool_result",
        callId: String(callId),
        content: typeof content === "string" ? content : JSON.stringify(content),
      },
    ],
  };
}

/** A `tool` message telling the model that call `callId` failed. */
export function toolErrorMessage(callId, err) {
  const content =
    err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
  return {
    role: "tool",
    parts: [{ type: "tool_result", callId: String(callId), content, isError: true }],
  };
}

function validateAs(kind, value) {
  const out = call(() => wasm.validate(kind, JSON.stringify(value ?? null)));
  if (out) throw makeError(parse(out).error);
}
/** Throws InvalidRequestError unless `tool` has a non-empty name (and an object schema). */
export const validateTool = (tool) => validateAs("tool", tool);
/** Throws InvalidRequestError unless `call` has an id and a name. */
export const validateToolCall = (call) => validateAs("toolCall", call);
/** Throws InvalidRequestError for an invalid request (tools, calls, results answering unknown ids). */
export const validateRequest = (request) => validateAs("request", request);

// ------------------------------------------------------------------ client

const isBrowser = () => typeof window !== "undefined" && typeof document !== "undefined";

function optionError(option, message) {
  return new InvalidRequestError(
    localError("InvalidRequestError", "invalid_options", `skyl: option ${option}: ${message}`, {
      path: option,
    }),
  );
}

/**
 * Why `value` cannot be sent as an HTTP header value, or null: fetch
 * refuses it (before sending anything) after trimming outer whitespace.
 */
function headerValueProblem(value) {
  const bad = /[\0\r\n]|[^\0-\xff]/.exec(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""));
  if (!bad) return null;
  const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `has a character that cannot be sent in an HTTP header (U+${code} at position ${bad.index + 1}; a pasted quote or line break?)`;
}

function checkTimeout(name, v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v))
    throw optionError(name, "must be a positive number of milliseconds");
  return v;
}

/** A client for one provider. See the README for every option. */
export class Client {
  #o;
  #key;
  #fetch;

  constructor(options) {
    if (!options || typeof options !== "object")
      throw optionError("options", 'pass an object such as { provider: "openai", model, apiKey }');
    const o = { ...options };
    if (!PROVIDERS.includes(o.provider)) throw providerError(o.provider);
    for (const k of ["model", "apiKey", "baseURL"]) {
      if (o[k] !== undefined && o[k] !== null && typeof o[k] !== "string")
        throw optionError(k, "must be a string");
    }
    if (o.provider === "openaicompat" && !o.baseURL)
      throw optionError(
        "baseURL",
        "an OpenAI-compatible server needs its base URL, e.g. http://127.0.0.1:11434/v1",
      );
    if (o.baseURL) {
      try {
        new URL(o.baseURL);
      } catch {
        throw optionError("baseURL", `is not a URL: ${JSON.stringify(o.baseURL)}`);
      }
    }
    if (
      o.headers !== undefined &&
      (typeof o.headers !== "object" || o.headers === null || Array.isArray(o.headers))
    )
      throw optionError("headers", "must be an object of header names to strings");
    // Checked here: fetch would refuse them only when sending, as if the
    // network had failed (and the key's position, not the key, is shown).
    if (o.apiKey) {
      const problem = headerValueProblem(o.apiKey);
      if (problem) throw optionError("apiKey", problem);
    }
    for (const [name, value] of Object.entries(o.headers ?? {})) {
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
        throw optionError(`headers`, `${JSON.stringify(name)} is not a header name`);
      const problem = headerValueProblem(String(value));
      if (problem) throw optionError(`headers.${name}`, problem);
    }
    if (o.fetch !== undefined && typeof o.fetch !== "function")
      throw optionError("fetch", "must be a function with the signature of the global fetch");
    if (o.maxRetries !== undefined && !(Number.isInteger(o.maxRetries) && o.maxRetries >= 0))
      throw optionError("maxRetries", "must be a whole number, 0 or more");
    const t = o.timeout;
    let timeouts;
    if (typeof t === "object" && t !== null) {
      timeouts = {
        total: checkTimeout("timeout.total", t.total) ?? 600_000,
        firstByte: checkTimeout("timeout.firstByte", t.firstByte),
        idle: checkTimeout("timeout.idle", t.idle),
      };
    } else {
      timeouts = { total: checkTimeout("timeout", t) ?? 600_000 };
    }
    if (o.apiKey && isBrowser() && !o.dangerouslyAllowBrowser) {
      throw optionError(
        "dangerouslyAllowBrowser",
        "an API key in a browser is visible to every user of the page. Call the provider from a server (see www/worker/) or pass dangerouslyAllowBrowser: true if you accept that.",
      );
    }
    this.#key = o.apiKey ?? "";
    this.#fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#o = {
      provider: o.provider,
      model: o.model,
      baseURL: o.baseURL,
      headers: o.headers,
      maxRetries: o.maxRetries ?? 2,
      timeouts,
      config: JSON.stringify({
        provider: o.provider,
        apiKey: this.#key,
        baseURL: o.baseURL,
        model: o.model,
        headers: o.headers,
        browser: Boolean(o.dangerouslyAllowBrowser && isBrowser()),
        includeUsage: Boolean(o.includeUsage),
      }),
    };
  }

  /** The provider this client speaks. */
  get provider() {
    return this.#o.provider;
  }

  /** Sends `request` and resolves with the whole response. */
  async complete(request) {
    const run = new Run(this.#o, this.#key, this.#fetch, request, false);
    return run.complete();
  }

  /** Sends `request` and streams the answer: `for await (const ev of client.stream(req))`. */
  stream(request) {
    return new StreamResult(new Run(this.#o, this.#key, this.#fetch, request, true));
  }

  toJSON() {
    return { provider: this.#o.provider, model: this.#o.model, baseURL: this.#o.baseURL };
  }
}

/** Decodes a body you already have (your own fetch, a Workers binding, a proxy, a cache). */
export function decodeStream(provider, body, options = {}) {
  if (!PROVIDERS.includes(provider)) throw providerError(provider);
  const source =
    typeof Response !== "undefined" && body instanceof Response
      ? body
      : { ok: true, status: 200, headers: new Headers(), body };
  if (!source.body || typeof source.body.getReader !== "function")
    throw optionError("body", "must be a ReadableStream or a Response with a body");
  return new StreamResult(
    new Run(
      { provider, maxRetries: 0, timeouts: {}, config: "" },
      "",
      null,
      { signal: options.signal },
      true,
      source,
    ),
  );
}

// ------------------------------------------------------------ one request

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/**
 * A response's headers as [name, value] pairs for the wasm. A `retry-after`
 * that is an HTTP date (RFC 9110) is also given as `retry-after-ms` from
 * now: the core has no clock.
 */
function headerPairs(headers) {
  const out = [];
  headers?.forEach?.((v, k) => {
    out.push([k, v]);
  });
  const after = headers?.get?.("retry-after");
  const at = after && !/^\s*[\d.]+\s*$/.test(after) ? Date.parse(after) : NaN;
  if (!Number.isNaN(at) && !headers.has("retry-after-ms"))
    out.push(["retry-after-ms", String(Math.max(0, at - Date.now()))]);
  return out;
}

/** The request id of a response (the headers `crate::http::request_id` reads, in its order). */
function requestId(headers) {
  for (const name of ["x-request-id", "request-id", "x-goog-request-id", "cf-ray"]) {
    const v = headers?.get?.(name);
    if (v) return v;
  }
  return undefined;
}

const utf8 = new TextEncoder();

/** A body chunk as bytes, whatever the stream yields. */
function bytes(value) {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "string") return utf8.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`unsupported body chunk: ${Object.prototype.toString.call(value)}`);
}

/**
 * One logical request: attempts, retries, timeouts, cancellation, decoding.
 *
 * Two levels of failure: `stopped` ends the whole run (the caller's signal,
 * `abort()`, leaving `for await`, the total timeout); `failure` ends one
 * attempt (first-byte or idle timeout), which may be retried while no event
 * has been handed out.
 */
class Run {
  constructor(o, key, fetchFn, request, streaming, body = null) {
    this.o = o;
    this.key = key;
    this.fetch = fetchFn;
    this.given = body;
    this.yielded = false;
    this.stopped = null;
    // Aborted by stop() to end a retry wait; made only when one begins
    // (an AbortController costs Node a few microseconds; most runs never
    // wait).
    this.halted = null;
    this.failure = null;
    this.controller = null;
    this.reader = null;
    // The current attempt's stream decoder (a timeout asks it whether the
    // stream is already complete).
    this.decoding = null;
    // The final response has been handed over.
    this.finished = false;
    // Called once when the run is stopped (StreamResult rejects response()).
    this.onStop = null;
    // Undoes begin(): its timer and the caller's signal listener.
    this.release = null;
    // The request id of the current attempt's response.
    this.requestId = undefined;
    this.userSignal = request?.signal;
    this.request = request;
    this.streaming = streaming;
    this.http = null;
  }

  /** Loads the wasm if needed and encodes the request (once). */
  async prepare() {
    await ready();
    if (this.given || this.http) return;
    const { signal, ...plain } = this.request ?? {};
    // `{"ok":{url, headers}}`, a NUL and the body (not escaped into the
    // JSON); or `{"error"}`.
    const text = call(() =>
      wasm.encodeRequest(this.o.config, JSON.stringify(plain), this.streaming),
    );
    const cut = text.indexOf("\0");
    const out = parse(cut < 0 ? text : text.slice(0, cut));
    if (out.error) throw makeError(out.error, this.key);
    this.http = out.ok;
    this.http.body = text.slice(cut + 1);
  }

  error(name, code, message, extra, cause) {
    return makeError(
      localError(name, code, message, { provider: this.o.provider, ...extra }),
      this.key,
      cause,
    );
  }

  abortError(reason) {
    const why = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
    return this.error(
      "AbortError",
      "abort",
      why ? `request aborted: ${why}` : "request aborted",
      {},
      reason,
    );
  }

  timeoutError(which, ms) {
    const what = {
      "first byte": "response",
      idle: "data between chunks",
      total: "complete response",
    }[which];
    return this.error("TimeoutError", "timeout", `${which} timeout: no ${what} within ${ms} ms`, {
      retryable: which !== "total" && !this.yielded,
    });
  }

  /** Ends the whole run with `err`. */
  stop(err) {
    if (this.stopped) return;
    this.stopped = err;
    this.halted?.abort(err);
    this.cut(err);
    this.release?.();
    this.onStop?.(err);
  }

  /**
   * A timeout fired. After the stream's terminal frame nothing is missing
   * (a server or proxy kept the connection open): the body is ended there
   * and the stream finishes normally instead of failing.
   */
  expire(which, ms) {
    let complete = false;
    try {
      complete = this.decoding?.isComplete() ?? false;
    } catch {
      /* a panic: reported by the next call */
    }
    if (complete) {
      this.reader?.cancel().catch(() => {});
      return;
    }
    const err = this.timeoutError(which, ms);
    if (which === "total") this.stop(err);
    else this.cut(err);
  }

  /** Ends the current attempt with `err`: the fetch and body reader are cancelled. */
  cut(err) {
    this.failure ??= err;
    this.controller?.abort(err);
    this.reader?.cancel(err).catch(() => {});
  }

  /** The error to report for `e`: the reason the run or attempt was cut, if it was. */
  reason(e) {
    return this.stopped ?? this.failure ?? e;
  }

  /** Whether the run or the current attempt was cut on purpose. */
  get wasCut() {
    return this.stopped !== null || this.failure !== null;
  }

  /** Starts run-wide guards (the caller's signal, the total timeout); returns their cleanup. */
  begin() {
    if (this.userSignal?.aborted) throw this.abortError(this.userSignal.reason);
    const onAbort = () => this.stop(this.abortError(this.userSignal.reason));
    this.userSignal?.addEventListener("abort", onAbort, { once: true });
    const { total } = this.o.timeouts;
    const timer = total ? setTimeout(() => this.expire("total", total), total) : null;
    this.release = () => {
      clearTimeout(timer);
      this.userSignal?.removeEventListener("abort", onAbort);
    };
    return this.release;
  }

  /** One HTTP attempt: the Response (2xx) or a typed error. */
  async attempt() {
    if (this.stopped) throw this.stopped;
    this.failure = null;
    this.reader = null;
    this.decoding = null;
    const res = this.given ?? (await this.send());
    this.requestId = requestId(res.headers);
    if (!res.ok) {
      let text = "";
      try {
        text = await res.text();
      } catch (e) {
        if (this.wasCut) throw this.reason(e);
      }
      const info = parse(
        call(() =>
          wasm.decodeHttpError(
            this.o.provider,
            res.status,
            JSON.stringify(headerPairs(res.headers)),
            text,
          ),
        ),
      ).error;
      throw makeError(info, this.key);
    }
    return res;
  }

  /** The error of an in-band failure (inside a 2xx body), with the response's request id. */
  inBand(info) {
    info.requestId ??= this.requestId;
    return makeError(info, this.key);
  }

  /** Sends the request: the Response, whatever its status, or a typed error. */
  async send() {
    this.controller = new AbortController();
    const { firstByte } = this.o.timeouts;
    const timer = firstByte
      ? setTimeout(() => this.cut(this.timeoutError("first byte", firstByte)), firstByte)
      : null;
    let res;
    try {
      res = await this.fetch(this.http.url, {
        method: "POST",
        headers: this.http.headers,
        body: this.http.body,
        signal: this.controller.signal,
      });
    } catch (e) {
      if (this.wasCut) throw this.reason(e);
      throw this.error(
        "ConnectionError",
        "network",
        `could not reach ${new URL(this.http.url).host}: ${e?.message ?? e}`,
        { retryable: true },
        e,
      );
    } finally {
      clearTimeout(timer);
    }
    return res;
  }

  /** Runs `body` again after retryable failures, while nothing has been yielded. */
  async withRetries(body) {
    for (let retries = 0; ; retries++) {
      try {
        return await body();
      } catch (e) {
        const err = this.reason(e);
        if (
          this.stopped ||
          this.given ||
          this.yielded ||
          !(err instanceof SkylError) ||
          !err.retryable
        )
          throw err;
        const delay = call(() =>
          wasm.retryDelay(retries, this.o.maxRetries, err.retryAfterMs ?? -1, Math.random()),
        );
        if (delay < 0) throw err;
        // The failed attempt's connection is closed before the next one.
        this.cut(err);
        try {
          // (stop() has not run: `this.stopped` was checked above, and
          // nothing was awaited since.)
          this.halted ??= new AbortController();
          await sleep(delay, this.halted.signal);
        } catch {
          throw this.stopped ?? err;
        }
      }
    }
  }

  bodyError(e) {
    return this.error(
      "ConnectionError",
      "network",
      `the connection broke while reading the response: ${e?.message ?? e}`,
      { retryable: !this.yielded, eventsEmitted: this.yielded },
      e,
    );
  }

  async complete() {
    await this.prepare();
    const end = this.begin();
    try {
      return await this.withRetries(async () => {
        const res = await this.attempt();
        let text;
        try {
          text = await this.readText(res);
        } catch (e) {
          throw this.wasCut ? this.reason(e) : this.bodyError(e);
        }
        const out = parse(call(() => wasm.decodeResponse(this.o.provider, text)));
        if (out.error) throw this.inBand(out.error);
        return out.response;
      });
    } finally {
      end();
    }
  }

  /** A whole body as text, the idle timeout guarding each chunk. */
  async readText(res) {
    const { idle } = this.o.timeouts;
    if (!idle || typeof res.body?.getReader !== "function") return res.text();
    this.reader = res.body.getReader();
    const utf8In = new TextDecoder();
    let text = "";
    for (;;) {
      const timer = setTimeout(() => this.cut(this.timeoutError("idle", idle)), idle);
      let result;
      try {
        result = await this.reader.read();
      } finally {
        clearTimeout(timer);
      }
      if (this.stopped || this.failure) throw this.reason();
      if (result.done) return text + utf8In.decode();
      text += utf8In.decode(bytes(result.value), { stream: true });
    }
  }

  /** The events of the stream, handed out as soon as their bytes are decoded. */
  async *events(onResponse) {
    await this.prepare();
    const end = this.begin();
    let decoder = null;
    let failure;
    try {
      let chunk = await this.withRetries(async () => {
        const res = await this.attempt();
        const d = new Decoding(this.o.provider);
        this.decoding = d;
        try {
          this.reader = res.body ? res.body.getReader() : null;
          const first = await this.pull(d);
          // An error before any event may be retried (in-band overloaded,
          // an early end): nothing was handed out yet.
          if (first.error && first.events.length === 0) throw this.inBand(first.error);
          decoder = d;
          return first;
        } catch (e) {
          d.free();
          throw e;
        }
      });
      for (;;) {
        for (const ev of chunk.events) {
          // stream.abort() or the caller's signal while the loop body ran:
          // nothing more is handed out.
          if (this.stopped) throw this.stopped;
          // response() settles before the finish event is handed out, so a
          // loop may await it there (and `break` at it keeps it).
          if (ev.type === "finish" && chunk.response) this.finish(chunk.response, onResponse);
          this.yielded = true;
          yield ev;
        }
        if (chunk.error) throw this.inBand(chunk.error);
        if (chunk.response) {
          this.finish(chunk.response, onResponse);
          return;
        }
        chunk = await this.pull(decoder);
      }
    } catch (e) {
      // A failure after the stream began (a timeout, an abort, a broken
      // connection) keeps what had been assembled.
      if (decoder && e instanceof SkylError && e.partial === undefined) {
        try {
          e.partial = decoder.partial();
        } catch {
          /* a panic: reported as it is */
        }
        e.eventsEmitted ??= this.yielded;
      }
      failure = e;
      throw e;
    } finally {
      decoder?.free();
      this.decoding = null;
      // Leaving early (break, return(), an error) cancels the request;
      // response() rejects with the error, or AbortError.
      if (!this.finished) this.stop(this.stopped ?? failure ?? this.abortError());
      end();
    }
  }

  /** Hands over the final response (once). */
  finish(response, onResponse) {
    if (this.finished) return;
    this.finished = true;
    onResponse(response);
  }

  /** Reads until at least one event, the end of the body, or an error: { events, response?, error? }. */
  async pull(decoder) {
    const { idle } = this.o.timeouts;
    for (;;) {
      let result;
      const timer = idle ? setTimeout(() => this.expire("idle", idle), idle) : null;
      try {
        result = this.reader ? await this.reader.read() : { done: true };
      } catch (e) {
        if (this.wasCut) throw this.reason(e);
        // The connection broke after the terminal frame: nothing is
        // missing, so the stream ends normally.
        if (decoder.isComplete()) return decoder.finish();
        const err = this.bodyError(e);
        err.partial = decoder.partial();
        throw err;
      } finally {
        clearTimeout(timer);
      }
      if (this.stopped || this.failure) throw this.reason();
      const out = result.done ? decoder.finish() : decoder.feed(bytes(result.value));
      if (out.error && this.yielded) {
        out.error.eventsEmitted = true;
        out.error.retryable = false;
      }
      if (result.done || out.events.length || out.error) return out;
    }
  }
}

/** What `client.stream()` returns: an async iterable of events with `response()` and `abort()`. */
export class StreamResult {
  #run;
  #iterating = false;
  #final;
  #resolve;
  #reject;

  constructor(run) {
    this.#run = run;
    this.#final = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#final.catch(() => {}); // observed through response() only
    // abort(), the caller's signal or the total timeout reject response()
    // at once, even while nobody is reading the stream.
    run.onStop = (err) => {
      if (!run.finished) this.#reject(err);
    };
  }

  [Symbol.asyncIterator]() {
    if (this.#iterating)
      throw new InvalidRequestError(
        localError(
          "InvalidRequestError",
          "already_consumed",
          "this stream is already being read: iterate it once",
        ),
      );
    this.#iterating = true;
    const gen = this.#run.events((r) => this.#resolve(r));
    const reject = this.#reject;
    const run = this.#run;
    // Our own iterator object: ReadableStream's async iteration is not
    // relied on anywhere (Safari lacks it).
    return {
      async next() {
        try {
          return await gen.next();
        } catch (e) {
          reject(e);
          throw e;
        }
      },
      async return(value) {
        // Stopped first: a next() still waiting for data would hold
        // gen.return() back until the data came.
        // (stop() rejects response() through run.onStop.)
        if (!run.finished) run.stop(run.stopped ?? run.abortError());
        return gen.return(value);
      },
      async throw(e) {
        reject(e);
        return gen.throw(e);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** The final response; reads the stream to the end if nobody iterates it. */
  response() {
    if (!this.#iterating) {
      (async () => {
        for await (const _ of this) {
          /* drain */
        }
      })().catch(() => {});
    }
    return this.#final;
  }

  /** Cancels the request: the fetch and the body reader are aborted. */
  abort(reason) {
    this.#run.stop(this.#run.abortError(reason));
  }
}
