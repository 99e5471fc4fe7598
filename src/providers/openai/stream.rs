//! Stream frames (`chat.completion.chunk`) to deltas.
//!
//! Tool-call deltas are matched to calls by `id` when present, else by
//! `index`, else to the most recent call; a delta with a new `id` on an
//! `index` held by a different call, or with a second name on an index whose
//! call already has complete arguments, is a new call (Ollama reuses index 0
//! for parallel calls). Calls are whole at `finish_reason` or `[DONE]`.

use serde_json::Value;

use serde_json::Map;

use super::{
    completion_usage, content_deltas, first_choice, map_finish_reason, take_str, CallFields,
    Dialect,
};
use crate::accumulate::{Accumulator, Delta};
use crate::framing::Frame;
use crate::model::provider_data::provider_data;
use crate::providers::{FrameFailure, FrameStream};

#[derive(Debug)]
pub(super) struct Tracked {
    pub(super) slot: usize,
    id: Option<String>,
    pub(super) index: Option<u64>,
    named: bool,
}

/// The stream state of an OpenAI or OpenAI-compatible stream: what its
/// frame decoder keeps.
#[derive(Debug)]
pub(crate) struct StreamState {
    dialect: Dialect,
    pub(super) calls: Vec<Tracked>,
    next_slot: usize,
    meta_seen: bool,
    reasoning_announced: bool,
}

impl FrameStream for StreamState {
    /// Decodes one frame. `acc` holds the calls' arguments so far (for the
    /// glued-call rule; the frame's own fragments are still in `out`).
    fn frame(
        &mut self,
        ev: &Frame,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            out.push(Delta::ToolEndAll);
            out.push(Delta::Terminal);
            return Ok(());
        }
        if self.meta_seen && crate::providers::fast_paths() && self.fast(data, out) {
            return Ok(());
        }
        // Read as a `Value`: a typed `Map` would link serde's type-error
        // formatting into the wasm for this one message.
        let chunk: Map<String, Value> = match crate::json::read::parse(data) {
            Ok(Value::Object(c)) => c,
            parsed => {
                let why = parsed.map_or_else(|e| e.to_string(), |_| "not an object".into());
                // Proxies re-wrap keep-alive comments as `data: : ...`.
                out.push(Delta::Warning {
                    code: "non_json_data",
                    message: format!("skipped a data line that is not a JSON chunk: {why}"),
                });
                return Ok(());
            }
        };
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            if let Some(e) = super::error::decode_error_object(err) {
                return Err(FrameFailure::Api(Box::new(e)));
            }
        }
        // vLLM's error frame: `{"object": "error", "message", "type", "code"}`.
        if chunk.get("object").and_then(Value::as_str) == Some("error") {
            let body = Value::Object(chunk);
            return Err(match super::error::decode(&body) {
                Some(e) => FrameFailure::Api(Box::new(e)),
                None => FrameFailure::Malformed("an error frame without a message".into()),
            });
        }
        self.chunk(chunk, acc, out);
        Ok(())
    }
}

impl StreamState {
    /// A decoder for `dialect`.
    pub(crate) fn new(dialect: Dialect) -> Self {
        StreamState {
            dialect,
            calls: Vec::new(),
            next_slot: 0,
            meta_seen: false,
            reasoning_announced: false,
        }
    }

