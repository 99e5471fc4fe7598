//! Progress events ([`crate::PartialEvents`]): `tool_call_start` and
//! `tool_call_delta` while a call's arguments stream, `output_delta` while
//! a structured answer does. Each piece is read once, by a
//! [`PartialJson`] per call (and one for the answer), so the work is
//! proportional to the text, however it is cut.
//!
//! They never stand for a call: the `tool_call` event is still made only
//! at the provider's boundary, by the accumulator; a call cut off gets its
//! start and deltas and no `tool_call`.

use serde_json::Value;

use crate::json::partial::{Edit, PartialJson};
use crate::model::{PartialEvents, Raw, StreamEvent};

/// Which progress events to make, and how their `partial` goes out.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Progress {
    pub(crate) which: PartialEvents,
    /// Leave each event's `partial` out and keep the edits that made it
    /// (`Tracker::take_edits`) instead: the JS boundary sends those and
    /// rebuilds the value there, so no event copies the whole value.
    pub(crate) edits: bool,
}

/// One call's progress.
#[derive(Debug, Default)]
pub(crate) struct CallProgress {
    /// The call's place among the response's calls, once it started.
    index: Option<usize>,
    /// How many bytes of its arguments went out in deltas.
    sent: usize,
    reader: PartialJson,
}

/// A call as the tracker sees it: the accumulator's open call, lent.
pub(crate) struct CallView<'a> {
    pub(crate) id: &'a mut Option<String>,
    pub(crate) name: Option<&'a str>,
    pub(crate) arguments: &'a str,
    pub(crate) progress: &'a mut CallProgress,
}

/// The progress events of one response.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    pub(crate) config: Progress,
    next_index: usize,
    output: PartialJson,
    /// With `config.edits`: the edits of each progress event made, in order.
    edits: Vec<Vec<Edit>>,
    /// Whether the pieces decoded now came in one read (see
    /// [`Self::begin_batch`]).
    batch: bool,
    /// The `tool_call_delta` the next piece of the same call joins.
    joining: Option<Joining>,
    /// The frame being read, when it is lent ([`Self::lend_frame`]).
    frame: String,
    /// That frame, shared, once an event has it.
    frame_raw: Option<Raw>,
}

/// A `tool_call_delta` that later pieces of its call, from the same read,
/// join instead of making events of their own.
#[derive(Debug)]
struct Joining {
    /// Its place in the output.
    at: usize,
    /// Its call's index.
    index: usize,
    /// Its frames, one per line, once a second joined them (its `raw` then).
    frames: String,
}

impl Tracker {
    /// Starts decoding the frames of one read: until [`Self::end_batch`],
    /// consecutive pieces of one call's arguments make one
    /// `tool_call_delta` (their texts joined, the value after the last,
    /// their frames in `raw`, one per line). They came at the same moment,
    /// so nobody could have seen the states between them: a UI gets one
    /// event per read instead of one per frame, and a call whose
    /// arguments stream one character per frame costs an event per read.
    /// A stream that arrives frame by frame gets an event per frame.
    pub(crate) fn begin_batch(&mut self) {
        self.batch = true;
    }

    /// Ends the read [`Self::begin_batch`] started: the event that joined
    /// pieces gets their frames.
    pub(crate) fn end_batch(&mut self, out: &mut [StreamEvent]) {
        self.batch = false;
        self.close_joining(out);
    }

    /// Gives the event that joined pieces their frames, and stops joining.
    fn close_joining(&mut self, out: &mut [StreamEvent]) {
        let Some(j) = self.joining.take().filter(|j| !j.frames.is_empty()) else {
            return;
        };
        if let Some(StreamEvent::ToolCallDelta { raw, .. }) = out.get_mut(j.at) {
            *raw = Raw::from(j.frames);
        }
    }

    /// Lends the text of a frame whose deltas are all call pieces: the
    /// events made of it copy it only then (see [`Self::raw`]), and a piece
    /// joined to an event adds it to that event's frames.
    pub(crate) fn lend_frame(&mut self, text: String) {
        self.frame = text;
        self.frame_raw = None;
    }

