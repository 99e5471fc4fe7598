//! Stream events to deltas.
//!
//! `message_start` → (`content_block_start` → `content_block_delta`* →
//! `content_block_stop`)* → `message_delta` → `message_stop`, with `ping`
//! anywhere and unknown event types ignored. A tool call is whole at the
//! `content_block_stop` of its `tool_use` block, and handed out at the next
//! frame that says the message went on (the next block's start) or how it
//! ended (`message_delta`): a call cut off by `max_tokens` (only the last
//! block can be) is then reported incomplete, not executed. A repeated `message_start`
//! of the open message is ignored; one of a different message while the
//! first is open is a malformed stream. Bodies that hold several whole
//! messages one after another (recorded tool loops) are read as one turn.

use serde_json::{Map, Value};

use super::{
    block_deltas, citations, content_deltas, finish_delta, map_finish_reason, map_usage,
    refusal_explanation, NAME,
};
use crate::accumulate::{Accumulator, Delta};
use crate::framing::Frame;
use crate::json::take_str;
use crate::providers::{FrameFailure, FrameStream};

#[derive(Debug)]
enum OpenBlock {
    Text,
    Thinking,
    ToolUse {
        slot: usize,
        start_input: Value,
        got_json: bool,
    },
    /// A block kept whole (server tools, compaction, ...), built up from its
    /// start and deltas.
    ProviderPart {
        block: Map<String, Value>,
        json: String,
    },
    Ignored,
}

/// The stream state of an Anthropic stream: what its frame decoder keeps.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    open_message: Option<String>,
    blocks: Vec<(u64, OpenBlock)>,
    usage: Map<String, Value>,
    next_slot: usize,
    /// The slot of a stopped `tool_use` block whose end waits for the next
    /// frame (see the module doc).
    held: Option<usize>,
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
        if crate::providers::fast_paths() && self.fast_frame(&ev.data, out) {
            return Ok(());
        }
        let data = crate::json::read::parse(&ev.data).map_err(|e| {
            FrameFailure::Malformed(format!("an event whose data is not JSON: {e}"))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or_default()
            .to_string();
        match kind.as_str() {
            "message_start" => self.message_start(data, out),
            "content_block_start" => {
                self.release(out);
                self.block_start(data, out);
                Ok(())
            }
            "content_block_delta" => {
                self.block_delta(data, out);
                Ok(())
            }
            "content_block_stop" => {
                self.block_stop(&data, out);
                Ok(())
            }
            "message_delta" => {
                if let Some(u) = data.get("usage").and_then(Value::as_object) {
                    self.merge_usage(u, out);
                }
                if let Some(reason) =
                    crate::json::nested(&data, &["delta", "stop_reason"]).and_then(Value::as_str)
                {
                    out.push(Delta::Finish {
                        reason: map_finish_reason(reason),
                        raw: reason.to_string(),
                    });
                }
                if let Some(r) = data.get("delta").and_then(refusal_explanation) {
                    out.push(Delta::Refusal(r));
                }
                // After the finish: a call cut off by max_tokens is rejected.
                self.release(out);
                Ok(())
            }
            "message_stop" => {
                self.release(out);
                // A tool_use block still open here never reached its
                // content_block_stop: the accumulator reports it incomplete.
                self.open_message = None;
                self.blocks.clear();
                out.push(Delta::Terminal);
                Ok(())
            }
            "error" => Err(super::error::decode(&data).map_or_else(
                || FrameFailure::Malformed("an error event without an error".into()),
                |e| FrameFailure::Api(Box::new(e)),
            )),
            // ping, and event types added after this was written.
            _ => Ok(()),
        }
    }
}

