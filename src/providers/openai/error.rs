//! OpenAI error bodies: `{"error": {"message", "type", "param", "code"}}`.
//! Some compatible servers send `{"error": "text"}` or `{"message": ...}`.

use serde_json::Value;

use crate::error::ApiError;
use crate::providers::{api_error_from, string_or_number};

/// Reads an error body.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    match body.get("error") {
        Some(err) => decode_error_object(err),
        None => body
            .get("message")
            .and_then(Value::as_str)
            .map(|m| api_error_from(None, Some(m.to_string()), None, None)),
    }
}

/// Reads the value of an `error` field.
pub(crate) fn decode_error_object(err: &Value) -> Option<ApiError> {
    match err {
        Value::String(m) => Some(api_error_from(None, Some(m.clone()), None, None)),
        Value::Object(o) => Some(api_error_from(
            o.get("type").and_then(Value::as_str).map(str::to_string),
            o.get("message").and_then(Value::as_str).map(str::to_string),
            string_or_number(o.get("code")),
            o.get("param").and_then(Value::as_str).map(str::to_string),
        )),
        _ => None,
    }
}
