//! `skyl::web` against the loopback mock provider (`tests/js/mock-server.mjs`),
//! run by wasm-bindgen-test in Node and in headless Chromium
//! (`scripts/test` starts the mock and passes its URL, and the list of
//! conformance stream cases, at compile time):
//!
//! ```sh
//! node tests/js/mock-server.mjs 47811 &
//! SKYL_WEB_CASES="$(cd tests/fixtures/conformance && ls */*.stream.sse | sed 's/\.sse$//' | paste -sd,)" \
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!     cargo test --target wasm32-unknown-unknown --features web --test web
//! ```
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "web/support.rs"]
mod support;

#[path = "common/joined.rs"]
mod joined;

#[path = "web/scenarios.rs"]
mod scenarios;

#[path = "web/embed.rs"]
mod embed;

#[path = "web/runner.rs"]
mod runner;

#[path = "web/runner_more.rs"]
mod runner_more;

#[path = "web/vertex.rs"]
mod vertex;

#[path = "web/refusals.rs"]
mod refusals;

use std::cell::Cell;
use std::rc::Rc;

use skyl::web;
use skyl::{
    ApiErrorKind, Error, Message, Provider, Request, Response, StreamDecoder, StreamEvent, Timeout,
};
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

/// The conformance stream cases, `adapter/case` (`scripts/test` lists them).
const CASES: Option<&str> = option_env!("SKYL_WEB_CASES");

fn provider_of(case: &str) -> Provider {
    Provider::from_name(case.split('/').next().unwrap()).unwrap()
}

/// An error without what differs between the two drivers by design: the
/// driver adds the response's request id to an in-band error.
fn comparable(outcome: Result<Response, Error>) -> Result<Response, Error> {
    outcome.map_err(|mut e| {
        if let Error::Api(api) = &mut e {
            api.request_id = None;
        }
        e
    })
}

/// What the decoder gave, as a run gives it: the response (and the
/// `finish` event's) names the provider that answered.
fn as_run(
    provider: Provider,
    (mut events, outcome): (Vec<StreamEvent>, Result<Response, Error>),
) -> (Vec<StreamEvent>, Result<Response, Error>) {
    let name = Some(provider.name().to_string());
    for ev in &mut events {
        if let StreamEvent::Finish { response, .. } = ev {
            response.provider.clone_from(&name);
        }
    }
    let outcome = outcome.map(|mut r| {
        r.provider = name;
        r
    });
    (events, outcome)
}

#[wasm_bindgen_test]
async fn every_conformance_stream_gives_what_the_decoder_gives() {
    let cases: Vec<&str> = CASES
        .expect("SKYL_WEB_CASES lists the cases: run through scripts/test")
        .split(',')
        .collect();
    assert!(cases.len() > 100, "{} cases", cases.len());
    for case in cases {
        let provider = provider_of(case);
        let bytes = fixture_bytes(case).await;
        assert!(!bytes.is_empty(), "{case}");
        let (want_events, want) = as_run(provider, StreamDecoder::decode_all(provider, &bytes));
        // Written in 7-byte pieces: events cross chunk boundaries.
        let client =
            client(provider, &[("fixture", case), ("chunk", "7")]).with_retry(quick_retries(0));
        let (events, outcome) = collect(client.stream(&Request::default())).await;
        assert_eq!(events, want_events, "{case}");
        assert_eq!(comparable(outcome), comparable(want), "{case}");
    }
}

#[wasm_bindgen_test]
async fn progress_events_are_the_decoders_with_partial_events() {
    let all = skyl::PartialEvents {
        tools: true,
        output: true,
        files: true,
    };
    let request = Request {
        partial: all,
        response_format: Some(skyl::ResponseFormat::JsonSchema {
            schema: serde_json::json!({"type": "object"}),
            name: None,
            description: None,
            strict: None,
        }),
        ..Request::default()
    };
    let mut deltas = 0;
    for case in CASES.expect("SKYL_WEB_CASES").split(',') {
        let provider = provider_of(case);
        let bytes = fixture_bytes(case).await;
        let mut d = StreamDecoder::new(provider).with_partial_events(all);
        let mut want_events = Vec::new();
        let want = d
            .feed(&bytes, &mut want_events)
            .and_then(|()| d.finish(&mut want_events));
        let (want_events, want) = as_run(provider, (want_events, want));
        let client =
            client(provider, &[("fixture", case), ("chunk", "7")]).with_retry(quick_retries(0));
        let (events, outcome) = collect(client.stream(&request)).await;
        // (The deltas of one read are one event: the reads differ.)
        assert_eq!(
            joined::joined(&events),
            joined::joined(&want_events),
            "{case}"
        );
        assert_eq!(comparable(outcome), comparable(want), "{case}");
        deltas += events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    StreamEvent::ToolCallDelta {
                        partial: Some(_),
                        ..
                    }
                )
            })
            .count();
    }
    assert!(deltas >= 100, "{deltas} deltas with their partial value");
}

