//! The run machine with an access token the driver renews (Vertex AI): a
//! 401 asks for a new one once, the next attempt carries it, and a second
//! 401 ends the request instead of looping; a token the config holds is
//! never asked for again. Tokens never show in what is reported.

use super::*;
use crate::model::Message;
use crate::Vertex;

const OLD: &str = "ya29.old-token-0123456789";
const NEW: &str = "ya29.new-token-0123456789";
const UNAUTHORIZED: &str = r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#;

fn machine(retries: u32) -> RunMachine {
    machine_at("us-central1", retries)
}

fn machine_at(location: &str, retries: u32) -> RunMachine {
    let config = ClientConfig::new(Provider::Gemini)
        .with_vertex(Vertex::new("p", location))
        .with_model("gemini-2.5-flash");
    run(config, retry(retries))
}

/// A stream of "Hi" with `config` and `retry`.
fn run(config: ClientConfig, retry: RetryPolicy) -> RunMachine {
    let request = Request {
        messages: vec![Message::user("Hi")],
        ..Request::default()
    };
    RunMachine::new(config, request, true, retry, Timers::default(), 7)
}

fn retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        ..RetryPolicy::default()
    }
}

fn sent_token(step: &Step) -> String {
    match step {
        Step::Send(http) => http.header("authorization").unwrap_or_default().to_string(),
        other => panic!("{other:?}"),
    }
}

/// The attempt is answered 401; the step after.
fn unauthorized(m: &mut RunMachine) -> Step {
    assert!(matches!(m.responded(401, Vec::new(), 0), Step::Read));
    assert!(matches!(
        m.feed(UNAUTHORIZED.as_bytes(), &mut Vec::new()),
        Step::Read
    ));
    m.ended(&mut Vec::new())
}

#[test]
fn a_401_renews_the_token_once_and_the_next_attempt_carries_it() {
    // No retries at all: the renewal is not one of them.
    let mut m = machine(0);
    m.set_access_token(0, OLD.into());
    assert_eq!(sent_token(&m.start()), format!("Bearer {OLD}"));
    assert_eq!(m.stale_token(), None);
    assert!(matches!(unauthorized(&mut m), Step::Wait(0)));
    assert_eq!(m.stale_token(), Some(0));
    m.set_access_token(0, NEW.into());
    assert_eq!(m.stale_token(), None);
    assert_eq!(sent_token(&m.waited()), format!("Bearer {NEW}"));
    // The new token is refused too: the request ends in that 401.
    let Step::Fail(Error::Api(e)) = unauthorized(&mut m) else {
        panic!("the second 401 ends the request");
    };
    assert_eq!(e.status, Some(401));
    assert_eq!(m.stale_token(), None);
    assert!(m.is_over());
    assert!(m.secrets().contains(&NEW));
}

#[test]
fn a_driver_that_renews_nothing_gets_one_more_attempt_and_no_loop() {
    let mut m = machine(2);
    m.set_access_token(0, OLD.into());
    let _ = m.start();
    assert!(matches!(unauthorized(&mut m), Step::Wait(0)));
    assert_eq!(sent_token(&m.waited()), format!("Bearer {OLD}"));
    assert!(matches!(unauthorized(&mut m), Step::Fail(_)));
}

#[test]
fn a_token_the_config_holds_is_not_renewed() {
    let config = ClientConfig::new(Provider::Gemini)
        .with_vertex(Vertex::new("p", "us-central1"))
        .with_model("gemini-2.5-flash")
        .with_access_token(OLD);
    let mut m = run(config, RetryPolicy::default());
    assert_eq!(sent_token(&m.start()), format!("Bearer {OLD}"));
    let Step::Fail(mut e) = unauthorized(&mut m) else {
        panic!("a fixed token's 401 is final");
    };
    assert_eq!(m.stale_token(), None);
    // What a driver reports is scrubbed of the token, as of every key.
    assert!(m.secrets().contains(&OLD));
    e.scrub(OLD);
    assert!(!format!("{e:?}").contains(OLD));
}

