//! SigV4 against AWS's published test vectors (`tests/fixtures/sigv4/`),
//! and Bedrock's model ids, whose path is encoded twice.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sigv4")
}

/// A vector's `request.txt`: its request line, headers (a line that
/// starts with a space continues the header before) and body.
fn request(text: &str) -> HttpRequest {
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let line = lines.next().unwrap();
    let (method, rest) = line.split_once(' ').unwrap();
    let target = rest.strip_suffix(" HTTP/1.1").unwrap();
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with(' ') {
            let last = headers.last_mut().unwrap();
            last.1.push('\n');
            last.1.push_str(line);
            continue;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.into(), v.into()));
    }
    HttpRequest {
        method: match method {
            "GET" => "GET",
            "POST" => "POST",
            other => panic!("{other}"),
        },
        url: format!("https://example.amazonaws.com{target}"),
        headers,
        body: body.into(),
    }
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn every_normalizing_vector_of_aws_gives_its_canonical_request_string_and_signature() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(vectors())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut checked = 0;
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let context: Value = serde_json::from_str(&read(&dir, "context.json")).unwrap();
        if context["normalize"] == false {
            continue; // (S3's rule: the path as it is)
        }
        let c = &context["credentials"];
        let mut credentials = AwsCredentials::new(
            c["access_key_id"].as_str().unwrap(),
            c["secret_access_key"].as_str().unwrap(),
        );
        if let Some(token) = c["token"].as_str() {
            credentials = credentials.with_session_token(token);
        }
        // 2015-08-30T12:36:00Z, as every vector has it.
        assert_eq!(context["timestamp"], "2015-08-30T12:36:00Z", "{name}");
        let scope = SigningScope {
            region: context["region"].as_str().unwrap(),
            service: context["service"].as_str().unwrap(),
            now_ms: 1_440_938_160_000,
        };
        let mut http = request(&read(&dir, "request.txt"));
        let sign_token = context["omit_session_token"] != true;
        let body_header = context["sign_body"] == true;
        let got = signed(&mut http, &credentials, &scope, sign_token, body_header);
        assert_eq!(
            got.canonical_request,
            read(&dir, "header-canonical-request.txt"),
            "{name}: canonical request"
        );
        assert_eq!(
            got.string_to_sign,
            read(&dir, "header-string-to-sign.txt"),
            "{name}"
        );
        assert_eq!(
            got.signature,
            read(&dir, "header-signature.txt").trim(),
            "{name}"
        );
        let auth = http.header("authorization").unwrap();
        assert!(auth.ends_with(&got.signature), "{name}");
        assert_eq!(
            http.header("x-amz-security-token"),
            credentials.session_token.as_deref(),
            "{name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 31, "vectors");
}

#[test]
fn a_bedrock_model_id_with_a_colon_or_an_arn_is_encoded_twice_in_the_canonical_uri() {
    let credentials =
        AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    let scope = SigningScope {
        region: "us-east-1",
        service: "bedrock",
        now_ms: 1_440_938_160_000,
    };
    for (path, canonical) in [
        (
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
            "/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse-stream",
        ),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse",
            "/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A123456789012%253Aapplication-inference-profile%252Fa1b2c3/converse",
        ),
    ] {
        let mut http = HttpRequest {
            method: "POST",
            url: format!("https://bedrock-runtime.us-east-1.amazonaws.com{path}"),
            headers: vec![("content-type".into(), "application/json".into())],
            body: "{}".into(),
        };
        let got = signed(&mut http, &credentials, &scope, true, false);
        let second = got.canonical_request.lines().nth(1).unwrap();
        assert_eq!(second, canonical);
        // The URL sent is left as it was.
        assert!(http.url.ends_with(path));
    }
}

#[test]
fn signing_again_replaces_the_signature_and_secrets_stay_out_of_debug() {
    let credentials =
        AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
            .with_session_token("TOKEN-SECRET-1234");
    let shown = format!("{credentials:?}");
    assert!(
        !shown.contains("wJalr") && !shown.contains("TOKEN-SECRET"),
        "{shown}"
    );
    assert!(shown.contains("AKIDEXAMPLE"));
    let mut http = HttpRequest {
        method: "POST",
        url: "https://bedrock-runtime.eu-central-1.amazonaws.com/model/m/converse".into(),
        headers: Vec::new(),
        body: "{}".into(),
    };
    let at = |ms| SigningScope {
        region: "eu-central-1",
        service: "bedrock",
        now_ms: ms,
    };
    sign(&mut http, &credentials, &at(1_440_938_160_000));
    let first = http.header("authorization").unwrap().to_string();
    sign(&mut http, &credentials, &at(1_440_938_161_000));
    assert_eq!(
        (http.headers.iter())
            .filter(|(k, _)| k == "authorization" || k == "x-amz-date")
            .count(),
        2,
        "replaced, not added"
    );
    assert_ne!(http.header("authorization").unwrap(), first);
    assert_eq!(http.header("x-amz-date"), Some("20150830T123601Z"));
    let shown = format!("{http:?}");
    assert!(
        !shown.contains("TOKEN-SECRET") && !shown.contains("Signature="),
        "{shown}"
    );
}

#[test]
fn the_date_is_the_utc_calendars() {
    for (ms, want) in [
        (0, "19700101T000000Z"),
        (951_782_400_000, "20000229T000000Z"),
        (1_440_938_160_000, "20150830T123600Z"),
        (1_709_164_799_000, "20240228T235959Z"),
        (1_709_251_199_000, "20240229T235959Z"),
        (4_107_542_400_000, "21000301T000000Z"),
        (253_402_300_799_999, "99991231T235959Z"),
    ] {
        assert_eq!(amz_date(ms), want, "{ms}");
    }
}