#[wasm_bindgen_test]
async fn a_streamed_tool_call_arrives_once_and_whole() {
    let mut request = ask("What is the weather in Kampala?");
    request.tools = vec![skyl::Tool {
        name: "get_weather".into(),
        description: Some("Current weather for a city.".into()),
        parameters: Some(serde_json::json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })),
        ..skyl::Tool::default()
    }];
    for provider in [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Responses,
    ] {
        let (events, outcome) = collect(client(provider, &[]).stream(&request)).await;
        let calls: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 1, "{provider}: {events:?}");
        assert_eq!(calls[0].name, "get_weather");
        assert!(calls[0].arguments.contains("Kampala"));
        assert_eq!(outcome.unwrap().tool_calls, calls, "{provider}");
    }
}

#[wasm_bindgen_test]
async fn complete_gives_the_response_of_the_body() {
    let client = client(Provider::Anthropic, &[]);
    let response = client.complete(&ask("Hello")).await.unwrap();
    assert!(!response.text.is_empty());
    let streamed = client.stream(&ask("Hello")).response().await.unwrap();
    assert_eq!(streamed.text, response.text);
}

#[wasm_bindgen_test]
async fn dropping_the_stream_closes_the_connection() {
    let (name, client) = counted(
        "drop",
        Provider::Anthropic,
        &[("chunk", "16"), ("delay", "30")],
    );
    let mut stream = client.stream(&ask("Tell me a story"));
    assert!(stream.next().await.unwrap().is_ok());
    drop(stream);
    let mut closed = false;
    for _ in 0..100 {
        sleep(20).await;
        let seen = received(&name).await;
        assert_eq!(seen.len(), 1);
        if seen[0]["closedEarly"] == true {
            closed = true;
            break;
        }
    }
    assert!(closed, "the mock saw the connection close");
}

#[wasm_bindgen_test]
async fn a_429_with_retry_after_is_retried_after_that_delay() {
    let (name, client) = counted(
        "429",
        Provider::Anthropic,
        &[("fail", "429"), ("retry_after", "0.3")],
    );
    let start = now();
    let response = client.stream(&ask("Hello")).response().await.unwrap();
    assert!(!response.text.is_empty());
    assert!(now() - start >= 290.0, "waited {} ms", now() - start);
    assert_eq!(received(&name).await.len(), 2);
}

#[wasm_bindgen_test]
async fn an_in_band_error_before_any_event_is_retried() {
    let (name, client) = counted(
        "inband-start",
        Provider::Anthropic,
        &[("inband_error", "start")],
    );
    let (events, outcome) = collect(client.stream(&ask("Hello"))).await;
    assert!(events.is_empty());
    let Err(Error::Api(e)) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(e.in_band && !e.events_emitted);
    assert_eq!(e.kind, ApiErrorKind::Overloaded);
    assert!(e.request_id.is_some(), "the response's request id");
    // Every attempt failed the same way: the first and two retries.
    assert_eq!(received(&name).await.len(), 3);
}

#[wasm_bindgen_test]
async fn nothing_is_retried_after_an_event() {
    let (name, client) = counted(
        "inband-after",
        Provider::Anthropic,
        &[("inband_error", "after_text")],
    );
    let (events, outcome) = collect(client.stream(&ask("Hello"))).await;
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Text { .. })));
    let e = outcome.unwrap_err();
    assert!(!e.retryable() && e.events_emitted(), "{e:?}");
    assert_eq!(received(&name).await.len(), 1);
}