    fn chunk(&mut self, mut chunk: Map<String, Value>, acc: &Accumulator, out: &mut Vec<Delta>) {
        if !self.meta_seen {
            // Azure's first chunk (`prompt_filter_results`) has `""` for
            // both: the next chunk's are the real ones.
            let id = take_str(&mut chunk, "id").filter(|s| !s.is_empty());
            let model = take_str(&mut chunk, "model").filter(|s| !s.is_empty());
            if id.is_some() || model.is_some() {
                self.meta_seen = true;
                out.push(Delta::Meta { id, model });
            }
        }
        let usage = completion_usage(&chunk);
        if let Some(mut choice) = first_choice(&mut chunk) {
            let delta = match (choice.remove("delta"), choice.remove("message")) {
                (Some(Value::Object(d)), _) | (_, Some(Value::Object(d))) => Some(d),
                _ => None,
            };
            if let Some(mut delta) = delta {
                content_deltas(&mut delta, self.dialect, &mut self.reasoning_announced, out);
                if let Some(Value::Array(calls)) = delta.remove("tool_calls") {
                    for call in calls {
                        if let Value::Object(call) = call {
                            self.call_delta(call, acc, out);
                        }
                    }
                } else if let Some(call) = super::legacy_function_call(&mut delta) {
                    self.call_delta(call, acc, out);
                }
            }
            if let Some(reason) = take_str(&mut choice, "finish_reason").filter(|r| !r.is_empty()) {
                out.push(Delta::Finish {
                    reason: map_finish_reason(&reason),
                    raw: reason,
                });
                out.push(Delta::ToolEndAll);
                out.push(Delta::Terminal);
                self.calls.clear();
            }
        }
        if let Some(u) = usage {
            out.push(Delta::Usage(u));
        }
    }

    fn call_delta(
        &mut self,
        mut call: Map<String, Value>,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) {
        let index = call.get("index").and_then(Value::as_u64);
        let fields = CallFields::take(&mut call);
        let id = fields.id.filter(|s| !s.is_empty());
        let name = fields.name.filter(|s| !s.is_empty());
        let args = fields.arguments;
        let pos = self.find(id.as_deref(), index, name.is_some(), acc, out);
        let pos = match pos {
            Some(p) => p,
            None => {
                self.calls.push(Tracked {
                    slot: self.next_slot,
                    id: None,
                    index,
                    named: false,
                });
                self.next_slot += 1;
                self.calls.len() - 1
            }
        };
        let Some(tracked) = self.calls.get_mut(pos) else {
            return;
        };
        if tracked.id.is_none() {
            tracked.id.clone_from(&id);
        }
        if tracked.index.is_none() {
            tracked.index = index;
        }
        tracked.named |= name.is_some();
        let data = fields
            .extra
            .map(|extra| provider_data(self.dialect.key(), "extra_content", extra));
        out.push(Delta::ToolStart {
            slot: tracked.slot,
            id,
            name,
            data,
        });
        if let Some(fragment) = args.filter(|a| !a.is_empty()) {
            out.push(Delta::ToolArgs {
                slot: tracked.slot,
                fragment,
            });
        }
    }

    /// The tracked call a delta continues, if any.
    fn find(
        &mut self,
        id: Option<&str>,
        index: Option<u64>,
        has_name: bool,
        acc: &Accumulator,
        out: &[Delta],
    ) -> Option<usize> {
        if let Some(id) = id {
            if let Some(p) = self.calls.iter().rposition(|c| c.id.as_deref() == Some(id)) {
                return Some(p);
            }
            // A first delta without an id, continued by one with an id.
            return index.and_then(|ix| {
                self.calls
                    .iter()
                    .rposition(|c| c.index == Some(ix) && c.id.is_none())
            });
        }
        let pos = match index {
            Some(ix) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(ix))
                .or_else(|| {
                    // Gemini's endpoint: the first delta had no index, the next
                    // ones do.
                    match self.calls.last() {
                        Some(last) if last.index.is_none() => Some(self.calls.len() - 1),
                        _ => None,
                    }
                }),
            None => self.calls.len().checked_sub(1),
        }?;
        let glued = self.calls.get(pos).is_some_and(|c| {
            has_name
                && c.named
                && crate::json::grammar::is_object(&arguments_so_far(c.slot, acc, out))
        });
        (!glued).then_some(pos)
    }
}

