// Type declarations for skyl's errors (re-exported by index.d.ts).
import type { EmbedPartial, FailedAttempt, Message, Provider, Response } from "./index.js";
import type { RunPartial } from "./runner.js";

export type ErrorCode =
  | "invalid_request"
  | "invalid_options"
  | "callback"
  | "already_consumed"
  | "not_ready"
  | "bad_request"
  | "authentication"
  | "permission"
  | "not_found"
  | "request_timeout"
  | "conflict"
  | "rate_limit"
  | "overloaded"
  | "server"
  | "api_error"
  | "network"
  | "timeout"
  | "abort"
  | "stream_ended_early"
  | "malformed_stream"
  | "event_too_large"
  | "invalid_response"
  | "content_filter"
  | "panic";

/** The base class of every error skyl throws. The API key never appears in it. */
export declare class SkylError extends Error {
  readonly code: ErrorCode;
  readonly provider?: Provider | "unknown";
  readonly retryable: boolean;
  readonly status?: number;
  /** The provider's error type, e.g. "rate_limit_error" or "RESOURCE_EXHAUSTED". */
  readonly providerType?: string;
  readonly providerCode?: string;
  readonly param?: string;
  readonly requestId?: string;
  readonly retryAfterMs?: number;
  /** True when the error came inside a successful (200) response. */
  readonly inBand?: boolean;
  /** Whether any event had been handed out before the error. */
  readonly eventsEmitted?: boolean;
  /** For invalid requests and options: the offending field. */
  readonly path?: string;
  /** What had been assembled before a stream failed (for `client.embed`: an {@link EmbedPartial}; for `client.run`'s `AbortError`: a {@link RunPartial}). */
  readonly partial?: Response | EmbedPartial | RunPartial;
  /** With an error that ended a `client.run`: the run's new messages so far, every call answered, so the history replays. */
  readonly messages?: Message[];
  /** With an error that ended a `client.run`: every step's response so far. */
  readonly steps?: Response[];
  /** The provider's error body as received. */
  readonly body?: string;
  /** With a `fallback` chain that failed for good: the providers that failed before the last one (whose error this is), in order. */
  readonly attempts?: FailedAttempt[];
}
export declare class APIError extends SkylError {}
export declare class BadRequestError extends APIError {}
export declare class AuthenticationError extends APIError {}
export declare class PermissionDeniedError extends APIError {}
export declare class NotFoundError extends APIError {}
export declare class RateLimitError extends APIError {}
export declare class OverloadedError extends APIError {}
export declare class InternalServerError extends APIError {}
export declare class ConnectionError extends SkylError {}
export declare class TimeoutError extends SkylError {}
export declare class AbortError extends SkylError {}
export declare class StreamEndedEarlyError extends SkylError {
  readonly partial?: Response;
}
export declare class MalformedStreamError extends SkylError {
  readonly partial?: Response;
}
export declare class ContentFilterError extends SkylError {
  readonly partial?: Response;
}
export declare class InvalidRequestError extends SkylError {}
export declare class PanicError extends SkylError {}
