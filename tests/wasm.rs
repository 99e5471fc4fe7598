//! The wasm build of the JS-facing API, run by wasm-bindgen-test in Node and
//! in headless Chromium (`scripts/test`): recorded streams of every provider
//! through the exported `Decoder`, request encoding, error decoding,
//! validation and the retry policy.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::Value;
use skyl::__shell::expand_result;
use skyl::__shell::wasm::{
    decode_http_error, encode_request, interrupt, retry_delay, validate, Decoder,
};
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

/// Decodes `body` in `chunk`-byte pieces: (events, final result), each
/// result expanded as the JS shell does.
fn run(provider: &str, body: &[u8], chunk: usize) -> (Vec<Value>, Value) {
    let mut d = Decoder::new(provider, None).unwrap();
    let mut events = Vec::new();
    let mut sent = Vec::new();
    let mut json = |s: &str| expand_result(s, &mut sent).unwrap();
    for piece in body.chunks(chunk) {
        let out = json(&d.feed(piece));
        assert!(out.get("error").is_none(), "{out}");
        events.extend(out["events"].as_array().unwrap().iter().cloned());
    }
    let out = json(&d.finish());
    events.extend(out["events"].as_array().unwrap().iter().cloned());
    (events, out)
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
fn requests_encode_and_errors_decode_in_wasm() {
    let encoded = encode_request(
        r#"{"provider":"anthropic","apiKey":"sk-test","model":"claude"}"#,
        r#"{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}],"maxTokens":5}"#,
        true,
    );
    let (head, body) = encoded.split_once('\0').unwrap();
    assert_eq!(
        json(head)["ok"]["url"],
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(json(body)["max_tokens"], 5);
    let err = json(&decode_http_error(
        "openai",
        429,
        r#"[["retry-after-ms","20"]]"#,
        r#"{"error":{"message":"slow","type":"rate_limit_error"}}"#,
        1.0e12,
    ));
    assert_eq!(err["error"]["name"], "RateLimitError");
    assert_eq!(err["error"]["retryAfterMs"], 20);
    assert!(validate("tool", r#"{"name":""}"#).contains("tool.name"));
    assert_eq!(retry_delay(0, 2, true, false, 20.0, 0.5), 20.0);
    assert_eq!(retry_delay(0, 2, true, true, 20.0, 0.5), -1.0);
    assert!(interrupt("openai", r#"{"timeout":"idle","afterMs":5}"#).contains("TimeoutError"));
    assert!(Decoder::new("nope", None).is_err());
}
