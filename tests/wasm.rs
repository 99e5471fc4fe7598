//! The wasm build of the JS-facing API, run by wasm-bindgen-test in Node and
//! in headless Chromium (`scripts/test`): recorded streams of every provider
//! through the exported run machine (`Run`, given a body as `decodeStream`
//! does), and a request through it: encoding, error decoding, the retry
//! policy; and validation.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use serde_json::Value;
use skyl::__shell::wasm::{validate, Run};
use skyl::__shell::{expand_result, Expansion};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

const OPENAI: &[u8] = include_bytes!("fixtures/conformance/openai/openai-text.stream.sse");
const COMPAT: &[u8] =
    include_bytes!("fixtures/conformance/openaicompat/deepseek-tool-call.stream.sse");
const ANTHROPIC: &[u8] =
    include_bytes!("fixtures/conformance/anthropic/anthropic-tool-no-args.stream.sse");
const GEMINI: &[u8] =
    include_bytes!("fixtures/conformance/gemini/google-stream-no-args-tool-call.stream.sse");
const RESPONSES: &[u8] =
    include_bytes!("fixtures/conformance/responses/skyl-synthetic-parallel-interleaved.stream.sse");

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

/// Inputs of the exported `Run` (`INPUT` in `policy.js`).
const IN_ENDED: u32 = 0;
const IN_DELIVERED: u32 = 1;
const IN_WAITED: u32 = 2;

/// Step codes of the exported `Run` (`STEP` in `policy.js`).
const READ: u32 = 0;
const SEND: u32 = 1;
const TAKE: u32 = 2;
const WAIT: u32 = 3;
const DELIVER: u32 = 4;
const DONE: u32 = 5;
const FAIL: u32 = 6;

/// Feeds `chunk` as the JS half does: copied into the run's input buffer
/// in the module's memory (this test runs in the same module).
fn feed(run: &mut Run, chunk: &[u8]) -> u32 {
    let at = run.input_buffer(chunk.len());
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let bytes = js_sys::Uint8Array::new(&memory.buffer());
    bytes.set(&js_sys::Uint8Array::from(chunk), at as u32);
    run.feed_input(chunk.len())
}

/// Decodes `body` in `chunk`-byte pieces as the package's `decodeStream`
/// does (a run of a given body): (events, the last result), each result
/// expanded as the JS shell does. The last result is the one with `done`,
/// or the error.
fn run(provider: &str, body: &[u8], chunk: usize) -> (Vec<Value>, Value) {
    let mut run = Run::given(provider, 0.0, 0.0);
    assert_eq!(run.start(None), TAKE);
    assert_eq!(run.responded(200, "[]", 0.0), READ);
    let mut events = Vec::new();
    let mut sent = Expansion::default();
    let mut last = Value::Null;
    let mut deliver = |run: &mut Run, step: u32, events: &mut Vec<Value>| -> u32 {
        if step != DELIVER {
            return step;
        }
        let output = run.take_output();
        // (A string over 64 KiB comes apart, as JS takes it.)
        while let Some(s) = run.take_apart().as_string() {
            sent.apart.push_back(s);
        }
        let out = expand_result(&output, &mut sent).unwrap();
        events.extend(out["events"].as_array().unwrap().iter().cloned());
        last = out;
        run.input(IN_DELIVERED, None)
    };
    for piece in body.chunks(chunk) {
        let step = feed(&mut run, piece);
        let step = deliver(&mut run, step, &mut events);
        assert_eq!(step, READ, "{}", run.take_output());
    }
    let step = run.input(IN_ENDED, None);
    match deliver(&mut run, step, &mut events) {
        DONE => {}
        FAIL => {
            let error = json(&run.take_output());
            last = error;
        }
        other => panic!("step {other}"),
    }
    (events, last)
}

fn tool_calls(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "tool_call").collect()
}

