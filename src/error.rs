//! The one error type of the core.
//!
//! Every failure is a variant of [`Error`], documented with when it happens.
//! Nothing here ever holds an API key: requests are encoded into
//! [`crate::HttpRequest`], whose `Debug` output redacts credentials, and
//! errors are built only from what the provider sent back. The transport
//! failures ([`Error::Connection`], [`Error::Timeout`], [`Error::Aborted`])
//! are made by a driver, the code that does the I/O around the core; what
//! they mean, and when they are retried, is decided here and in
//! `policy.rs`, once for every driver.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::Response;

/// What kind of failure an [`ApiError`] is, from its HTTP status and the
/// provider's own error type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApiErrorKind {
    /// 400, 413, 422: the request is wrong; do not retry.
    BadRequest,
    /// 401: the API key is missing or wrong.
    Authentication,
    /// 403: the key may not do this.
    Permission,
    /// 404: unknown model or endpoint.
    NotFound,
    /// 408: the provider timed out waiting for the request.
    RequestTimeout,
    /// 409: a conflict; retryable.
    Conflict,
    /// 429 or a rate-limit error type.
    RateLimit,
    /// 529 or an "overloaded" error type (also in-band).
    Overloaded,
    /// 5xx or a server error type.
    Server,
    /// Anything else.
    Other,
}

impl ApiErrorKind {
    /// Whether a request that failed this way may be sent again.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ApiErrorKind::RequestTimeout
                | ApiErrorKind::Conflict
                | ApiErrorKind::RateLimit
                | ApiErrorKind::Overloaded
                | ApiErrorKind::Server
        )
    }

    /// The kind an HTTP status stands for.
    pub fn from_status(status: u16) -> Self {
        match status {
            400 | 413 | 422 => ApiErrorKind::BadRequest,
            401 => ApiErrorKind::Authentication,
            403 => ApiErrorKind::Permission,
            404 => ApiErrorKind::NotFound,
            408 => ApiErrorKind::RequestTimeout,
            409 => ApiErrorKind::Conflict,
            429 => ApiErrorKind::RateLimit,
            529 => ApiErrorKind::Overloaded,
            500..=599 => ApiErrorKind::Server,
            _ => ApiErrorKind::Other,
        }
    }

    /// The kind a provider's error type string stands for, if it names one
    /// (`overloaded_error`, `rate_limit_error`, `RESOURCE_EXHAUSTED`, ...).
    pub fn from_provider_type(kind: &str) -> Option<Self> {
        let k = kind.to_ascii_lowercase();
        Some(match k.as_str() {
            "overloaded_error" | "overloaded" | "unavailable" => ApiErrorKind::Overloaded,
            "rate_limit_error" | "rate_limit_exceeded" | "resource_exhausted" | "tokens" => {
                ApiErrorKind::RateLimit
            }
            "api_error" | "server_error" | "internal" | "internal_error" => ApiErrorKind::Server,
            "authentication_error" | "unauthenticated" | "invalid_api_key" => {
                ApiErrorKind::Authentication
            }
            "permission_error" | "permission_denied" => ApiErrorKind::Permission,
            "not_found_error" | "not_found" | "model_not_found" => ApiErrorKind::NotFound,
            "invalid_request_error"
            | "invalid_argument"
            | "failed_precondition"
            | "request_too_large" => ApiErrorKind::BadRequest,
            "deadline_exceeded" | "timeout_error" => ApiErrorKind::RequestTimeout,
            _ => return None,
        })
    }
}

/// An error the provider reported: an HTTP error response, or an error
/// inside a 200 stream or body.
///
/// Not constructible with a struct literal outside skyl (fields are added
/// as providers report more): start from [`ApiError::new`] and set the
/// fields, which are public.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ApiError {
    /// What kind of failure this is.
    pub kind: ApiErrorKind,
    /// The HTTP status; for an in-band error, the status of the response
    /// that carried it (usually 200), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's error type (`invalid_request_error`,
    /// `RESOURCE_EXHAUSTED`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_type: Option<String>,
    /// The provider's error code, where it sends one besides the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The request parameter at fault, where the provider names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The provider's message.
    pub message: String,
    /// The provider's request id (`x-request-id`, `request-id`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// How long the provider asked to wait before retrying, in milliseconds
    /// (`retry-after-ms`, `retry-after`, Gemini `RetryInfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// True when the error arrived inside a successful response (an SSE
    /// `error` event, an `{"error": ...}` frame).
    pub in_band: bool,
    /// For an in-band stream error: whether any event had been handed out
    /// before it. Retrying is safe only when this is false.
    pub events_emitted: bool,
    /// The error body (or frame) as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// For an in-band stream error after events had been handed out: what
    /// the stream had assembled before it, as for a stream that ended
    /// early (calls still open are in its `incomplete_tool_calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Box<Response>>,
}

