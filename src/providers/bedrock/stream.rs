//! `ConverseStream` messages to deltas.
//!
//! `messageStart` → (`contentBlockStart`? → `contentBlockDelta`* →
//! `contentBlockStop`)* → `messageStop` → `metadata`, one event stream
//! message each (`framing.rs`), their payloads' padding field `p` ignored.
//! Only `toolUse` blocks have a `contentBlockStart`; text and reasoning
//! blocks start with their first delta. A tool call is whole at its
//! block's `contentBlockStop`, and handed out at the next message that
//! says the message went on (another block) or how it ended
//! (`messageStop`): a call cut off by `max_tokens` (only the last block
//! can be) is then reported incomplete, not executed. A body that ends
//! after the stop but before `messageStop` hands the call out at its end,
//! then fails as ended early. An exception message (`throttlingException`,
//! ...) is the stream's error.

use serde_json::Value;

use super::{citations, finish_delta, map_usage};
use crate::accumulate::{Accumulator, Delta};
use crate::framing::{Frame, EXCEPTION};
use crate::json::nested;
use crate::providers::{FrameFailure, FrameStream};

/// The stream state of a `ConverseStream` body.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    /// The block being streamed: its `contentBlockIndex`, and whether it
    /// is a `toolUse` block.
    open: Option<(u64, bool)>,
    /// The slot of a stopped `toolUse` block whose end waits for the next
    /// message (see the module doc).
    held: Option<usize>,
}

impl FrameStream for StreamState {
    fn frame(
        &mut self,
        ev: &Frame,
        _acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        let name = ev.event.as_deref().unwrap_or_default();
        let data = crate::json::read::parse(&ev.data).map_err(|e| {
            FrameFailure::Malformed(format!("a {name} message whose payload is not JSON: {e}"))
        })?;
        if let Some(exception) = name.strip_prefix(EXCEPTION) {
            return Err(exception_failure(exception, &data, &ev.data));
        }
        let index = data.get("contentBlockIndex").and_then(Value::as_u64);
        match name {
            "contentBlockStart" => {
                self.release(out);
                self.close(out);
                let Some(tool) = nested(&data, &["start", "toolUse"]) else {
                    // (A start of a kind added after this was written.)
                    return Ok(());
                };
                let index = index.unwrap_or_default();
                self.open = Some((index, true));
                let text = |k: &str| tool.get(k).and_then(Value::as_str).map(str::to_string);
                out.push(Delta::ToolStart {
                    slot: slot(index),
                    id: text("toolUseId"),
                    name: text("name"),
                    data: None,
                });
            }
            "contentBlockDelta" => self.delta(index.unwrap_or_default(), &data, out),
            "contentBlockStop" => match self.open.take() {
                Some((index, true)) => {
                    self.release(out);
                    self.held = Some(slot(index));
                }
                Some(_) => out.push(Delta::Break),
                None => {}
            },
            "messageStop" => {
                self.close(out);
                if let Some(reason) = data.get("stopReason").and_then(Value::as_str) {
                    out.push(finish_delta(reason));
                }
                // After the finish: a call cut off by max_tokens is rejected.
                self.release(out);
                out.push(Delta::Terminal);
            }
            "metadata" => {
                if let Some(u) = data.get("usage").and_then(Value::as_object) {
                    out.push(Delta::Usage(map_usage(u)));
                }
            }
            "" => {
                // A JSON body that answered a streamed request with 200
                // (an unknown operation): an error, or a broken stream.
                return Err(match super::error::decode(&data) {
                    Some(e) => FrameFailure::Api(Box::new(e)),
                    None => FrameFailure::Malformed("a body that is not an event stream".into()),
                });
            }
            // messageStart, and event types added after this was written.
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<Delta>) {
        self.release(out);
    }
}

impl StreamState {
    fn delta(&mut self, index: u64, data: &Value, out: &mut Vec<Delta>) {
        let Some(delta) = data.get("delta") else {
            return;
        };
        let tool = delta.get("toolUse");
        if self.open.map(|(i, _)| i) != Some(index) {
            // A new block, started by its first delta.
            self.release(out);
            self.close(out);
            self.open = Some((index, false));
        }
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if let Some(tool) = tool {
            if let Some(fragment) = text(tool.get("input")) {
                out.push(Delta::ToolArgs {
                    slot: slot(index),
                    fragment,
                });
            }
        } else if let Some(t) = text(delta.get("text")) {
            out.push(Delta::Text(t));
        } else if let Some(r) = delta.get("reasoningContent") {
            if let Some(t) = text(r.get("text")) {
                out.push(Delta::Reasoning(t));
            }
            if let Some(sig) = text(r.get("signature")) {
                out.push(Delta::ReasoningSignature(sig));
            }
            if let Some(data) = text(r.get("redactedContent")) {
                out.push(Delta::RedactedReasoning(data));
            }
        } else if let Some(c) = delta.get("citation") {
            out.push(citations(vec![c.clone()]));
        }
    }

    /// Ends the held `toolUse` block's call.
    fn release(&mut self, out: &mut Vec<Delta>) {
        if let Some(slot) = self.held.take() {
            out.push(Delta::ToolEnd { slot });
        }
    }

    /// Closes a text or reasoning block that was never stopped.
    fn close(&mut self, out: &mut Vec<Delta>) {
        if let Some((_, false)) = self.open.take() {
            out.push(Delta::Break);
        }
    }
}

/// A block's tool-call slot.
fn slot(index: u64) -> usize {
    usize::try_from(index).unwrap_or(usize::MAX)
}

/// An exception message as the stream's error: typed by its
/// `:exception-type` (`throttlingException` is a rate limit, ...), its
/// payload kept as the error's body (`originalStatusCode`, ...).
fn exception_failure(exception: &str, data: &Value, payload: &str) -> FrameFailure {
    let message = data.get("message").and_then(Value::as_str);
    let mut e = super::error::exception(exception.to_string(), message.map(str::to_string));
    e.body = Some(payload.to_string());
    FrameFailure::Api(Box::new(e))
}
