//! Stream frames (`streamGenerateContent?alt=sse`): each `data:` is a whole
//! `GenerateContentResponse`. The turn is complete at a `finishReason`.

use super::Turn;
use crate::accumulate::Delta;
use crate::providers::FrameFailure;
use crate::sse::SseEvent;

/// The frame decoder for Gemini streams.
#[derive(Debug, Default)]
pub struct Decoder {
    turn: Turn,
}

impl Decoder {
    pub(crate) fn frame(
        &mut self,
        ev: &SseEvent,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        if crate::providers::fast_paths() && self.turn.quick(&ev.data, out) {
            return Ok(());
        }
        let body = crate::json::read::parse(&ev.data)
            .map_err(|e| FrameFailure::Malformed(format!("a frame that is not JSON: {e}")))?;
        self.turn.response(body, out)
    }
}

#[cfg(test)]
mod tests {
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
        let Err(Error::ContentFilter { reason, .. }) = res else {
            panic!("{res:?}")
        };
        assert_eq!(reason, "SAFETY");
        let res = crate::decode_response(
            Provider::Gemini,
            r#"{"promptFeedback":{"blockReason":"OTHER"}}"#,
        );
        assert!(matches!(res, Err(Error::ContentFilter { .. })));
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
        crate::providers::fast_equals_general(Provider::Gemini, body)
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

    #[test]
    fn a_recorded_call_takes_the_fast_path() {
        use crate::providers::gemini::Turn;
        let frame = r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris","days":3}},"thoughtSignature":"c2ln"}]},"index":0}],"modelVersion":"m"}"#;
        let mut out = Vec::new();
        assert!(Turn::default().quick(frame, &mut out));
        assert!(out.iter().any(|d| matches!(d,
            crate::accumulate::Delta::ToolArgsWhole { arguments, .. } if arguments == r#"{"city":"Paris","days":3}"#)));
        let pretty = frame.replace(r#""days":3"#, r#""days": 3"#);
        assert!(
            !Turn::default().quick(&pretty, &mut Vec::new()),
            "not canonical: general path"
        );
        assert_eq!(fast_equals_general(&sse(&[frame, &pretty])), Ok(()));
    }
}
