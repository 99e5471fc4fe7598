//! OpenAI error bodies: `{"error": {"message", "type", "param", "code"}}`.
//! Some compatible servers send `{"error": "text"}` or `{"message": ...}`.

use serde_json::Value;

use crate::error::{ApiError, ApiErrorKind};
use crate::json::string_or_number;
use crate::providers::api_error_from;

/// Reads an error body: `{"error": ...}`, or a body that is itself the
/// error object (vLLM's `{"object": "error", "message", "type", "code"}`).
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    match body.get("error") {
        Some(err) => decode_error_object(err),
        None if body.get("message").is_some_and(Value::is_string) => decode_error_object(body),
        None => None,
    }
}

/// Reads the value of an `error` field. Without a `type` that names the
/// kind, its `code` does: an HTTP status (OpenRouter sends `{"code": 429}`
/// inside a 200) or a type-like string (`"server_error"`).
pub(crate) fn decode_error_object(err: &Value) -> Option<ApiError> {
    match err {
        Value::String(m) => Some(api_error_from(None, Some(m.clone()), None, None)),
        Value::Object(o) => {
            let mut e = api_error_from(
                o.get("type").and_then(Value::as_str).map(str::to_string),
                o.get("message").and_then(Value::as_str).map(str::to_string),
                string_or_number(o.get("code")),
                o.get("param").and_then(Value::as_str).map(str::to_string),
            );
            if e.kind == ApiErrorKind::Other {
                e.kind = match o.get("code") {
                    Some(Value::Number(n)) => n
                        .as_u64()
                        .and_then(|n| u16::try_from(n).ok())
                        .map_or(ApiErrorKind::Other, ApiErrorKind::from_status),
                    Some(Value::String(s)) => {
                        ApiErrorKind::from_provider_type(s).unwrap_or(ApiErrorKind::Other)
                    }
                    _ => ApiErrorKind::Other,
                };
            }
            Some(e)
        }
        _ => None,
    }
}
