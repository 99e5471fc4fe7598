//! The Bedrock adapter beyond the recorded corpus (`tests/conformance.rs`)
//! and the golden requests (`tests/golden/bedrock/`): exceptions typed and
//! retried like every in-band error, a broken message keeping what came,
//! each attempt signed anew at the driver's clock, and no secret shown.

use serde_json::Value;

use crate::error::ApiErrorKind;
use crate::eventstream::encode_message;
use crate::model::{Message, Request};
use crate::{
    decode_error, encode_request, AwsCredentials, ClientConfig, Error, Provider, RetryPolicy,
    RunMachine, Step, StreamDecoder, Timers,
};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLE-session-token";

fn event(kind: &str, payload: &str) -> Vec<u8> {
    encode_message(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.as_bytes(),
    )
}

fn exception(kind: &str, message: &str) -> Vec<u8> {
    encode_message(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        format!(r#"{{"message":"{message}"}}"#).as_bytes(),
    )
}

fn hi() -> Request {
    Request {
        messages: vec![Message::user("Hi")],
        ..Request::default()
    }
}

fn signed_config() -> ClientConfig {
    ClientConfig::new(Provider::Bedrock)
        .with_region("us-east-1")
        .with_model("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
        .with_aws_credentials(AwsCredentials::new("AKIDEXAMPLE", SECRET).with_session_token(TOKEN))
}

/// Each exception of the Converse stream has its error kind, and counts as
/// an in-band error: retried only while no event was handed out.
#[test]
fn exceptions_are_typed_in_band_errors() {
    for (kind, want) in [
        ("throttlingException", ApiErrorKind::RateLimit),
        ("serviceUnavailableException", ApiErrorKind::Overloaded),
        ("internalServerException", ApiErrorKind::Server),
        ("modelStreamErrorException", ApiErrorKind::Server),
        ("validationException", ApiErrorKind::BadRequest),
    ] {
        for after_text in [false, true] {
            let mut body = event("messageStart", r#"{"role":"assistant"}"#);
            if after_text {
                body.extend(event(
                    "contentBlockDelta",
                    r#"{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"abc"}"#,
                ));
            }
            body.extend(exception(kind, "no"));
            let (events, result) = StreamDecoder::decode_all(Provider::Bedrock, &body);
            let Err(Error::Api(e)) = result else {
                panic!("{kind}: {result:?}");
            };
            assert_eq!((e.kind, e.in_band), (want, true), "{kind}");
            assert_eq!(e.provider_type.as_deref(), Some(kind));
            assert_eq!(e.events_emitted, after_text, "{kind}");
            assert_eq!(events.len(), usize::from(after_text), "{kind}");
        }
    }
}

/// A message with a bad CRC ends the stream as malformed, with the text
/// of the messages before it, even in the same chunk.
#[test]
fn a_broken_message_keeps_what_came_before() {
    let mut body = event(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"text":"Hello"}}"#,
    );
    let mut broken = event(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"text":" world"}}"#,
    );
    if let Some(last) = broken.last_mut() {
        *last ^= 1;
    }
    body.extend(broken);
    let (events, result) = StreamDecoder::decode_all(Provider::Bedrock, &body);
    assert_eq!(events.len(), 1);
    match result {
        Err(Error::MalformedStream {
            events_emitted,
            partial,
            ..
        }) => {
            assert!(events_emitted);
            assert_eq!(partial.text, "Hello");
        }
        other => panic!("{other:?}"),
    }
}

