//! The run machine with a fallback chain, beyond the scenario table: what
//! each provider is sent, what the response and the warnings say, and
//! what is never sent or shown.

use serde_json::{json, Value};

use super::*;
use crate::model::{Message, Part, Role};

const FIRST_KEY: &str = "sk-first-0123456789";
const SECOND_KEY: &str = "sk-ant-second-0123456789";

fn hi() -> Request {
    Request {
        messages: vec![Message::user("Hi")],
        ..Request::default()
    }
}

fn once() -> RetryPolicy {
    RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    }
}

/// openai (`gpt`) with `retry`, then anthropic (`claude`).
fn chain(request: Request, retry: RetryPolicy) -> RunMachine {
    let first = ClientConfig::new(Provider::OpenAi)
        .with_api_key(FIRST_KEY)
        .with_model("gpt");
    let second = ClientConfig::new(Provider::Anthropic)
        .with_api_key(SECOND_KEY)
        .with_model("claude");
    RunMachine::new(first, request, true, retry, Timers::default(), 3)
        .with_fallback(Fallback::new().then(second, once()))
}

fn body(http: &crate::HttpRequest) -> Value {
    serde_json::from_str(&http.body).unwrap()
}

/// The anthropic stream the second provider answers with.
fn anthropic_text() -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/conformance/anthropic/anthropic-text.stream.sse",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

/// The first provider answers `status` with `error`; the step after.
fn fail_with(m: &mut RunMachine, status: u16, error: &str) -> Step {
    assert!(matches!(m.responded(status, Vec::new(), 0), Step::Read));
    assert!(matches!(
        m.feed(error.as_bytes(), &mut Vec::new()),
        Step::Read
    ));
    m.ended(&mut Vec::new())
}

/// The step after a switch to the second provider: a wait of 0 ms, in
/// which the entry to load credentials for is already the second; then
/// its first attempt.
fn switched(m: &mut RunMachine, step: Step) -> Step {
    assert!(matches!(step, Step::Wait(0)), "{step:?}");
    assert_eq!(m.entry(), 1);
    m.waited()
}

/// Reads `body` to the end: every event handed out, and the response.
fn read_all(m: &mut RunMachine, body: &[u8]) -> (Vec<StreamEvent>, Response) {
    assert!(matches!(m.responded(200, Vec::new(), 0), Step::Read));
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut step = m.feed(body, &mut out);
    loop {
        events.append(&mut out);
        step = match step {
            Step::Deliver => m.delivered(),
            Step::Read => m.ended(&mut out),
            Step::Done(response) => return (events, *response),
            other => panic!("{other:?}"),
        };
    }
}

#[test]
fn each_provider_gets_its_own_model_options_and_key_and_the_response_says_who_answered() {
    if !has_all() {
        return;
    }
    let mut request = hi();
    request.provider_options = Some(
        json!({"openai": {"service_tier": "flex"}, "anthropic": {"thinking": {"type": "disabled"}}})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let mut m = chain(request, once());
    let Step::Send(first) = m.start() else {
        panic!()
    };
    assert!(first.url.ends_with("/chat/completions"));
    let b = body(&first);
    assert_eq!(
        (b["model"].as_str(), b["service_tier"].as_str()),
        (Some("gpt"), Some("flex"))
    );
    assert!(b.get("thinking").is_none(), "{b}");
    let echoed = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {FIRST_KEY}, and {SECOND_KEY}","type":"server_error"}}}}"#
    );
    assert_eq!(m.entry(), 0);
    let step = fail_with(&mut m, 503, &echoed);
    let Step::Send(second) = switched(&mut m, step) else {
        panic!()
    };
    assert!(second.url.ends_with("/v1/messages"));
    assert!(second
        .headers
        .iter()
        .any(|(k, v)| k == "x-api-key" && v == SECOND_KEY));
    let b = body(&second);
    assert_eq!(b["model"], "claude");
    assert_eq!(b["thinking"], json!({"type": "disabled"}));
    assert!(b.get("service_tier").is_none(), "{b}");
    assert_eq!(m.provider(), Some(Provider::Anthropic));

    let (events, response) = read_all(&mut m, &anthropic_text());
    let StreamEvent::Warning { code, message, .. } = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(code, "fallback");
    assert!(
        message.starts_with("openai failed (server: ")
            && message.ends_with("anthropic (claude) answers instead"),
        "{message}"
    );
    // One warning, before the first event of the provider that answers.
    assert_eq!(
        (events.iter())
            .filter(|e| matches!(e, StreamEvent::Warning { .. }))
            .count(),
        1
    );
    assert_eq!(response.provider.as_deref(), Some("anthropic"));
    let [failed] = response.attempts.as_slice() else {
        panic!("{:?}", response.attempts)
    };
    assert_eq!(failed.provider, "openai");
    assert_eq!(failed.model.as_deref(), Some("gpt"));
    assert_eq!(failed.error.code, "server");
    assert_eq!(failed.error.status, Some(503));
    // The keys of every provider are out of what the caller sees.
    let shown = format!(
        "{message} {:?} {}",
        response.attempts,
        serde_json::to_string(&response).unwrap()
    );
    for key in [FIRST_KEY, SECOND_KEY] {
        assert!(!shown.contains(key), "{shown}");
    }
    assert!(failed.error.message.contains("[redacted], and [redacted]"));
    // The `finish` event's response says the same.
    let Some(StreamEvent::Finish { response: fin, .. }) = events.last() else {
        panic!()
    };
    assert_eq!(
        (fin.provider.as_deref(), fin.attempts.len()),
        (Some("anthropic"), 1)
    );
    // Every key of the chain, the longest first.
    assert_eq!(m.secrets(), [SECOND_KEY, FIRST_KEY]);
}

