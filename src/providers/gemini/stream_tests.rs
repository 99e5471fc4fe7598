//! The Gemini stream decoder's tests: ids, blocked prompts, partialArgs,
//! and the other shapes of a candidate's parts.

use super::TurnState;

#[test]
fn repeated_names_get_unique_ids() {
    let mut t = TurnState::default();
    assert_eq!(t.call_id(None, "f"), "f");
    assert_eq!(t.call_id(None, "f"), "f#2");
    assert_eq!(t.call_id(Some(""), "g"), "g");
    assert_eq!(t.call_id(Some("wire"), "f"), "wire");
    assert_eq!(t.call_id(None, "f"), "f#3");
}

use crate::{Error, FinishReason, Provider, StreamDecoder, StreamEvent};

fn sse(frames: &[&str]) -> Vec<u8> {
    frames
        .iter()
        .map(|f| format!("data: {f}\r\n\r\n"))
        .collect::<String>()
        .into_bytes()
}

fn call_events(events: &[StreamEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCall { .. }))
        .count()
}

#[test]
fn a_blocked_prompt_is_a_content_filter_error_not_an_empty_success() {
    let (_, res) = StreamDecoder::decode_all(
        Provider::Gemini,
        &sse(&[
            r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5}}"#,
        ]),
    );
    let Err(Error::ContentFilter { reason, .. }) = &res else {
        panic!("{res:?}")
    };
    assert_eq!(reason, "SAFETY");
    assert!(!res.unwrap_err().events_emitted());
    // A block after some output: the error says the text was handed out,
    // and keeps it.
    let (events, res) = StreamDecoder::decode_all(
        Provider::Gemini,
        &sse(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}"#,
            r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#,
        ]),
    );
    assert!(!events.is_empty());
    let e = res.unwrap_err();
    assert!(e.events_emitted(), "{e:?}");
    assert_eq!(e.partial().map(|r| r.text.as_str()), Some("Hi"));
    let res = crate::decode_response(
        Provider::Gemini,
        r#"{"promptFeedback":{"blockReason":"OTHER"}}"#,
    );
    assert!(matches!(res, Err(Error::ContentFilter { .. })));
}

/// Vertex AI's `partialArgs`: each frame's patches are a progress event
/// with no new text and the patched value; the text comes whole last.
#[test]
fn partial_args_make_progress_events_of_the_patched_value() {
    let body = sse(&[
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.path","stringValue":"a.txt"},{"jsonPath":"$.lines[0]","stringValue":"he","willContinue":true}],"willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.lines[0]","stringValue":"llo"},{"jsonPath":"$.n","numberValue":2}],"willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}"#,
    ]);
    let mut d = StreamDecoder::new(Provider::Gemini).with_partial_events(crate::PartialEvents {
        tools: true,
        output: false,
        files: false,
    });
    let mut events = Vec::new();
    d.feed(&body, &mut events).unwrap();
    d.finish(&mut events).unwrap();
    let got: Vec<(String, Option<serde_json::Value>)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta {
                arguments_delta,
                partial,
                ..
            } => Some((arguments_delta.clone(), partial.clone())),
            _ => None,
        })
        .collect();
    use serde_json::json;
    let whole = r#"{"path":"a.txt","lines":["hello"],"n":2}"#;
    assert_eq!(
        got,
        [
            (
                String::new(),
                Some(json!({"path": "a.txt", "lines": ["he"]}))
            ),
            (
                String::new(),
                Some(json!({"path": "a.txt", "lines": ["hello"], "n": 2}))
            ),
            (
                whole.to_string(),
                Some(json!({"path": "a.txt", "lines": ["hello"], "n": 2}))
            ),
        ]
    );
    assert!(matches!(&events[0], StreamEvent::ToolCallStart { name, .. } if name == "f"));
    assert!(
        matches!(events.iter().find(|e| matches!(e, StreamEvent::ToolCall { .. })),
            Some(StreamEvent::ToolCall { call, .. }) if call.arguments == whole)
    );
}

#[test]
fn a_streamed_call_open_at_max_tokens_is_incomplete() {
    let (events, res) = StreamDecoder::decode_all(
        Provider::Gemini,
        &sse(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"a","willContinue":true}],"willContinue":true}}]},"finishReason":"MAX_TOKENS"}]}"#,
        ]),
    );
    assert_eq!(call_events(&events), 0);
    let res = res.unwrap();
    assert_eq!(res.finish_reason, FinishReason::Length);
    assert_eq!(res.incomplete_tool_calls.len(), 1);
    assert_eq!(res.incomplete_tool_calls[0].name.as_deref(), Some("f"));
}

#[test]
fn a_bad_partial_args_path_makes_the_call_incomplete_with_a_warning() {
    let (events, res) = StreamDecoder::decode_all(
        Provider::Gemini,
        &sse(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a[3]","stringValue":"x"}]}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}]}"#,
        ]),
    );
    assert_eq!(call_events(&events), 0);
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Warning { message, .. } if message.contains("skips past the end"))));
    let res = res.unwrap();
    assert_eq!(res.text, "done");
    assert_eq!(res.incomplete_tool_calls.len(), 1);
}