/// Before the first exchange, the machine says whether the request will
/// go: an invalid one fails by name, and the exchange is not made.
#[test]
fn the_request_is_checked_before_the_first_exchange() {
    let mut ok = machine(0);
    assert_eq!(ok.check_for_token(), Ok(()));
    // (A check sends nothing: the machine still starts.)
    ok.set_access_token(0, NEW.into());
    assert!(sent_token(&ok.start()).ends_with(NEW));
    let mut bad = machine_at("us central", 0);
    let e = bad.check_for_token().unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path == "vertex.location"),
        "{e:?}"
    );
}

/// AWS credentials from a driver's callback (STS) that AWS refuses, as
/// expired (a 403 `ExpiredTokenException`, with no `expiration` given
/// the driver would otherwise keep them): renewed once, like a token;
/// credentials the config holds are not.
#[cfg(feature = "bedrock")]
#[test]
fn aws_credentials_refused_as_expired_are_renewed_once() {
    use crate::AwsCredentials;
    let expired = r#"{"message":"The security token included in the request is expired"}"#;
    let refused = |m: &mut RunMachine| {
        let headers = vec![(
            "x-amzn-ErrorType".into(),
            "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/"
                .into(),
        )];
        assert!(matches!(m.responded(403, headers, 0), Step::Read));
        assert!(matches!(
            m.feed(expired.as_bytes(), &mut Vec::new()),
            Step::Read
        ));
        m.ended(&mut Vec::new())
    };
    let key_id = |step: &Step| {
        sent_token(step)
            .split("Credential=")
            .nth(1)
            .unwrap_or_default()[..5]
            .to_string()
    };
    let config = || {
        ClientConfig::new(Provider::Bedrock)
            .with_region("us-east-1")
            .with_model("anthropic.claude-3-haiku-20240307-v1:0")
    };
    let mut m = run(config(), RetryPolicy::default());
    m.set_credentials(0, AwsCredentials::new("AKIA1", "secret-1"));
    m.at(1_700_000_000_000);
    assert_eq!(key_id(&m.start()), "AKIA1");
    let step = refused(&mut m);
    assert!(matches!(step, Step::Wait(0)), "{step:?}");
    assert_eq!(m.stale_token(), Some(0));
    m.set_credentials(0, AwsCredentials::new("AKIA2", "secret-2"));
    assert_eq!(m.stale_token(), None);
    assert_eq!(key_id(&m.waited()), "AKIA2");
    // Refused again: the request ends in that error, not a loop.
    let Step::Fail(Error::Api(e)) = refused(&mut m) else {
        panic!("the second refusal ends the request");
    };
    assert_eq!(e.provider_type.as_deref(), Some("ExpiredTokenException"));
    // Credentials the config holds: the refusal is final (no retries for
    // an authentication error).
    let held = config().with_aws_credentials(AwsCredentials::new("AKIA3", "secret-3"));
    let mut m = run(held, RetryPolicy::default());
    m.at(1_700_000_000_000);
    assert_eq!(key_id(&m.start()), "AKIA3");
    assert!(matches!(refused(&mut m), Step::Fail(_)));
    assert_eq!(m.stale_token(), None);
}

