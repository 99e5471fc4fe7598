//! AWS Signature Version 4, sans-IO: an [`HttpRequest`] and credentials
//! in, the request with its `x-amz-date`, `x-amz-security-token` and
//! `authorization` headers out; the time is the caller's
//! (<https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html>).
//!
//! The canonical URI encodes each segment of the path as the request
//! sends it, so a path already percent-encoded once (Bedrock's
//! `/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream`) is
//! encoded twice (`%253A0`), as every AWS service but S3 expects; a
//! client that encodes once gets `SignatureDoesNotMatch`.

use std::fmt;

use crate::http::{percent_encode, HttpRequest};
use crate::sha256::{hex, hmac, sha256};

/// AWS credentials: an access key and its secret, and the session token
/// of temporary credentials. `Debug` shows the key id only.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AwsCredentials {
    /// `AKIA...` or `ASIA...`.
    pub access_key_id: String,
    /// The secret access key. Never shown by `Debug`.
    pub secret_access_key: String,
    /// The session token of temporary (STS) credentials. Never shown by
    /// `Debug`.
    pub session_token: Option<String>,
}

impl AwsCredentials {
    /// Long-term credentials.
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        AwsCredentials {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token: None,
        }
    }

    /// With the session token of temporary credentials.
    #[must_use]
    pub fn with_session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(token.into());
        self
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// What a signature is for: the region and service of its scope, and the
/// time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigningScope<'a> {
    /// `us-east-1`, ...
    pub region: &'a str,
    /// `bedrock`, ...
    pub service: &'a str,
    /// The caller's clock: milliseconds since the Unix epoch.
    pub now_ms: u64,
}

/// The intermediate texts of a signature, for tests against AWS's
/// published vectors.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Signature {
    pub(crate) canonical_request: String,
    pub(crate) string_to_sign: String,
    pub(crate) signature: String,
}

/// Signs `http` in place: adds `x-amz-date`, `x-amz-security-token` (for
/// temporary credentials) and `authorization`, replacing any of the same
/// name. Every header of the request is signed, with `host`.
///
/// ```
/// use skyl::{sign_sigv4, AwsCredentials, HttpRequest, SigningScope};
///
/// let mut http = HttpRequest {
///     method: "POST",
///     url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse".into(),
///     headers: vec![("content-type".into(), "application/json".into())],
///     body: r#"{"messages":[]}"#.into(),
/// };
/// let credentials = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
/// let scope = SigningScope { region: "us-east-1", service: "bedrock", now_ms: 1_440_938_160_000 };
/// sign_sigv4(&mut http, &credentials, &scope);
/// assert_eq!(http.header("x-amz-date"), Some("20150830T123600Z"));
/// assert!(http.header("authorization").unwrap().starts_with(
///     "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, \
///      SignedHeaders=content-type;host;x-amz-date, Signature="
/// ));
/// ```
pub fn sign(http: &mut HttpRequest, credentials: &AwsCredentials, scope: &SigningScope<'_>) {
    let _ = signed(http, credentials, scope, true, false);
}

