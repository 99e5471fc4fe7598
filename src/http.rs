//! The seam between the core and any transport: plain data in, plain data
//! out. The wasm shell turns an [`HttpRequest`] into a `fetch` call; a native
//! user can hand it to any HTTP client.

use std::fmt;

/// Header names whose values are credentials, redacted from `Debug` output.
pub(crate) const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "x-amz-security-token",
];

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

/// The characters an HTTP header name may have besides ASCII letters and
/// digits (RFC 9110's `tchar`), which fetch checks.
pub(crate) const HEADER_NAME_SYMBOLS: &str = "!#$%&'*+-.^_`|~";

/// Whether `name` can be sent as a header name: one or more `tchar`.
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && (name.bytes())
            .all(|b| b.is_ascii_alphanumeric() || HEADER_NAME_SYMBOLS.as_bytes().contains(&b))
}

/// Why `value` cannot be sent as a header value, or `None`. fetch trims
/// the value's outer spaces, tabs and line breaks, then refuses it if it
/// holds NUL, CR, LF or a UTF-16 unit above U+00FF (a pasted curly quote,
/// say). The message names the unit and its position, never the value,
/// which may be a key.
pub(crate) fn header_value_problem(value: &str) -> Option<String> {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let bytes = value.as_bytes();
    let start = bytes.iter().position(|b| !space(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !space(b))
        .map_or(start, |i| i + 1);
    // (Both ends are next to ASCII bytes, so on character boundaries.)
    let trimmed = value.get(start..end).unwrap_or("");
    let (at, unit) = (trimmed.encode_utf16().enumerate())
        .find(|&(_, u)| matches!(u, 0 | 0x0A | 0x0D) || u > 0xFF)?;
    // (Written by hand: `{:04X}` would link core's padded hex formatting,
    // 5.7 KiB of gzip, into the wasm for this one message.)
    let mut out = String::from("has a character that cannot be sent in an HTTP header (U+");
    for shift in [12, 8, 4, 0] {
        let digit = (unit >> shift) & 0xF;
        out.push(char::from_digit(u32::from(digit), 16).map_or('0', |c| c.to_ascii_uppercase()));
    }
    out.push_str(" at position ");
    out.push_str(itoa::Buffer::new().format(at as u64 + 1));
    out.push_str("; a pasted quote or line break?)");
    Some(out)
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
    /// `<redacted>`, so a logged request never shows the API key, and the
    /// body by its length: a body can carry a credential (a token
    /// exchange's signed JWT) as well as the user's messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &redacted(&self.headers))
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

/// The delay a response asks for before a retry, in milliseconds, from its
/// headers: `retry-after-ms` (OpenAI, Anthropic), else `retry-after` in
/// seconds or as an HTTP date (RFC 9110, section 10.2.3). A date is read
/// against `now_ms`, the driver's clock in milliseconds since the Unix
/// epoch (the core has none): without it, or for a date already past
/// (`0` then), see the result. `None` when neither header is usable.
pub fn retry_after_ms(headers: &[(String, String)], now_ms: Option<u64>) -> Option<u64> {
    if let Some(ms) = header(headers, "retry-after-ms").and_then(|v| decimal_scaled(v, 1)) {
        return Some(ms);
    }
    let after = header(headers, "retry-after")?;
    decimal_scaled(after, 1000).or_else(|| Some(http_date_ms(after)?.saturating_sub(now_ms?)))
}

/// A header's first value, trimmed, by case-insensitive name.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// An HTTP date (RFC 9110, section 5.6.7) in milliseconds since the Unix
/// epoch: the IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the two
/// obsolete forms a recipient must also read, RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). `None` for anything else. Read as a list
/// of words and numbers, whatever separates them (spaces, `,`, `-`, `:`):
/// small code in the wasm, and lenient where nothing is ambiguous.
pub(crate) fn http_date_ms(text: &str) -> Option<u64> {
    let mut tokens: [&[u8]; 8] = [&[]; 8];
    let mut n = 0;
    let separator = |b: &u8| matches!(b, b' ' | b'\t' | b',' | b'-' | b':');
    for token in text.as_bytes().split(separator).filter(|t| !t.is_empty()) {
        *tokens.get_mut(n)? = token;
        n += 1;
    }
    // The day name, then day month year h m s "GMT"; or (asctime) the
    // day name, then month day h m s year.
    let [_, a, b, c, d, e, f, g] = tokens;
    let (day, month, year, hms) = match n {
        8 if g == b"GMT" => (a, b, c, [d, e, f]),
        7 => (b, a, f, [c, d, e]),
        _ => return None,
    };
    let year = match year.len() {
        4 => number(year)?,
        // RFC 850's two digits: RFC 9110 reads a year more than 50 years
        // ahead as in the past century; a retry date is near now, so 70
        // to 99 are 19xx and the rest 20xx, until 2070.
        2 => number(year).map(|y| if y < 70 { 2000 + y } else { 1900 + y })?,
        _ => return None,
    };
    const MONTHS: [&[u8]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let small = |t: &[u8], max: u64| number(t).filter(|&v| t.len() <= 2 && v <= max);
    let day = small(day, 31).filter(|&d| d >= 1)?;
    let [h, m, s] = hms;
    let (h, m, s) = (small(h, 23)?, small(m, 59)?, small(s, 60)?);
    if year < 1970 {
        return None;
    }
    // Days from the civil date (the proleptic Gregorian calendar), with
    // March as the year's first month so that leap days come last.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era_days = (y / 400) * 146_097;
    let yoe = y % 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let days = era_days + yoe * 365 + yoe / 4 - yoe / 100 + doy;
    // 719_468: the days from 0000-03-01 to 1970-01-01.
    let secs = (days.checked_sub(719_468)? * 86_400) + h * 3_600 + m * 60 + s;
    secs.checked_mul(1000)
}

/// A decimal of 1 to 4 digits.
fn number(digits: &[u8]) -> Option<u64> {
    let ok = (1..=4).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit);
    ok.then(|| (digits.iter()).fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
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

/// The response headers that carry the provider's request id, in the
/// order they are looked for: OpenAI's and the OpenAI-compatible servers',
/// Anthropic's, Gemini's, Amazon's (Bedrock), then Cloudflare's ray id (a
/// proxy in front).
pub const REQUEST_ID_HEADERS: [&str; 5] = [
    "x-request-id",
    "request-id",
    "x-goog-request-id",
    "x-amzn-requestid",
    "cf-ray",
];

/// The provider's request id from response headers: the first of
/// [`REQUEST_ID_HEADERS`] that is present and not empty.
pub fn request_id(headers: &[(String, String)]) -> Option<String> {
    REQUEST_ID_HEADERS.iter().find_map(|name| {
        headers
            .iter()
            .find(|(k, v)| k.eq_ignore_ascii_case(name) && !v.is_empty())
            .map(|(_, v)| v.clone())
    })
}

/// `bytes` as one URL path segment: every byte but the unreserved ones
/// (RFC 3986: `A-Z a-z 0-9 - _ . ~`) and those in `keep` as `%XX`. SigV4
/// keeps none; a Vertex model id keeps `@` (`claude-sonnet-4@20250514`),
/// as Google writes it.
pub(crate) fn percent_encode(bytes: &[u8], keep: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let digit = |n: u8| char::from(DIGITS.get(usize::from(n)).copied().unwrap_or(b'0'));
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') || keep.contains(&b)
        {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(digit(b >> 4));
            out.push(digit(b & 15));
        }
    }
    out
}

/// The host (and port) of `url`, for messages: what is between the
/// scheme's `//` and the path, without any user info; the whole text if it
/// has no `//`. (Bytes, not `str` patterns: a substring search would link
/// the two-way searcher and its panic messages into the wasm.)
pub(crate) fn host(url: &str) -> &str {
    let start = (url.as_bytes().windows(2))
        .position(|w| w == b"//")
        .map_or(0, |i| i + 2);
    let rest = url.get(start..).unwrap_or(url);
    let end = (rest.bytes())
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = rest.get(..end).unwrap_or(rest);
    let at = (authority.bytes())
        .rposition(|b| b == b'@')
        .map_or(0, |i| i + 1);
    authority.get(at..).unwrap_or(authority)
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
    fn a_path_segment_keeps_unreserved_bytes_and_what_is_asked() {
        assert_eq!(percent_encode(b"gemini-2.5-flash", b""), "gemini-2.5-flash");
        assert_eq!(percent_encode(b"a/b:c?d", b""), "a%2Fb%3Ac%3Fd");
        assert_eq!(percent_encode(b"claude@2025", b""), "claude%402025");
        assert_eq!(percent_encode(b"claude@2025", b"@"), "claude@2025");
        assert_eq!(percent_encode("é ".as_bytes(), b"@"), "%C3%A9%20");
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
            body: "grant_type=x&assertion=eyJ.SECRET.sig".into(),
        };
        let shown = format!("{req:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("application/json") && shown.contains("<37 bytes>"));
        assert_eq!(req.header("AUTHORIZATION"), Some("Bearer sk-SECRET"));
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after_seconds() {
        let now = Some(1_445_412_470_000);
        assert_eq!(
            retry_after_ms(&h(&[("retry-after", "2"), ("retry-after-ms", "150")]), now),
            Some(150)
        );
        assert_eq!(
            retry_after_ms(&h(&[("Retry-After", "1.5")]), None),
            Some(1500)
        );
        assert_eq!(retry_after_ms(&h(&[("retry-after", "-3")]), now), None);
        assert_eq!(retry_after_ms(&h(&[]), now), None);
    }

    /// A date is read against the driver's clock; without one, or when
    /// it is not a date, there is no delay; one already past is 0.
    #[test]
    fn retry_after_as_an_http_date_needs_the_drivers_clock() {
        // Wed, 21 Oct 2015 07:28:00 GMT is 1_445_412_480_000 ms.
        let date = |v: &str| h(&[("retry-after", v)]);
        let now = 1_445_412_470_000;
        for (value, now, want) in [
            ("Wed, 21 Oct 2015 07:28:00 GMT", Some(now), Some(10_000)),
            ("Wednesday, 21-Oct-15 07:28:00 GMT", Some(now), Some(10_000)),
            ("Wed Oct 21 07:28:00 2015", Some(now), Some(10_000)),
            ("  Wed,  21 Oct 2015 07:28:00 GMT ", Some(now), Some(10_000)),
            ("Wed, 21 Oct 2015 07:28:00 GMT", Some(now + 60_000), Some(0)),
            ("Wed, 21 Oct 2015 07:28:00 GMT", None, None),
            ("Wed, 21 Oct 2015 07:28:00 UTC", Some(now), None),
            ("tomorrow", Some(now), None),
        ] {
            assert_eq!(retry_after_ms(&date(value), now), want, "{value:?}");
        }
        // retry-after-ms still wins over a date.
        let both = h(&[
            ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ("retry-after-ms", "5"),
        ]);
        assert_eq!(retry_after_ms(&both, Some(now)), Some(5));
    }

    #[test]
    fn http_dates_in_every_form_rfc_9110_names() {
        for (text, ms) in [
            ("Thu, 01 Jan 1970 00:00:00 GMT", Some(0)),
            ("Sun, 06 Nov 1994 08:49:37 GMT", Some(784_111_777_000)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", Some(784_111_777_000)),
            ("Sun Nov  6 08:49:37 1994", Some(784_111_777_000)),
            ("Tue, 29 Feb 2000 12:00:00 GMT", Some(951_825_600_000)),
            ("Fri, 01 Mar 2024 00:00:00 GMT", Some(1_709_251_200_000)),
            ("Thu, 31 Dec 2099 23:59:59 GMT", Some(4_102_444_799_000)),
            ("Thursday, 01-Jan-70 00:00:00 GMT", Some(0)),
            ("Sun, 06 Nov 1994 08:49:37", None),
            ("Sun, 06 Foo 1994 08:49:37 GMT", None),
            ("Sun, 32 Nov 1994 08:49:37 GMT", None),
            ("Sun, 06 Nov 1994 24:00:00 GMT", None),
            ("Sun, 06 Nov 1994 08:49 GMT", None),
            ("Sun, 06 Nov 1969 08:49:37 GMT", None),
            ("Sun, 06 Nov 994 08:49:37 GMT", None),
            ("Sunday, 06-Nov-94-1 08:49:37 GMT", None),
            ("Sun Nov  6 08:49:37 1994 GMT extra", None),
            ("", None),
            ("Sun, +6 Nov 1994 08:49:37 GMT", None),
            ("Sun, 006 Nov 1994 08:49:37 GMT", None),
        ] {
            assert_eq!(http_date_ms(text), ms, "{text:?}");
        }
    }

    #[test]
    fn a_host_is_named_without_scheme_path_or_user_info() {
        assert_eq!(host("https://api.openai.com/v1/chat"), "api.openai.com");
        assert_eq!(host("http://127.0.0.1:9/v1"), "127.0.0.1:9");
        assert_eq!(host("http://user:pw@example.test?q#f"), "example.test");
        assert_eq!(host("example.test"), "example.test");
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
        // Bedrock's, as AWS writes it.
        assert_eq!(
            request_id(&h(&[("cf-ray", "ray"), ("x-amzn-RequestId", "a1")])),
            Some("a1".into())
        );
        // In the list's order, whatever the headers' order; empty skipped.
        assert_eq!(
            request_id(&h(&[
                ("cf-ray", "ray"),
                ("X-Goog-Request-Id", "g"),
                ("request-id", "")
            ])),
            Some("g".into())
        );
    }
}
