//! Stream events to deltas. Every event is named (`event:` and its
//! `type`); there is no `[DONE]`: a response ends with exactly one of
//! `response.completed`, `response.incomplete` or `response.failed`, and a
//! stream without one ended early.
//!
//! Items are keyed by `output_index` (compatible servers rotate item ids on
//! every event: GitHub Copilot). A function call is handed out at the
//! `output_item.done` of its item, never at `function_call_arguments.done`
//! (which has no name on the real wire). Unknown events are ignored, as
//! the API's versioning promises.

use serde_json::{Map, Value};

use super::{
    call_end, call_start, custom_arguments, finish_delta, kept_item, map_usage, meta, part_end,
    NAME,
};
use crate::accumulate::{Accumulator, Delta};
use crate::framing::Frame;
use crate::json::read::Reader;
use crate::json::take_str;
use crate::providers::{FrameFailure, FrameStream};

/// What an output item of the current response is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A function call in this slot.
    Call(usize),
    /// A custom tool call (handed out only once the response ends).
    Custom,
    Message,
    Reasoning,
    Other,
}

/// Where an output item is: its deltas are handed on in output order, so
/// that the message lists items as `response.output` does (parallel calls
/// and hosted tools finish in any order).
#[derive(Debug)]
enum State {
    /// Added, not done.
    Open,
    /// A custom tool call, done: the server's or the client's, not yet known.
    Custom(Value),
    /// Done: its deltas, waiting for the items before it.
    Done(Vec<Delta>),
    /// Its deltas were handed on.
    Released,
}

#[derive(Debug)]
struct Item {
    index: u64,
    kind: Kind,
    state: State,
}

/// The stream state of a Responses stream: what its frame decoder keeps.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    /// The current response's items, in output order.
    items: Vec<Item>,
    next_slot: usize,
    /// A call ended in the current response (the finish is tool calls).
    calls: bool,
    /// A refusal came in the current response.
    refused: bool,
    /// A terminal event came: a later `response.created` starts another
    /// response in the same body.
    ended: bool,
}

impl FrameStream for StreamState {
    /// Decodes one frame. `acc` holds the calls' arguments so far (a done
    /// item's arguments are checked against what streamed).
    fn frame(
        &mut self,
        ev: &Frame,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        if crate::providers::fast_paths() && self.fast_frame(&ev.data, out) {
            return Ok(());
        }
        let short = without_output(&ev.data);
        let text = short.as_deref().unwrap_or(&ev.data);
        let Ok(Value::Object(mut data)) = crate::json::read::parse(text) else {
            // Skipped, and said so; a terminal event lost this way leaves
            // the stream ended early.
            out.push(Delta::Warning {
                code: "invalid_frame",
                message: format!(
                    "skipped a {} event whose data is not a JSON object",
                    ev.event.as_deref().unwrap_or("message")
                ),
            });
            return Ok(());
        };
        let kind = match data.get("type").and_then(Value::as_str) {
            Some(t) => t.to_string(),
            None => ev.event.clone().unwrap_or_default(),
        };
        let index = data.get("output_index").and_then(Value::as_u64);
        match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                if self.ended && kind == "response.created" {
                    // Another response in the same body (a recorder joined
                    // the turns of a tool loop): complete at its own end.
                    *self = StreamState {
                        next_slot: self.next_slot,
                        ..StreamState::default()
                    };
                    out.push(Delta::Reopen);
                    out.push(Delta::Break);
                }
                if let Some(r) = data.get("response") {
                    out.push(meta(r));
                }
            }
            "response.output_item.added" => {
                let (Some(index), Some(Value::Object(item))) = (index, data.remove("item")) else {
                    return Ok(());
                };
                let kind = match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => {
                        let slot = self.slot();
                        out.push(call_start(slot, &item));
                        Kind::Call(slot)
                    }
                    Some("custom_tool_call") => Kind::Custom,
                    Some("message") => Kind::Message,
                    Some("reasoning") => Kind::Reasoning,
                    _ => Kind::Other,
                };
                if !matches!(kind, Kind::Call(_) | Kind::Custom) {
                    // The response goes on: its custom calls ran on the server.
                    self.settle_custom(false);
                }
                self.insert(Item {
                    index,
                    kind,
                    state: State::Open,
                });
                self.release(out);
            }
            "response.output_text.delta" => {
                out.push(Delta::Text(
                    take_str(&mut data, "delta").unwrap_or_default(),
                ));
            }
            "response.refusal.delta" => {
                self.refused = true;
                out.push(Delta::Refusal(
                    take_str(&mut data, "delta").unwrap_or_default(),
                ));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(Delta::Reasoning(
                    take_str(&mut data, "delta").unwrap_or_default(),
                ));
            }
            "response.function_call_arguments.delta" => {
                if let Some(Kind::Call(slot)) = index.and_then(|i| self.kind(i)) {
                    let fragment = take_str(&mut data, "delta").unwrap_or_default();
                    if !fragment.is_empty() {
                        out.push(Delta::ToolArgs { slot, fragment });
                    }
                }
            }
            // A partial image of an image generation call (the tool's
            // `partial_images`): progress, for a `file_partial` event.
            "response.image_generation_call.partial_image" => {
                out.extend(partial_image(&mut data));
            }
            "response.output_item.done" => {
                if let Some(Value::Object(item)) = data.remove("item") {
                    self.item_done(index, item, acc, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                // It ended with them: its custom calls are the client's.
                self.settle_custom(true);
                self.release_all(out);
                let response = data.remove("response").unwrap_or_default();
                self.end(&response, out);
            }
            "response.failed" => {
                self.release_all(out);
                let response = data.remove("response").unwrap_or_default();
                return Err(match super::error::failed(&response) {
                    Some(e) => FrameFailure::Api(Box::new(e)),
                    None => FrameFailure::Malformed("the response failed without an error".into()),
                });
            }
            "error" => {
                self.release_all(out);
                return Err(match super::error::event(&Value::Object(data)) {
                    Some(e) => FrameFailure::Api(Box::new(e)),
                    None => FrameFailure::Malformed("an error event without details".into()),
                });
            }
            _ => {}
        }
        Ok(())
    }
}

