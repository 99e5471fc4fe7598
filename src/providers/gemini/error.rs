//! Gemini error bodies: `{"error": {"code", "message", "status", "details"}}`
//! (Google's `google.rpc.Status`); a `RetryInfo` detail gives the delay.

use serde_json::Value;

use crate::error::{ApiError, ApiErrorKind};
use crate::json::string_or_number;
use crate::providers::api_error_from;

/// Reads an error body or in-band error payload.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    // A streamed error can come as a one-element array, as whole bodies do
    // from the REST API's JSON-array streaming.
    if let Some(first) = body.as_array().and_then(|a| a.first()) {
        return decode(first);
    }
    let err = body.get("error")?;
    // A proxy's `{"error": "text"}`.
    if let Value::String(m) = err {
        return Some(api_error_from(None, Some(m.clone()), None, None));
    }
    let mut e = api_error_from(
        err.get("status")
            .and_then(Value::as_str)
            .map(str::to_string),
        err.get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
        string_or_number(err.get("code")),
        None,
    );
    e.retry_after_ms = err
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(parse_duration_ms);
    // The details' reason is more precise than the status: Gemini answers a
    // bad key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID.
    let reasons = err
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("reason").and_then(Value::as_str));
    for reason in reasons {
        if reason == "API_KEY_INVALID" || reason == "API_KEY_EXPIRED" {
            e.kind = ApiErrorKind::Authentication;
        }
    }
    Some(e)
}

/// A protobuf JSON duration (`"34.4s"`) in milliseconds.
fn parse_duration_ms(d: &str) -> Option<u64> {
    crate::http::decimal_scaled(d.strip_suffix('s')?, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_to_milliseconds() {
        assert_eq!(parse_duration_ms("34.4s"), Some(34_400));
        assert_eq!(parse_duration_ms("2s"), Some(2_000));
        assert_eq!(parse_duration_ms("2m"), None);
        assert_eq!(parse_duration_ms("-1s"), None);
    }
}
