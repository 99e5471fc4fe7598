//! The scenario table (`scenarios.json`, beside this file) run natively:
//! each input to the machine, and the step it must return. The JS driver
//! and the `web` driver run the same table against the mock server.

use serde_json::Value;

use super::*;
use crate::model::{Message, Request};

/// The scenarios whose provider this build has (the one-adapter test
/// builds have one adapter each).
fn table() -> Vec<Value> {
    let text = include_str!("scenarios.json");
    let v: Value = serde_json::from_str(text).unwrap();
    let all = v["scenarios"].as_array().unwrap();
    let built = |s: &&Value| providers(s).into_iter().all(has);
    all.iter().filter(built).cloned().collect()
}

/// A scenario's providers: its own, then its fallback's.
fn providers(s: &Value) -> Vec<Provider> {
    let name = |v: &Value| Provider::from_name(v["provider"].as_str().unwrap()).unwrap();
    let mut all = vec![name(s)];
    if let Some(chain) = s["fallback"].as_array() {
        all.extend(chain.iter().map(name));
    }
    all
}

/// Whether this build has `provider`'s adapter.
fn has(provider: Provider) -> bool {
    provider.adapter().is_some()
}

/// The first scenario of the table whose name starts with `name`, if this
/// build has its provider.
fn scenario(name: &str) -> Option<Value> {
    table()
        .into_iter()
        .find(|s| s["name"].as_str().unwrap().starts_with(name))
}

fn fixture(case: &str) -> (Vec<u8>, Value) {
    let (adapter, name) = case.split_once('/').unwrap();
    let dir = format!(
        "{}/tests/fixtures/conformance/{adapter}",
        env!("CARGO_MANIFEST_DIR")
    );
    let expected = std::fs::read_to_string(format!("{dir}/{name}.expected.json")).unwrap();
    let body = std::fs::read(format!("{dir}/{name}.sse"))
        .or_else(|_| std::fs::read(format!("{dir}/{name}.eventstream")))
        .or_else(|_| std::fs::read(format!("{dir}/{name}.json")))
        .unwrap();
    (body, serde_json::from_str(&expected).unwrap())
}

fn machine(s: &Value) -> RunMachine {
    let ms = |k: &str| s["timeouts"][k].as_u64();
    let timers = Timers::new(ms("total"), ms("firstByte"), ms("idle"));
    let retry = |s: &Value| RetryPolicy {
        max_retries: s["maxRetries"].as_u64().unwrap_or(2) as u32,
        ..RetryPolicy::default()
    };
    let providers = providers(s);
    let config = |i: usize| {
        let c = ClientConfig::new(providers[i]).with_api_key(format!("sk-scenario-{i}"));
        if providers[i].needs_region() {
            c.with_region("us-east-1")
        } else {
            c
        }
    };
    let request = Request {
        model: Some("m".into()),
        messages: vec![Message::user("Hi")],
        ..Request::default()
    };
    let mut fallback = Fallback::new();
    for (i, entry) in s["fallback"].as_array().into_iter().flatten().enumerate() {
        fallback = fallback.then(config(i + 1).with_model("m2"), retry(entry));
    }
    for status in s["fallbackOn"].as_array().into_iter().flatten() {
        fallback = fallback.on_status(status.as_u64().unwrap() as u16);
    }
    RunMachine::new(
        config(0),
        request,
        s["stream"] == true,
        retry(s),
        timers,
        42,
    )
    .with_fallback(fallback)
}

/// The step as the table writes it.
fn named(step: &Step) -> String {
    match step {
        Step::Send(_) => "send".into(),
        Step::Take => "take".into(),
        Step::Read => "read".into(),
        Step::Wait(ms) => format!("wait {ms}"),
        Step::Deliver => "deliver".into(),
        Step::Done(_) => "done".into(),
        Step::Fail(e) => format!("fail {}", e.code()),
    }
}

fn cancel_named(c: Cancel) -> String {
    let name = match c {
        Cancel::Nothing => "nothing",
        Cancel::Body => "body",
        Cancel::Attempt => "attempt",
        Cancel::Run => "run",
    };
    format!("cancel {name}")
}

