//! The provider-agnostic accumulator: neutral [`Delta`]s in, [`StreamEvent`]s
//! and a final [`Response`] out.
//!
//! Each provider's frame decoder turns its wire frames into [`Delta`]s and
//! marks the structural boundaries of its protocol (`finish_reason`,
//! `content_block_stop`, a Gemini part without `willContinue`). This module
//! owns what is common to all of them:
//!
//! - a tool call is emitted exactly once, at its boundary, and only if it has
//!   a name and its arguments are a complete JSON object (`""` counts as
//!   `{}`); a call still open when the body ends or the output limit hits is
//!   reported in [`Response::incomplete_tool_calls`] with a warning, never as
//!   an executable call;
//! - text and reasoning deltas merge into parts of the replayable message;
//! - non-streaming bodies go through the same code, so a stream and a
//!   response with the same content give the same [`Response`].

use crate::error::Error;
use crate::model::provider_data::merge_data;
use crate::model::{
    FinishReason, IncompleteToolCall, Part, ProviderData, Raw, Response, StreamEvent, Usage,
};

mod calls;
mod delta;
mod files;
mod progress;
mod usage;

use calls::new_id;

pub(crate) use delta::Delta;
pub(crate) use files::kept_frame;
pub(crate) use progress::Progress;
pub(crate) use usage::ReadUsage;

#[derive(Debug, Default)]
struct OpenCall {
    slot: usize,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    /// `arguments` came whole and known to be a JSON object.
    checked: bool,
    data: Option<ProviderData>,
    progress: progress::CallProgress,
}

/// Assembles deltas into events and a response.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    response: Response,
    open: Vec<OpenCall>,
    /// The last part can take more text (or reasoning) deltas.
    text_open: bool,
    reasoning_open: bool,
    generated_ids: u32,
    terminal: bool,
    events_emitted: bool,
    usage_frame: Option<Raw>,
    /// The text `response.usage` comes from, while it comes as text.
    usage_text: usage::UsageText,
    /// The progress events asked for, and their state.
    tracker: progress::Tracker,
    /// [`Self::finish`] hands the response out in its event alone.
    finish_in_event: bool,
    /// The files made so far, as later frames may repeat them.
    made: Vec<files::Made>,
}

impl Accumulator {
    pub(crate) fn new() -> Self {
        Accumulator::default()
    }

    /// Makes the progress events `progress` asks for.
    pub(crate) fn set_progress(&mut self, progress: Progress) {
        self.tracker.config = progress;
    }

    /// The edits of the progress events made since the last call (when
    /// [`Progress::edits`] is set), one list per event, in order.
    pub(crate) fn take_edits(&mut self) -> Vec<Vec<crate::json::partial::Edit>> {
        self.tracker.take_edits()
    }

    /// Whether tool progress events are asked for (their pieces then keep
    /// their frame, for the events' `raw`).
    pub(crate) fn progress_tools(&self) -> bool {
        self.tracker.config.which.tools
    }

    /// Makes [`Self::finish`] hand the response out once, in the `Finish`
    /// event, without the `text` and `reasoning` its parts make (for a
    /// caller that derives them, the JS boundary), and return an empty one:
    /// a large text or file is then held once at the end, not four times
    /// (the part, the text joined, and a copy of both for the event). A
    /// file part of the message keeps an empty `data`: the caller takes it
    /// from the file's event, so that an image is held once, by its event,
    /// and not for the rest of the stream.
    pub(crate) fn finish_in_event(&mut self) {
        self.finish_in_event = true;
    }

    /// The files made so far, as later frames may repeat them.
    pub(crate) fn made(&self) -> &[files::Made] {
        &self.made
    }

    /// Whether any event has been pushed to an output.
    pub(crate) fn events_emitted(&self) -> bool {
        self.events_emitted
    }

    /// Whether the terminal frame was seen.
    pub(crate) fn terminal(&self) -> bool {
        self.terminal
    }

    fn push(&mut self, out: &mut Vec<StreamEvent>, ev: StreamEvent) {
        self.events_emitted = true;
        out.push(ev);
    }

