//! Bedrock errors. A body is `{"message": "..."}`, the exception's name
//! in the `x-amzn-ErrorType` header, or only known by the status
//! ([`TYPES_BY_STATUS`]); a Coral body names it as `__type`
//! (`{"Output": {"__type": "com.amazon.coral.service#UnknownOperationException"}}`,
//! sent with 200). In a stream, an exception is a message of its own
//! (`stream.rs`). Each exception has its kind ([`kind_of`]).

use serde_json::Value;

use crate::error::{ApiError, ApiErrorKind};
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

/// The kind of an AWS exception, by its name in any case
/// (`throttlingException` in a stream, `ThrottlingException` in a header).
pub(crate) fn kind_of(name: &str) -> Option<ApiErrorKind> {
    Some(match name.to_ascii_lowercase().as_str() {
        "throttlingexception" => ApiErrorKind::RateLimit,
        "serviceunavailableexception" | "modelnotreadyexception" => ApiErrorKind::Overloaded,
        "internalserverexception" | "modelstreamerrorexception" | "modelerrorexception" => {
            ApiErrorKind::Server
        }
        "validationexception" => ApiErrorKind::BadRequest,
        "accessdeniedexception" => ApiErrorKind::Permission,
        "resourcenotfoundexception" => ApiErrorKind::NotFound,
        "modeltimeoutexception" => ApiErrorKind::RequestTimeout,
        "unrecognizedclientexception" | "invalidsignatureexception" | "expiredtokenexception" => {
            ApiErrorKind::Authentication
        }
        _ => return None,
    })
}

/// The adapter's `error_type`: an HTTP error's exception, by its
/// `x-amzn-ErrorType` header, else by the status.
pub(crate) fn error_type(
    status: u16,
    headers: &[(String, String)],
) -> Option<(String, ApiErrorKind)> {
    let name = (headers.iter())
        .find(|(k, _)| k.eq_ignore_ascii_case("x-amzn-errortype"))
        .map(|(_, v)| exception_name(v))
        .or_else(|| {
            let (_, name) = TYPES_BY_STATUS.iter().find(|(s, _)| *s == status)?;
            Some((*name).to_string())
        })?;
    let kind = kind_of(&name).unwrap_or_else(|| ApiErrorKind::from_status(status));
    Some((name, kind))
}

/// An error with the exception's name as its type, and its kind.
pub(crate) fn exception(name: String, message: Option<String>) -> ApiError {
    let mut e = api_error_from(None, message, None, None);
    e.kind = kind_of(&name).unwrap_or(ApiErrorKind::Other);
    e.provider_type = Some(name);
    e
}

/// Reads an error body or an exception's payload.
pub(crate) fn decode(body: &Value) -> Option<ApiError> {
    let message = (body.get("message").or_else(|| body.get("Message")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let coral = (body.get("__type"))
        .or_else(|| crate::json::nested(body, &["Output", "__type"]))
        .and_then(Value::as_str)
        .map(exception_name);
    match (coral, message) {
        (Some(name), message) => Some(exception(name, message)),
        (None, Some(message)) => Some(api_error_from(None, Some(message), None, None)),
        (None, None) => None,
    }
}

/// An exception's name out of a Coral type (`namespace#Name`) or an
/// `x-amzn-ErrorType` header (`Name:http://internal.amazon.com/...`).
fn exception_name(kind: &str) -> String {
    let name = kind.split_once(':').map_or(kind, |(name, _)| name);
    name.rsplit_once('#')
        .map_or(name, |(_, name)| name)
        .to_string()
}