    /// The frame [`Self::lend_frame`] lent, back.
    pub(crate) fn take_frame(&mut self) -> String {
        self.frame_raw = None;
        std::mem::take(&mut self.frame)
    }

    /// An event's frame: the lent one, shared once, or else `raw`.
    fn raw(&mut self, raw: &Raw) -> Raw {
        if self.frame.is_empty() {
            return raw.clone();
        }
        let frame = &self.frame;
        self.frame_raw
            .get_or_insert_with(|| Raw::from(frame.as_str()))
            .clone()
    }

    /// The edits of the progress events made since the last call, one list
    /// per event, in order.
    pub(crate) fn take_edits(&mut self) -> Vec<Vec<Edit>> {
        std::mem::take(&mut self.edits)
    }

    /// Reads `text` into `reader`: the event's `partial` (see
    /// [`Self::partial`]), or nothing if the value did not change and
    /// `always` is false. `join`: the edits join the last event's (an
    /// append to the string its last edit appended to becomes part of it).
    fn read(
        &mut self,
        reader: &mut PartialJson,
        text: &str,
        always: bool,
        join: bool,
    ) -> Option<Option<Value>> {
        let mut fresh = Vec::new();
        let joined = self.edits.last_mut().filter(|_| join && self.config.edits);
        let joins = joined.is_some();
        let changed = reader.read(text, Some(joined.unwrap_or(&mut fresh)));
        if !changed && !always {
            return None;
        }
        if joins {
            return Some(None);
        }
        Some(self.partial(reader, fresh))
    }

    /// An event's `partial` after `edits`: with `config.edits`, `None` and
    /// the edits kept for the boundary; else the value, edited.
    fn partial(&mut self, reader: &mut PartialJson, edits: Vec<Edit>) -> Option<Value> {
        if self.config.edits {
            self.edits.push(edits);
            None
        } else {
            reader.apply(edits);
            reader.value().cloned()
        }
    }

    /// The `output_delta` for a piece of answer text, if it changed the
    /// value read so far.
    pub(crate) fn output(&mut self, text: &str, raw: &Raw) -> Option<StreamEvent> {
        if !self.config.which.output {
            return None;
        }
        let mut reader = std::mem::take(&mut self.output);
        let partial = self.read(&mut reader, text, false, false);
        self.output = reader;
        Some(StreamEvent::OutputDelta {
            partial: partial?,
            raw: self.raw(raw),
        })
    }

    /// The events of a call whose id, name or arguments grew (`ending`: it
    /// is about to be handed out whole): its `tool_call_start`, once its
    /// name and its id are known (a call the provider gives no id starts
    /// at its end, with the id made for it by `new_id`), then a
    /// `tool_call_delta` with its arguments since the last one. Returns
    /// whether it pushed any.
    pub(crate) fn call(
        &mut self,
        call: CallView<'_>,
        ending: bool,
        new_id: impl FnOnce() -> String,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) -> bool {
        if !self.config.which.tools {
            return false;
        }
        let before = out.len();
        let mut call = call;
        let Some(index) = self.start(&mut call, ending, new_id, raw, out) else {
            return false;
        };
        let p = call.progress;
        // (Arguments that are only blanks so far wait: blank ones end as
        // `{}`, and the deltas must add up to the call's arguments.)
        let blank = call.arguments.bytes().all(crate::json::grammar::is_ws);
        let delta = call
            .arguments
            .get(p.sent..)
            .filter(|d| !d.is_empty() && !blank);
        if let Some(delta) = delta {
            p.sent = call.arguments.len();
            let joining = self
                .joining
                .as_ref()
                .filter(|j| j.index == index && j.at + 1 == out.len())
                .map(|j| j.at);
            if joining.is_none() {
                self.close_joining(out);
            }
            let partial = self
                .read(&mut p.reader, delta, true, joining.is_some())
                .flatten();
            if let Some(at) = joining {
                self.join(at, delta, partial, raw, out);
                return out.len() > before;
            }
            if self.batch {
                self.joining = Some(Joining {
                    at: out.len(),
                    index,
                    frames: String::new(),
                });
            }
            out.push(StreamEvent::ToolCallDelta {
                id: call.id.clone().unwrap_or_default(),
                index,
                arguments_delta: delta.to_string(),
                partial,
                raw: self.raw(raw),
            });
        }
        out.len() > before
    }

