//! Property tests: random chunkings of the recorded streams change nothing,
//! and no input (bytes, JSON frames, bodies, requests) makes any adapter
//! panic. A panic in wasm kills the instance for every later call.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Map, Value};
use skyl::{
    decode_error, decode_response, encode_request, ClientConfig, Provider, Request, StreamDecoder,
};

fn cases() -> &'static [(Provider, Vec<u8>)] {
    static CASES: OnceLock<Vec<(Provider, Vec<u8>)>> = OnceLock::new();
    CASES.get_or_init(|| {
        common::stream_cases()
            .into_iter()
            .map(|c| (c.provider, c.body()))
            .collect()
    })
}

fn provider() -> impl Strategy<Value = Provider> {
    prop_oneof![
        Just(Provider::OpenAi),
        Just(Provider::OpenAiCompat),
        Just(Provider::Anthropic),
        Just(Provider::Gemini)
    ]
}

/// Field names the adapters look at, so random JSON reaches deep paths.
const KEYS: &[&str] = &[
    "type",
    "index",
    "id",
    "name",
    "model",
    "delta",
    "choices",
    "message",
    "content",
    "text",
    "tool_calls",
    "function",
    "arguments",
    "finish_reason",
    "usage",
    "error",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "partialArgs",
    "jsonPath",
    "stringValue",
    "numberValue",
    "willContinue",
    "thought",
    "thoughtSignature",
    "finishReason",
    "usageMetadata",
    "content_block",
    "partial_json",
    "input",
    "stop_reason",
    "reasoning_content",
    "reasoning",
    "promptFeedback",
    "blockReason",
    "signature",
    "thinking",
    "data",
    "refusal",
    "x_groq",
    "extra_content",
    "prompt_tokens",
    "input_tokens",
    "promptTokenCount",
    "responseId",
];

const TYPES: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
    "ping",
    "text",
    "tool_use",
    "thinking",
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "signature_delta",
    "server_tool_use",
    "redacted_thinking",
    "compaction_delta",
    "citations_delta",
    "function",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(TYPES).prop_map(Value::from),
        prop::sample::select(KEYS).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        Just(Value::from("$.a[0].b")),
        Just(Value::from("[DONE]")),
        Just(Value::from("{\"a\":")),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

fn sse_frames(frames: &[(Option<&str>, Value)]) -> Vec<u8> {
    let mut out = String::new();
    for (event, data) in frames {
        if let Some(e) = event {
            out.push_str(&format!("event: {e}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out.into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_multi_splits_of_recorded_streams_change_nothing(
        pick in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 1..48),
    ) {
        let (provider, body) = pick.get(cases());
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(body.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for k in at {
            chunks.push(&body[start..k]);
            start = k;
        }
        chunks.push(&body[start..]);
        let whole = common::decode_chunked(*provider, &[body]);
        let split = common::decode_chunked(*provider, &chunks);
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn arbitrary_bytes_never_panic_any_stream_decoder(
        provider in provider(),
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..8),
    ) {
        let mut d = StreamDecoder::with_max_event_bytes(provider, 256);
        let mut out = Vec::new();
        for c in &chunks {
            let _ = d.feed(c, &mut out);
        }
        let _ = d.finish(&mut out);
        let _ = d.partial();
    }

    #[test]
    fn sse_shaped_bytes_never_panic_any_stream_decoder(
        provider in provider(),
        lines in prop::collection::vec(
            prop_oneof![
                Just("data: ".to_string()), Just("\n".to_string()), Just("\r".to_string()),
                Just("event: error".to_string()), Just(": c".to_string()), Just("data: [DONE]".to_string()),
                "[{}\\[\\]\":,a-z0-9 ]{0,10}",
            ],
            0..40,
        ),
    ) {
        let body = lines.concat();
        let _ = StreamDecoder::decode_all(provider, body.as_bytes());
    }

    #[test]
    fn arbitrary_json_frames_never_panic_any_stream_decoder(
        provider in provider(),
        frames in prop::collection::vec((prop::option::of(prop::sample::select(TYPES)), json()), 0..12),
    ) {
        let body = sse_frames(&frames);
        let (events, result) = StreamDecoder::decode_all(provider, &body);
        // Whatever happened, a tool call event carries a whole JSON object.
        for ev in &events {
            if let skyl::StreamEvent::ToolCall { call, .. } = ev {
                let v: Value = serde_json::from_str(&call.arguments).unwrap();
                prop_assert!(v.is_object());
                prop_assert!(!call.name.is_empty() && !call.id.is_empty());
            }
        }
        if let Ok(r) = result {
            prop_assert_eq!(r.tool_calls.len(), events.iter().filter(|e| matches!(e, skyl::StreamEvent::ToolCall { .. })).count());
        }
    }

    #[test]
    fn arbitrary_json_bodies_never_panic_the_response_and_error_decoders(
        provider in provider(),
        body in json(),
        status in 100u16..600,
    ) {
        let text = body.to_string();
        let _ = decode_response(provider, &text);
        let _ = decode_error(provider, status, &[("retry-after".into(), "1".into())], &text);
        let _ = decode_error(provider, status, &[], "<html>not json</html>");
    }

    #[test]
    fn arbitrary_requests_never_panic_any_encoder(
        provider in provider(),
        messages in prop::collection::vec(json(), 0..5),
        tools in prop::collection::vec(json(), 0..3),
    ) {
        let mut req = Map::new();
        req.insert("model".into(), Value::from("m"));
        req.insert("messages".into(), Value::Array(messages));
        req.insert("tools".into(), Value::Array(tools));
        if let Ok(request) = serde_json::from_value::<Request>(Value::Object(req)) {
            let mut config = ClientConfig::new(provider);
            config.base_url = Some("http://127.0.0.1:1".into());
            for stream in [false, true] {
                let _ = encode_request(&config, &request, stream);
            }
        }
    }
}

#[test]
fn well_formed_random_requests_encode_for_every_provider() {
    // The structured counterpart of the property above: requests built from
    // real parts always encode.
    let request: Request = serde_json::from_value(serde_json::json!({
        "model": "m",
        "messages": [
            {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": "{}"}]},
            {"role": "tool", "parts": [{"type": "tool_result", "callId": "c1", "content": "ok"}]}
        ],
        "tools": [{"name": "f"}]
    }))
    .unwrap();
    for provider in Provider::ALL {
        let mut config = ClientConfig::new(provider);
        config.base_url = Some("http://127.0.0.1:1".into());
        encode_request(&config, &request, true).unwrap();
    }
}