#[wasm_bindgen_test]
async fn the_first_byte_timeout_ends_each_attempt() {
    let (name, client) = counted(
        "first-byte",
        Provider::Anthropic,
        &[("first_byte_delay", "2000")],
    );
    let client = timed(client.with_retry(quick_retries(1)), None, Some(100), None);
    let start = now();
    let e = client.stream(&ask("Hello")).response().await.unwrap_err();
    assert!(
        matches!(
            e,
            Error::Timeout {
                which: Timeout::FirstByte,
                after_ms: 100,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(now() - start < 1500.0);
    assert_eq!(received(&name).await.len(), 2, "retried once");
}

#[wasm_bindgen_test]
async fn the_idle_timeout_ends_a_silent_body() {
    let client = client(Provider::Anthropic, &[("hang", "1")]).with_retry(quick_retries(0));
    let client = timed(client, None, None, Some(100));
    let e = client.stream(&ask("Hello")).response().await.unwrap_err();
    assert!(is_timeout(&e, Timeout::Idle), "{e:?}");
    assert!(e.partial().is_some(), "keeps what was assembled");
}

/// A read given up (the stream dropped while a chunk is awaited) settles
/// later, when the cancelled reader resolves it: the callbacks it was
/// handed must still be there then, or the runtime sees an unhandled
/// rejection. Then an idle timeout while a chunk is awaited, which must
/// not leave one either (there the cancelled read usually settles before
/// the wait ends, so nothing is given up).
#[wasm_bindgen_test]
async fn a_read_given_up_settles_without_an_unhandled_rejection() {
    let rejections = count_unhandled_rejections();
    let first = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";
    let fetch = function(move |_| response_of(&stream_of(&[&first[..]], false), 200).into());
    let client = client(Provider::OpenAi, &[])
        .with_retry(quick_retries(0))
        .with_fetch(fetch);
    let mut stream = client.stream(&ask("Hello"));
    assert!(matches!(
        stream.next().await,
        Some(Ok(StreamEvent::Text { .. }))
    ));
    // The next read is out: poll it once, then drop the stream.
    let pending = futures_poll_once(&mut stream);
    assert!(pending, "the second read waits for a chunk");
    drop(stream);
    sleep(50).await;
    let client = timed(client, None, None, Some(50));
    let (events, outcome) = collect(client.stream(&ask("Hello"))).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let e = outcome.unwrap_err();
    assert!(is_timeout(&e, Timeout::Idle), "{e:?}");
    sleep(50).await;
    assert_eq!(
        js_sys::Reflect::get(&rejections, &"count".into()).unwrap(),
        JsValue::from(0),
        "unhandled rejections"
    );
}

#[wasm_bindgen_test]
async fn the_total_timeout_ends_the_request_with_what_came() {
    let client = client(Provider::Anthropic, &[("chunk", "8"), ("delay", "25")]);
    let client = timed(client, Some(300), None, None);
    let (events, outcome) = collect(client.stream(&ask("Tell me a story"))).await;
    let e = outcome.unwrap_err();
    assert!(is_timeout(&e, Timeout::Total), "{e:?}");
    assert!(!e.retryable());
    assert_eq!(!events.is_empty(), e.events_emitted());
}

/// A server that sends the whole stream and keeps the connection open:
/// the idle timeout after the terminal frame ends the body cleanly.
#[wasm_bindgen_test]
async fn a_timeout_after_the_terminal_frame_ends_the_body_cleanly() {
    let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let fetch = function(move |_request| response_of(&stream_of(&[&body[..]], false), 200).into());
    let client = client(Provider::OpenAi, &[]).with_fetch(fetch);
    let client = timed(client, None, None, Some(100));
    let (events, outcome) = collect(client.stream(&ask("Hello"))).await;
    assert_eq!(outcome.unwrap().text, "Hi");
    assert!(matches!(events.last(), Some(StreamEvent::Finish { .. })));
}

#[wasm_bindgen_test]
async fn a_custom_fetch_sends_the_request() {
    let calls = Rc::new(Cell::new(0));
    let seen = Rc::clone(&calls);
    let fetch = function(move |request| {
        seen.set(seen.get() + 1);
        global_fetch().call1(&JsValue::UNDEFINED, &request).unwrap()
    });
    let client = client(Provider::Gemini, &[]).with_fetch(fetch);
    let response = client.stream(&ask("Hello")).response().await.unwrap();
    assert!(!response.text.is_empty());
    assert_eq!(calls.get(), 1);
}

/// A `Response` that fails `instanceof` (another realm, a polyfill) is
/// read by its properties.
#[wasm_bindgen_test]
async fn a_response_of_another_realm_is_read_by_duck_typing() {
    let body =
        b"data: {\"choices\":[{\"delta\":{\"content\":\"Duck\"},\"finish_reason\":\"stop\"}]}\n\n";
    let fetch = function(move |_| duck_response(&stream_of(&[&body[..]], true).into(), 200));
    let duck = client(Provider::OpenAi, &[]).with_fetch(fetch);
    assert_eq!(
        duck.stream(&ask("Hi")).response().await.unwrap().text,
        "Duck"
    );
    let fetch = function(move |_| duck_response(&stream_of(&[b"{}"], true).into(), 503));
    let failing = client(Provider::OpenAi, &[])
        .with_retry(quick_retries(0))
        .with_fetch(fetch);
    let e = failing.complete(&ask("Hi")).await.unwrap_err();
    let Error::Api(api) = e else { panic!("{e:?}") };
    assert_eq!(
        (api.status, api.request_id.as_deref()),
        (Some(503), Some("req_duck"))
    );
}

#[wasm_bindgen_test]
async fn decode_stream_reads_a_response_or_a_stream() {
    let case = "anthropic/anthropic-text.stream";
    let bytes = fixture_bytes(case).await;
    let decoded = StreamDecoder::decode_all(Provider::Anthropic, &bytes);
    let (want_events, want) = as_run(Provider::Anthropic, decoded);
    let url = format!("{MOCK}/v1/messages");
    let response = plain_fetch(&url, &[("fixture", case), ("chunk", "5")], "{}").await;
    let (events, outcome) = collect(web::decode_stream(Provider::Anthropic, &response)).await;
    assert_eq!((events, outcome), (want_events.clone(), want.clone()));
    let stream = stream_of(&[&bytes[..10], &bytes[10..]], true);
    let (events, outcome) = collect(web::decode_stream(Provider::Anthropic, &stream)).await;
    assert_eq!((events, outcome), (want_events, want));
    let e = web::decode_stream(Provider::Anthropic, &JsValue::from(7))
        .response()
        .await;
    assert!(
        matches!(&e, Err(Error::InvalidRequest { path, .. }) if path == "body"),
        "{e:?}"
    );
}

// ------------------------------------------------ the model and JsValue

#[wasm_bindgen_test]
async fn responses_and_events_convert_to_the_packages_shapes() {
    let case = "responses/skyl-synthetic-parallel-interleaved.stream";
    let bytes = fixture_bytes(case).await;
    let (events, response) = StreamDecoder::decode_all(Provider::Responses, &bytes);
    let response = response.unwrap();
    let js = web::to_js(&response).unwrap();
    assert_eq!(
        stringify(&js),
        as_js_reads(&serde_json::to_string(&response).unwrap())
    );
    assert_eq!(web::from_js::<Response>(&js).unwrap(), response);
    for event in events {
        let js = web::to_js(&event).unwrap();
        assert_eq!(
            stringify(&js),
            as_js_reads(&serde_json::to_string(&event).unwrap())
        );
        assert_eq!(web::from_js::<StreamEvent>(&js).unwrap(), event);
    }
    // The package's own writer of a whole response (the JS boundary).
    let body = r#"{"id":"r","model":"m","choices":[{"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"n\":9007199254740993}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#;
    let decoded = skyl::decode_response(Provider::OpenAi, body).unwrap();
    let written = skyl::__shell::response("openai", body);
    let shell: serde_json::Value = serde_json::from_str(&written).unwrap();
    let js = web::to_js(&decoded).unwrap();
    assert_eq!(stringify(&js), as_js_reads(&shell["response"].to_string()));
}

#[wasm_bindgen_test]
fn requests_and_messages_convert_both_ways() {
    for text in [
        include_str!("golden/requests/cache_marks.json"),
        include_str!("golden/requests/images.json"),
        include_str!("golden/requests/reasoning_replay.json"),
        include_str!("golden/requests/sampling_and_options.json"),
    ] {
        let want: Request = serde_json::from_str(text).unwrap();
        let js = js_sys::JSON::parse(text).unwrap();
        assert_eq!(web::from_js::<Request>(&js).unwrap(), want);
        let back = web::to_js(&want).unwrap();
        assert_eq!(
            stringify(&back),
            as_js_reads(&serde_json::to_string(&want).unwrap())
        );
        assert_eq!(web::from_js::<Request>(&back).unwrap(), want);
        let history = want.messages.clone();
        let js = web::to_js(&history).unwrap();
        assert_eq!(web::from_js::<Vec<Message>>(&js).unwrap(), history);
    }
    // A big number in a schema becomes the double JSON.parse makes.
    let text = r#"{"messages":[],"tools":[{"name":"f","parameters":{"type":"object","maximum":18446744073709551615}}]}"#;
    let request: Request = serde_json::from_str(text).unwrap();
    assert_eq!(
        stringify(&web::to_js(&request).unwrap()),
        as_js_reads(&serde_json::to_string(&request).unwrap())
    );
    // What does not fit is an error naming the field.
    let bad = js_sys::JSON::parse(r#"{"messages":[{"role":"robot"}]}"#).unwrap();
    let e = web::from_js::<Request>(&bad).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path == "messages[0].role"),
        "{e:?}"
    );
    let e = web::from_js::<Vec<Message>>(&JsValue::from(3)).unwrap_err();
    assert!(matches!(e, Error::InvalidRequest { .. }), "{e:?}");
    assert!(web::from_js::<Response>(&JsValue::UNDEFINED).is_err());
}