/// The token endpoint failed before the first attempt: a 503 is retried
/// like the attempt's own 503 would be, and the attempt after carries the
/// token the driver then loaded.
#[test]
fn a_token_endpoint_503_is_retried_by_the_policy() {
    let mut m = machine(1);
    assert_eq!(m.check_for_token(), Ok(()));
    let unavailable = |message: &str| {
        let mut api = crate::error::ApiError::new(crate::error::ApiErrorKind::Server, message);
        api.status = Some(503);
        Error::Api(Box::new(api))
    };
    assert!(matches!(m.unsigned(unavailable("backend error")), Step::Wait(ms) if ms > 0));
    m.set_access_token(0, NEW.into());
    assert_eq!(sent_token(&m.waited()), format!("Bearer {NEW}"));
    // Its retries used up, the next failure to load ends the request.
    let mut m = machine(0);
    let Step::Fail(e) = m.unsigned(unavailable("backend error")) else {
        panic!("no retries left");
    };
    assert_eq!(e.code(), "server");
    // Only before an attempt: a driver's misuse otherwise.
    let mut m = machine(0);
    m.set_access_token(0, OLD.into());
    let _ = m.start();
    assert!(matches!(
        m.unsigned(unavailable("late")),
        Step::Fail(Error::InvalidRequest { .. })
    ));
}

/// In a chain: a fallback entry whose token cannot be had (the endpoint
/// unreachable) goes on to the next provider after its retries; one whose
/// callback failed (not retryable) ends the request, reported with the
/// providers that failed before.
#[cfg(all(feature = "openai", feature = "anthropic"))]
#[test]
fn a_fallback_entry_without_its_token_goes_on_or_ends_with_the_attempts() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let chain = || {
        let first = ClientConfig::new(Provider::Anthropic)
            .with_api_key("sk-ant-first-0123456789")
            .with_model("claude");
        let vertex = ClientConfig::new(Provider::Gemini)
            .with_vertex(Vertex::new("p", "us-central1"))
            .with_model("gemini-2.5-flash");
        let last = ClientConfig::new(Provider::OpenAi)
            .with_api_key("sk-last-0123456789")
            .with_model("gpt");
        let mut m = run(first, retry(0)).with_fallback(
            crate::Fallback::new()
                .then(vertex, retry(1))
                .then(last, retry(0)),
        );
        assert!(matches!(m.start(), Step::Send(_)));
        assert!(matches!(m.responded(529, Vec::new(), 0), Step::Read));
        let _ = m.feed(overloaded.as_bytes(), &mut Vec::new());
        assert!(matches!(m.ended(&mut Vec::new()), Step::Wait(0)));
        assert_eq!(m.entry(), 1);
        m
    };
    let unreachable = || Error::unreachable("https://oauth2.googleapis.com/token", "ECONNREFUSED");
    let mut m = chain();
    assert!(matches!(m.unsigned(unreachable()), Step::Wait(ms) if ms > 0));
    assert_eq!(m.entry(), 1);
    assert!(matches!(m.unsigned(unreachable()), Step::Wait(0)));
    assert_eq!(m.entry(), 2);
    let Step::Send(http) = m.waited() else {
        panic!("the last provider is tried");
    };
    assert!(http.url.contains("openai"), "{}", http.url);
    let failed: Vec<_> = m
        .failed_attempts()
        .iter()
        .map(|a| a.error.code.clone())
        .collect();
    assert_eq!(failed, ["overloaded", "network"]);
    // A callback that threw: no retry, no switch, the earlier failure kept.
    let mut m = chain();
    let Step::Fail(_) = m.unsigned(Error::invalid_request("credentials", "could not be loaded"))
    else {
        panic!("a callback's failure ends the request");
    };
    assert_eq!(m.failed_attempts().len(), 1);
}

