//! Error bodies (`{"error": {"message", "type", "param", "code"}}`, as Chat
//! Completions) and the in-band `error` event, in both of its shapes.

use serde_json::Value;

use crate::error::ApiError;
use crate::providers::openai::error::decode_error_object;

/// Reads an HTTP error body.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    crate::providers::openai::error::decode(body)
}

/// Reads an `error` event: the nested `{"type": "error", "error": {type,
/// code, message, param}}` real streams send, or the documented flat
/// `{"type": "error", code, message, param}`.
pub(crate) fn event(ev: &Value) -> Option<ApiError> {
    if let Some(nested) = ev.get("error").filter(|e| e.is_object()) {
        return decode_error_object(nested);
    }
    let mut flat = ev.as_object()?.clone();
    flat.remove("type");
    flat.remove("sequence_number");
    // No error type in this shape: its code (`server_error`,
    // `rate_limit_exceeded`) says what kind it is.
    if let Some(code) = flat.get("code").filter(|c| c.is_string()).cloned() {
        flat.insert("type".into(), code);
    }
    decode_error_object(&Value::Object(flat))
}

/// Reads the `error` of a failed response (`response.failed`, or a body
/// whose status is `failed`).
pub(crate) fn failed(response: &Value) -> Option<ApiError> {
    response
        .get("error")
        .filter(|e| e.is_object())
        .and_then(decode_error_object)
}