impl StreamState {
    fn slot(&mut self) -> usize {
        self.next_slot += 1;
        self.next_slot - 1
    }

    pub(super) fn kind(&self, index: u64) -> Option<Kind> {
        self.items
            .iter()
            .rev()
            .find(|i| i.index == index)
            .map(|i| i.kind)
    }

    /// An item is finished: a call is whole (or cut off), a message or
    /// reasoning part is closed, anything else is kept whole. Its deltas go
    /// on once every item before it has gone.
    fn item_done(
        &mut self,
        index: Option<u64>,
        item: Map<String, Value>,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) {
        let mut deltas = Vec::new();
        let tracked = index.and_then(|i| self.kind(i));
        let state = match (tracked, item.get("type").and_then(Value::as_str)) {
            (Some(Kind::Call(slot)), _) => {
                self.call_done(
                    slot,
                    &item,
                    acc.open_arguments(slot).unwrap_or(""),
                    &mut deltas,
                );
                State::Done(deltas)
            }
            (_, Some("function_call")) => {
                // A call whose added event never came: whole at once.
                let slot = self.slot();
                deltas.push(call_start(slot, &item));
                self.call_done(slot, &item, "", &mut deltas);
                State::Done(deltas)
            }
            (_, Some("custom_tool_call")) => State::Custom(Value::Object(item)),
            (_, Some("message")) => {
                part_end(item, false, &mut deltas);
                State::Done(deltas)
            }
            (_, Some("reasoning")) => {
                part_end(item, true, &mut deltas);
                State::Done(deltas)
            }
            _ => {
                kept_item(Value::Object(item), &mut deltas);
                State::Done(deltas)
            }
        };
        match self.items.iter_mut().find(|i| Some(i.index) == index) {
            Some(tracked) => tracked.state = state,
            None => self.insert(Item {
                index: index.unwrap_or(u64::MAX),
                kind: Kind::Other,
                state,
            }),
        }
        self.release(out);
    }

    /// The end of a call in `slot` whose arguments so far are `so_far`:
    /// what did not stream, then whole (or cut off, by its status).
    fn call_done(
        &mut self,
        slot: usize,
        item: &Map<String, Value>,
        so_far: &str,
        out: &mut Vec<Delta>,
    ) {
        // The done item wins: it fills what the added one lacked.
        out.push(call_start(slot, item));
        let whole = item.get("arguments").and_then(Value::as_str).unwrap_or("");
        match whole.strip_prefix(so_far) {
            Some(rest) if !rest.is_empty() => out.push(Delta::ToolArgs {
                slot,
                fragment: rest.to_string(),
            }),
            Some(_) => {}
            None => out.push(Delta::Warning {
                code: "arguments_mismatch",
                message: "a call's done item has other arguments than streamed; the streamed \
                          ones are kept"
                    .into(),
            }),
        }
        out.push(call_end(slot, item, &mut self.calls));
    }

    /// Decides the done custom tool calls: the client's (the response ended
    /// with them: each handed out whole), or the server's (it went on after
    /// them: xAI's X Search sub-tools, kept as provider parts).
    fn settle_custom(&mut self, client: bool) {
        for i in 0..self.items.len() {
            let Some(State::Custom(_)) = self.items.get(i).map(|i| &i.state) else {
                continue;
            };
            let slot = client.then(|| self.slot());
            let Some(entry) = self.items.get_mut(i) else {
                continue;
            };
            let State::Custom(item) = std::mem::replace(&mut entry.state, State::Released) else {
                continue;
            };
            let mut deltas = Vec::new();
            match (slot, &item) {
                (Some(slot), Value::Object(fields)) => {
                    deltas.push(call_start(slot, fields));
                    deltas.push(Delta::ToolArgsWhole {
                        slot,
                        arguments: custom_arguments(&item),
                    });
                    deltas.push(call_end(slot, fields, &mut self.calls));
                }
                _ => kept_item(item, &mut deltas),
            }
            entry.state = State::Done(deltas);
        }
    }