/// A call's argument text so far: what the accumulator holds, then the
/// fragments of the frame being decoded. Built only for the glued-call rule
/// (a second name on a call that has arguments), so the hot path keeps one
/// copy of the arguments, the accumulator's.
fn arguments_so_far(slot: usize, acc: &Accumulator, out: &[Delta]) -> String {
    let mut text = acc.open_arguments(slot).unwrap_or_default().to_string();
    for d in out {
        if let Delta::ToolArgs { slot: s, fragment } = d {
            if *s == slot {
                text.push_str(fragment);
            }
        }
    }
    text
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use crate::model::{FinishReason, StreamEvent};
    use crate::{Provider, StreamDecoder};

    fn sse(frames: &[&str]) -> Vec<u8> {
        frames
            .iter()
            .map(|f| format!("data: {f}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    /// Azure's first chunk has empty `id` and `model` (with
    /// `prompt_filter_results`): the response takes the next chunk's.
    #[test]
    fn azure_empty_id_and_model_in_the_first_chunk_are_not_the_responses() {
        let body = sse(&[
            r#"{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[]}"#,
            r#"{"choices":[{"delta":{"content":"Hi","role":"assistant"},"finish_reason":null,"index":0}],"id":"chatcmpl-1","model":"gpt-5-nano","object":"chat.completion.chunk"}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop","index":0}],"id":"chatcmpl-1","model":"gpt-5-nano","object":"chat.completion.chunk"}"#,
            "[DONE]",
        ]);
        let (_, res) = StreamDecoder::decode_all(Provider::OpenAi, &body);
        let res = res.unwrap();
        assert_eq!(
            (res.id.as_deref(), res.model.as_deref(), res.text.as_str()),
            (Some("chatcmpl-1"), Some("gpt-5-nano"), "Hi")
        );
    }

    /// A streamed refusal ends with "stop": the turn is a refusal. A turn
    /// whose every call is broken (vLLM says "tool_calls" for a truncated
    /// one) does not wait for tool results.
    #[test]
    fn the_finish_reason_says_refusal_and_not_tool_calls_without_a_whole_call() {
        let finish = |frames: &[&str]| {
            let (_, res) = StreamDecoder::decode_all(Provider::OpenAi, &sse(frames));
            let res = res.unwrap();
            (
                res.finish_reason,
                res.raw_finish_reason.unwrap_or_default(),
                res.refusal,
            )
        };
        let refused = finish(&[
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't"}}]}"#,
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            refused,
            (FinishReason::Refusal, "stop".into(), Some("I can't".into()))
        );
        let truncated = finish(&[
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}"#,
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(truncated, (FinishReason::Other, "tool_calls".into(), None));
    }

    /// A legacy `function_call` (streamed or whole) is the call it stands
    /// for, with a generated id, not dropped.
    #[test]
    fn a_legacy_function_call_is_a_tool_call() {
        let (_, res) = StreamDecoder::decode_all(
            Provider::OpenAiCompat,
            &sse(&[
                r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","function_call":{"name":"f","arguments":"{\"a\""}}}]}"#,
                r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"function_call":{"arguments":":1}"}}}]}"#,
                r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}"#,
                "[DONE]",
            ]),
        );
        let whole = crate::providers::decode_response(
            Provider::OpenAiCompat,
            r#"{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{\"a\":1}"}},"finish_reason":"function_call"}]}"#,
        );
        for res in [res.unwrap(), whole.unwrap()] {
            let call = &res.tool_calls[0];
            assert_eq!(
                (call.name.as_str(), call.arguments.as_str()),
                ("f", r#"{"a":1}"#)
            );
            assert!(!call.id.is_empty());
            assert_eq!(res.finish_reason, FinishReason::ToolCalls);
        }
    }

    fn calls(provider: Provider, frames: &[&str]) -> Vec<(String, String, String)> {
        let (_, res) = StreamDecoder::decode_all(provider, &sse(frames));
        res.unwrap()
            .tool_calls
            .into_iter()
            .map(|c| (c.id, c.name, c.arguments))
            .collect()
    }

    #[test]
    fn a_named_call_after_complete_arguments_is_new_even_within_one_frame() {
        // The arguments are completed by this frame's own first entry (not
        // yet in the accumulator), then a second name arrives on index 0.
        let got = calls(
            Provider::OpenAiCompat,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":0,"function":{"name":"f","arguments":"{\"x\":2}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            ],
        );
        let args: Vec<_> = got
            .iter()
            .map(|(_, n, a)| (n.as_str(), a.as_str()))
            .collect();
        assert_eq!(
            args,
            [("f", r#"{"x":1}"#), ("f", r#"{"x":2}"#), ("g", "{}")]
        );
    }

    #[test]
    fn ollama_parallel_calls_on_one_index_with_distinct_ids_stay_apart() {
        let got = calls(
            Provider::OpenAiCompat,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"y\":2}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ],
        );
        assert_eq!(
            got,
            [
                ("a".into(), "f".into(), r#"{"x":1}"#.into()),
                ("b".into(), "g".into(), r#"{"y":2}"#.into())
            ]
        );
    }

    #[test]
    fn ollama_parallel_calls_without_ids_or_distinct_indexes_are_not_glued() {
        let got = calls(
            Provider::OpenAiCompat,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\":2}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            ],
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].2, r#"{"x":2}"#);
        assert_ne!(got[0].0, got[1].0, "generated ids are distinct");
    }

    #[test]
    fn fragments_keyed_by_index_join_across_chunks() {
        let got = calls(
            Provider::OpenAi,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"g","arguments":""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ],
        );
        assert_eq!(
            got,
            [
                ("c1".into(), "f".into(), r#"{"a":1}"#.into()),
                ("c2".into(), "g".into(), "{}".into())
            ]
        );
    }

    #[test]
    fn a_first_delta_without_index_is_continued_by_indexed_ones() {
        let got = calls(
            Provider::OpenAiCompat,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            ],
        );
        assert_eq!(got, [("c1".into(), "f".into(), r#"{"a":1}"#.into())]);
    }

    #[test]
    fn calls_in_the_finish_chunk_are_emitted() {
        let got = calls(
            Provider::OpenAiCompat,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"id":"abcdefghi","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            ],
        );
        assert_eq!(got, [("abcdefghi".into(), "f".into(), "{}".into())]);
    }

    #[test]
    fn non_json_data_is_skipped_with_a_warning() {
        let (events, res) = StreamDecoder::decode_all(
            Provider::OpenAiCompat,
            &sse(&[
                ": keep-alive",
                r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
            ]),
        );
        assert_eq!(res.unwrap().text, "x");
        assert!(matches!(&events[0], StreamEvent::Warning { code, .. } if code == "non_json_data"));
    }

    #[test]
    fn an_error_frame_is_an_in_band_api_error() {
        let (events, res) = StreamDecoder::decode_all(
            Provider::OpenAi,
            &sse(&[
                r#"{"choices":[{"delta":{"content":"x"}}]}"#,
                r#"{"error":{"message":"boom","type":"server_error"}}"#,
            ]),
        );
        assert_eq!(events.len(), 1);
        let Err(crate::Error::Api(e)) = res else {
            panic!("{res:?}")
        };
        assert!(e.in_band && e.events_emitted);
        assert_eq!(e.kind, crate::ApiErrorKind::Server);
        assert!(!e.retryable());
    }

    /// A structured answer cut off is never whole JSON passed off as done:
    /// the output limit finishes it as Length, and an early end is an error.
    #[test]
    fn a_cut_off_structured_answer_finishes_as_length_or_fails() {
        let cut = [
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"city\": \"Ly"},"finish_reason":null}]}"#,
            r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            "[DONE]",
        ];
        let (_, res) = StreamDecoder::decode_all(Provider::OpenAi, &sse(&cut));
        let res = res.unwrap();
        assert_eq!(res.finish_reason, FinishReason::Length);
        assert!(serde_json::from_str::<serde_json::Value>(&res.text).is_err());
        let (_, res) = StreamDecoder::decode_all(Provider::OpenAi, &sse(&cut[..1]));
        assert!(
            matches!(res, Err(crate::Error::StreamEndedEarly { .. })),
            "{res:?}"
        );
    }

    #[test]
    fn a_stream_without_finish_or_done_ended_early() {
        let (_, res) = StreamDecoder::decode_all(
            Provider::OpenAi,
            &sse(&[r#"{"choices":[{"delta":{"content":"x"}}]}"#]),
        );
        let Err(crate::Error::StreamEndedEarly {
            partial,
            events_emitted: true,
        }) = res
        else {
            panic!("{res:?}")
        };
        assert_eq!(partial.text, "x");
    }
}