/// Every attempt is signed at the clock the driver gave before it; a
/// config that signs fails, unsent, without one. The model id is one
/// path segment (`:` encoded).
#[test]
fn each_attempt_is_signed_at_the_drivers_clock() {
    let retry = RetryPolicy {
        max_retries: 1,
        ..RetryPolicy::default()
    };
    let mut m = RunMachine::new(signed_config(), hi(), true, retry, Timers::default(), 1);
    m.at(1_440_938_160_000);
    let Step::Send(first) = m.start() else {
        panic!("not sent");
    };
    assert!(first
        .url
        .ends_with("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"));
    assert_eq!(first.header("x-amz-date"), Some("20150830T123600Z"));
    assert_eq!(first.header("x-amz-security-token"), Some(TOKEN));
    assert_eq!(
        first.header("accept"),
        Some("application/vnd.amazon.eventstream")
    );
    let _ = m.responded(503, Vec::new(), 0);
    let _ = m.feed(br#"{"message":"busy"}"#, &mut Vec::new());
    let Step::Wait(_) = m.ended(&mut Vec::new()) else {
        panic!("not retried");
    };
    m.at(1_440_938_220_000);
    let Step::Send(second) = m.waited() else {
        panic!("not sent again");
    };
    assert_eq!(second.header("x-amz-date"), Some("20150830T123700Z"));
    assert_ne!(
        first.header("authorization"),
        second.header("authorization")
    );

    let mut unclocked = RunMachine::new(signed_config(), hi(), true, retry, Timers::default(), 1);
    match unclocked.start() {
        Step::Fail(Error::InvalidRequest { path, .. }) => assert_eq!(path, "aws"),
        other => panic!("{other:?}"),
    }
}

/// The secret and the session token are never shown: not by `Debug`, not
/// in a request's `Debug`, not in an error that echoes them once the
/// driver has scrubbed it with the run's secrets.
#[test]
fn no_secret_is_shown() {
    let config = signed_config();
    let shown = format!("{config:?}");
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");
    let mut m = RunMachine::new(
        config,
        hi(),
        true,
        RetryPolicy::default(),
        Timers::default(),
        1,
    );
    m.at(1_440_938_160_000);
    let Step::Send(http) = m.start() else {
        panic!("not sent");
    };
    let shown = format!("{http:?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    let echoed = format!(r#"{{"message":"bad token {TOKEN} for {SECRET}"}}"#);
    let _ = m.responded(403, Vec::new(), 0);
    let _ = m.feed(echoed.as_bytes(), &mut Vec::new());
    let Step::Fail(mut e) = m.ended(&mut Vec::new()) else {
        panic!("not failed");
    };
    // (What every driver does with the run's secrets, longest first.)
    assert_eq!(m.secrets(), [SECRET, TOKEN]);
    for secret in m.secrets() {
        e.scrub(secret);
    }
    let shown = format!("{e:?} {e}");
    assert!(!shown.contains(TOKEN) && !shown.contains(SECRET), "{shown}");
}

/// An HTTP error is typed by its `x-amzn-ErrorType` header, else by the
/// one exception the status stands for.
#[test]
fn http_errors_are_typed_by_header_or_status() {
    let body = r#"{"message":"slow down"}"#;
    let header = [(
        "X-Amzn-ErrorType".to_string(),
        "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/".to_string(),
    )];
    let Error::Api(e) = decode_error(Provider::Bedrock, 429, &header, body) else {
        panic!("not an API error");
    };
    assert_eq!(e.provider_type.as_deref(), Some("ThrottlingException"));
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ApiErrorKind::RateLimit, "slow down")
    );
    let Error::Api(e) = decode_error(Provider::Bedrock, 503, &[], body) else {
        panic!("not an API error");
    };
    assert_eq!(
        e.provider_type.as_deref(),
        Some("ServiceUnavailableException")
    );
    assert_eq!(e.kind, ApiErrorKind::Overloaded);
    let Error::Api(e) = decode_error(Provider::Bedrock, 429, &[], body) else {
        panic!("not an API error");
    };
    assert_eq!((e.provider_type, e.kind), (None, ApiErrorKind::RateLimit));
    // AWS refuses credentials with a 403: an authentication error, as the
    // exception says, not a permission one (AccessDeniedException is).
    for (name, kind) in [
        ("ExpiredTokenException", ApiErrorKind::Authentication),
        ("UnrecognizedClientException", ApiErrorKind::Authentication),
        ("InvalidSignatureException", ApiErrorKind::Authentication),
        ("AccessDeniedException", ApiErrorKind::Permission),
    ] {
        let header = [("x-amzn-errortype".to_string(), name.to_string())];
        let Error::Api(e) = decode_error(Provider::Bedrock, 403, &header, body) else {
            panic!("not an API error");
        };
        assert_eq!((e.provider_type.as_deref(), e.kind), (Some(name), kind));
    }
}

/// `providerOptions`: Converse's own fields at the top level, the model's
/// into `additionalModelRequestFields` (beside one given whole); a key and
/// credentials together are refused, naming the field.
#[test]
fn provider_options_and_auth() {
    let mut request = hi();
    request.provider_options = serde_json::json!({
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
        "additionalModelRequestFields": {"top_k": 5}
    })
    .as_object()
    .cloned();
    let config = ClientConfig::new(Provider::Bedrock)
        .with_region("eu-west-1")
        .with_model("arn:aws:bedrock:eu-west-1:123:inference-profile/x")
        .with_api_key("ABSKexample");
    let http = encode_request(&config, &request, false).unwrap();
    assert_eq!(
        http.url,
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123%3Ainference-profile%2Fx/converse"
    );
    assert_eq!(http.header("authorization"), Some("Bearer ABSKexample"));
    let body: Value = serde_json::from_str(&http.body).unwrap();
    assert_eq!(body["guardrailConfig"]["guardrailVersion"], "1");
    assert_eq!(body["additionalModelRequestFields"]["top_k"], 5);
    assert_eq!(
        body["additionalModelRequestFields"]["thinking"]["budget_tokens"],
        1024
    );
    let both = signed_config().with_api_key("ABSKexample");
    match encode_request(&both, &hi(), true) {
        Err(Error::InvalidRequest { path, .. }) => assert_eq!(path, "apiKey"),
        other => panic!("{other:?}"),
    }
    let bad = ClientConfig::new(Provider::Bedrock)
        .with_region("us-east-1/../x")
        .with_model("m");
    match encode_request(&bad, &hi(), true) {
        Err(Error::InvalidRequest { path, .. }) => assert_eq!(path, "region"),
        other => panic!("{other:?}"),
    }
}

/// Converse has no tool choice "none": a request with tools that asks for
/// it is refused by name, nothing encoded; without tools there is nothing
/// to turn off, and the request goes as any.
#[test]
fn a_tool_choice_of_none_with_tools_is_refused() {
    use crate::model::{Tool, ToolChoice, ToolChoiceMode};
    let mut request = hi();
    request.tool_choice = Some(ToolChoice::Mode(ToolChoiceMode::None));
    let config = signed_config();
    assert!(encode_request(&config, &request, true).is_ok());
    request.tools = vec![Tool {
        name: "get_weather".into(),
        ..Tool::default()
    }];
    match encode_request(&config, &request, true) {
        Err(Error::InvalidRequest { path, message }) => {
            assert_eq!(path, "toolChoice");
            assert_eq!(
                message,
                "Bedrock's Converse API has no tool choice \"none\""
            );
        }
        other => panic!("{other:?}"),
    }
}
