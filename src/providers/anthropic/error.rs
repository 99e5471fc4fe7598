//! Anthropic error bodies: `{"type": "error", "error": {"type", "message"}}`,
//! also sent in-band as an SSE `error` event.

use serde_json::Value;

use crate::error::ApiError;
use crate::providers::api_error_from;

/// Reads an error body or in-band error payload.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    let err = body.get("error")?;
    // A proxy's `{"error": "text"}`.
    if let Value::String(m) = err {
        return Some(api_error_from(None, Some(m.clone()), None, None));
    }
    let text = |k: &str| err.get(k).and_then(Value::as_str).map(str::to_string);
    Some(api_error_from(text("type"), text("message"), None, None))
}
