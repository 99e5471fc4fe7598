//! Google service-account tokens, sans-IO (Vertex AI on the edge): the key
//! file read, the JWT to sign (RS256, by the driver: WebCrypto holds the
//! RSA code, not this crate), the exchange at the key file's `token_uri`
//! (RFC 7523), and its answer read into a token and its expiry
//! (<https://developers.google.com/identity/protocols/oauth2/service-account#httprest>).
//! A driver caches the token until [`crate::CREDENTIALS_REFRESH_MS`]
//! before it expires, one exchange at a time.
// (A build without gemini or anthropic has no Vertex to sign for.)
#![cfg_attr(not(any(feature = "gemini", feature = "anthropic")), allow(dead_code))]

use std::fmt;

use serde_json::Value;

use crate::error::{ApiError, ApiErrorKind, Error};
use crate::http::HttpRequest;
use crate::json::write::object_text;

/// The scope a Vertex AI token is asked for.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long a token is asked for: an hour, the most Google grants.
pub const TOKEN_LIFETIME_S: u64 = 3600;

/// Where a key file without `token_uri` exchanges its JWTs.
const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// A service account's key, read from its JSON key file.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceAccount {
    /// `client_email`: the JWT's issuer.
    pub client_email: String,
    /// `private_key_id`: the JWT header's `kid`, if the file has one.
    pub private_key_id: Option<String>,
    /// `token_uri`: where the JWT is exchanged, and its audience.
    pub token_uri: String,
    /// The private key (PKCS#8 DER, from `private_key`'s PEM): what the
    /// driver imports to sign with. Never shown by `Debug`.
    pub private_key_pkcs8: Vec<u8>,
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("private_key_id", &self.private_key_id)
            .field("token_uri", &self.token_uri)
            .field("private_key_pkcs8", &"<redacted>")
            .finish()
    }
}

/// A token and when it expires (ms since the Unix epoch).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessToken {
    /// The bearer token. Never shown by `Debug`.
    pub token: String,
    /// When it expires.
    pub expires_at_ms: u64,
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"<redacted>")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