    /// The argument text so far of the open call in `slot`.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn open_arguments(&self, slot: usize) -> Option<&str> {
        self.open
            .iter()
            .find(|c| c.slot == slot)
            .map(|c| c.arguments.as_str())
    }

    /// Applies one delta that came from the frame `raw`.
    pub(crate) fn apply(&mut self, delta: Delta, raw: &Raw, out: &mut Vec<StreamEvent>) {
        match delta {
            Delta::Meta { id, model } => {
                if id.is_some() {
                    self.response.id = id;
                }
                if model.is_some() {
                    self.response.model = model;
                }
            }
            Delta::Text(text) => self.text(text, raw, out),
            Delta::Reasoning(text) => self.reasoning(text, raw, out),
            Delta::ReasoningSignature(sig) => self.append_reasoning("", Some(sig)),
            Delta::RedactedReasoning(data) => self.part(Part::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some(data),
                provider_data: None,
            }),
            Delta::PartData { reasoning, data } => self.merge_part_data(reasoning, data),
            Delta::Break => self.close_parts(),
            Delta::ToolStart {
                slot,
                id,
                name,
                data,
            } => {
                self.tool_start(slot, id, name, data);
                self.call_progress(slot, None, raw, out);
            }
            Delta::ToolArgs { slot, fragment } => {
                if let Some(call) = self.open_call(slot) {
                    call.arguments.push_str(&fragment);
                    call.checked = false;
                }
                self.call_progress(slot, None, raw, out);
            }
            Delta::ToolArgsWhole { slot, arguments } => {
                if let Some(call) = self.open_call(slot) {
                    // Written from an object (or checked canonical): it
                    // is one exactly when it starts as one.
                    call.checked = call.arguments.is_empty() && arguments.starts_with('{');
                    call.arguments.push_str(&arguments);
                }
                self.call_progress(slot, None, raw, out);
            }
            Delta::ToolEdits { slot, edits } => self.call_progress(slot, Some(edits), raw, out),
            Delta::ToolEnd { slot } => {
                if let Some(call) = self.take_call(slot) {
                    self.end_call(call, raw, out);
                }
            }
            Delta::ToolAbort { slot, reason } => {
                if let Some(call) = self.take_call(slot) {
                    self.reject(call, &reason, raw, out);
                }
            }
            Delta::ToolEndAll => {
                for call in std::mem::take(&mut self.open) {
                    self.end_call(call, raw, out);
                }
            }
            Delta::File {
                media_type,
                data,
                provider,
                kept,
            } => {
                self.made.push(files::made_of(&data));
                // (For a caller that takes it from the event, the
                // message's file keeps an empty `data`.)
                let copy = match self.finish_in_event {
                    true => String::new(),
                    false => data.clone(),
                };
                self.part(files::made(
                    media_type.clone(),
                    copy,
                    provider,
                    kept.clone(),
                ));
                let file = files::made(media_type, data, provider, kept);
                let raw = raw.clone();
                self.push(out, StreamEvent::File { file, raw });
            }
            Delta::FilePartial {
                index,
                media_type,
                data,
                provider,
                kept,
            } => {
                if self.tracker.config.which.files {
                    let file = files::made(media_type, data, provider, kept);
                    let raw = raw.clone();
                    self.push(out, StreamEvent::FilePartial { index, file, raw });
                }
            }
            Delta::ProviderPart { provider, data } => self.part(Part::Provider {
                provider: provider.to_string(),
                data,
            }),
            Delta::Refusal(text) => {
                self.response
                    .refusal
                    .get_or_insert_with(String::new)
                    .push_str(&text);
            }
            Delta::Usage(usage) => {
                self.usage_text.read(&mut self.response.usage);
                if usage != self.response.usage {
                    self.response.usage = usage;
                    self.usage_frame = Some(raw.clone());
                    self.usage_text.clear();
                }
            }
            Delta::UsageText { json, read } => {
                if self.usage_text.set(json, read, &mut self.response.usage) {
                    self.usage_frame = Some(raw.clone());
                }
            }
            Delta::Finish { raw: r, reason } => {
                self.response.raw_finish_reason = Some(r);
                self.response.finish_reason = reason;
            }
            Delta::Terminal => self.terminal = true,
            Delta::Reopen => self.terminal = false,
            Delta::Warning { code, message } => self.push(
                out,
                StreamEvent::Warning {
                    code: code.to_string(),
                    message,
                    raw: raw.clone(),
                },
            ),
        }
    }

    /// Text: appended to the open text part, and handed out (an empty
    /// delta is nothing). The response's `text` is the text parts joined,
    /// written when the response leaves ([`with_text`]), not kept beside
    /// them: a large text is held once.
    fn text(&mut self, text: String, raw: &Raw, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        self.append_text(&text);
        let progress = self.tracker.output(&text, raw);
        self.push(
            out,
            StreamEvent::Text {
                text,
                raw: raw.clone(),
            },
        );
        if let Some(ev) = progress {
            self.push(out, ev);
        }
    }

    /// Reasoning text, as [`Self::text`] for the reasoning part.
    fn reasoning(&mut self, text: String, raw: &Raw, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        self.append_reasoning(&text, None);
        self.push(
            out,
            StreamEvent::Reasoning {
                text,
                raw: raw.clone(),
            },
        );
    }

    /// A part that stands alone: it closes the open text and reasoning.
    fn part(&mut self, part: Part) {
        self.close_parts();
        self.response.message.parts.push(part);
    }

    fn close_parts(&mut self) {
        self.text_open = false;
        self.reasoning_open = false;
    }

    fn append_text(&mut self, text: &str) {
        if self.text_open {
            if let Some(Part::Text { text: t, .. }) = self.response.message.parts.last_mut() {
                t.push_str(text);
                return;
            }
        }
        self.response.message.parts.push(Part::Text {
            text: text.to_string(),
            provider_data: None,
        });
        self.text_open = true;
        self.reasoning_open = false;
    }

    fn append_reasoning(&mut self, text: &str, signature: Option<String>) {
        if self.reasoning_open {
            if let Some(Part::Reasoning {
                text: t,
                signature: sig,
                redacted: None,
                ..
            }) = self.response.message.parts.last_mut()
            {
                t.push_str(text);
                if let Some(s) = signature {
                    sig.get_or_insert_with(String::new).push_str(&s);
                }
                return;
            }
        }
        self.response.message.parts.push(Part::Reasoning {
            text: text.to_string(),
            signature,
            redacted: None,
            provider_data: None,
        });
        self.reasoning_open = true;
        self.text_open = false;
    }

    fn merge_part_data(&mut self, reasoning: bool, data: ProviderData) {
        let open = if reasoning {
            self.reasoning_open
        } else {
            self.text_open
        };
        if open {
            match self.response.message.parts.last_mut() {
                Some(Part::Text { provider_data, .. }) if !reasoning => {
                    return merge_data(provider_data, data)
                }
                Some(Part::Reasoning { provider_data, .. }) if reasoning => {
                    return merge_data(provider_data, data)
                }
                _ => {}
            }
        }
        // Nothing open to attach to (a signature on an empty part): an empty
        // part keeps it, so it replays.
        let part = if reasoning {
            Part::Reasoning {
                text: String::new(),
                signature: None,
                redacted: None,
                provider_data: Some(data),
            }
        } else {
            Part::Text {
                text: String::new(),
                provider_data: Some(data),
            }
        };
        self.response.message.parts.push(part);
        self.text_open = !reasoning;
        self.reasoning_open = reasoning;
    }

    fn settle(&mut self) {
        if self.response.finish_reason == FinishReason::Stop && !self.response.tool_calls.is_empty()
        {
            // Gemini (and some OpenAI-compatible servers) say STOP for a turn
            // that called tools; the loop needs to know to run them.
            self.response.finish_reason = FinishReason::ToolCalls;
        }
        if self.response.finish_reason == FinishReason::ToolCalls
            && self.response.tool_calls.is_empty()
            && !self.response.incomplete_tool_calls.is_empty()
        {
            // Every call was cut off or broken (vLLM says tool_calls even
            // for a truncated one): nothing waits for results, and a loop
            // driven by the finish reason must not think so.
            self.response.finish_reason = FinishReason::Other;
        }
        if self.response.finish_reason == FinishReason::Stop && self.response.refusal.is_some() {
            // OpenAI ends a refusal (`delta.refusal`) with "stop".
            self.response.finish_reason = FinishReason::Refusal;
        }
    }

    /// What has been assembled so far, with open calls listed as incomplete.
    pub(crate) fn snapshot(&self, reason: &str) -> Response {
        let mut r = with_text(self.response.clone());
        self.usage_text.current(&mut r.usage);
        for call in &self.open {
            r.incomplete_tool_calls.push(IncompleteToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                reason: reason.to_string(),
            });
        }
        r
    }

    /// Ends the turn after the last frame. Emits `usage` and `finish`, or
    /// fails with [`Error::StreamEndedEarly`] if no terminal frame was seen.
    pub(crate) fn finish(
        &mut self,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Response, Error> {
        self.usage_text.read(&mut self.response.usage);
        if !self.terminal {
            self.abandon_open_calls("the stream ended inside the call", raw, out);
            return Err(Error::StreamEndedEarly {
                events_emitted: self.events_emitted,
                partial: Box::new(with_text(self.response.clone())),
            });
        }
        self.abandon_open_calls("the turn ended before the call was complete", raw, out);
        self.settle();
        if self.response.usage != Usage::default() {
            let usage_frame = self.usage_frame.clone().unwrap_or_else(|| raw.clone());
            self.push(
                out,
                StreamEvent::Usage {
                    usage: self.response.usage.clone(),
                    raw: usage_frame,
                },
            );
        }
        let response = std::mem::take(&mut self.response);
        if self.finish_in_event {
            let raw = raw.clone();
            let response = Box::new(response);
            self.push(out, StreamEvent::Finish { response, raw });
            return Ok(Response::default());
        }
        let response = with_text(response);
        self.push(
            out,
            StreamEvent::Finish {
                response: Box::new(response.clone()),
                raw: raw.clone(),
            },
        );
        Ok(response)
    }

    /// Runs a whole non-streaming body's deltas and returns the response.
    pub(crate) fn run(deltas: Vec<Delta>, raw: &Raw) -> Result<Response, Error> {
        let mut acc = Accumulator::new();
        let mut sink = Vec::new();
        for d in deltas {
            acc.apply(d, raw, &mut sink);
        }
        acc.apply(Delta::Terminal, raw, &mut sink);
        acc.finish(raw, &mut sink)
    }
}