impl ApiError {
    /// An error of `kind` with the provider's `message`, every other field
    /// empty: not in-band, no event handed out.
    pub fn new(kind: ApiErrorKind, message: impl Into<String>) -> Self {
        ApiError {
            kind,
            status: None,
            provider_type: None,
            code: None,
            param: None,
            message: message.into(),
            request_id: None,
            retry_after_ms: None,
            in_band: false,
            events_emitted: false,
            body: None,
            partial: None,
        }
    }

    /// Whether sending the request again may succeed and is safe: the kind is
    /// transient and no event had been handed out yet.
    pub fn retryable(&self) -> bool {
        self.kind.retryable() && !self.events_emitted
    }
}

/// Every failure of the core.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The request cannot be sent: validation failed or a field cannot be
    /// encoded for this provider (e.g. replayed tool-call arguments that are
    /// not a JSON object, for Anthropic). Nothing was sent.
    InvalidRequest {
        /// Where the problem is, e.g. `messages[2].parts[0].arguments`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The provider answered with an error (HTTP status, or in-band).
    Api(Box<ApiError>),
    /// The provider blocked the prompt or the output (Gemini
    /// `promptFeedback.blockReason`). Not an empty success.
    ContentFilter {
        /// The provider's reason, e.g. `SAFETY`.
        reason: String,
        /// A human-readable message.
        message: String,
        /// Whether any event had been handed out (a block that came
        /// after some output).
        events_emitted: bool,
        /// Whatever had been assembled before.
        partial: Box<Response>,
    },
    /// The stream ended before its terminal frame (`[DONE]` or a finish
    /// reason, `message_stop`, a Gemini `finishReason`). Everything received
    /// is in `partial`; tool calls that were still open are in its
    /// `incomplete_tool_calls`, never in `tool_calls`.
    StreamEndedEarly {
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Everything assembled before the end.
        partial: Box<Response>,
    },
    /// The stream broke its provider's protocol (a frame that is not JSON on
    /// Anthropic or Gemini, a second message spliced into an open one).
    /// Everything before the bad frame is in `partial`.
    MalformedStream {
        /// What was wrong.
        message: String,
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Everything assembled before the bad frame.
        partial: Box<Response>,
    },
    /// One event (an SSE event, an event-stream message) grew past the
    /// decoder's size limit. Everything before it is in `partial`. (Made by
    /// the decoders only: match it with `..`.)
    #[non_exhaustive]
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Everything assembled before the event.
        partial: Box<Response>,
    },
    /// A non-streaming body is not what the provider sends (not JSON, or
    /// missing the fields every response has).
    InvalidResponse {
        /// What was wrong.
        message: String,
    },
    /// The request could not be sent ([`Error::unreachable`]), or the
    /// connection broke while the body was read
    /// ([`Error::connection_lost`]). Made by a driver. Retryable while no
    /// event had been handed out.
    Connection {
        /// What failed, with the transport's own message.
        message: String,
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Whatever had been assembled, when the body had begun.
        partial: Option<Box<Response>>,
    },
    /// One of a driver's timeouts fired ([`Timeout::error`]). A first-byte
    /// or idle timeout ends the attempt and is retryable while no event had
    /// been handed out; the total timeout ends the request and never is.
    Timeout {
        /// Which timeout.
        which: Timeout,
        /// Its limit, in milliseconds.
        after_ms: u64,
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Whatever had been assembled, when the body had begun.
        partial: Option<Box<Response>>,
    },
    /// The caller cancelled the request (an abort signal, a dropped
    /// stream; [`Error::aborted`]). Never retryable.
    Aborted {
        /// The caller's reason, if it gave one.
        reason: Option<String>,
        /// Whether any event had been handed out.
        events_emitted: bool,
        /// Whatever had been assembled, when the body had begun.
        partial: Option<Box<Response>>,
    },
}

/// Which of a driver's timeouts fired: see [`Error::Timeout`], and
/// [`Timeout::expired`] for what a driver does when one does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timeout {
    /// No response (status and headers) came within the limit after the
    /// request was sent. Ends the attempt.
    FirstByte,
    /// No body data came within the limit since the last chunk. Ends the
    /// attempt.
    Idle,
    /// The whole request, retries and their waits included, took longer
    /// than the limit. Ends the request.
    Total,
}

impl Timeout {
    /// Every timeout.
    pub const ALL: [Timeout; 3] = [Timeout::FirstByte, Timeout::Idle, Timeout::Total];

    /// The total timeout a driver applies when none is given: 10 minutes.
    pub const DEFAULT_TOTAL_MS: u64 = 600_000;