    /// Joins a piece of arguments to the `tool_call_delta` at `at`, the
    /// last event (see [`Self::begin_batch`]): its text, its value (its
    /// edits were joined as they were read), its frame.
    fn join(
        &mut self,
        at: usize,
        delta: &str,
        partial: Option<Value>,
        raw: &Raw,
        out: &mut [StreamEvent],
    ) {
        let Some(StreamEvent::ToolCallDelta {
            arguments_delta,
            partial: value,
            raw: first,
            ..
        }) = out.get_mut(at)
        else {
            return;
        };
        arguments_delta.push_str(delta);
        if partial.is_some() {
            *value = partial;
        }
        let frame: &str = if self.frame.is_empty() {
            raw
        } else {
            &self.frame
        };
        if let Some(j) = &mut self.joining {
            if j.frames.is_empty() {
                j.frames.push_str(first);
            }
            j.frames.push('\n');
            j.frames.push_str(frame);
        }
    }

    /// The call's index, once it started; its `tool_call_start` if it starts
    /// now (see [`Self::call`]).
    fn start(
        &mut self,
        call: &mut CallView<'_>,
        ending: bool,
        new_id: impl FnOnce() -> String,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) -> Option<usize> {
        if let Some(index) = call.progress.index {
            return Some(index);
        }
        let name = call.name?;
        if call.id.is_none() {
            // A call without its id yet starts only when it ends (with the
            // id made for it then): an id made earlier would replace one
            // that comes later, and the provider needs its own back.
            if !ending {
                return None;
            }
            *call.id = Some(new_id());
        }
        let index = self.next_index;
        self.next_index += 1;
        call.progress.index = Some(index);
        out.push(StreamEvent::ToolCallStart {
            id: call.id.clone().unwrap_or_default(),
            name: name.to_string(),
            index,
            raw: self.raw(raw),
        });
        Some(index)
    }

    /// The events of a call whose arguments were patched (Vertex AI's
    /// `partialArgs`): its start if due, then a `tool_call_delta` with no
    /// new text and the patched value (the text comes whole at its end,
    /// in the last delta). Returns whether it pushed any.
    pub(crate) fn edited(
        &mut self,
        call: CallView<'_>,
        edits: Vec<Edit>,
        new_id: impl FnOnce() -> String,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) -> bool {
        let before = out.len();
        let mut call = call;
        if let Some(index) = self.start(&mut call, false, new_id, raw, out) {
            let partial = self.partial(&mut call.progress.reader, edits);
            out.push(StreamEvent::ToolCallDelta {
                id: call.id.clone().unwrap_or_default(),
                index,
                arguments_delta: String::new(),
                partial,
                raw: self.raw(raw),
            });
        }
        out.len() > before
    }
}

impl super::Accumulator {
    /// Starts and ends the frames of one read (see
    /// [`Tracker::begin_batch`]).
    pub(crate) fn begin_batch(&mut self) {
        self.tracker.begin_batch();
    }

    pub(crate) fn end_batch(&mut self, out: &mut [StreamEvent]) {
        self.tracker.end_batch(out);
    }

    /// Lends and takes back a frame of call pieces (see
    /// [`Tracker::lend_frame`]).
    pub(crate) fn lend_frame(&mut self, text: String) {
        self.tracker.lend_frame(text);
    }

    pub(crate) fn take_frame(&mut self) -> String {
        self.tracker.take_frame()
    }

    /// The progress events of open call `slot`, after it grew (or was
    /// patched by `patch`).
    pub(super) fn call_progress(
        &mut self,
        slot: usize,
        patch: Option<Vec<Edit>>,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) {
        if !self.tracker.config.which.tools {
            return;
        }
        let Some(call) = self.open.iter_mut().find(|c| c.slot == slot) else {
            return;
        };
        if progress(
            &mut self.tracker,
            &mut self.generated_ids,
            call,
            patch,
            false,
            raw,
            out,
        ) {
            self.events_emitted = true;
        }
    }