/// A timer of 0 ms would cut every attempt at once: refused by name at
/// the start, before anything is sent (None is no limit).
#[test]
fn a_timer_of_zero_fails_before_anything_is_sent() {
    for (timers, path) in [
        (Timers::new(Some(0), None, None), "timeout.total"),
        (Timers::new(None, Some(0), None), "timeout.firstByte"),
        (Timers::new(None, None, Some(0)), "timeout.idle"),
    ] {
        let config = ClientConfig::new(Provider::OpenAi).with_api_key(FIRST_KEY);
        let mut m = RunMachine::new(config, hi(), true, once(), timers, 1);
        let Step::Fail(e) = m.start() else {
            panic!("{path}: something was sent");
        };
        assert!(
            matches!(&e, Error::InvalidRequest { path: p, .. } if p == path),
            "{e:?}"
        );
    }
}

#[test]
fn a_request_a_fallback_entry_cannot_take_fails_before_anything_is_sent() {
    if !has_all() {
        return;
    }
    // The second entry has no model, and the request names none.
    let first = ClientConfig::new(Provider::OpenAi).with_model("gpt");
    let second = ClientConfig::new(Provider::Anthropic);
    let mut m = RunMachine::new(first, hi(), true, once(), Timers::default(), 1)
        .with_fallback(Fallback::new().then(second, once()));
    match m.start() {
        Step::Fail(Error::InvalidRequest { path, message }) => {
            assert_eq!(path, "fallback[0].model");
            assert_eq!(message, "no model was given");
        }
        other => panic!("{other:?}"),
    }
    assert!(m.is_over());
}

#[test]
fn the_requests_model_is_the_first_providers_and_an_entry_without_one_sends_it() {
    if !has_all() {
        return;
    }
    let mut request = hi();
    request.model = Some("asked".into());
    let first = ClientConfig::new(Provider::OpenAi).with_model("gpt");
    let second = ClientConfig::new(Provider::OpenAiCompat).with_base_url("http://127.0.0.1:9/v1");
    let mut m = RunMachine::new(first, request, true, once(), Timers::default(), 1)
        .with_fallback(Fallback::new().then(second, once()));
    let Step::Send(first) = m.start() else {
        panic!()
    };
    assert_eq!(body(&first)["model"], "asked");
    let step = m.unreachable("refused");
    let Step::Send(second) = switched(&mut m, step) else {
        panic!()
    };
    assert_eq!(body(&second)["model"], "asked");
    assert!(second.url.starts_with("http://127.0.0.1:9/v1"));
}

#[test]
fn an_abort_in_the_backoff_sends_nothing_further() {
    if !has_all() {
        return;
    }
    let mut m = chain(hi(), RetryPolicy::default());
    assert!(matches!(m.start(), Step::Send(_)));
    assert!(matches!(fail_with(&mut m, 529, "{}"), Step::Wait(_)));
    assert_eq!(m.abort(Some("user left")), Cancel::Run);
    match m.waited() {
        Step::Fail(e) => assert_eq!(e.code(), "abort"),
        other => panic!("{other:?}"),
    }
    assert!(m.is_over());
}