    /// Its name as an option: `firstByte`, `idle`, `total`.
    pub fn name(self) -> &'static str {
        match self {
            Timeout::FirstByte => "firstByte",
            Timeout::Idle => "idle",
            Timeout::Total => "total",
        }
    }

    /// The timeout of an option name ([`Timeout::name`]).
    pub fn from_name(name: &str) -> Option<Timeout> {
        Timeout::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether it ends the whole request rather than one attempt (so is
    /// never retried): only the total timeout.
    pub fn stops_run(self) -> bool {
        self == Timeout::Total
    }

    /// The error of this timeout after `after_ms`; `events_emitted` says
    /// whether any event had been handed out (then it is not retryable).
    pub fn error(self, after_ms: u64, events_emitted: bool) -> Error {
        Error::Timeout {
            which: self,
            after_ms,
            events_emitted,
            partial: None,
        }
    }

    /// How the timeout is named in its error's message, and what did not
    /// come in time.
    fn described(self) -> (&'static str, &'static str) {
        match self {
            Timeout::FirstByte => ("first byte", "response"),
            Timeout::Idle => ("idle", "data between chunks"),
            Timeout::Total => ("total", "complete response"),
        }
    }
}

impl Error {
    /// A short stable code for the variant, used as the JS error `code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidRequest { .. } => "invalid_request",
            Error::Api(e) => match e.kind {
                ApiErrorKind::BadRequest => "bad_request",
                ApiErrorKind::Authentication => "authentication",
                ApiErrorKind::Permission => "permission",
                ApiErrorKind::NotFound => "not_found",
                ApiErrorKind::RequestTimeout => "request_timeout",
                ApiErrorKind::Conflict => "conflict",
                ApiErrorKind::RateLimit => "rate_limit",
                ApiErrorKind::Overloaded => "overloaded",
                ApiErrorKind::Server => "server",
                ApiErrorKind::Other => "api_error",
            },
            Error::ContentFilter { .. } => "content_filter",
            Error::StreamEndedEarly { .. } => "stream_ended_early",
            Error::MalformedStream { .. } => "malformed_stream",
            Error::EventTooLarge { .. } => "event_too_large",
            Error::InvalidResponse { .. } => "invalid_response",
            Error::Connection { .. } => "network",
            Error::Timeout { .. } => "timeout",
            Error::Aborted { .. } => "abort",
        }
    }

    /// Whether the same request may be sent again: transient provider
    /// errors, early ends, connection failures, first-byte and idle
    /// timeouts; each only while no event had been handed out.
    pub fn retryable(&self) -> bool {
        match self {
            Error::Api(e) => e.retryable(),
            Error::StreamEndedEarly { events_emitted, .. }
            | Error::Connection { events_emitted, .. } => !events_emitted,
            Error::Timeout {
                which,
                events_emitted,
                ..
            } => !which.stops_run() && !events_emitted,
            _ => false,
        }
    }

    /// Whether the error says that events had been handed out before it.
    /// (The kinds that carry no such flag are never retryable.)
    pub fn events_emitted(&self) -> bool {
        match self {
            Error::Api(e) => e.events_emitted,
            Error::StreamEndedEarly { events_emitted, .. }
            | Error::MalformedStream { events_emitted, .. }
            | Error::EventTooLarge { events_emitted, .. }
            | Error::ContentFilter { events_emitted, .. }
            | Error::Connection { events_emitted, .. }
            | Error::Timeout { events_emitted, .. }
            | Error::Aborted { events_emitted, .. } => *events_emitted,
            _ => false,
        }
    }

    /// The delay the provider asked for before a retry, if it did.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Error::Api(e) => e.retry_after_ms,
            _ => None,
        }
    }

    /// What had been assembled before the failure, for stream errors (for
    /// an in-band provider error, once events had been handed out).
    pub fn partial(&self) -> Option<&Response> {
        match self {
            Error::Api(e) => e.partial.as_deref(),
            Error::ContentFilter { partial, .. }
            | Error::StreamEndedEarly { partial, .. }
            | Error::MalformedStream { partial, .. }
            | Error::EventTooLarge { partial, .. } => Some(partial),
            Error::Connection { partial, .. }
            | Error::Timeout { partial, .. }
            | Error::Aborted { partial, .. } => partial.as_deref(),
            _ => None,
        }
    }

    /// This error keeping `partial`, what a driver's decoder had assembled
    /// when the body was interrupted: for a connection failure, timeout or
    /// abort that has none yet. Other errors are returned as they are.
    pub fn with_partial(mut self, response: Response) -> Self {
        match &mut self {
            Error::Connection { partial, .. }
            | Error::Timeout { partial, .. }
            | Error::Aborted { partial, .. }
                if partial.is_none() =>
            {
                *partial = Some(Box::new(response));
            }
            _ => {}
        }
        self
    }

    /// An event over `limit` bytes, as a framing finds it: the stream
    /// decoder adds whether events had been handed out, and what came.
    pub(crate) fn event_too_large(limit: usize) -> Self {
        Error::EventTooLarge {
            limit,
            events_emitted: false,
            partial: Box::default(),
        }
    }

    /// A request that could not be sent to `url` (DNS, refused, TLS, a
    /// fetch that threw); `cause` is the transport's message. Nothing was
    /// received, so it is retryable.
    pub fn unreachable(url: &str, cause: &str) -> Self {
        Error::Connection {
            message: format!("could not reach {}: {cause}", crate::http::host(url)),
            events_emitted: false,
            partial: None,
        }
    }

    /// A connection that broke while the response body was read; `cause`
    /// is the transport's message.
    pub fn connection_lost(cause: &str, events_emitted: bool) -> Self {
        Error::Connection {
            message: format!("the connection broke while reading the response: {cause}"),
            events_emitted,
            partial: None,
        }
    }

    /// A request the caller cancelled, for `reason` (none if empty).
    pub fn aborted(reason: Option<&str>, events_emitted: bool) -> Self {
        Error::Aborted {
            reason: reason.filter(|r| !r.is_empty()).map(str::to_string),
            events_emitted,
            partial: None,
        }
    }

    pub(crate) fn invalid_request(path: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidRequest {
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn invalid_response(message: impl Into<String>) -> Self {
        Error::InvalidResponse {
            message: message.into(),
        }
    }
}

impl From<crate::model::validate::Invalid> for Error {
    fn from(e: crate::model::validate::Invalid) -> Self {
        Error::InvalidRequest {
            path: e.path,
            message: e.message,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidRequest { path, message } if path.is_empty() => {
                write!(f, "invalid request: {message}")
            }
            Error::InvalidRequest { path, message } => {
                write!(f, "invalid request: {path}: {message}")
            }
            Error::Api(e) => {
                match e.status {
                    Some(s) if !e.in_band => write!(f, "{s} ")?,
                    _ => {}
                }
                if let Some(t) = &e.provider_type {
                    write!(f, "{t}: ")?;
                }
                write!(f, "{}", e.message)?;
                if e.in_band {
                    write!(f, " (in-band)")?;
                }
                Ok(())
            }
            Error::ContentFilter {
                reason, message, ..
            } => write!(
                f,
                "blocked by the provider's content filter ({reason}): {message}"
            ),
            Error::StreamEndedEarly { .. } => {
                write!(f, "the stream ended before its terminal frame")
            }
            Error::MalformedStream { message, .. } => write!(f, "malformed stream: {message}"),
            Error::EventTooLarge { limit, .. } => {
                write!(f, "an event is larger than the limit of {limit} bytes")
            }
            Error::InvalidResponse { message } => write!(f, "invalid response body: {message}"),
            Error::Connection { message, .. } => f.write_str(message),
            Error::Timeout {
                which, after_ms, ..
            } => {
                let (name, awaited) = which.described();
                write!(f, "{name} timeout: no {awaited} within {after_ms} ms")
            }
            Error::Aborted {
                reason: Some(r), ..
            } => write!(f, "request aborted: {r}"),
            Error::Aborted { reason: None, .. } => f.write_str("request aborted"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_retryability() {
        for (status, kind, retry) in [
            (400, ApiErrorKind::BadRequest, false),
            (401, ApiErrorKind::Authentication, false),
            (403, ApiErrorKind::Permission, false),
            (404, ApiErrorKind::NotFound, false),
            (408, ApiErrorKind::RequestTimeout, true),
            (409, ApiErrorKind::Conflict, true),
            (429, ApiErrorKind::RateLimit, true),
            (500, ApiErrorKind::Server, true),
            (503, ApiErrorKind::Server, true),
            (529, ApiErrorKind::Overloaded, true),
        ] {
            assert_eq!(ApiErrorKind::from_status(status), kind, "{status}");
            assert_eq!(kind.retryable(), retry, "{status}");
        }
    }

    #[test]
    fn an_in_band_error_after_an_event_is_not_retryable() {
        let mut e = ApiError {
            kind: ApiErrorKind::Overloaded,
            status: Some(200),
            provider_type: Some("overloaded_error".into()),
            code: None,
            param: None,
            message: "Overloaded".into(),
            request_id: None,
            retry_after_ms: None,
            in_band: true,
            events_emitted: false,
            body: None,
            partial: None,
        };
        assert!(Error::Api(Box::new(e.clone())).retryable());
        e.events_emitted = true;
        assert!(!Error::Api(Box::new(e.clone())).retryable());
        assert_eq!(
            Error::Api(Box::new(e)).to_string(),
            "overloaded_error: Overloaded (in-band)"
        );
    }
}