    /// The progress events of `call` (`ending`: it is handed out next).
    pub(super) fn progress_of(
        &mut self,
        call: &mut super::OpenCall,
        patch: Option<Vec<Edit>>,
        ending: bool,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) {
        let t = &mut self.tracker;
        if progress(t, &mut self.generated_ids, call, patch, ending, raw, out) {
            self.events_emitted = true;
        }
    }
}

/// The progress events of `call` (see [`Tracker::call`] and
/// [`Tracker::edited`]); returns whether it pushed any. (The accumulator's
/// fields apart, so that an open call is read in place.)
fn progress(
    tracker: &mut Tracker,
    counter: &mut u32,
    call: &mut super::OpenCall,
    patch: Option<Vec<Edit>>,
    ending: bool,
    raw: &Raw,
    out: &mut Vec<StreamEvent>,
) -> bool {
    let view = CallView {
        id: &mut call.id,
        name: call.name.as_deref(),
        arguments: &call.arguments,
        progress: &mut call.progress,
    };
    let new_id = || super::new_id(counter);
    match patch {
        Some(edits) => tracker.edited(view, edits, new_id, raw, out),
        None => tracker.call(view, ending, new_id, raw, out),
    }
}

#[cfg(all(test, feature = "openai"))]
mod tests {
    use serde_json::json;

    use crate::model::{PartialEvents, StreamEvent};
    use crate::providers::Provider;
    use crate::stream::StreamDecoder;

