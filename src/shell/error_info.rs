//! An [`Error`] as the JS half needs it: the error class, code, message
//! and every field a `SkylError` carries, and its JSON form.

use serde::Serialize;

use crate::error::{ApiErrorKind, Error};
use crate::json::write::Obj;
use crate::model::to_json::{attempts, response, Fields};
use crate::model::{FailedAttempt, Response};

/// Everything a JavaScript error object carries, as plain JSON: the one
/// place where [`Error`] becomes `{name, code, message, status, ...}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ErrorInfo {
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
    /// The providers of a fallback chain that failed before the one whose
    /// error this is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<FailedAttempt>,
}

/// The JS-facing description of `error` from `provider`.
pub(crate) fn info(error: &Error, provider: &'static str) -> ErrorInfo {
    let mut info = ErrorInfo {
        name: js_name(error),
        code: error.code(),
        message: match error {
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
        retryable: error.retryable(),
        in_band: false,
        events_emitted: error.events_emitted(),
        path: None,
        partial: error.partial().cloned(),
        attempts: Vec::new(),
        body: None,
    };
    match error {
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

/// The JS error class name of `error`.
pub(crate) fn js_name(error: &Error) -> &'static str {
    match error {
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
    attempts(o, &e.attempts);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, Timeout};

    #[test]
    fn error_info_carries_every_field_js_needs() {
        let e = Error::Api(Box::new(ApiError {
            kind: ApiErrorKind::RateLimit,
            status: Some(429),
            provider_type: Some("rate_limit_error".into()),
            code: Some("c".into()),
            param: None,
            message: "slow down".into(),
            request_id: Some("req_1".into()),
            retry_after_ms: Some(1500),
            in_band: false,
            events_emitted: false,
            body: Some("{}".into()),
            partial: None,
        }));
        let info = serde_json::to_value(info(&e, "anthropic")).unwrap_or_default();
        assert_eq!(info["name"], "RateLimitError");
        assert_eq!(info["code"], "rate_limit");
        assert_eq!(info["status"], 429);
        assert_eq!(info["retryable"], true);
        assert_eq!(info["retryAfterMs"], 1500);
        assert_eq!(info["requestId"], "req_1");
        assert_eq!(info["provider"], "anthropic");
        let v = Error::invalid_request("tools[0].name", "empty");
        let info = serde_json::to_value(super::info(&v, "openai")).unwrap_or_default();
        assert_eq!(info["path"], "tools[0].name");
        assert_eq!(info["name"], "InvalidRequestError");
    }

    /// Each error a driver makes has its JS class, and its description
    /// carries the core's code, flags and message.
    #[test]
    fn transport_errors_have_their_js_classes() {
        for (error, class) in [
            (
                Error::unreachable("https://api.test/v1", "fetch failed"),
                "ConnectionError",
            ),
            (Error::connection_lost("reset", true), "ConnectionError"),
            (Timeout::FirstByte.error(50, false), "TimeoutError"),
            (Timeout::Idle.error(100, true), "TimeoutError"),
            (Timeout::Total.error(600_000, false), "TimeoutError"),
            (Error::aborted(Some("user left"), true), "AbortError"),
            (Error::aborted(Some(""), false), "AbortError"),
        ] {
            assert_eq!(js_name(&error), class, "{error}");
            let info = super::info(&error, "openai");
            assert_eq!(
                (info.name, info.code, info.retryable, info.events_emitted),
                (
                    class,
                    error.code(),
                    error.retryable(),
                    error.events_emitted()
                )
            );
            assert_eq!(info.message, error.to_string());
        }
    }
}