#[test]
fn an_in_band_error_frame_is_a_typed_error() {
    let (_, res) = StreamDecoder::decode_all(
        Provider::Gemini,
        &sse(&[
            r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
        ]),
    );
    let Err(Error::Api(e)) = res else {
        panic!("{res:?}")
    };
    assert_eq!(e.kind, crate::ApiErrorKind::Overloaded);
    assert!(e.retryable());
}

fn fast_equals_general(body: &[u8]) -> Result<(), String> {
    crate::providers::fast_differential::fast_equals_general(Provider::Gemini, body)
}

#[cfg(not(target_arch = "wasm32"))]
fn args_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z\"\\/\n é🌍]{0,6}".prop_map(Value::from),
    ];
    let tree = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    });
    prop_oneof![
        tree.clone(),
        prop::collection::vec(("[a-d]{1,2}", tree), 0..5)
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
    ]
}

#[cfg(not(target_arch = "wasm32"))]
proptest::proptest! {
    /// Whole calls (arguments written compactly, pretty, with escapes
    /// or duplicate keys; with and without ids and signatures), text
    /// and thoughts: the fast path agrees with the general path.
    #[test]
    fn whole_calls_decode_alike_on_both_paths(
        calls in proptest::collection::vec((args_value(), 0u8..4, proptest::bool::ANY, proptest::bool::ANY), 1..4),
        text in proptest::option::of("[a-z ]{0,5}"),
    ) {
        let mut parts = Vec::new();
        if let Some(t) = &text {
            parts.push(serde_json::json!({"text": t}).to_string());
        }
        for (i, (args, style, with_id, signed)) in calls.iter().enumerate() {
            let args = match style {
                0 => serde_json::to_string(args).unwrap(),
                1 => serde_json::to_string_pretty(args).unwrap(),
                2 => serde_json::to_string(args).unwrap().replace('a', "\\u0061"),
                _ => serde_json::to_string(args).unwrap().replacen('}', ",\"a\":1}", 1),
            };
            let id = if *with_id { format!(r#","id":"c{i}""#) } else { String::new() };
            let sig = if *signed { r#","thoughtSignature":"sig""# } else { "" };
            parts.push(format!(r#"{{"functionCall":{{"name":"f"{id},"args":{args}}}{sig}}}"#));
        }
        let frame = format!(r#"{{"candidates":[{{"content":{{"role":"model","parts":[{}]}}}}]}}"#, parts.join(","));
        let end = r#"{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}"#;
        let body = sse(&[&frame, end]);
        proptest::prop_assert_eq!(fast_equals_general(&body), Ok(()));
    }
}

/// Frames as the API writes them (Google's printer, usage, model and
/// id in every frame, the usage changing): all but the last take the
/// fast path, and the usage is that of the last frame that changed it.
#[test]
fn real_frames_take_the_fast_path() {
    use crate::providers::gemini::TurnState;
    let frame = |parts: &str, end: &str, candidates: u32| {
        format!(
            r#"{{"candidates": [{{"content": {{"parts": [{parts}],"role": "model"}}{end},"index": 0}}],"usageMetadata": {{"promptTokenCount": 9,"candidatesTokenCount": {candidates},"totalTokenCount": {},"promptTokensDetails": [{{"modality": "TEXT","tokenCount": 9}}],"thoughtsTokenCount": 185}},"modelVersion": "gemini-3-pro-preview","responseId": "bH6LaZW8Fp_3nsEPqtaSwQ4"}}"#,
            194 + candidates
        )
    };
    let frames = [
        frame(r#"{"text": "There are"}"#, "", 5),
        frame(r#"{"text": " three"}"#, "", 9),
        frame(
            r#"{"functionCall": {"name": "weather","args": {"city": "Paris","days": [1, 2]}},"thoughtSignature": "c2ln"}"#,
            "",
            15,
        ),
        frame(r#"{"text": ""}"#, r#","finishReason": "STOP""#, 15),
    ];
    let mut turn = TurnState::default();
    for f in &frames[..3] {
        assert!(turn.fast(f, &mut Vec::new()), "{f}");
    }
    let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
    let body = sse(&refs);
    assert_eq!(fast_equals_general(&body), Ok(()));
    let (events, res) = StreamDecoder::decode_all(Provider::Gemini, &body);
    let res = res.unwrap();
    assert_eq!(res.usage.output, Some(15 + 185));
    assert_eq!(
        res.tool_calls[0].arguments,
        r#"{"city":"Paris","days":[1,2]}"#
    );
    let usage_raw = events.iter().find_map(|e| match e {
        StreamEvent::Usage { raw, .. } => Some(raw.to_string()),
        _ => None,
    });
    assert_eq!(usage_raw.as_deref(), Some(refs[2]));
}

#[test]
fn a_recorded_call_takes_the_fast_path() {
    use crate::providers::gemini::TurnState;
    let frame = r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris","days":3}},"thoughtSignature":"c2ln"}]},"index":0}],"modelVersion":"m"}"#;
    let mut out = Vec::new();
    assert!(TurnState::default().fast(frame, &mut out));
    assert!(out.iter().any(|d| matches!(d,
        crate::accumulate::Delta::ToolArgsWhole { arguments, .. } if arguments == r#"{"city":"Paris","days":3}"#)));
    // As Google's printer writes it: canonical once the spaces go.
    let spaced = frame.replace(
        r#"{"city":"Paris","days":3}"#,
        r#"{"city": "Paris","days": 3}"#,
    );
    let mut out = Vec::new();
    assert!(TurnState::default().fast(&spaced, &mut out));
    assert!(out.iter().any(|d| matches!(d,
        crate::accumulate::Delta::ToolArgsWhole { arguments, .. } if arguments == r#"{"city":"Paris","days":3}"#)));
    let long = frame.replace(r#""days":3"#, r#""days":3.50"#);
    assert!(
        !TurnState::default().fast(&long, &mut Vec::new()),
        "not canonical: general path"
    );
    assert_eq!(fast_equals_general(&sse(&[frame, &spaced, &long])), Ok(()));
}

/// The frames of a recorded Gemini image stream (the AI SDK's fixture
/// `issue-10660-image-thought-signature.chunks.txt`, gemini-3-pro-image-
/// preview, its image and signature redacted there), with `data` and
/// `thoughtSignature` of our own in their place.
fn image_frames(data: &str, signature: &str) -> Vec<String> {
    vec![
        format!(
            r#"{{"candidates":[{{"content":{{"parts":[{{"inlineData":{{"mimeType":"image/jpeg","data":"{data}"}},"thoughtSignature":"{signature}"}}],"role":"model"}},"index":0}}],"usageMetadata":{{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1471,"promptTokensDetails":[{{"modality":"TEXT","tokenCount":8}}],"candidatesTokensDetails":[{{"modality":"IMAGE","tokenCount":1120}}],"thoughtsTokenCount":244,"serviceTier":"standard"}},"modelVersion":"gemini-3-pro-image-preview","responseId":"live-response-id"}}"#
        ),
        r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1394,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":167,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"live-response-id"}"#.to_string(),
    ]
}

#[test]
fn an_inline_image_is_one_file_with_its_signature_kept_for_replay() {
    let data = "/9j/4AAQSkZJRgABAQAAAQABAAD".repeat(40_000);
    let frames = image_frames(&data, "c2lnbmF0dXJl");
    let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
    let (events, res) = StreamDecoder::decode_all(Provider::Gemini, &sse(&refs));
    let response = res.unwrap();
    let files: Vec<_> = (events.iter())
        .filter_map(|e| match e {
            StreamEvent::File { file, raw } => Some((file, raw)),
            _ => None,
        })
        .collect();
    assert_eq!(files.len(), 1);
    let (file, raw) = files[0];
    let crate::Part::File {
        data: Some(got),
        media_type,
        provider_data: Some(kept),
        ..
    } = file
    else {
        panic!("{file:?}")
    };
    assert_eq!(got, &data);
    assert_eq!(media_type, "image/jpeg");
    assert_eq!(
        kept["gemini"],
        serde_json::json!({"thoughtSignature": "c2lnbmF0dXJl"})
    );
    // The frame is kept without the image, which the file carries.
    assert!(!raw.contains(&data));
    assert!(raw.contains("thoughtSignature"));
    assert_eq!(response.files().collect::<Vec<_>>(), vec![file]);
    assert_eq!(response.message.parts.len(), 1, "{:?}", response.message);
    assert_eq!(response.finish_reason, FinishReason::Stop);

    // A body with the same part reads the same.
    let body = frames[0].replace(r#""index":0}]"#, r#""finishReason":"STOP","index":0}]"#);
    let whole = crate::decode_response(Provider::Gemini, &body).unwrap();
    assert_eq!(whole.files().collect::<Vec<_>>(), vec![file]);
}

#[test]
fn a_thought_image_and_inline_data_without_data_stay_provider_parts() {
    let frames = [
        r#"{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thought":true}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png"}}],"role":"model"},"finishReason":"STOP","index":0}]}"#,
    ];
    let (events, res) = StreamDecoder::decode_all(Provider::Gemini, &sse(&frames));
    let response = res.unwrap();
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::File { .. })));
    assert_eq!(response.files().count(), 0);
    let providers = (response.message.parts.iter())
        .filter(|p| matches!(p, crate::Part::Provider { provider, .. } if provider == "gemini"))
        .count();
    assert_eq!(providers, 2);
}
