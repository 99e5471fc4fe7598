//! An [`Error`] as the JS half needs it: the error class, code, message
//! and every field a `SkylError` carries, and its JSON form.

use serde::Serialize;

use crate::error::{ApiErrorKind, Error};
use crate::json::write::Obj;
use crate::model::to_json::{response, Fields};
use crate::model::Response;

/// Everything a JavaScript error object carries, as plain JSON: the one
/// place where [`Error`] becomes `{name, code, message, status, ...}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    /// The JS error class: `AuthenticationError`, `RateLimitError`,
    /// `StreamEndedEarlyError`, ...
    pub name: &'static str,
    /// [`Error::code`].
    pub code: &'static str,
    /// The human-readable message (the provider's own, for API errors).
    pub message: String,
    /// The adapter, e.g. `anthropic`.
    pub provider: &'static str,
    /// The HTTP status, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's error type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_type: Option<String>,
    /// The provider's error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_code: Option<String>,
    /// The parameter at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The provider's request id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The provider's requested delay before a retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Whether sending the request again may succeed and is safe.
    pub retryable: bool,
    /// Whether the error arrived inside a successful response.
    pub in_band: bool,
    /// Whether any stream event had been handed out before it.
    pub events_emitted: bool,
    /// For validation errors, the path of the offending field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What had been assembled before a stream failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Response>,
    /// The error body as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl Error {
    /// The JS-facing description of this error from `provider`.
    pub fn info(&self, provider: &'static str) -> ErrorInfo {
        let mut info = ErrorInfo {
            name: self.js_name(),
            code: self.code(),
            message: match self {
                Error::Api(e) => e.message.clone(),
                other => other.to_string(),
            },
            provider,
            status: None,
            provider_type: None,
            provider_code: None,
            param: None,
            request_id: None,
            retry_after_ms: None,
            retryable: self.retryable(),
            in_band: false,
            events_emitted: self.events_emitted(),
            path: None,
            partial: self.partial().cloned(),
            body: None,
        };
        match self {
            Error::Api(e) => {
                info.status = e.status;
                info.provider_type.clone_from(&e.provider_type);
                info.provider_code.clone_from(&e.code);
                info.param.clone_from(&e.param);
                info.request_id.clone_from(&e.request_id);
                info.retry_after_ms = e.retry_after_ms;
                info.in_band = e.in_band;
                info.body.clone_from(&e.body);
            }
            Error::InvalidRequest { path, .. } => info.path = Some(path.clone()),
            _ => {}
        }
        info
    }

    /// The JS error class name for this error.
    pub fn js_name(&self) -> &'static str {
        match self {
            Error::InvalidRequest { .. } => "InvalidRequestError",
            Error::Api(e) => match e.kind {
                ApiErrorKind::BadRequest => "BadRequestError",
                ApiErrorKind::Authentication => "AuthenticationError",
                ApiErrorKind::Permission => "PermissionDeniedError",
                ApiErrorKind::NotFound => "NotFoundError",
                ApiErrorKind::RateLimit => "RateLimitError",
                ApiErrorKind::Overloaded => "OverloadedError",
                ApiErrorKind::RequestTimeout | ApiErrorKind::Conflict | ApiErrorKind::Server => {
                    "InternalServerError"
                }
                ApiErrorKind::Other => "APIError",
            },
            Error::ContentFilter { .. } => "ContentFilterError",
            Error::StreamEndedEarly { .. } => "StreamEndedEarlyError",
            Error::MalformedStream { .. } | Error::EventTooLarge { .. } => "MalformedStreamError",
            Error::InvalidResponse { .. } => "MalformedStreamError",
            Error::Connection { .. } => "ConnectionError",
            Error::Timeout { .. } => "TimeoutError",
            Error::Aborted { .. } => "AbortError",
        }
    }
}

/// The fields of an [`ErrorInfo`].
pub(crate) fn error_info(o: &mut Obj, e: &ErrorInfo) {
    o.str("name", e.name)
        .str("code", e.code)
        .str("message", &e.message)
        .str("provider", e.provider);
    if let Some(s) = e.status {
        o.uint("status", s.into());
    }
    o.opt_str("providerType", e.provider_type.as_deref())
        .opt_str("providerCode", e.provider_code.as_deref())
        .opt_str("param", e.param.as_deref())
        .opt_str("requestId", e.request_id.as_deref());
    if let Some(ms) = e.retry_after_ms {
        o.uint("retryAfterMs", ms);
    }
    o.bool("retryable", e.retryable)
        .bool("inBand", e.in_band)
        .bool("eventsEmitted", e.events_emitted)
        .opt_str("path", e.path.as_deref());
    if let Some(p) = &e.partial {
        response(&mut o.object("partial"), p, Fields::All);
    }
    o.opt_str("body", e.body.as_deref());
}
