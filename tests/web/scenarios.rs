//! The run machine's scenario table (`src/run/scenarios.json`), run by the
//! web driver against the mock provider: each scenario must end as the
//! table says, after as many requests as its steps have `send`s. The same
//! table is stepped natively (`src/run/scenarios.rs`) and run by the JS
//! driver (`tests/js/scenarios.test.mjs`).

use serde_json::Value;
use skyl::web::Client;
use skyl::{Fallback, Provider, StreamDecoder, StreamEvent};
use wasm_bindgen_test::wasm_bindgen_test;

use super::provider_of;
use super::support::*;

const TABLE: &str = include_str!("../../src/run/scenarios.json");

/// What the conformance case `case` decodes to: the text a scenario that
/// succeeds must end with.
async fn expected_text(case: &str) -> String {
    let body = fixture_bytes(case).await;
    let (_, response) = StreamDecoder::decode_all(provider_of(case), &body);
    response.unwrap().text
}

/// The provider of scenario `s` (or of one of its fallback entries), and
/// its mock options, its requests counted under `name`.
fn options_of<'a>(s: &'a Value, name: &'a str) -> (Provider, Vec<(&'a str, &'a str)>) {
    let provider = Provider::from_name(s["provider"].as_str().unwrap()).unwrap();
    let query = s["mock"].as_str().unwrap();
    let mut options: Vec<(&str, &str)> = query
        .split('&')
        .map(|pair| pair.split_once('=').unwrap())
        .collect();
    options.push(("scenario", name));
    (provider, options)
}

/// The names scenario `s`'s requests are counted under: its own, then one
/// per fallback entry.
fn names_of(s: &Value, name: &str) -> Vec<String> {
    let entries = s["fallback"].as_array().map_or(0, Vec::len);
    let mut names = vec![name.to_string()];
    names.extend((1..=entries).map(|i| format!("{name}#{i}")));
    names
}

/// A client for scenario `s`, its requests counted under `name`.
fn client_for(s: &Value, name: &str) -> Client {
    let (provider, options) = options_of(s, name);
    let ms = |key: &str| s["timeouts"][key].as_u64();
    let retries = |s: &Value| s["maxRetries"].as_u64().unwrap_or(2) as u32;
    let names = names_of(s, name);
    let mut fallback = Fallback::new();
    for (entry, name) in s["fallback"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(&names[1..])
    {
        let (provider, options) = options_of(entry, name);
        fallback = fallback.then(config(provider, &options), quick_retries(retries(entry)));
    }
    for status in s["fallbackOn"].as_array().into_iter().flatten() {
        fallback = fallback.on_status(status.as_u64().unwrap() as u16);
    }
    let client = client(provider, &options)
        .with_retry(quick_retries(retries(s)))
        .with_fallback(fallback);
    timed(client, ms("total"), ms("firstByte"), ms("idle"))
}

/// Failed attempts as the table lists them: `"<provider> <code>"`.
fn attempts(failed: &[skyl::FailedAttempt]) -> Vec<String> {
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

#[wasm_bindgen_test]
async fn every_scenario_of_the_run_machine_ends_as_listed() {
    let table: Value = serde_json::from_str(TABLE).unwrap();
    let scenarios = table["scenarios"].as_array().unwrap();
    let mut ran = 0;
    for s in scenarios.iter().filter(|s| s["mock"].is_string()) {
        let title = s["name"].as_str().unwrap();
        let name = scenario(&format!("web: {title}"));
        let client = client_for(s, &name);
        // (Who failed before the last: a stream says, complete() only in
        // its response.)
        let (events, outcome, failed) = if s["stream"].as_bool().unwrap() {
            let mut stream = client.stream(&ask("Hi"));
            let mut events = Vec::new();
            while let Some(item) = stream.next().await {
                events.extend(item.ok());
            }
            let failed = attempts(stream.failed_attempts());
            (events, stream.response().await, Some(failed))
        } else {
            (Vec::new(), client.complete(&ask("Hi")).await, None)
        };
        let sends = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|pair| pair[1] == "send")
            .count();
        let mut requests = 0;
        for name in names_of(s, &name) {
            requests += received(&name).await.len();
        }
        assert_eq!(requests, sends, "{title}: requests");
        let want = &s["outcome"];
        match (outcome, want["text"].as_str()) {
            (Ok(response), Some(case)) => {
                assert_eq!(response.text, expected_text(case).await, "{title}");
                let answered = want["provider"].as_str().or(s["provider"].as_str());
                assert_eq!(response.provider.as_deref(), answered, "{title}");
                assert_eq!(attempts(&response.attempts), listed(want), "{title}");
                if let Some(failed) = &failed {
                    assert_eq!(failed, &listed(want), "{title}: the stream's attempts");
                }
                let warned = match events.first() {
                    Some(StreamEvent::Warning { code, .. }) => Some(code.as_str()),
                    _ => None,
                };
                assert_eq!(warned, want["warning"].as_str(), "{title}: warning");
            }
            (Err(e), None) => {
                assert_eq!(e.code(), want["error"].as_str().unwrap(), "{title}: {e}");
                let emitted = want["eventsEmitted"].as_bool().unwrap();
                assert_eq!(e.events_emitted(), emitted, "{title}: eventsEmitted");
                let partial = want["partial"].as_bool().unwrap_or(false);
                assert_eq!(e.partial().is_some(), partial, "{title}: partial");
                if let Some(failed) = &failed {
                    assert_eq!(failed, &listed(want), "{title}: the stream's attempts");
                }
            }
            (outcome, _) => panic!("{title}: ended with {outcome:?}"),
        }
        ran += 1;
    }
    assert!(ran >= 10, "{ran} scenarios");
}
