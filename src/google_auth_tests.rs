use super::*;

const KEY_FILE: &str = include_str!("../tests/fixtures/google/service-account.json");

fn account() -> ServiceAccount {
    ServiceAccount::from_json(KEY_FILE).unwrap()
}

fn json_of(part: &str) -> Value {
    let bytes = crate::base64::bytes(&part.replace('-', "+").replace('_', "/"), false).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn a_key_file_is_read_and_its_key_is_never_shown() {
    let a = account();
    assert_eq!(
        a.client_email,
        "skyl-test@skyl-test.iam.gserviceaccount.com"
    );
    assert_eq!(a.token_uri, "https://oauth2.googleapis.com/token");
    assert_eq!(
        a.private_key_id.as_deref(),
        Some("0123456789abcdef0123456789abcdef01234567")
    );
    // PKCS#8: a SEQUENCE holding the rsaEncryption OID.
    assert_eq!(a.private_key_pkcs8.first(), Some(&0x30));
    let oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    assert!(a.private_key_pkcs8.windows(oid.len()).any(|w| w == oid));
    let shown = format!("{a:?}");
    assert!(shown.contains("<redacted>"));
    assert!(!shown.contains("48, 130"), "{shown}");
}

#[test]
fn the_signing_input_holds_the_claims_google_asks_for() {
    let input = account().signing_input(1_700_000_000);
    let (header, claims) = input.split_once('.').unwrap();
    assert_eq!(
        json_of(header),
        serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": "0123456789abcdef0123456789abcdef01234567"})
    );
    assert_eq!(
        json_of(claims),
        serde_json::json!({
            "iss": "skyl-test@skyl-test.iam.gserviceaccount.com",
            "scope": "https://www.googleapis.com/auth/cloud-platform",
            "aud": "https://oauth2.googleapis.com/token",
            "iat": 1_700_000_000u64,
            "exp": 1_700_003_600u64,
        })
    );
    assert!(!input.contains('=') && !input.contains('+') && !input.contains('/'));
    assert_eq!(ServiceAccount::jwt("a.b", &[0xfb, 0xff]), "a.b.-_8");
}

#[test]
fn the_exchange_is_a_form_post_to_the_token_uri() {
    let r = account().token_request("h.c.s");
    assert_eq!(
        (r.method, r.url.as_str()),
        ("POST", "https://oauth2.googleapis.com/token")
    );
    assert_eq!(
        r.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        r.body,
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=h.c.s"
    );
}

#[test]
fn a_bad_key_file_names_the_field_and_never_quotes_the_key() {
    let path = |text: &str| match ServiceAccount::from_json(text) {
        Err(Error::InvalidRequest { path, message }) => {
            assert!(!message.contains("MII"), "{message}");
            path
        }
        other => panic!("{other:?}"),
    };
    let mut file: Value = serde_json::from_str(KEY_FILE).unwrap();
    assert_eq!(path("not json"), "serviceAccount");
    assert_eq!(path("[]"), "serviceAccount");
    let with = |key: &str, v: Value| {
        let mut f = file.clone();
        f[key] = v;
        f.to_string()
    };
    assert_eq!(
        path(&with("type", "authorized_user".into())),
        "serviceAccount.type"
    );
    assert_eq!(
        path(&with("client_email", Value::Null)),
        "serviceAccount.client_email"
    );
    // Not http(s), or a URL fetch would refuse only when sending.
    for uri in [
        "ftp://x",
        "https://a b/token",
        "https://a/\ntoken",
        "https://é.example/t",
    ] {
        assert_eq!(
            path(&with("token_uri", uri.into())),
            "serviceAccount.token_uri"
        );
    }
    // A PKCS#1 key, a key cut short, a key with a bad character.
    let pem = file["private_key"].as_str().unwrap().to_string();
    let pkcs1 = pem.replace("PRIVATE KEY", "RSA PRIVATE KEY");
    let cut = pem.get(..200).unwrap().to_string();
    let bad = pem.replacen('M', "*", 1);
    for key in [pkcs1, cut, bad, String::new()] {
        assert_eq!(
            path(&with("private_key", key.into())),
            "serviceAccount.private_key"
        );
    }
    // Without token_uri: Google's; a key with "\n" written out reads the same.
    file.as_object_mut().unwrap().remove("token_uri");
    file["private_key"] = pem.replace('\n', "\\n").into();
    let a = ServiceAccount::from_json(&file.to_string()).unwrap();
    assert_eq!(a.token_uri, "https://oauth2.googleapis.com/token");
    assert_eq!(a.private_key_pkcs8, account().private_key_pkcs8);
}

#[test]
fn the_answer_is_a_token_and_its_expiry_or_a_typed_error() {
    let ok = r#"{"access_token":"ya29.c.secret","expires_in":3599,"token_type":"Bearer"}"#;
    let t = token_from_response(200, ok, 1_000).unwrap();
    assert_eq!(
        (t.token.as_str(), t.expires_at_ms),
        ("ya29.c.secret", 3_600_000)
    );
    assert!(!format!("{t:?}").contains("ya29"));
    // A lifetime the server makes up is no panic (tests build with
    // overflow checks, as a Rust app's debug build does): the expiry
    // saturates, and a JWT's at any clock too.
    let huge = r#"{"access_token":"t","expires_in":18446744073709552}"#;
    assert_eq!(
        token_from_response(200, huge, 1).unwrap().expires_at_ms,
        u64::MAX
    );
    assert!(account().signing_input(u64::MAX).contains('.'));
    let refused = r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#;
    let Err(Error::Api(e)) = token_from_response(400, refused, 0) else {
        panic!("an ApiError");
    };
    assert_eq!(e.kind, ApiErrorKind::Authentication);
    assert_eq!(e.status, Some(400));
    assert_eq!(e.provider_type.as_deref(), Some("invalid_grant"));
    assert_eq!(
        e.message,
        "the service account's token exchange failed: invalid_grant: Invalid JWT Signature."
    );
    let Err(Error::Api(e)) = token_from_response(503, "<html>", 0) else {
        panic!("an ApiError");
    };
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ApiErrorKind::Server,
            "the service account's token exchange failed: HTTP 503"
        )
    );
    let Err(Error::Api(e)) = token_from_response(200, r#"{"token_type":"Bearer"}"#, 0) else {
        panic!("an ApiError");
    };
    assert!(e.message.ends_with("no access_token in the answer"));
}

#[test]
fn base64_both_ways() {
    for n in 0..40usize {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
        let url = crate::base64::url(&bytes);
        assert_eq!(url.len(), (n * 4).div_ceil(3));
        let standard = url.replace('-', "+").replace('_', "/");
        assert_eq!(
            crate::base64::bytes(&standard, false).unwrap(),
            bytes,
            "{n}"
        );
    }
    assert_eq!(crate::base64::bytes("TWFu\nTWE=", true).unwrap(), b"ManMa");
    assert_eq!(crate::base64::bytes("TW*u", true), None);
}
