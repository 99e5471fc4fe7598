//! The seam between the core and any transport: plain data in, plain data
//! out. The wasm shell turns an [`HttpRequest`] into a `fetch` call; a native
//! user can hand it to any HTTP client.

use std::fmt;

/// Header names whose values are credentials, redacted from `Debug` output.
const SECRET_HEADERS: [&str; 4] = ["authorization", "x-api-key", "x-goog-api-key", "api-key"];

/// Whether a header carries a credential.
pub(crate) fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// Headers with credential values replaced by `<redacted>`, for `Debug`.
pub(crate) fn redacted(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(k, v)| {
            if is_secret_header(k) {
                (k.as_str(), "<redacted>")
            } else {
                (k.as_str(), v.as_str())
            }
        })
        .collect()
}

/// An HTTP request, ready to send.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Always `POST` for chat requests.
    pub method: &'static str,
    /// The full URL.
    pub url: String,
    /// Header names (lowercase) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
}

impl HttpRequest {
    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for HttpRequest {
    /// Like a derived `Debug`, with credential header values replaced by
    /// `<redacted>`, so a logged request never shows the API key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &redacted(&self.headers))
            .field("body", &self.body)
            .finish()
    }
}

/// Reads a retry delay from response headers: `retry-after-ms` (OpenAI,
/// Anthropic), else `retry-after` in seconds. HTTP-date values are not
/// understood (the core has no clock) and give `None`.
pub(crate) fn retry_after_ms(headers: &[(String, String)]) -> Option<u64> {
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(ms) = find("retry-after-ms").and_then(|v| decimal_scaled(v, 1)) {
        return Some(ms);
    }
    decimal_scaled(find("retry-after")?, 1000)
}

/// A non-negative decimal (`"2"`, `"1.5"`, `"34.4"`) times `scale`, rounded
/// down; `None` for anything else (signs, exponents, dates, overflow).
/// Integer arithmetic only: no float parser in the wasm.
pub(crate) fn decimal_scaled(text: &str, scale: u64) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || int.len() > 15 {
        return None;
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut value = whole.checked_mul(scale)?;
    // Add the fraction's share of `scale`, one digit at a time.
    let mut unit = scale;
    for b in frac.bytes().take(9) {
        unit /= 10;
        value = value.checked_add(u64::from(b - b'0').checked_mul(unit)?)?;
    }
    Some(value)
}

/// Reads the provider's request id from response headers.
pub(crate) fn request_id(headers: &[(String, String)]) -> Option<String> {
    ["x-request-id", "request-id", "x-goog-request-id", "cf-ray"]
        .iter()
        .find_map(|name| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn debug_output_never_shows_a_credential() {
        let req = HttpRequest {
            method: "POST",
            url: "https://example.test/v1".into(),
            headers: h(&[
                ("Authorization", "Bearer sk-SECRET"),
                ("x-api-key", "sk-ant-SECRET"),
                ("x-goog-api-key", "AIzaSECRET"),
                ("content-type", "application/json"),
            ]),
            body: "{}".into(),
        };
        let shown = format!("{req:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("application/json"));
        assert_eq!(req.header("AUTHORIZATION"), Some("Bearer sk-SECRET"));
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after_seconds() {
        assert_eq!(
            retry_after_ms(&h(&[("retry-after", "2"), ("retry-after-ms", "150")])),
            Some(150)
        );
        assert_eq!(retry_after_ms(&h(&[("Retry-After", "1.5")])), Some(1500));
        assert_eq!(
            retry_after_ms(&h(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            None
        );
        assert_eq!(retry_after_ms(&h(&[("retry-after", "-3")])), None);
    }

    #[test]
    fn decimals_scale_without_floats() {
        assert_eq!(decimal_scaled("2", 1000), Some(2000));
        assert_eq!(decimal_scaled("1.5", 1000), Some(1500));
        assert_eq!(decimal_scaled("34.4", 1000), Some(34_400));
        assert_eq!(decimal_scaled(".25", 1000), Some(250));
        assert_eq!(decimal_scaled("150", 1), Some(150));
        assert_eq!(decimal_scaled("0.0001", 1000), Some(0));
        for bad in ["", ".", "-1", "1e3", "1.2.3", " 1", "99999999999999999999"] {
            assert_eq!(decimal_scaled(bad, 1000), None, "{bad:?}");
        }
    }

    #[test]
    fn request_id_is_read_from_any_provider_header() {
        assert_eq!(
            request_id(&h(&[("request-id", "req_1")])),
            Some("req_1".into())
        );
        assert_eq!(request_id(&h(&[("x-request-id", "r2")])), Some("r2".into()));
        assert_eq!(request_id(&h(&[])), None);
    }
}
