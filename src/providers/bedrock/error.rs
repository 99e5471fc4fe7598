//! Bedrock error bodies: `{"message": "..."}`, the exception's name in the
//! `x-amzn-ErrorType` header (read for every provider in
//! `providers/mod.rs`), or by the status ([`TYPES_BY_STATUS`]); a Coral
//! body names it as `__type` (`{"Output": {"__type":
//! "com.amazon.coral.service#UnknownOperationException"}}`, sent with 200).
//! In a stream, an exception is a message of its own (`stream.rs`).

use serde_json::Value;

use crate::error::ApiError;
use crate::providers::api_error_from;

/// The exception each status stands for where the Converse API documents
/// only one (<https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors>),
/// for a body whose header was lost (a proxy, a recording). 429 is
/// `ThrottlingException` or `ModelNotReadyException`: not named.
pub(crate) const TYPES_BY_STATUS: &[(u16, &str)] = &[
    (400, "ValidationException"),
    (403, "AccessDeniedException"),
    (404, "ResourceNotFoundException"),
    (408, "ModelTimeoutException"),
    (424, "ModelErrorException"),
    (500, "InternalServerException"),
    (503, "ServiceUnavailableException"),
];

/// Reads an error body or an exception's payload.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    let message = (body.get("message").or_else(|| body.get("Message")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let coral = (body.get("__type"))
        .or_else(|| crate::json::nested(body, &["Output", "__type"]))
        .and_then(Value::as_str)
        .map(crate::providers::aws_exception_name);
    if message.is_none() && coral.is_none() {
        return None;
    }
    Some(api_error_from(coral, message, None, None))
}