impl StreamState {
    fn message_start(&mut self, mut data: Value, out: &mut Vec<Delta>) -> Result<(), FrameFailure> {
        let Some(Value::Object(mut msg)) = take(&mut data, "message") else {
            return Err(FrameFailure::Malformed(
                "message_start without a message".into(),
            ));
        };
        let id = msg.get("id").and_then(Value::as_str).map(str::to_string);
        if let Some(open) = &self.open_message {
            if id.as_deref() == Some(open.as_str()) {
                out.push(Delta::Warning {
                    code: "duplicate_message_start",
                    message: format!("ignored a repeated message_start for {open}"),
                });
                return Ok(());
            }
            return Err(FrameFailure::Malformed(format!(
                "message_start for {} while {open} is still open",
                id.as_deref().unwrap_or("a message without id")
            )));
        }
        self.open_message = Some(id.clone().unwrap_or_default());
        self.blocks.clear();
        // A body with several messages is complete only at the last one's
        // message_stop.
        out.push(Delta::Reopen);
        out.push(Delta::Break);
        out.push(Delta::Meta {
            id,
            model: msg.get("model").and_then(Value::as_str).map(str::to_string),
        });
        self.usage = match msg.remove("usage") {
            Some(Value::Object(u)) => u,
            _ => Map::new(),
        };
        out.push(Delta::Usage(map_usage(&self.usage)));
        // Programmatic tool calling: whole blocks inside message_start.
        let blocks = match msg.remove("content") {
            Some(Value::Array(content)) => content.into_iter().map(|b| (self.slot(), b)).collect(),
            _ => Vec::new(),
        };
        content_deltas(blocks, finish_delta(msg.get("stop_reason")), out);
        Ok(())
    }

    /// Ends the held `tool_use` block's call.
    fn release(&mut self, out: &mut Vec<Delta>) {
        if let Some(slot) = self.held.take() {
            out.push(Delta::ToolEnd { slot });
        }
    }

    fn slot(&mut self) -> usize {
        self.next_slot += 1;
        self.next_slot
    }

    fn merge_usage(&mut self, u: &Map<String, Value>, out: &mut Vec<Delta>) {
        for (k, v) in u {
            if !v.is_null() {
                self.usage.insert(k.clone(), v.clone());
            }
        }
        out.push(Delta::Usage(map_usage(&self.usage)));
    }

    fn block_start(&mut self, mut data: Value, out: &mut Vec<Delta>) {
        let index = data
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        let Some(Value::Object(mut block)) = take(&mut data, "content_block") else {
            return;
        };
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tracked = match kind {
            "text" => {
                out.push(Delta::Break);
                if let Some(Value::String(t)) = block.remove("text") {
                    out.push(Delta::Text(t));
                }
                OpenBlock::Text
            }
            "thinking" => {
                out.push(Delta::Break);
                if let Some(Value::String(t)) = block.remove("thinking") {
                    out.push(Delta::Reasoning(t));
                }
                if let Some(Value::String(s)) =
                    block.remove("signature").filter(|s| s.as_str() != Some(""))
                {
                    out.push(Delta::ReasoningSignature(s));
                }
                OpenBlock::Thinking
            }
            "redacted_thinking" => {
                block_deltas(Value::Object(block), 0, out);
                OpenBlock::Ignored
            }
            "tool_use" => {
                let slot = self.slot();
                out.push(Delta::ToolStart {
                    slot,
                    id: take_str(&mut block, "id"),
                    name: take_str(&mut block, "name"),
                    data: None,
                });
                OpenBlock::ToolUse {
                    slot,
                    start_input: block
                        .remove("input")
                        .unwrap_or_else(|| Value::Object(Map::new())),
                    got_json: false,
                }
            }
            _ => OpenBlock::ProviderPart {
                block,
                json: String::new(),
            },
        };
        self.blocks.retain(|(i, _)| *i != index);
        self.blocks.push((index, tracked));
    }

