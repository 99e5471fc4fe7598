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
        // A generated image (or other file): one file, its thought
        // signature kept for replay. A thought's interim image stays a
        // provider part, replayed as it came.
        if !thought && is_inline_file(&part) {
            return out.push(inline_file(part, signature));
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

/// Whether a part is `inlineData` with a media type and data (a file).
fn is_inline_file(part: &Map<String, Value>) -> bool {
    let inline = part.get("inlineData");
    let text = |k: &str| inline.and_then(|i| i.get(k)).is_some_and(Value::is_string);
    text("mimeType") && text("data")
}

/// An `inlineData` part as a file (its base64 moved, not copied), with
/// what replays it: its thought signature and any other field of the part.
fn inline_file(mut part: Map<String, Value>, signature: Option<String>) -> Delta {
    let mut inline = match part.remove("inlineData") {
        Some(Value::Object(inline)) => inline,
        _ => Map::new(),
    };
    let mut take = |k: &str| match inline.remove(k) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let (media_type, data) = (take("mimeType"), take("data"));
    if let Some(sig) = signature {
        part.insert("thoughtSignature".into(), Value::String(sig));
    }
    Delta::File {
        media_type,
        data,
        provider: NAME,
        kept: Value::Object(part),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