/// [`sign`], returning its intermediate texts; `sign_token`: whether the
/// session token is signed (AWS's vectors leave it out in some cases);
/// `body_header`: whether `x-amz-content-sha256` is sent (S3's rule;
/// some vectors).
pub(crate) fn signed(
    http: &mut HttpRequest,
    credentials: &AwsCredentials,
    scope: &SigningScope<'_>,
    sign_token: bool,
    body_header: bool,
) -> Signature {
    let date_time = amz_date(scope.now_ms);
    let date = date_time.get(..8).unwrap_or_default().to_string();
    let (host, path, query) = split_url(&http.url);
    let host = host.to_string();
    let (path, query) = (canonical_path(path), canonical_query(query));
    let payload = hex(&sha256(http.body.as_bytes()));

    let replaced = ["authorization", "x-amz-date", "x-amz-security-token"];
    http.headers
        .retain(|(k, _)| !replaced.iter().any(|r| k.eq_ignore_ascii_case(r)));
    if body_header {
        http.headers
            .push(("x-amz-content-sha256".into(), payload.clone()));
    }
    http.headers.push(("x-amz-date".into(), date_time.clone()));
    let token = credentials.session_token.clone();
    if let (Some(token), true) = (&token, sign_token) {
        http.headers
            .push(("x-amz-security-token".into(), token.clone()));
    }

    // The headers, by lowercase name: values trimmed, runs of spaces
    // (and folded lines) made one space, a repeated name's values joined
    // with commas in the order sent.
    let mut headers: Vec<(String, String)> = Vec::new();
    let has_host = http
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("host"));
    let all = (http.headers.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain((!has_host).then_some(("host", host.as_str())));
    for (name, value) in all {
        let name = name.to_ascii_lowercase();
        let mut spaced = String::with_capacity(value.len());
        for word in value.split_ascii_whitespace() {
            if !spaced.is_empty() {
                spaced.push(' ');
            }
            spaced.push_str(word);
        }
        let value = spaced;
        match headers.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                v.push(',');
                v.push_str(&value);
            }
            // In order of name, by insertion (a sort would link a sort
            // routine into the wasm).
            None => {
                let at = (headers.iter())
                    .position(|(n, _)| *n > name)
                    .unwrap_or(headers.len());
                headers.insert(at, (name, value));
            }
        }
    }
    let mut signed_headers = String::new();
    for (name, _) in &headers {
        if !signed_headers.is_empty() {
            signed_headers.push(';');
        }
        signed_headers.push_str(name);
    }
    let mut canonical_request = format!("{}\n{path}\n{query}\n", http.method);
    for (name, value) in &headers {
        canonical_request.push_str(&format!("{name}:{value}\n"));
    }
    canonical_request.push_str(&format!("\n{signed_headers}\n{payload}"));

    let scope_text = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{date_time}\n{scope_text}\n{}",
        hex(&sha256(canonical_request.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{}", credentials.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [scope.region, scope.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, string_to_sign.as_bytes()));
    http.headers.push((
        "authorization".into(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope_text}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    if let (Some(token), false) = (token, sign_token) {
        http.headers.push(("x-amz-security-token".into(), token));
    }
    Signature {
        canonical_request,
        string_to_sign,
        signature,
    }
}

/// `https://host/path?query` as its host, path (`/` when empty) and query.
fn split_url(url: &str) -> (&str, &str, &str) {
    let rest = crate::policy::find(url.as_bytes(), b"://", 0)
        .and_then(|i| url.get(i + 3..))
        .unwrap_or(url);
    // (`find` of an ASCII byte: a char boundary, so `split_at_checked`
    // always splits; it links no panic path.)
    let at = rest.find('/').or_else(|| rest.find('?'));
    let (host, path_query) = at
        .and_then(|i| rest.split_at_checked(i))
        .unwrap_or((rest, ""));
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    (host, if path.is_empty() { "/" } else { path }, query)
}

/// The path with `.` and `..` segments and empty ones resolved, each
/// segment URI-encoded as sent (so an encoded one is encoded again).
fn canonical_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let trailing = path.ends_with('/') && !segments.is_empty();
    let mut out = String::from("/");
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&percent_encode(s.as_bytes(), b""));
    }
    if trailing {
        out.push('/');
    }
    out
}

/// The query's parameters decoded, encoded again by one rule, sorted by
/// name then value.
fn canonical_query(query: &str) -> String {
    let mut params: Vec<(String, String)> = Vec::new();
    for p in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        let param = (
            percent_encode(&decode(k), b""),
            percent_encode(&decode(v), b""),
        );
        // (By insertion: a sort would link a sort routine into the wasm.)
        let at = params
            .iter()
            .position(|q| *q > param)
            .unwrap_or(params.len());
        params.insert(at, param);
    }
    let mut out = String::new();
    for (k, v) in &params {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// `%XX` decoded (a `%` without two hex digits stays as it is).
fn decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hexes = bytes.get(i + 1..i + 3).and_then(|h| {
            let h = std::str::from_utf8(h).ok()?;
            u8::from_str_radix(h, 16).ok()
        });
        match (b, hexes) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// `YYYYMMDDTHHMMSSZ` for milliseconds since the epoch (UTC).
fn amz_date(now_ms: u64) -> String {
    let secs = now_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01: eras of 400
/// years (146,097 days) counted from 0000-03-01, so that a leap day ends
/// its year.
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days from 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097; // day of the era, 0..=146_096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // 0..=365, from March 1
    let mp = (5 * doy + 2) / 153; // 0 = March .. 11 = February
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