    /// Adds an item in output order (no sort: a sort would link driftsort
    /// into the wasm).
    fn insert(&mut self, item: Item) {
        let at = (self.items.iter())
            .position(|i| i.index > item.index)
            .unwrap_or(self.items.len());
        self.items.insert(at, item);
    }

    /// Hands on the deltas of the done items that no open item precedes.
    fn release(&mut self, out: &mut Vec<Delta>) {
        for item in &mut self.items {
            match &mut item.state {
                State::Released => {}
                State::Done(deltas) => {
                    out.append(deltas);
                    item.state = State::Released;
                }
                State::Open | State::Custom(_) => break,
            }
        }
    }

    /// Hands on every done item, the open ones aside (the response ended or
    /// failed: they are cut off).
    fn release_all(&mut self, out: &mut Vec<Delta>) {
        for item in &mut self.items {
            if let State::Done(deltas) = &mut item.state {
                out.append(deltas);
                item.state = State::Released;
            }
        }
    }

    /// A terminal event: usage, the finish, and the end of the response.
    fn end(&mut self, response: &Value, out: &mut Vec<Delta>) {
        out.push(meta(response));
        if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
            out.push(Delta::Usage(map_usage(u)));
        }
        if let Some(finish) = finish_delta(response, self.calls, self.refused) {
            out.push(finish);
        }
        out.push(Delta::Terminal);
        self.ended = true;
    }
}

/// A `partial_image` event's image as a [`Delta::FilePartial`] (the item
/// it belongs to in what replays it); `None` without one.
fn partial_image(data: &mut Map<String, Value>) -> Option<Delta> {
    let image = take_str(data, "partial_image_b64")?;
    let index = (data.get("partial_image_index").and_then(Value::as_u64))
        .and_then(|i| u32::try_from(i).ok())
        .unwrap_or(0);
    let format = data.get("output_format").and_then(Value::as_str);
    let media_type = format!("image/{}", format.unwrap_or("png"));
    let mut kept = Map::new();
    kept.insert("type".into(), "image_generation_call".into());
    if let Some(id) = data.remove("item_id") {
        kept.insert("id".into(), id);
    }
    Some(Delta::FilePartial {
        index,
        media_type,
        data: image,
        provider: NAME,
        kept: Value::Object(kept),
    })
}

/// A `response.completed` or `response.incomplete` event with `[]` for its
/// response's `output`, which repeats every item the stream has handed out
/// (a generated image's base64 among them): it is skipped, not read into a
/// tree or copied a second time, and nothing reads it. `None` for any
/// other event, or where the reader gives up (the general path reads it
/// whole).
fn without_output(data: &str) -> Option<String> {
    const COMPLETED: &str = r#"{"type":"response.completed""#;
    const INCOMPLETE: &str = r#"{"type":"response.incomplete""#;
    if !data.starts_with(COMPLETED) && !data.starts_with(INCOMPLETE) {
        return None;
    }
    let mut r = Reader::new(data);
    let mut output = None;
    r.object(|r, key| match key {
        "response" => r.object(|r, key| match key {
            "output" => r.skipped().map(|at| output = Some(at)),
            _ => r.skip(),
        }),
        _ => r.skip(),
    })?;
    r.at_end().then_some(())?;
    let at = output?;
    let mut short = data.get(..at.start)?.to_string();
    short.push_str("[]");
    short.push_str(data.get(at.end..)?);
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end without its `output`, the rest as it was; anything else, or
    /// a key the reader cannot compare (escaped), is left as it is.
    #[test]
    fn the_end_is_read_without_its_output() {
        let frame = r#"{"type":"response.completed","response":{"id":"r","output":[{"result":"QUJD"}],"usage":{"input_tokens":3}}}"#;
        assert_eq!(
            without_output(frame).as_deref(),
            Some(
                r#"{"type":"response.completed","response":{"id":"r","output":[],"usage":{"input_tokens":3}}}"#
            )
        );
        let spaced = frame.replace(r#""output":"#, r#""output": "#);
        assert!(without_output(&spaced).is_some_and(|f| f.contains(r#""output": []"#)));
        for other in [
            frame.replace("response.completed", "response.created"),
            frame.replace(r#""output""#, r#""outp\u0075t""#),
            frame.replace(r#""QUJD""#, "QUJD"),
            format!("{frame} x"),
        ] {
            assert_eq!(without_output(&other), None, "{other}");
        }
    }
}