/// `r` with its `text` and `reasoning`: its text and reasoning parts'
/// texts joined (every delta went to a part, in order).
fn with_text(mut r: Response) -> Response {
    let (mut text, mut reasoning) = (String::new(), String::new());
    for part in &r.message.parts {
        match part {
            Part::Text { text: t, .. } => text.push_str(t),
            Part::Reasoning { text: t, .. } => reasoning.push_str(t),
            _ => {}
        }
    }
    (r.text, r.reasoning) = (text, reasoning);
    r
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::json::grammar::is_object;
    use crate::model::ToolCall;

    fn raw() -> Raw {
        Raw::from("frame")
    }

    fn run(deltas: Vec<Delta>) -> (Vec<StreamEvent>, Result<Response, Error>) {
        let mut acc = Accumulator::new();
        let mut out = Vec::new();
        for d in deltas {
            acc.apply(d, &raw(), &mut out);
        }
        let res = acc.finish(&raw(), &mut out);
        (out, res)
    }

    fn start(slot: usize, id: &str, name: &str) -> Delta {
        Delta::ToolStart {
            slot,
            id: Some(id.into()),
            name: Some(name.into()),
            data: None,
        }
    }

    fn args(slot: usize, s: &str) -> Delta {
        Delta::ToolArgs {
            slot,
            fragment: s.into(),
        }
    }

    fn calls(events: &[StreamEvent]) -> Vec<&ToolCall> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall { call, .. } => Some(call),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_call_whose_prefix_parses_is_not_emitted_before_its_boundary() {
        let mut acc = Accumulator::new();
        let mut out = Vec::new();
        acc.apply(start(0, "c1", "search"), &raw(), &mut out);
        acc.apply(args(0, r#"{"q":"a"}"#), &raw(), &mut out);
        assert!(
            calls(&out).is_empty(),
            "a parseable prefix is not a boundary"
        );
        acc.apply(args(0, ""), &raw(), &mut out);
        acc.apply(Delta::ToolEnd { slot: 0 }, &raw(), &mut out);
        assert_eq!(calls(&out).len(), 1);
        // Ending it again emits nothing more.
        acc.apply(Delta::ToolEnd { slot: 0 }, &raw(), &mut out);
        acc.apply(Delta::ToolEndAll, &raw(), &mut out);
        assert_eq!(calls(&out).len(), 1);
    }

    #[test]
    fn empty_arguments_become_an_empty_object() {
        let (ev, res) = run(vec![start(0, "c", "f"), Delta::ToolEndAll, Delta::Terminal]);
        assert_eq!(calls(&ev)[0].arguments, "{}");
        assert_eq!(res.unwrap().tool_calls[0].arguments, "{}");
    }

    #[test]
    fn a_call_cut_off_by_the_end_of_the_stream_is_incomplete_not_emitted() {
        let (ev, res) = run(vec![start(0, "c", "f"), args(0, r#"{"a":"#)]);
        assert!(calls(&ev).is_empty());
        let Err(Error::StreamEndedEarly {
            partial,
            events_emitted,
        }) = res
        else {
            panic!("expected an early end")
        };
        assert!(events_emitted, "the warning was emitted");
        assert!(partial.tool_calls.is_empty());
        assert_eq!(partial.incomplete_tool_calls[0].arguments, r#"{"a":"#);
    }

    #[test]
    fn a_call_open_when_the_length_limit_hits_is_incomplete() {
        let (ev, res) = run(vec![
            start(0, "c", "f"),
            args(0, r#"{"a":1}"#),
            Delta::Finish {
                raw: "length".into(),
                reason: FinishReason::Length,
            },
            Delta::ToolEndAll,
            Delta::Terminal,
        ]);
        assert!(calls(&ev).is_empty());
        let res = res.unwrap();
        assert!(res.tool_calls.is_empty());
        assert_eq!(res.incomplete_tool_calls.len(), 1);
        assert!(ev.iter().any(
            |e| matches!(e, StreamEvent::Warning { code, .. } if code == "tool_call_incomplete")
        ));
    }

    #[test]
    fn a_call_with_invalid_json_arguments_is_incomplete() {
        let (ev, res) = run(vec![
            start(0, "c", "f"),
            args(0, r#"{"a":1}{"b":2}"#),
            Delta::ToolEndAll,
            Delta::Terminal,
        ]);
        assert!(calls(&ev).is_empty());
        assert_eq!(res.unwrap().incomplete_tool_calls.len(), 1);
    }

    #[test]
    fn a_nameless_call_is_dropped_with_a_warning() {
        let (ev, res) = run(vec![
            Delta::ToolStart {
                slot: 0,
                id: Some("c".into()),
                name: None,
                data: None,
            },
            args(0, "{}"),
            Delta::ToolEndAll,
            Delta::Terminal,
        ]);
        assert!(calls(&ev).is_empty());
        assert!(ev.iter().any(|e| matches!(e, StreamEvent::Warning { message, .. } if message.contains("no tool name"))));
        assert!(res.unwrap().tool_calls.is_empty());
    }

    #[test]
    fn missing_ids_are_generated_and_unique() {
        let (_, res) = run(vec![
            Delta::ToolStart {
                slot: 0,
                id: None,
                name: Some("f".into()),
                data: None,
            },
            Delta::ToolStart {
                slot: 1,
                id: Some(String::new()),
                name: Some("g".into()),
                data: None,
            },
            Delta::ToolEndAll,
            Delta::Terminal,
        ]);
        let res = res.unwrap();
        assert_eq!(res.tool_calls[0].id, "skyl00001");
        assert_eq!(res.tool_calls[1].id, "skyl00002");
    }

    #[test]
    fn text_merges_into_one_part_until_a_break() {
        let (ev, res) = run(vec![
            Delta::Text("a".into()),
            Delta::Text("b".into()),
            Delta::Break,
            Delta::Text("c".into()),
            Delta::Terminal,
        ]);
        let res = res.unwrap();
        assert_eq!(res.text, "abc");
        assert_eq!(res.message.parts.len(), 2);
        assert_eq!(ev.len(), 4, "three text events and finish");
        assert!(matches!(ev.last(), Some(StreamEvent::Finish { .. })));
    }

    #[test]
    fn reasoning_keeps_its_signature_and_precedes_the_call_in_the_message() {
        let (_, res) = run(vec![
            Delta::Reasoning("think".into()),
            Delta::ReasoningSignature("sig".into()),
            Delta::Break,
            start(1, "c", "f"),
            Delta::ToolEnd { slot: 1 },
            Delta::Terminal,
        ]);
        let res = res.unwrap();
        assert!(
            matches!(&res.message.parts[0], Part::Reasoning { text, signature: Some(s), .. } if text == "think" && s == "sig")
        );
        assert!(matches!(&res.message.parts[1], Part::ToolCall { .. }));
        assert_eq!(res.finish_reason, FinishReason::Other);
    }

    #[test]
    fn stop_with_tool_calls_is_normalised_to_tool_calls() {
        let (_, res) = run(vec![
            start(0, "c", "f"),
            Delta::ToolEnd { slot: 0 },
            Delta::Finish {
                raw: "STOP".into(),
                reason: FinishReason::Stop,
            },
            Delta::Terminal,
        ]);
        let res = res.unwrap();
        assert_eq!(res.finish_reason, FinishReason::ToolCalls);
        assert_eq!(res.raw_finish_reason.as_deref(), Some("STOP"));
    }

    #[test]
    fn usage_is_emitted_once_before_finish() {
        let u = Usage {
            input: Some(3),
            output: Some(4),
            ..Usage::default()
        };
        let (ev, _) = run(vec![
            Delta::Usage(u.clone()),
            Delta::Usage(u.clone()),
            Delta::Terminal,
        ]);
        assert_eq!(ev.len(), 2);
        assert!(matches!(&ev[0], StreamEvent::Usage { usage, .. } if *usage == u));
    }

    #[test]
    fn json_object_check_is_strict() {
        assert!(is_object(r#" {"a":[1,2]} "#));
        assert!(!is_object(r#"{"a":"#));
        assert!(!is_object("[1]"));
        assert!(!is_object(r#"{"a":1} x"#));
    }
}
