//! An error payload's fields as an [`ApiError`], shared by every adapter's
//! error decoder.

use crate::error::{ApiError, ApiErrorKind};

pub(crate) fn fallback_message(status: u16, body: &str) -> String {
    let text: String = body.trim().chars().take(500).collect();
    if text.is_empty() {
        format!("HTTP {status}")
    } else {
        text
    }
}

/// An error payload's fields, as every provider's error decoder reads them.
pub(crate) fn api_error_from(
    provider_type: Option<String>,
    message: Option<String>,
    code: Option<String>,
    param: Option<String>,
) -> ApiError {
    let kind = provider_type
        .as_deref()
        .and_then(ApiErrorKind::from_provider_type)
        .unwrap_or(ApiErrorKind::Other);
    let message = message.unwrap_or_else(|| "the provider reported an error".into());
    let mut e = ApiError::new(kind, message);
    (e.provider_type, e.code, e.param) = (provider_type, code, param);
    e
}
