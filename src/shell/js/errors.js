// The error classes skyl throws, and how an error the core describes (an
// ErrorInfo, as JSON) becomes one of them with the API key scrubbed out.
// Every error is typed by the Rust core, the transport's too (network,
// timeout, abort: src/policy.rs); this module only maps its `name` to a
// class, and scrubs by the core's rule (policy.js, generated from it).

import { MIN_SECRET_CHARS, REDACTED } from "./policy.js";

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
      "attempts",
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

/** The classes by the `name` the core gives an error. */
export const CLASSES = {
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

/**
 * Whether `secret` is long enough to scrub: the core's rule (`scrub` in
 * src/policy.rs), counted in code points as Rust counts chars.
 */
const scrubbable = (secret) => Boolean(secret) && [...secret].length >= MIN_SECRET_CHARS;

/**
 * Removes every occurrence of `secret` (or of each of an array of secrets:
 * a fallback chain's keys) from strings inside `value` (left to right, not
 * overlapping, as the core's `scrub` does).
 */
export function scrub(value, secret) {
  if (Array.isArray(secret)) return secret.reduce(scrub, value);
  if (!scrubbable(secret)) return value;
  if (typeof value === "string") return value.split(secret).join(REDACTED);
  if (Array.isArray(value)) return value.map((v) => scrub(v, secret));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[scrub(k, secret)] = scrub(v, secret);
    return out;
  }
  return value;
}

/**
 * Whether `v` (a cause) shows `secret` anywhere a reader of the error could
 * look: its message, stack, own properties, nested causes, and what a
 * Request, Headers or Map holds (a custom fetch's error may carry the
 * request and its headers). Each object is read once, 256 at most, 64
 * names each; a getter or Proxy that throws shows nothing.
 */
function shows(v, secret, seen = new Set()) {
  if (typeof v === "string") return v.includes(secret);
  if (typeof v !== "object" || v === null || ArrayBuffer.isView(v)) return false;
  if (seen.has(v) || seen.size > 256) return false;
  seen.add(v);
  let names;
  try {
    names = Object.getOwnPropertyNames(v);
    if (v instanceof Map || (typeof Headers === "function" && v instanceof Headers))
      return shows([...v.entries()], secret, seen);
  } catch {
    return false;
  }
  const keys = new Set(["message", "stack", "cause", "url", "headers", ...names]);
  for (const k of [...keys].slice(0, 64)) {
    try {
      if (shows(v[k], secret, seen)) return true;
    } catch {
      // (A getter that throws shows nothing.)
    }
  }
  return false;
}

/**
 * `cause`, or, if it shows the secret anywhere (`shows`), its scrubbed
 * copy: a string scrubbed; else an Error with the scrubbed message, name
 * and stack, its own cause scrubbed the same way, and nothing else.
 */
export function scrubCause(cause, secret) {
  if (Array.isArray(secret)) return secret.reduce(scrubCause, cause);
  if (!scrubbable(secret) || !shows(cause, secret)) return cause;
  if (typeof cause === "string") return scrub(cause, secret);
  const copy = new Error(scrub(String(cause.message ?? ""), secret));
  copy.name = scrub(String(cause.name ?? "Error"), secret);
  copy.stack = scrub(String(cause.stack ?? ""), secret);
  if (cause.cause !== undefined) copy.cause = scrubCause(cause.cause, secret);
  return copy;
}

/** The error for `info` (an ErrorInfo), of its class, without `secret`. */
export function makeError(info, secret, cause) {
  const clean = scrub(info, secret);
  const Class = CLASSES[clean.name] ?? SkylError;
  return new Class(clean, cause === undefined ? undefined : { cause: scrubCause(cause, secret) });
}

/**
 * An ErrorInfo made on the JS side, not retryable: for what only JS can
 * see (options of the wrong JS type, the module's state, a stream read
 * twice). Transport errors are the core's (run.js).
 */
export const localError = (name, code, message, extra = {}) => ({
  name,
  code,
  message,
  retryable: false,
  ...extra,
});

/**
 * What the caller's callback `fn` (the option at `path`: `credentials`,
 * `accessToken`, `approve`) resolves to. One that throws or rejects fails
 * the request with a SkylError (code `callback`) naming it, its error the
 * cause, both scrubbed of `secrets`: every error of a request is a
 * SkylError.
 */
export async function asked(fn, path, secrets) {
  try {
    return await fn();
  } catch (e) {
    let why = "it threw a value that is not an Error";
    try {
      why = e instanceof Error ? e.message : String(e);
    } catch {
      // (An object without a toString.)
    }
    const info = localError("SkylError", "callback", `skyl: ${path}() failed: ${why}`, {
      path: `${path}()`,
    });
    throw makeError(info, secrets, e);
  }
}

/** An InvalidRequestError for the request's field `path` that only JS sees. */
export const requestError = (path, message) =>
  new InvalidRequestError(
    localError("InvalidRequestError", "invalid_request", `skyl: ${path}: ${message}`, { path }),
  );

/** An InvalidRequestError for the client option at `path` (`fallback[0].region`). */
export const optionError = (path, message) =>
  new InvalidRequestError(
    localError("InvalidRequestError", "invalid_options", `skyl: option ${path}: ${message}`, {
      path,
    }),
  );
