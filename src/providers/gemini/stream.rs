//! Stream frames (`streamGenerateContent?alt=sse`): each `data:` is a whole
//! `GenerateContentResponse`. The turn is complete at a `finishReason`.

use serde_json::{Map, Value};

use super::partial_args::apply_pieces;
use super::{map_finish_reason, map_usage, NAME};
use crate::accumulate::{Accumulator, Delta};
use crate::framing::Frame;
use crate::json::partial::Edit;
use crate::model::provider_data::provider_data;
use crate::model::ProviderData;
use crate::providers::{FrameFailure, FrameStream};

/// The stream state of a Gemini stream: what its frame decoder keeps.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    turn: TurnState,
}

impl FrameStream for StreamState {
    fn frame(
        &mut self,
        ev: &Frame,
        _acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        if crate::providers::fast_paths() && self.turn.fast(&ev.data, out) {
            return Ok(());
        }
        let body = crate::json::read::parse(&ev.data)
            .map_err(|e| FrameFailure::Malformed(format!("a frame that is not JSON: {e}")))?;
        self.turn.response(body, out)
    }
}

/// A call whose arguments arrive as `partialArgs` pieces.
#[derive(Debug)]
pub(super) struct StreamedCall {
    slot: usize,
    args: Value,
}

/// The state that spans the candidates of one turn: call ids and the call
/// being streamed. A non-streaming body uses a fresh one.
#[derive(Debug, Default)]
pub(crate) struct TurnState {
    names: Vec<(String, u32)>,
    next_slot: usize,
    pub(super) streamed: Option<StreamedCall>,
    /// The last response id and model passed on (Gemini repeats them in
    /// every frame): only changes become deltas.
    meta: (Option<String>, Option<String>),
    /// The last usage passed on, as its canonical text (either path gives
    /// the same text for one object; empty for none): only changes of the
    /// text become deltas.
    pub(super) usage_text: String,
}