    fn block_delta(&mut self, mut data: Value, out: &mut Vec<Delta>) {
        let index = data
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        let Some(Value::Object(mut delta)) = take(&mut data, "delta") else {
            return;
        };
        let kind = delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let field = match kind.as_str() {
            "text_delta" => "text",
            "thinking_delta" => "thinking",
            "input_json_delta" => "partial_json",
            _ => "",
        };
        if !field.is_empty() && self.accepts(index, &kind) {
            let value = match delta.remove(field) {
                Some(Value::String(s)) => s,
                _ => String::new(),
            };
            self.simple_delta(index, value, out);
            return;
        }
        let Some((_, block)) = self.blocks.iter_mut().find(|(i, _)| *i == index) else {
            out.push(Delta::Warning {
                code: "unknown_block",
                message: format!("a {kind} for block {index}, which was never started"),
            });
            return;
        };
        let mut take = |k: &str| match delta.remove(k) {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        match (kind.as_str(), block) {
            ("signature_delta", OpenBlock::Thinking) => {
                out.push(Delta::ReasoningSignature(take("signature")));
            }
            ("input_json_delta", OpenBlock::ProviderPart { json, .. }) => {
                json.push_str(&take("partial_json"))
            }
            ("text_delta", OpenBlock::ProviderPart { block, .. }) => {
                append(block, "text", &take("text"))
            }
            ("compaction_delta", OpenBlock::ProviderPart { block, .. }) => {
                append(block, "content", &take("content"));
            }
            ("citations_delta", OpenBlock::ProviderPart { block, .. }) => {
                if let Some(c) = delta.remove("citation") {
                    push_array(block, "citations", c);
                }
            }
            // A text block's sources (web search, documents): kept on the
            // text part, in order, and sent back on replay.
            ("citations_delta", OpenBlock::Text) => {
                if let Some(c) = delta.remove("citation") {
                    out.push(citations(vec![c]));
                }
            }
            // A known delta on a block of another kind: surfaced, not lost
            // in silence.
            (
                kind @ ("text_delta" | "thinking_delta" | "input_json_delta" | "signature_delta"
                | "citations_delta"),
                block,
            ) if !matches!(block, OpenBlock::Ignored) => out.push(Delta::Warning {
                code: "mismatched_delta",
                message: format!("a {kind} for block {index}, which is of another kind: ignored"),
            }),
            // Delta types added later.
            _ => {}
        }
    }

    /// Whether block `index` takes a `kind` delta of text, thinking or
    /// argument JSON (see [`Self::simple_delta`]).
    pub(super) fn accepts(&self, index: u64, kind: &str) -> bool {
        self.blocks.iter().any(|(i, b)| {
            *i == index
                && matches!(
                    (kind, b),
                    ("text_delta", OpenBlock::Text)
                        | ("thinking_delta", OpenBlock::Thinking)
                        | ("input_json_delta", OpenBlock::ToolUse { .. })
                )
        })
    }

    /// Applies a text, thinking or argument-JSON delta to block `index`
    /// (which [`Self::accepts`] it).
    pub(super) fn simple_delta(&mut self, index: u64, value: String, out: &mut Vec<Delta>) {
        let Some((_, block)) = self.blocks.iter_mut().find(|(i, _)| *i == index) else {
            return;
        };
        match block {
            OpenBlock::Text => out.push(Delta::Text(value)),
            OpenBlock::Thinking => out.push(Delta::Reasoning(value)),
            OpenBlock::ToolUse { slot, got_json, .. } => {
                if !value.is_empty() {
                    *got_json = true;
                    out.push(Delta::ToolArgs {
                        slot: *slot,
                        fragment: value,
                    });
                }
            }
            OpenBlock::ProviderPart { .. } | OpenBlock::Ignored => {}
        }
    }

    fn block_stop(&mut self, data: &Value, out: &mut Vec<Delta>) {
        let index = data
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        let Some(pos) = self.blocks.iter().position(|(i, _)| *i == index) else {
            return;
        };
        let (_, block) = self.blocks.remove(pos);
        match block {
            OpenBlock::ToolUse {
                slot,
                start_input,
                got_json,
            } => {
                if !got_json {
                    // No input_json_delta (or only ""): the input given at
                    // the start is the whole input, `{}` for no arguments.
                    out.push(Delta::ToolArgs {
                        slot,
                        fragment: crate::json::json_text(&start_input),
                    });
                }
                self.release(out);
                self.held = Some(slot);
            }
            OpenBlock::Thinking | OpenBlock::Text => out.push(Delta::Break),
            OpenBlock::ProviderPart { mut block, json } => {
                if !json.is_empty() {
                    let input = crate::json::read::parse(&json).unwrap_or(Value::String(json));
                    block.insert("input".into(), input);
                }
                out.push(Delta::ProviderPart {
                    provider: NAME,
                    data: Value::Object(block),
                });
            }
            OpenBlock::Ignored => {}
        }
    }
}

/// Moves a field out of a frame (no copy).
fn take(data: &mut Value, key: &str) -> Option<Value> {
    data.as_object_mut()?.remove(key)
}

fn append(block: &mut Map<String, Value>, key: &str, more: &str) {
    match block.get_mut(key) {
        Some(Value::String(s)) => s.push_str(more),
        _ => {
            block.insert(key.into(), Value::String(more.to_string()));
        }
    }
}

fn push_array(block: &mut Map<String, Value>, key: &str, item: Value) {
    match block.get_mut(key) {
        Some(Value::Array(a)) => a.push(item),
        _ => {
            block.insert(key.into(), Value::Array(vec![item]));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, Provider, StreamDecoder, StreamEvent};

    fn sse(events: &[&str]) -> Vec<u8> {
        events
            .iter()
            .map(|d| format!("event: x\ndata: {d}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"m1","model":"c","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#;

    #[test]
    fn a_tool_call_is_emitted_at_the_frame_after_its_block_stop_not_before() {
        let body = sse(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":\"a\"}"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
        ]);
        let mut d = StreamDecoder::new(Provider::Anthropic);
        let mut out = Vec::new();
        d.feed(&body, &mut out).unwrap();
        assert!(out
            .iter()
            .all(|e| !matches!(e, StreamEvent::ToolCall { .. })));
        // The next block's start says the message went on.
        let next =
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#;
        d.feed(&sse(&[next]), &mut out).unwrap();
        assert!(
            matches!(out.last(), Some(StreamEvent::ToolCall { call, raw }) if call.arguments == r#"{"q":"a"}"# && &**raw == next)
        );
    }

    /// A known delta on a block of another kind (a text_delta on a
    /// thinking block) is a warning, not silence; an unknown one is ignored.
    #[test]
    fn a_delta_of_another_blocks_kind_is_a_warning() {
        let body = sse(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lost?"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"future_delta","x":1}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &body);
        assert!(res.is_ok());
        let warnings: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Warning { code, message, .. } => {
                    assert!(message.contains("text_delta for block 0"), "{message}");
                    Some(code.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(warnings, ["mismatched_delta"]);
    }

    /// A text block's citations stay on its text part, in order, and go
    /// back with it when the turn is replayed; the other parts have none.
    #[test]
    fn citations_are_kept_on_their_text_part_and_replayed() {
        let cite = |n: u32| serde_json::json!({"type": "web_search_result_location", "url": format!("https://e.com/{n}"), "title": "T", "cited_text": "c", "encrypted_index": "x"});
        let citation = |n: u32| {
            format!(
                r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"citations_delta","citation":{}}}}}"#,
                cite(n)
            )
        };
        let frames = [
            START.to_string(),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.into(),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Found: "}}"#.into(),
            r#"{"type":"content_block_stop","index":0}"#.into(),
            r#"{"type":"content_block_start","index":1,"content_block":{"citations":[],"type":"text","text":""}}"#.into(),
            citation(1),
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a fact"}}"#.into(),
            citation(2),
            r#"{"type":"content_block_stop","index":1}"#.into(),
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#.into(),
            r#"{"type":"message_stop"}"#.into(),
        ];
        let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
        let (_, res) = StreamDecoder::decode_all(Provider::Anthropic, &sse(&refs));
        let res = res.unwrap();
        let kept: Vec<Option<&serde_json::Value>> = res
            .message
            .parts
            .iter()
            .map(|p| match p {
                crate::model::Part::Text { provider_data, .. } => {
                    provider_data.as_ref().and_then(|d| d.get("anthropic"))
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kept,
            [
                None,
                Some(&serde_json::json!({"citations": [cite(1), cite(2)]}))
            ]
        );
        assert_eq!(res.text, "Found: a fact");

        let mut request = crate::model::Request::default();
        request.messages.push(res.message);
        let (_, body) = crate::providers::sent(Provider::Anthropic, None, &request);
        assert_eq!(
            body["messages"][0]["content"],
            serde_json::json!([
                {"type": "text", "text": "Found: "},
                {"type": "text", "text": "a fact", "citations": [cite(1), cite(2)]}
            ])
        );
    }

    /// `max_tokens` can cut off only the last block: a `tool_use` block
    /// there is incomplete even with its `content_block_stop` and an input
    /// that parses (`{}`, the input given at its start: the
    /// anthropic-sdk-python#975 failure); the calls before it stay whole.
    /// With `eager_input_streaming` (a tool's providerOptions) Anthropic
    /// streams a tool's input unbuffered, and a block that `max_tokens`
    /// cut can stop with input that is not JSON: that call is incomplete,
    /// never handed out, whatever the stop reason says.
    #[test]
    fn an_eager_tool_input_cut_off_as_invalid_json_is_incomplete() {
        for stop in ["max_tokens", "tool_use"] {
            let frames = [
                START.to_string(),
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"write","input":{}}}"#.into(),
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.txt\", \"text\": \"lorem ip"}}"#.into(),
                r#"{"type":"content_block_stop","index":0}"#.into(),
                format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}"}},"usage":{{"output_tokens":4096}}}}"#),
                r#"{"type":"message_stop"}"#.into(),
            ];
            let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
            let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &sse(&refs));
            let res = res.unwrap();
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, StreamEvent::ToolCall { .. })),
                "{stop}: no tool_call event"
            );
            assert!(res.tool_calls.is_empty(), "{stop}");
            assert_eq!(res.incomplete_tool_calls.len(), 1, "{stop}");
            assert_eq!(
                res.incomplete_tool_calls[0].arguments,
                r#"{"path": "a.txt", "text": "lorem ip"#
            );
        }
    }

    #[test]
    fn max_tokens_makes_the_last_tool_use_block_incomplete_streamed_or_not() {
        let tool = |i: u64, id: &str, json: &str| {
            [
                format!(
                    r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"{id}","name":"f","input":{{}}}}}}"#
                ),
                format!(
                    r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":{json}}}}}"#
                ),
                format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
            ]
        };
        for (stop, whole) in [("max_tokens", vec!["t1"]), ("tool_use", vec!["t1", "t2"])] {
            let mut frames = vec![START.to_string()];
            frames.extend(tool(0, "t1", r#""{\"q\":1}""#));
            frames.extend(tool(1, "t2", r#""""#));
            frames.push(format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}"}},"usage":{{"output_tokens":9}}}}"#));
            frames.push(r#"{"type":"message_stop"}"#.into());
            let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
            let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &sse(&refs));
            let res = res.unwrap();
            let emitted: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::ToolCall { call, .. } => Some(call.id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(emitted, whole, "{stop}");
            let listed: Vec<&str> = res.tool_calls.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(listed, whole, "{stop}");
            assert_eq!(res.incomplete_tool_calls.len(), 2 - whole.len(), "{stop}");

            let body = format!(
                r#"{{"id":"m1","type":"message","role":"assistant","model":"c","content":[{{"type":"tool_use","id":"t1","name":"f","input":{{"q":1}}}},{{"type":"tool_use","id":"t2","name":"f","input":{{}}}}],"stop_reason":"{stop}","usage":{{"input_tokens":1,"output_tokens":9}}}}"#
            );
            let res = crate::providers::decode_response(Provider::Anthropic, &body).unwrap();
            let listed: Vec<&str> = res.tool_calls.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(listed, whole, "non-streaming, {stop}");
            assert_eq!(
                res.incomplete_tool_calls.len(),
                2 - whole.len(),
                "non-streaming, {stop}"
            );
        }
    }

    #[test]
    fn an_error_event_after_a_200_is_a_typed_in_band_error() {
        let body = sse(&[
            START,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &body);
        assert!(events.is_empty());
        let Err(Error::Api(e)) = res else {
            panic!("{res:?}")
        };
        assert_eq!(e.kind, crate::ApiErrorKind::Overloaded);
        assert!(e.in_band && !e.events_emitted && e.retryable());
        assert!(e.partial.is_none(), "nothing was handed out");
    }

    /// After events, an in-band error keeps what came before it, as a
    /// stream that ended early does: the text, and an open call as
    /// incomplete, never as a call.
    #[test]
    fn an_error_event_after_events_keeps_what_came() {
        let body = sse(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &body);
        assert!(!events.is_empty());
        let Err(Error::Api(e)) = &res else {
            panic!("{res:?}")
        };
        assert!(e.in_band && e.events_emitted && !e.retryable());
        let partial = res.as_ref().unwrap_err().partial().expect("a partial");
        assert_eq!(partial.text, "Hel");
        assert!(partial.tool_calls.is_empty());
        assert_eq!(partial.incomplete_tool_calls.len(), 1);
        assert_eq!(partial.incomplete_tool_calls[0].id.as_deref(), Some("t1"));
    }

    #[test]
    fn a_stream_without_message_stop_ended_early_and_keeps_the_text() {
        let body = sse(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        ]);
        let (_, res) = StreamDecoder::decode_all(Provider::Anthropic, &body);
        let Err(Error::StreamEndedEarly { partial, .. }) = res else {
            panic!("{res:?}")
        };
        assert_eq!(partial.text, "Hel");
    }

    #[test]
    fn a_tool_use_block_without_its_stop_is_incomplete_even_after_message_stop() {
        let body = sse(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let (events, res) = StreamDecoder::decode_all(Provider::Anthropic, &body);
        assert!(events
            .iter()
            .all(|e| !matches!(e, StreamEvent::ToolCall { .. })));
        let res = res.unwrap();
        assert!(res.tool_calls.is_empty());
        assert_eq!(res.incomplete_tool_calls.len(), 1);
        assert_eq!(res.finish_reason, crate::FinishReason::Length);
    }

    #[test]
    fn a_second_message_reopens_the_stream_until_its_own_stop() {
        let body = sse(&[START, r#"{"type":"message_stop"}"#]);
        let mut d = StreamDecoder::new(Provider::Anthropic);
        let mut out = Vec::new();
        d.feed(&body, &mut out).unwrap();
        assert!(d.is_complete());
        d.feed(&sse(&[START.replace("m1", "m2").as_str()]), &mut out)
            .unwrap();
        assert!(!d.is_complete(), "the second message is still open");
        assert!(matches!(
            d.finish(&mut out),
            Err(Error::StreamEndedEarly { .. })
        ));
    }

    #[test]
    fn a_frame_that_is_not_json_is_a_malformed_stream() {
        let (_, res) = StreamDecoder::decode_all(Provider::Anthropic, &sse(&[START, "{oops"]));
        assert!(matches!(res, Err(Error::MalformedStream { .. })));
    }
}