#[test]
fn every_scenario_takes_the_listed_steps() {
    let table = table();
    // Every build (the one-adapter ones too) has scenarios of its own.
    assert!(table.len() >= 2, "{} scenarios", table.len());
    for s in table {
        let name = s["name"].as_str().unwrap();
        let mut m = machine(&s);
        let mut out = Vec::new();
        let mut last = None;
        let mut sends = 0;
        let mut first_event = None;
        for pair in s["steps"].as_array().unwrap() {
            let input = pair[0].as_str().unwrap();
            let want = pair[1].as_str().unwrap();
            let (verb, rest) = input.split_once(' ').unwrap_or((input, ""));
            out.clear();
            let step = match verb {
                "start" => m.start(),
                "responded" => {
                    let mut words = rest.split(' ');
                    let status = words.next().unwrap().parse().unwrap();
                    let headers = words
                        .map(|w| w.split_once('=').unwrap())
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect();
                    m.responded(status, headers, 0)
                }
                "unreachable" => m.unreachable("refused"),
                "body" => m.feed(rest.as_bytes(), &mut out),
                "fixture" => {
                    let (case, range) = rest.split_once(' ').unwrap_or((rest, ".."));
                    let (body, _) = fixture(case);
                    let (from, to) = range.split_once("..").unwrap();
                    let from = from.parse().unwrap_or(0);
                    let to = to.parse().unwrap_or(body.len());
                    m.feed(&body[from..to], &mut out)
                }
                "ended" => m.ended(&mut out),
                "lost" => m.lost("reset", &mut out),
                "delivered" => m.delivered(),
                "waited" => m.waited(),
                "expired" | "abort" => {
                    let cancel = match verb {
                        "abort" => m.abort(Some("stop")),
                        _ => m.expired(Timeout::from_name(rest).unwrap()),
                    };
                    let got = cancel_named(cancel);
                    assert_eq!(got, want, "{name}: {input}");
                    continue;
                }
                other => panic!("{name}: unknown input {other}"),
            };
            let got = named(&step);
            if first_event.is_none() {
                first_event = out.first().cloned();
            }
            last = Some(step);
            if got == "send" {
                sends += 1;
            }
            // "wait" alone accepts any delay (the backoff's jitter).
            let matches = got == want || (want == "wait" && got.starts_with("wait "));
            assert!(matches, "{name}: {input} gave {got}, not {want}");
            if got.starts_with("fail") || got == "done" {
                assert!(m.is_over(), "{name}");
            }
        }
        assert!(sends > 0, "{name}");
        let outcome = &s["outcome"];
        match last {
            Some(Step::Done(response)) => {
                let (_, expected) = fixture(outcome["text"].as_str().unwrap());
                assert_eq!(response.text, expected["text"].as_str().unwrap(), "{name}");
                let answered = outcome["provider"]
                    .as_str()
                    .unwrap_or(providers(&s)[0].name());
                assert_eq!(response.provider.as_deref(), Some(answered), "{name}");
                assert_eq!(
                    attempts(&response.attempts),
                    listed(outcome),
                    "{name}: attempts"
                );
                match (&first_event, outcome["warning"].as_str()) {
                    (Some(StreamEvent::Warning { code, .. }), Some(want)) => {
                        assert_eq!(code, want, "{name}")
                    }
                    (first, Some(want)) => panic!("{name}: {first:?}, not a {want} warning"),
                    (Some(StreamEvent::Warning { code, .. }), None) => {
                        panic!("{name}: an unlisted {code} warning")
                    }
                    _ => {}
                }
            }
            Some(Step::Fail(e)) => {
                assert_eq!(e.code(), outcome["error"].as_str().unwrap(), "{name}");
                let emitted = outcome["eventsEmitted"].as_bool().unwrap();
                assert_eq!(e.events_emitted(), emitted, "{name}");
                let partial = outcome["partial"].as_bool().unwrap_or(false);
                // What a driver reports: the error's own, or the machine's.
                let reported = e.partial().is_some() || m.partial().is_some();
                assert_eq!(reported, partial, "{name}: partial");
                // Who failed before the last, which a driver reports with
                // the error (JS `error.attempts`).
                let failed = attempts(m.failed_attempts());
                assert_eq!(failed, listed(outcome), "{name}: attempts");
            }
            other => panic!("{name}: ends with {other:?}"),
        }
    }
}

/// Failed attempts as the table lists them: `"<provider> <code>"`.
fn attempts(failed: &[crate::FailedAttempt]) -> Vec<String> {
    (failed.iter())
        .map(|a| format!("{} {}", a.provider, a.error.code))
        .collect()
}

/// The outcome's listed attempts (none when it lists none).
fn listed(outcome: &Value) -> Vec<String> {
    (outcome["attempts"].as_array().into_iter().flatten())
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn each_attempt_encodes_the_request_anew() {
    let Some(s) = scenario("two rate limits") else {
        return;
    };
    let mut m = machine(&s);
    let Step::Send(first) = m.start() else {
        panic!()
    };
    let _ = m.responded(429, Vec::new(), 0);
    let Step::Wait(_) = m.ended(&mut Vec::new()) else {
        panic!()
    };
    let Step::Send(second) = m.waited() else {
        panic!()
    };
    assert_eq!(first.body, second.body);
    assert_eq!(first.url, second.url);
}

#[test]
fn an_invalid_request_fails_at_start_and_sends_nothing() {
    if !has(Provider::OpenAi) {
        return;
    }
    let config = ClientConfig::new(Provider::OpenAi).with_header("bad name", "x");
    let request = Request {
        model: Some("m".into()),
        messages: vec![Message::user("Hi")],
        ..Request::default()
    };
    let mut m = RunMachine::new(
        config,
        request,
        true,
        RetryPolicy::default(),
        Timers::default(),
        1,
    );
    match m.start() {
        Step::Fail(Error::InvalidRequest { path, .. }) => assert!(path.starts_with("headers")),
        other => panic!("{other:?}"),
    }
    assert!(m.is_over());
}

#[test]
fn calls_out_of_turn_are_errors_not_panics() {
    let Some(s) = table().into_iter().next() else {
        return;
    };
    let mut m = machine(&s);
    assert!(matches!(
        m.delivered(),
        Step::Fail(Error::InvalidRequest { .. })
    ));
    assert!(matches!(m.feed(b"x", &mut Vec::new()), Step::Fail(_)));
    assert!(matches!(m.start(), Step::Fail(_)));
    assert_eq!(m.expired(Timeout::Total), Cancel::Nothing);
    assert_eq!(m.abort(None), Cancel::Nothing);
}

#[test]
fn a_given_body_is_taken_not_sent_and_never_retried() {
    if !has(Provider::Anthropic) {
        return;
    }
    let mut m = RunMachine::given(Provider::Anthropic, Timers::default());
    assert!(matches!(m.start(), Step::Take));
    assert!(matches!(m.responded(200, Vec::new(), 0), Step::Read));
    let overloaded = b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    match m.feed(overloaded, &mut Vec::new()) {
        Step::Fail(e) => assert_eq!(e.code(), "overloaded"),
        other => panic!("{other:?}"),
    }
}