/// A device clock 10 minutes behind: AWS refuses the signature, its
/// answer's `Date` says its own time, and the next attempt, at once, is
/// signed by it; a second refusal ends the request (no loop).
#[cfg(feature = "bedrock")]
#[test]
fn a_signature_refused_for_a_skewed_clock_is_signed_again_by_aws_time() {
    use crate::AwsCredentials;
    let config = ClientConfig::new(Provider::Bedrock)
        .with_region("us-east-1")
        .with_model("amazon.nova-lite-v1:0")
        .with_aws_credentials(AwsCredentials::new("AKIA1", "secret-1"));
    let mut m = run(config, retry(0));
    let amz_date = |step: &Step| match step {
        Step::Send(http) => http.header("x-amz-date").unwrap_or_default().to_string(),
        other => panic!("{other:?}"),
    };
    let refused = |m: &mut RunMachine| {
        let headers = vec![
            (
                "x-amzn-ErrorType".into(),
                "InvalidSignatureException".into(),
            ),
            // 2023-11-14T22:23:20Z, ten minutes after the device's clock.
            ("Date".into(), "Tue, 14 Nov 2023 22:23:20 GMT".into()),
        ];
        assert!(matches!(m.responded(403, headers, 0), Step::Read));
        let body = br#"{"message":"Signature expired: 20231114T221320Z is now earlier than 20231114T221820Z (20231114T222320Z - 5 min.)"}"#;
        let _ = m.feed(body, &mut Vec::new());
        m.ended(&mut Vec::new())
    };
    // 2023-11-14T22:13:20Z by the device.
    m.at(1_700_000_000_000);
    assert_eq!(amz_date(&m.start()), "20231114T221320Z");
    assert!(matches!(refused(&mut m), Step::Wait(0)));
    m.at(1_700_000_001_000);
    assert_eq!(amz_date(&m.waited()), "20231114T222321Z");
    assert!(matches!(refused(&mut m), Step::Fail(Error::Api(_))));
}

/// A refusal that comes inside a stream that already handed out events
/// ends it: no renewal and no second request (its events would come
/// twice).
#[test]
fn a_refusal_after_events_is_the_streams_end_not_a_renewal() {
    let mut m = machine(2);
    m.set_access_token(0, OLD.into());
    let _ = m.start();
    assert!(matches!(m.responded(200, Vec::new(), 0), Step::Read));
    let text = br#"data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}

"#;
    let mut out = Vec::new();
    assert!(matches!(m.feed(text, &mut out), Step::Deliver));
    assert!(matches!(m.delivered(), Step::Read));
    let refused = format!("data: {UNAUTHORIZED}\n\n");
    let step = m.feed(refused.as_bytes(), &mut Vec::new());
    let step = match step {
        Step::Read => m.ended(&mut Vec::new()),
        other => other,
    };
    assert!(matches!(step, Step::Fail(Error::Api(_))), "{step:?}");
    assert_eq!(m.stale_token(), None);
}

/// A renewal that fails for a reason that is retried, with no retries
/// left, goes on to the next provider, and the refusal it answered is
/// over: the next entry's credentials are not taken for stale. A
/// refused key (not retried) ends the request even where the chain would
/// switch on that status.
#[cfg(feature = "openai")]
#[test]
fn a_failed_renewal_goes_on_without_a_stale_entry() {
    let next = || {
        ClientConfig::new(Provider::OpenAi)
            .with_api_key("sk-next-0123456789")
            .with_model("gpt")
    };
    let mut m =
        machine(0).with_fallback(crate::Fallback::new().then(next(), RetryPolicy::default()));
    m.set_access_token(0, OLD.into());
    let _ = m.start();
    assert!(matches!(unauthorized(&mut m), Step::Wait(0)));
    assert_eq!(m.stale_token(), Some(0));
    let down = Error::unreachable("https://oauth2.googleapis.com/token", "ECONNRESET");
    assert!(matches!(m.unsigned(down), Step::Wait(0)));
    assert_eq!((m.entry(), m.stale_token()), (1, None));
    let refused = || {
        let mut api = crate::error::ApiError::new(
            crate::error::ApiErrorKind::Authentication,
            "invalid_grant: account not found",
        );
        api.status = Some(401);
        Error::Api(Box::new(api))
    };
    let chain = crate::Fallback::new()
        .then(next(), RetryPolicy::default())
        .on_status(401);
    let mut m = machine(0).with_fallback(chain);
    assert!(matches!(m.unsigned(refused()), Step::Fail(Error::Api(_))));
}