    /// A Chat Completions stream of one call in `pieces`, ending `finish`.
    fn stream(id: Option<&str>, pieces: &[&str], finish: &str) -> Vec<u8> {
        let mut body = String::new();
        let mut frame = |delta: serde_json::Value, finish: Option<&str>| {
            let chunk = json!({"id": "x", "object": "chat.completion.chunk", "created": 1,
                "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            body.push_str(&format!("data: {chunk}\n\n"));
        };
        let mut first = json!({"index": 0, "type": "function",
            "function": {"name": "write_file", "arguments": ""}});
        if let Some(id) = id {
            first["id"] = json!(id);
        }
        frame(json!({"tool_calls": [first]}), None);
        for p in pieces {
            frame(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
                None,
            );
        }
        frame(json!({}), Some(finish));
        body.push_str("data: [DONE]\n\n");
        body.into_bytes()
    }

    /// The events of `body`, read one SSE event at a time (as a stream
    /// that arrives frame by frame).
    fn decode(body: &[u8], which: PartialEvents) -> Vec<StreamEvent> {
        decode_reads(body.split_inclusive(|b| *b == b'\n'), which)
    }

    /// The events of a body that came in `reads`.
    fn decode_reads<'a>(
        reads: impl IntoIterator<Item = &'a [u8]>,
        which: PartialEvents,
    ) -> Vec<StreamEvent> {
        let mut d = StreamDecoder::new(Provider::OpenAiCompat).with_partial_events(which);
        let mut out = Vec::new();
        for read in reads {
            d.feed(read, &mut out).unwrap();
        }
        let _ = d.finish(&mut out);
        out
    }

    /// (kind, id, delta, partial) of each progress or call event.
    fn summary(events: &[StreamEvent]) -> Vec<(String, String, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStart {
                    id, name, index, ..
                } => Some((format!("start {index}"), id.clone(), name.clone())),
                StreamEvent::ToolCallDelta {
                    id,
                    arguments_delta,
                    partial,
                    ..
                } => Some((
                    format!("delta {arguments_delta}"),
                    id.clone(),
                    partial
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                )),
                StreamEvent::ToolCall { call, .. } => {
                    Some(("call".into(), call.id.clone(), call.arguments.clone()))
                }
                StreamEvent::Warning { code, .. } => {
                    Some(("warning".into(), code.clone(), String::new()))
                }
                _ => None,
            })
            .collect()
    }

    const TOOLS: PartialEvents = PartialEvents {
        tools: true,
        output: false,
        files: false,
    };

    #[test]
    fn a_call_streams_its_path_first_and_is_a_call_only_at_its_end() {
        let body = stream(
            Some("c1"),
            &[r#"{"path": "a"#, r#".txt", "content": "hi"#, r#"!"}"#],
            "tool_calls",
        );
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            summary(&decode(&body, TOOLS)),
            [
                s("start 0", "c1", "write_file"),
                s(r#"delta {"path": "a"#, "c1", r#"{"path":"a"}"#),
                s(
                    r#"delta .txt", "content": "hi"#,
                    "c1",
                    r#"{"path":"a.txt","content":"hi"}"#
                ),
                s(r#"delta !"}"#, "c1", r#"{"path":"a.txt","content":"hi!"}"#),
                s("call", "c1", r#"{"path": "a.txt", "content": "hi!"}"#),
            ]
        );
        // Not asked: none of them.
        assert_eq!(
            summary(&decode(&body, PartialEvents::default())),
            [s("call", "c1", r#"{"path": "a.txt", "content": "hi!"}"#)]
        );
    }

    /// Blank arguments end as `{}`: a delta of the blanks first would not
    /// add up to them.
    #[test]
    fn blank_arguments_make_one_delta_of_what_the_call_holds() {
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        let body = stream(Some("c1"), &[" ", "\n"], "tool_calls");
        assert_eq!(
            summary(&decode(&body, TOOLS)),
            [
                s("start 0", "c1", "write_file"),
                s("delta {}", "c1", "{}"),
                s("call", "c1", "{}"),
            ]
        );
        // Blanks before the object go with its first piece.
        let body = stream(Some("c1"), &[" ", r#"{"path": "a"}"#], "tool_calls");
        assert_eq!(
            summary(&decode(&body, TOOLS))[1..],
            [
                s(r#"delta  {"path": "a"}"#, "c1", r#"{"path":"a"}"#),
                s("call", "c1", r#" {"path": "a"}"#),
            ]
        );
    }

    #[test]
    fn the_pieces_of_one_read_make_one_delta_with_their_frames() {
        let body = stream(
            Some("c1"),
            &[r#"{"path": "a"#, r#".txt", "content": "hi"#, r#"!"}"#],
            "tool_calls",
        );
        let out = decode_reads([body.as_slice()], TOOLS);
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            summary(&out),
            [
                s("start 0", "c1", "write_file"),
                s(
                    r#"delta {"path": "a.txt", "content": "hi!"}"#,
                    "c1",
                    r#"{"path":"a.txt","content":"hi!"}"#
                ),
                s("call", "c1", r#"{"path": "a.txt", "content": "hi!"}"#),
            ]
        );
        // Its raw: the three frames, one per line, as they came.
        let frames: Vec<&str> = std::str::from_utf8(&body)
            .unwrap()
            .split("\n\n")
            .filter_map(|f| f.strip_prefix("data: "))
            .collect();
        let raw = out.iter().find_map(|e| match e {
            StreamEvent::ToolCallDelta { raw, .. } => Some(raw.to_string()),
            _ => None,
        });
        assert_eq!(raw.unwrap(), frames[1..4].join("\n"));
    }

    #[test]
    fn a_call_cut_off_has_its_progress_and_no_call() {
        let body = stream(Some("c1"), &[r#"{"path": "a.txt", "con"#], "length");
        let kinds: Vec<String> = summary(&decode(&body, TOOLS))
            .into_iter()
            .map(|(k, ..)| k)
            .collect();
        assert_eq!(
            kinds,
            ["start 0", r#"delta {"path": "a.txt", "con"#, "warning"]
        );
    }

    #[test]
    fn a_call_without_an_id_starts_at_its_end_with_the_id_made_for_it() {
        let events = decode(&stream(None, &["{", "}"], "tool_calls"), TOOLS);
        let got = summary(&events);
        assert_eq!(
            got[0],
            ("start 0".into(), "skyl00001".into(), "write_file".into())
        );
        assert_eq!(got[1].0, "delta {}");
        assert_eq!(got[2], ("call".into(), "skyl00001".into(), "{}".into()));
        // No arguments at all: "{}", in one delta at the end.
        let got = summary(&decode(&stream(None, &[], "tool_calls"), TOOLS));
        assert_eq!(got[1].0, "delta {}");
        assert_eq!(got[2].2, "{}");
    }
}