#[test]
fn the_last_providers_failure_is_the_error_and_every_failure_before_it_is_kept() {
    if !has_all() {
        return;
    }
    let mut m = chain(hi(), once());
    assert!(matches!(m.start(), Step::Send(_)));
    let step = m.unreachable("refused");
    assert!(matches!(switched(&mut m, step), Step::Send(_)));
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    match fail_with(&mut m, 529, overloaded) {
        Step::Fail(e) => assert_eq!(e.code(), "overloaded"),
        other => panic!("{other:?}"),
    }
    // The first provider's failure is kept for the driver to report.
    let failed: Vec<(&str, &str)> = (m.failed_attempts().iter())
        .map(|a| (a.provider.as_str(), a.error.code.as_str()))
        .collect();
    assert_eq!(failed, [("openai", "network")]);
}

#[test]
fn parts_another_provider_cannot_read_are_named_in_a_warning_before_the_first_event() {
    if !has_all() {
        return;
    }
    let mut turn = Message::text(Role::Assistant, "Done.");
    turn.parts.push(Part::Provider {
        provider: "anthropic".into(),
        data: json!({"type": "server_tool_use", "id": "srvtoolu_1"}),
    });
    let mut request = hi();
    request.messages.push(turn);
    request.messages.push(Message::user("And?"));
    // To Anthropic itself: kept, and nothing to warn of.
    let config = ClientConfig::new(Provider::Anthropic)
        .with_api_key("k")
        .with_model("claude");
    let mut m = RunMachine::new(config, request.clone(), true, once(), Timers::default(), 1);
    assert!(matches!(m.start(), Step::Send(_)));
    let (events, _) = read_all(&mut m, &anthropic_text());
    assert!(!matches!(events[0], StreamEvent::Warning { .. }));
    // To Gemini, as the fallback of an overloaded Anthropic: one warning
    // for the switch, one for the part Gemini leaves out.
    let config = ClientConfig::new(Provider::Anthropic)
        .with_api_key("k")
        .with_model("claude");
    let gemini = ClientConfig::new(Provider::Gemini).with_model("gemini-2.5-flash");
    let mut m = RunMachine::new(config, request, true, once(), Timers::default(), 1)
        .with_fallback(Fallback::new().then(gemini, once()));
    assert!(matches!(m.start(), Step::Send(_)));
    let step = m.unreachable("refused");
    assert!(matches!(switched(&mut m, step), Step::Send(_)));
    let path = format!(
        "{}/tests/fixtures/conformance/gemini/google-text.stream.sse",
        env!("CARGO_MANIFEST_DIR")
    );
    let (events, response) = read_all(&mut m, &std::fs::read(path).unwrap());
    let codes: Vec<&str> = (events.iter().take(2))
        .filter_map(|e| match e {
            StreamEvent::Warning { code, .. } => Some(code.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(codes, ["fallback", "provider_parts_dropped"]);
    let StreamEvent::Warning { message, .. } = &events[1] else {
        panic!()
    };
    assert_eq!(
        message,
        "gemini cannot read 1 part of this history, left out: messages[1].parts[1] (anthropic server_tool_use)"
    );
    assert_eq!(response.provider.as_deref(), Some("gemini"));
}

/// Whether this build has every adapter these tests use.
fn has_all() -> bool {
    [Provider::OpenAi, Provider::Anthropic, Provider::Gemini]
        .iter()
        .all(|p| p.adapter().is_some())
}

/// `hi()` with `options` as its providerOptions.
fn with_options(options: Value) -> Request {
    let mut request = hi();
    request.provider_options = options.as_object().cloned();
    request
}

/// The path and message of the error the openai-then-anthropic chain
/// refuses `request` with, before anything is sent.
fn refused(request: Request) -> (String, String) {
    match chain(request, once()).start() {
        Step::Fail(Error::InvalidRequest { path, message }) => (path, message),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_requests_own_mistake_is_named_as_its_own_and_flat_options_are_refused_in_a_mixed_chain() {
    if !has_all() {
        return;
    }
    // A keyed map with a key that is no provider: the request's mistake,
    // named as such, not as the fallback entry's.
    let (path, _) = refused(with_options(json!({"openai": {}, "bogus": {}})));
    assert_eq!(path, "providerOptions.bogus");
    // Flat options would reach Anthropic as well as OpenAI: refused,
    // pointing to the keyed form; the request's and a tool's.
    let (path, message) = refused(with_options(json!({"service_tier": "flex"})));
    assert_eq!(path, "providerOptions");
    assert!(message.contains("key the options by provider"), "{message}");
    let mut request = hi();
    request.tools.push(crate::model::Tool {
        name: "f".into(),
        parameters: Some(json!({"type": "object"})),
        provider_options: Some(json!({"strict": true}).as_object().cloned().unwrap()),
        ..crate::model::Tool::default()
    });
    assert_eq!(refused(request).0, "tools[0].providerOptions");
    // In a chain of one provider (two OpenAI models), flat options are
    // fine: they are that provider's.
    let first = ClientConfig::new(Provider::OpenAi)
        .with_api_key(FIRST_KEY)
        .with_model("gpt");
    let second = ClientConfig::new(Provider::OpenAi)
        .with_api_key(SECOND_KEY)
        .with_model("gpt-mini");
    let request = with_options(json!({"service_tier": "flex"}));
    let mut m = RunMachine::new(first, request, true, once(), Timers::default(), 3)
        .with_fallback(Fallback::new().then(second, once()));
    assert!(matches!(m.start(), Step::Send(_)));
}

#[test]
fn a_key_that_begins_another_does_not_leave_the_others_end() {
    let short = ClientConfig::new(Provider::OpenAi).with_api_key("sk-abcdef");
    let long = ClientConfig::new(Provider::OpenAi)
        .with_api_key("sk-abcdef-LONGER")
        .with_header("authorization", "Bearer tok-1234");
    let secrets = chain::secrets_of([&short, &long].into_iter());
    assert_eq!(
        secrets,
        [
            "sk-abcdef-LONGER",
            "Bearer tok-1234",
            "sk-abcdef",
            "tok-1234"
        ]
    );
    let mut text = "echo sk-abcdef-LONGER and tok-1234".to_string();
    for s in &secrets {
        text = crate::policy::scrub(&text, s).into_owned();
    }
    assert_eq!(text, "echo [redacted] and [redacted]");
}

#[test]
fn a_request_the_driver_cannot_make_fails_naming_the_entry_being_tried() {
    if !has_all() {
        return;
    }
    let refused = || Error::invalid_request("baseURL", "fetch refuses the URL");
    let path = |step: Step| match step {
        Step::Fail(Error::InvalidRequest { path, .. }) => path,
        other => panic!("{other:?}"),
    };
    // The client's own entry keeps the path.
    let mut m = chain(hi(), once());
    assert!(matches!(m.start(), Step::Send(_)));
    assert_eq!(path(m.refused(refused())), "baseURL");
    assert!(m.is_over());
    // A fallback's is named by its place in the chain, and ends the run.
    let mut m = chain(hi(), once());
    assert!(matches!(m.start(), Step::Send(_)));
    let step = m.unreachable("refused");
    assert!(matches!(switched(&mut m, step), Step::Send(_)));
    assert_eq!(path(m.refused(refused())), "fallback[0].baseURL");
    assert!(m.is_over());
    // Out of turn, a driver's error.
    let mut m = chain(hi(), once());
    assert_eq!(path(m.refused(refused())), "driver");
}

/// A run's final answer turns the tools off: every provider of the chain
/// must take that, or the run is refused at its start, naming
/// `finalAnswer` and the entry that cannot (Bedrock has no tool choice
/// `none`). Without tools, nothing needs turning off.
#[cfg(feature = "bedrock")]
#[test]
fn a_final_answer_is_checked_against_every_provider_of_the_chain() {
    let mut request = hi();
    request.tools = vec![crate::model::Tool {
        name: "get_weather".into(),
        ..crate::model::Tool::default()
    }];
    let openai = ClientConfig::new(Provider::OpenAi).with_model("gpt");
    let bedrock = ClientConfig::new(Provider::Bedrock)
        .with_region("us-east-1")
        .with_model("m");
    let refused = |r: Result<(), Error>| match r {
        Err(Error::InvalidRequest { path, message }) => (path, message),
        other => panic!("{other:?}"),
    };
    let none = Fallback::new();
    assert_eq!(none.check_final_answer(&openai, &request), Ok(()));
    let (path, m) = refused(none.check_final_answer(&bedrock, &request));
    assert_eq!(path, "finalAnswer");
    assert_eq!(m, "Bedrock's Converse API has no tool choice \"none\"");
    let to_bedrock = Fallback::new().then(bedrock.clone(), once());
    let (path, _) = refused(to_bedrock.check_final_answer(&openai, &request));
    assert_eq!(path, "fallback[0].finalAnswer");
    let to_openai = Fallback::new().then(openai, once());
    assert!(to_openai.check_final_answer(&bedrock, &request).is_err());
    // No tools: Bedrock sends the final answer as any request.
    assert_eq!(none.check_final_answer(&bedrock, &hi()), Ok(()));
}
