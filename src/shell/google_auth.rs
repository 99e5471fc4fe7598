//! Service-account tokens as the JS half fetches them (Vertex AI): the
//! core reads the key file, builds the JWT's signing input and reads the
//! token endpoint's answer ([`crate::ServiceAccount`]); the JS half signs
//! with WebCrypto and makes the one fetch. Strings in, JSON out: the value
//! as `{"ok": ...}`, or `{"error": ...}` as every boundary error.

use super::error_json;
use crate::json::write::object_text;
use crate::{token_from_response, ServiceAccount};

/// The JWT to sign for the key file `key_file` (its JSON text) at `now_s`:
/// `{"ok": {"input", "key", "tokenUri", "form"}}`, where `key` is the
/// private key's PKCS#8 DER in base64url, and `form` the exchange's body
/// without the JWT (it goes last).
pub fn service_account_jwt(key_file: &str, now_s: f64) -> String {
    let account = match ServiceAccount::from_json(key_file) {
        Ok(a) => a,
        Err(e) => return error_json(&e, "vertex"),
    };
    let input = account.signing_input(now_s as u64);
    let form = account.token_request("").body;
    object_text(|o| {
        let mut ok = o.object("ok");
        ok.str("input", &input)
            .str("key", &crate::base64::url(&account.private_key_pkcs8))
            .str("tokenUri", &account.token_uri)
            .str("form", &form);
    })
}

/// The token endpoint's answer (`status`, `body`) at `now_ms`:
/// `{"ok": {"token", "expiresAt"}}` (ms since the Unix epoch), or the
/// typed error.
pub fn token_answer(status: u16, body: &str, now_ms: f64) -> String {
    match token_from_response(status, body, now_ms as u64) {
        Ok(t) => object_text(|o| {
            let mut ok = o.object("ok");
            ok.str("token", &t.token).uint("expiresAt", t.expires_at_ms);
        }),
        Err(e) => error_json(&e, "vertex"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const KEY_FILE: &str = include_str!("../../tests/fixtures/google/service-account.json");

    #[test]
    fn the_jwt_parts_and_the_answer_cross_as_json() {
        let out: Value = serde_json::from_str(&service_account_jwt(KEY_FILE, 1e9)).unwrap();
        let ok = &out["ok"];
        assert_eq!(ok["tokenUri"], "https://oauth2.googleapis.com/token");
        assert!(ok["input"].as_str().unwrap().contains('.'));
        assert!(ok["key"].as_str().unwrap().starts_with("MII"));
        assert!(ok["form"].as_str().unwrap().ends_with("&assertion="));
        let answer = token_answer(200, r#"{"access_token":"t-1","expires_in":60}"#, 5.0);
        assert_eq!(answer, r#"{"ok":{"token":"t-1","expiresAt":60005}}"#);
    }

    #[test]
    fn errors_are_typed_and_name_the_field() {
        let out: Value = serde_json::from_str(&service_account_jwt("{}", 0.0)).unwrap();
        assert_eq!(out["error"]["name"], "InvalidRequestError");
        assert_eq!(out["error"]["path"], "serviceAccount.client_email");
        let out: Value = serde_json::from_str(&token_answer(401, "{}", 0.0)).unwrap();
        assert_eq!(out["error"]["status"], 401);
    }
}