#[wasm_bindgen_test]
fn openai_text_stream_decodes_in_wasm() {
    let (events, out) = run("openai", OPENAI, 13);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(out["done"], true);
    // The finish event's response is compact: the text is in its message.
    let parts = events.last().unwrap()["response"]["message"]["parts"].clone();
    let joined: String = parts
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(joined, text);
    assert_eq!(events.last().unwrap()["type"], "finish");
}

#[wasm_bindgen_test]
fn tool_calls_arrive_once_and_whole_for_every_provider() {
    for (provider, body, want) in [
        ("openaicompat", COMPAT, 1),
        ("anthropic", ANTHROPIC, 1),
        ("gemini", GEMINI, 4),
        ("responses", RESPONSES, 2),
    ] {
        for chunk in [1, 7, 4096] {
            let (events, _) = run(provider, body, chunk);
            let calls = tool_calls(&events);
            assert_eq!(calls.len(), want, "{provider} chunk {chunk}");
            for c in &calls {
                let args: Value =
                    serde_json::from_str(c["call"]["arguments"].as_str().unwrap()).unwrap();
                assert!(args.is_object());
            }
            let parts = events.last().unwrap()["response"]["message"]["parts"].clone();
            let in_message = parts
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["type"] == "tool_call")
                .count();
            assert_eq!(in_message, want);
        }
    }
}

#[wasm_bindgen_test]
fn a_truncated_stream_is_an_early_end_with_the_partial_response() {
    let cut = &ANTHROPIC[..ANTHROPIC.len() / 2];
    let (_, out) = run("anthropic", cut, 64);
    assert_eq!(out["error"]["name"], "StreamEndedEarlyError");
    assert!(out["error"]["partial"].is_object());
}

#[wasm_bindgen_test]
fn the_run_machine_encodes_decodes_errors_and_retries_in_wasm() {
    let config = r#"{"provider":"anthropic","apiKey":"sk-test","model":"claude"}"#;
    let request =
        r#"{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}],"maxTokens":5}"#;
    let mut run = Run::new(config, request, true, 1, 0.0, 0.0, 0.0, 7.0);
    assert_eq!(run.start(None), SEND);
    let encoded = run.take_output();
    let (head, body) = encoded.split_once('\0').unwrap();
    assert_eq!(
        json(head)["ok"]["url"],
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(json(body)["max_tokens"], 5);
    // A 429 with retry-after-ms: its body is read, then the wait is that.
    assert_eq!(
        run.responded(429, r#"[["retry-after-ms","20"]]"#, 1.0e12),
        READ
    );
    let error = br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}"#;
    assert_eq!(feed(&mut run, error), READ);
    assert_eq!(run.input(IN_ENDED, None), WAIT);
    assert_eq!(run.timer_ms(false), 20.0, "a WAIT's timer is its wait");
    // The one retry: the request is encoded anew, and fails the same way.
    assert_eq!(run.input(IN_WAITED, None), SEND);
    assert!(run.take_output().contains("api.anthropic.com"));
    assert_eq!(run.responded(429, "[]", 1.0e12), READ);
    assert_eq!(feed(&mut run, error), READ);
    assert_eq!(run.input(IN_ENDED, None), FAIL);
    let err = json(&run.take_output());
    assert_eq!(err["error"]["name"], "RateLimitError");
    assert!(!err.to_string().contains("sk-test"));
    // A request that cannot be encoded fails at the start, naming the field.
    let mut bad = Run::new(
        config,
        r#"{"messages":[{"role":"nobody","parts":[]}]}"#,
        true,
        1,
        0.0,
        0.0,
        0.0,
        7.0,
    );
    assert_eq!(bad.start(None), FAIL);
    assert_eq!(
        json(&bad.take_output())["error"]["path"],
        "messages[0].role"
    );
    assert!(validate("tool", r#"{"name":""}"#).contains("tool.name"));
    let mut unknown = Run::given("nope", 0.0, 0.0);
    assert_eq!(unknown.start(None), FAIL);
    assert!(unknown.take_output().contains("provider"));
}