impl TurnState {
    /// The id for a call: the wire id, else a unique id derived from the name.
    pub(super) fn call_id(&mut self, wire: Option<&str>, name: &str) -> String {
        if let Some(id) = wire.filter(|s| !s.is_empty()) {
            return id.to_string();
        }
        match self.names.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => {
                *count += 1;
                format!("{name}#{count}")
            }
            None => {
                self.names.push((name.to_string(), 1));
                name.to_string()
            }
        }
    }

    /// The deltas of one `GenerateContentResponse` (a whole body or one
    /// stream frame).
    pub(crate) fn response(
        &mut self,
        mut body: Value,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if body.get("error").is_some_and(|e| !e.is_null()) {
            return Err(match super::error::decode(&body) {
                Some(api) => FrameFailure::Api(Box::new(api)),
                None => FrameFailure::Malformed("an error without details".into()),
            });
        }
        self.meta(
            body.get("responseId").and_then(Value::as_str),
            body.get("modelVersion").and_then(Value::as_str),
            out,
        );
        let candidate = body
            .get_mut("candidates")
            .and_then(Value::as_array_mut)
            .and_then(|c| (!c.is_empty()).then(|| c.swap_remove(0)));
        let Some(mut candidate) = candidate else {
            if let Some(reason) = crate::json::nested(&body, &["promptFeedback", "blockReason"])
                .and_then(Value::as_str)
            {
                let message = crate::json::nested(&body, &["promptFeedback", "blockReasonMessage"])
                    .and_then(Value::as_str)
                    .map_or_else(
                        || format!("the prompt was blocked ({reason})"),
                        str::to_string,
                    );
                return Err(FrameFailure::ContentFilter {
                    reason: reason.to_string(),
                    message,
                });
            }
            self.usage(body.get("usageMetadata"), out);
            return Ok(());
        };
        if let Some(Value::Array(parts)) = candidate
            .get_mut("content")
            .and_then(|c| c.get_mut("parts"))
            .map(Value::take)
        {
            for part in parts {
                self.part(part, out);
            }
        }
        self.usage(body.get("usageMetadata"), out);
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            out.push(Delta::Finish {
                reason: map_finish_reason(reason),
                raw: reason.to_string(),
            });
            out.push(Delta::Terminal);
        }
        Ok(())
    }

    /// Passes on `usageMetadata` when its text changes (the text the fast
    /// path compares: the canonical one).
    fn usage(&mut self, usage_metadata: Option<&Value>, out: &mut Vec<Delta>) {
        if let Some(u) = usage_metadata.filter(|u| u.is_object()) {
            let text = crate::json::json_text(u);
            if text != self.usage_text {
                out.push(Delta::Usage(map_usage(u)));
                self.usage_text = text;
            }
        }
    }

    /// Passes on the response id and model when they change.
    pub(super) fn meta(&mut self, id: Option<&str>, model: Option<&str>, out: &mut Vec<Delta>) {
        let same =
            |have: &Option<String>, new: Option<&str>| new.is_none() || have.as_deref() == new;
        if same(&self.meta.0, id) && same(&self.meta.1, model) {
            return;
        }
        if let Some(id) = id {
            self.meta.0 = Some(id.to_string());
        }
        if let Some(model) = model {
            self.meta.1 = Some(model.to_string());
        }
        out.push(Delta::Meta {
            id: id.map(str::to_string),
            model: model.map(str::to_string),
        });
    }

    fn part(&mut self, part: Value, out: &mut Vec<Delta>) {
        let Value::Object(mut part) = part else {
            return;
        };
        let signature = match part.remove("thoughtSignature") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        if let Some(Value::Object(call)) = part.remove("functionCall") {
            return self.function_call(call, signature.map(signature_data), out);
        }
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(Value::String(text)) = part.remove("text") {
            out.push(text_delta(thought, text));
            if let Some(sig) = signature {
                out.push(Delta::PartData {
                    reasoning: thought,
                    data: signature_data(sig),
                });
            }
            return;
        }
        // inlineData, executableCode, codeExecutionResult, ...: kept whole.
        if let Some(sig) = signature {
            part.insert("thoughtSignature".into(), Value::String(sig));
        }
        if !part.is_empty() {
            out.push(Delta::ProviderPart {
                provider: NAME,
                data: Value::Object(part),
            });
        }
    }

    fn function_call(
        &mut self,
        mut call: Map<String, Value>,
        data: Option<ProviderData>,
        out: &mut Vec<Delta>,
    ) {
        let will_continue = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        let name = match call.remove("name") {
            Some(Value::String(n)) if !n.is_empty() => Some(n),
            _ => None,
        };
        if let Some(name) = name {
            let slot = self.start_call(call.get("id").and_then(Value::as_str), name, data, out);
            let mut args = match call.remove("args") {
                Some(a @ Value::Object(_)) => a,
                _ => Value::Object(Map::new()),
            };
            let mut edits = Vec::new();
            if let Some(Value::Array(pieces)) = call.remove("partialArgs") {
                if !apply_pieces(&mut args, pieces, slot, out, &mut edits) {
                    return;
                }
            }
            if will_continue {
                // (For progress events: the arguments so far, as patches.)
                let whole = Edit::Set(Vec::new(), args.clone());
                out.push(Delta::ToolEdits {
                    slot,
                    edits: vec![whole],
                });
                self.streamed = Some(StreamedCall { slot, args });
            } else {
                end_call(slot, crate::json::json_text(&args), out);
            }
            return;
        }
        // A piece of the streamed call (or its empty `{}` terminator).
        let Some(mut open) = self.streamed.take() else {
            return;
        };
        if let Some(d) = data {
            out.push(Delta::ToolStart {
                slot: open.slot,
                id: None,
                name: None,
                data: Some(d),
            });
        }
        if let Some(Value::Array(pieces)) = call.remove("partialArgs") {
            let mut edits = Vec::new();
            if !apply_pieces(&mut open.args, pieces, open.slot, out, &mut edits) {
                return;
            }
            if !edits.is_empty() {
                out.push(Delta::ToolEdits {
                    slot: open.slot,
                    edits,
                });
            }
        }
        if will_continue {
            self.streamed = Some(open);
        } else {
            end_call(open.slot, crate::json::json_text(&open.args), out);
        }
    }

    /// Starts a call (aborting one still being streamed): its slot.
    pub(super) fn start_call(
        &mut self,
        wire_id: Option<&str>,
        name: String,
        data: Option<ProviderData>,
        out: &mut Vec<Delta>,
    ) -> usize {
        if let Some(open) = self.streamed.take() {
            out.push(Delta::ToolAbort {
                slot: open.slot,
                reason: "a new call started before this one was closed".into(),
            });
        }
        let id = self.call_id(wire_id, &name);
        let slot = self.next_slot;
        self.next_slot += 1;
        out.push(Delta::ToolStart {
            slot,
            id: Some(id),
            name: Some(name),
            data,
        });
        slot
    }
}

/// Ends the call in `slot` with its whole arguments (JSON text written from
/// an object, or checked canonical).
pub(super) fn end_call(slot: usize, arguments: String, out: &mut Vec<Delta>) {
    out.push(Delta::ToolArgsWhole { slot, arguments });
    out.push(Delta::ToolEnd { slot });
}

/// A part's `thoughtSignature`, kept to replay it.
pub(super) fn signature_data(sig: String) -> ProviderData {
    provider_data(NAME, "thoughtSignature", Value::String(sig))
}

/// Text, or reasoning when the part is a thought.
pub(super) fn text_delta(thought: bool, text: String) -> Delta {
    if thought {
        Delta::Reasoning(text)
    } else {
        Delta::Text(text)
    }
}

#[cfg(test)]
mod tests {
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

    /// Vertex AI's `partialArgs`: each frame's patches are a progress event
    /// with no new text and the patched value; the text comes whole last.
    #[test]
    fn partial_args_make_progress_events_of_the_patched_value() {
        let body = sse(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.path","stringValue":"a.txt"},{"jsonPath":"$.lines[0]","stringValue":"he","willContinue":true}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.lines[0]","stringValue":"llo"},{"jsonPath":"$.n","numberValue":2}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}"#,
        ]);
        let mut d =
            StreamDecoder::new(Provider::Gemini).with_partial_events(crate::PartialEvents {
                tools: true,
                output: false,
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
}