impl ServiceAccount {
    /// Reads a key file (its JSON text). The errors name the field
    /// (`serviceAccount.private_key`) and never quote the key.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        let bad = |field: &str, why: &str| {
            Error::invalid_request(format!("serviceAccount.{field}"), why.to_string())
        };
        let Ok(Value::Object(file)) = crate::json::read::parse(text) else {
            return Err(Error::invalid_request(
                "serviceAccount",
                "must be a service account's JSON key file (an object)",
            ));
        };
        let text_of = |field: &str| file.get(field).and_then(Value::as_str);
        if text_of("type").is_some_and(|t| t != "service_account") {
            return Err(bad(
                "type",
                "must be \"service_account\" (a user's credentials are not a key file)",
            ));
        }
        let client_email = text_of("client_email")
            .filter(|e| !e.is_empty())
            .ok_or_else(|| bad("client_email", "must be a string"))?;
        let pem = text_of("private_key").ok_or_else(|| bad("private_key", "must be a string"))?;
        let private_key_pkcs8 = pkcs8(pem).ok_or_else(|| {
            bad(
                "private_key",
                "must be a PEM \"-----BEGIN PRIVATE KEY-----\" block (PKCS#8), as the key file has it",
            )
        })?;
        let token_uri = match text_of("token_uri") {
            // (No blank, control or non-ASCII byte: fetch would refuse
            // such a URL only when sending, as if the network had failed.)
            Some(uri)
                if (uri.starts_with("https://") || uri.starts_with("http://"))
                    && uri.bytes().all(|b| b.is_ascii_graphic()) =>
            {
                uri
            }
            Some(_) => return Err(bad("token_uri", "must be an http(s) URL")),
            None => TOKEN_URI,
        };
        Ok(ServiceAccount {
            client_email: client_email.to_string(),
            private_key_id: text_of("private_key_id").map(str::to_string),
            token_uri: token_uri.to_string(),
            private_key_pkcs8,
        })
    }

    /// The JWT's signing input at `now_s` (seconds since the Unix epoch):
    /// `base64url(header) "." base64url(claims)`, to sign with RS256
    /// (RSASSA-PKCS1-v1_5, SHA-256); the JWT is the input, ".", and the
    /// signature in base64url ([`Self::jwt`]).
    pub fn signing_input(&self, now_s: u64) -> String {
        let header = object_text(|h| {
            h.str("alg", "RS256").str("typ", "JWT");
            h.opt_str("kid", self.private_key_id.as_deref());
        });
        let claims = object_text(|c| {
            c.str("iss", &self.client_email)
                .str("scope", CLOUD_PLATFORM_SCOPE)
                .str("aud", &self.token_uri)
                .uint("iat", now_s)
                .uint("exp", now_s.saturating_add(TOKEN_LIFETIME_S));
        });
        format!(
            "{}.{}",
            crate::base64::url(header.as_bytes()),
            crate::base64::url(claims.as_bytes())
        )
    }

    /// The JWT: the signing input and its signature.
    pub fn jwt(signing_input: &str, signature: &[u8]) -> String {
        format!("{signing_input}.{}", crate::base64::url(signature))
    }

    /// The exchange of a signed JWT for a token: a form POST to the key
    /// file's `token_uri`.
    pub fn token_request(&self, jwt: &str) -> HttpRequest {
        HttpRequest {
            method: "POST",
            url: self.token_uri.clone(),
            headers: vec![(
                "content-type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            )],
            body: format!(
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={jwt}"
            ),
        }
    }
}

/// The token endpoint's answer (`status`, `body`) at `now_ms`: the token
/// and its expiry, or a typed error (an `ApiError` of kind
/// `authentication` for a refused key, with Google's `error` and
/// `error_description`; never the body, which could hold a token).
pub fn token_from_response(status: u16, body: &str, now_ms: u64) -> Result<AccessToken, Error> {
    let parsed = crate::json::read::parse(body).ok();
    let field = |k: &str| parsed.as_ref().and_then(|v| v.get(k));
    let token = field("access_token").and_then(Value::as_str);
    if let (200..=299, Some(token)) = (status, token.filter(|t| !t.is_empty())) {
        let lifetime = field("expires_in")
            .and_then(Value::as_u64)
            .unwrap_or(TOKEN_LIFETIME_S);
        return Ok(AccessToken {
            token: token.to_string(),
            expires_at_ms: now_ms.saturating_add(lifetime.saturating_mul(1000)),
        });
    }
    let kind = match status {
        429 | 500..=599 => ApiErrorKind::from_status(status),
        _ => ApiErrorKind::Authentication,
    };
    let code = field("error").and_then(Value::as_str).map(str::to_string);
    let description = field("error_description").and_then(Value::as_str);
    let why = match (code.as_deref(), description) {
        (Some(c), Some(d)) => format!("{c}: {d}"),
        (Some(c), None) => c.to_string(),
        (None, _) if (200..=299).contains(&status) => "no access_token in the answer".into(),
        (None, _) => format!("HTTP {status}"),
    };
    let message: String = format!("the service account's token exchange failed: {why}")
        .chars()
        .take(300)
        .collect();
    let mut e = ApiError::new(kind, message);
    e.status = Some(status);
    e.provider_type = code;
    Err(Error::Api(Box::new(e)))
}

/// The PKCS#8 DER of a PEM `PRIVATE KEY` block.
fn pkcs8(pem: &str) -> Option<Vec<u8>> {
    const BEGIN: &[u8] = b"-----BEGIN PRIVATE KEY-----";
    const END: &[u8] = b"-----END PRIVATE KEY-----";
    let pem = pem.as_bytes();
    let start = crate::policy::find(pem, BEGIN, 0)? + BEGIN.len();
    let end = crate::policy::find(pem, END, start)?;
    // The base64 between (its line breaks skipped by the decoder), without
    // the two characters `\n` a key file pasted into an env var may carry.
    let mut body = Vec::with_capacity(end - start);
    let mut bytes = pem.get(start..end)?.iter().copied().peekable();
    while let Some(b) = bytes.next() {
        if b == b'\\' && bytes.peek() == Some(&b'n') {
            bytes.next();
        } else {
            body.push(b);
        }
    }
    let der = crate::base64::bytes(std::str::from_utf8(&body).ok()?, true)?;
    // A DER SEQUENCE, long enough to hold an RSA key.
    (der.first() == Some(&0x30) && der.len() > 64).then_some(der)
}

#[cfg(test)]
#[path = "google_auth_tests.rs"]
mod tests;
