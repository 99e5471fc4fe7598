//! The event boundary format: how a chunk's events cross from Rust to JS
//! as one small JSON index followed by their strings, which JS slices out
//! (see `ARCHITECTURE.md`, "The boundary format"). The JS half's decoder is
//! `js/boundary.js`; both check [`BOUNDARY_VERSION`].

/// The version of this format. The JS half (`js/boundary.js`) has its own
/// `BOUNDARY_VERSION` and refuses a module whose [`boundary_version`]
/// differs: bump both together whenever the format changes.
pub(crate) const BOUNDARY_VERSION: u32 = 7;

/// The format's version (`BOUNDARY_VERSION`), for the JS half to check.
pub fn boundary_version() -> u32 {
    BOUNDARY_VERSION
}

use super::{error_info, error_json, provider_named};
use crate::error::Error;
use crate::json::partial::{Edit, Step};
use crate::json::write::{object_text, push_decimal, Arr, Obj, Out};
use crate::model::to_json;
use crate::model::{Part, StreamEvent};
use crate::providers::Provider;
use crate::stream::StreamDecoder;

/// The length of `s` in UTF-16 code units (what JS string indices count).
fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// A string longer than this is kept apart from a run's result when the
/// writer keeps strings apart (see [`Strs`]).
const BIG: usize = 64 * 1024;

/// The length written for a string kept apart: `-1` in the JSON.
pub(super) const APART: usize = usize::MAX;

/// A string kept apart from a result, for JS to take on its own.
#[derive(Debug)]
pub(crate) enum Big {
    /// A frame, shared with the decoder (not copied).
    Shared(crate::model::Raw),
    /// A payload, moved out of its event.
    Owned(String),
}

impl Big {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Big::Shared(raw) => raw,
            Big::Owned(text) => text,
        }
    }
}

/// Where a result's strings go: appended to `text`, their UTF-16 lengths
/// in `lens`; or, with `apart` (a run's writer), a string over [`BIG`]
/// bytes kept there instead, whole, for JS to take on its own
/// (`takeApart`), so that one large event is not copied into the result
/// in wasm memory. Its length is written as `-1`.
struct Strs<'a> {
    text: &'a mut String,
    lens: &'a mut Vec<usize>,
    apart: Option<&'a mut Vec<Big>>,
}

impl Strs<'_> {
    fn push(&mut self, s: &str) {
        self.lens.push(utf16_len(s));
        self.text.push_str(s);
    }

    fn push_owned(&mut self, s: String) {
        self.push_big(Big::Owned(s));
    }

    fn push_raw(&mut self, raw: crate::model::Raw) {
        self.push_big(Big::Shared(raw));
    }

    /// `s` kept apart if it is over [`BIG`] bytes and the writer keeps
    /// strings apart; appended otherwise.
    fn push_big(&mut self, s: Big) {
        match &mut self.apart {
            Some(apart) if s.as_str().len() > BIG => {
                self.lens.push(APART);
                apart.push(s);
            }
            _ => self.push(s.as_str()),
        }
    }
}

/// What a `finish` event left out because earlier events sent it (see
/// [`BoundaryStream::feed`]): its tool-call parts' arguments, its file
/// parts' data.
#[derive(Clone, Copy, Default)]
struct FromEvents {
    args: bool,
    files: bool,
}

/// Writes `ev` as JSON with its strings moved out (see [`BoundaryStream::feed`]
/// for which and in what order); a `finish` event in its compact form.
/// `sent` counts the `tool_call` and `file` events written so far.
fn write_event(
    mut ev: StreamEvent,
    out: &mut Vec<u8>,
    strs: &mut Strs<'_>,
    sent: &mut Sent,
    edits: &mut impl Iterator<Item = Vec<Edit>>,
) -> FromEvents {
    let mut from_events = FromEvents::default();
    strs.push_raw(ev.take_raw());
    let mut w = Out::from_bytes(std::mem::take(out));
    match ev {
        // The common events are one digit: JS builds the object (it is
        // `{"type":"text"|"reasoning","text":..,"raw":..}`).
        StreamEvent::Text { text, .. } => {
            strs.push_owned(text);
            w.json("0");
        }
        StreamEvent::Reasoning { text, .. } => {
            strs.push_owned(text);
            w.json("1");
        }
        StreamEvent::ToolCall { mut call, .. } => {
            strs.push_owned(std::mem::take(&mut call.arguments));
            let mut o = w.object();
            o.str("type", "tool_call");
            to_json::tool_call(&mut o.object("call"), &call);
            o.str("raw", "");
            sent.calls += 1;
        }
        StreamEvent::ToolCallStart {
            id, name, index, ..
        } => {
            w.object()
                .str("type", "tool_call_start")
                .str("id", &id)
                .str("name", &name)
                .uint("index", index as u64)
                .str("raw", "");
        }
        // Progress events are arrays, with no names or ids (JS has the
        // id from the call's `tool_call_start`): one per frame, so small.
        StreamEvent::ToolCallDelta {
            index,
            arguments_delta,
            ..
        } => {
            strs.push_owned(arguments_delta);
            let mut a = w.array();
            a.json("2");
            a.uint(index as u64);
            write_edits(&mut a, edits.next().unwrap_or_default(), strs);
        }
        StreamEvent::OutputDelta { .. } => {
            let mut a = w.array();
            a.json("3");
            write_edits(&mut a, edits.next().unwrap_or_default(), strs);
        }
        StreamEvent::Usage { usage, .. } => {
            let mut o = w.object();
            o.str("type", "usage");
            to_json::usage(&mut o.object("usage"), &usage);
            o.str("raw", "");
        }
        // Its base64 is one of the strings, never in the JSON.
        StreamEvent::File { file, .. } => {
            let mut o = w.object();
            o.str("type", "file");
            if write_file(&mut o, file, strs) {
                sent.files += 1;
            }
        }
        // The same; not a file of the message.
        StreamEvent::FilePartial { index, file, .. } => {
            let mut o = w.object();
            o.str("type", "file_partial")
                .uint("index", u64::from(index));
            write_file(&mut o, file, strs);
        }
        StreamEvent::Warning { code, message, .. } => {
            w.object()
                .str("type", "warning")
                .str("code", &code)
                .str("message", &message)
                .str("raw", "");
        }
        StreamEvent::Finish { mut response, .. } => {
            // The core emits one `tool_call` event per tool-call part, in
            // the order of the parts, with the same arguments: if the counts
            // agree, JS takes the arguments from those events.
            // So does a `file` event per file part: JS takes their data
            // from those events the same way.
            let parts = &mut response.message.parts;
            let count = |f: fn(&Part) -> bool| parts.iter().filter(|p| f(p)).count();
            from_events = FromEvents {
                args: count(|p| matches!(p, Part::ToolCall { .. })) == sent.calls,
                files: count(|p| matches!(p, Part::File { data: Some(_), .. })) == sent.files,
            };
            for part in parts {
                match part {
                    Part::Text { text, .. } | Part::Reasoning { text, .. } => {
                        strs.push_owned(std::mem::take(text));
                    }
                    Part::ToolCall { arguments, .. } => {
                        let arguments = std::mem::take(arguments);
                        if !from_events.args {
                            strs.push_owned(arguments);
                        }
                    }
                    Part::File {
                        data: Some(data), ..
                    } => {
                        let data = std::mem::take(data);
                        if !from_events.files {
                            strs.push_owned(data);
                        }
                    }
                    _ => {}
                }
            }
            // Without the fields JS derives from `message.parts` (`text`,
            // `reasoning`, `toolCalls`): they would repeat every argument
            // and all text, already sent in earlier events.
            let mut o = w.object();
            o.str("type", "finish");
            to_json::response(
                &mut o.object("response"),
                &response,
                to_json::Fields::Compact,
            );
            o.str("raw", "");
        }
    }
    *out = w.into_bytes();
    from_events
}

/// The `tool_call` and `file` events a decoder has written so far.
#[derive(Debug, Default)]
pub(crate) struct Sent {
    calls: usize,
    files: usize,
}

/// A file event's `file` and empty `raw`, its base64 moved to the
/// strings; whether it had data.
fn write_file(o: &mut Obj, mut file: Part, strs: &mut Strs<'_>) -> bool {
    let had = match &mut file {
        Part::File {
            data: Some(data), ..
        } => {
            strs.push_owned(std::mem::take(data));
            true
        }
        _ => false,
    };
    to_json::part(&mut o.object("file"), &file);
    o.str("raw", "");
    had
}

/// A progress event's edits, which JS applies to the value it keeps for
/// the call (or the answer): `[[0, path, value] | [1, path]]`, 0 setting
/// the value at the path, 1 appending text to the string there (the text
/// is among the event's strings, in order, so it is never escaped); a path
/// is an array of keys and indices.
fn write_edits(a: &mut Arr, edits: Vec<Edit>, strs: &mut Strs<'_>) {
    let mut list = a.array();
    for edit in edits {
        let mut e = list.array();
        let path = match &edit {
            Edit::Set(path, _) => {
                e.json("0");
                path
            }
            Edit::Append(path, _) => {
                e.json("1");
                path
            }
        };
        let mut p = e.array();
        for step in path {
            match step {
                Step::Key(k) => p.str(k),
                Step::Index(n) => p.uint(*n as u64),
            }
        }
        drop(p);
        match edit {
            Edit::Set(_, v) => e.value(&v),
            Edit::Append(_, text) => strs.push_owned(text),
        }
    }
}

/// A stream decoder whose results are JSON.
#[derive(Debug)]
pub struct BoundaryStream {
    inner: StreamDecoder,
    writer: Writer,
}

/// Writes stream results in the boundary format: the events of a chunk,
/// then the error or the end (see [`BoundaryStream::feed`]).
#[derive(Debug)]
pub(crate) struct Writer {
    pub(crate) provider: &'static str,
    /// The events to write next.
    pub(crate) events: Vec<StreamEvent>,
    /// `tool_call` and `file` events written so far.
    sent: Sent,
    /// The strings kept apart from the last result, for JS to take in
    /// order (a run's writer; `None`: every string is in the result).
    apart: Option<Vec<Big>>,
    /// The edits of the progress events among `events`, in order.
    pub(crate) edits: Vec<Vec<Edit>>,
    /// The buffers a result is written in, kept from one result to the
    /// next so that a chunk's result does not grow them from empty (see
    /// [`Scratch`]).
    scratch: Scratch,
}

/// A result's JSON part, its strings and their lengths, while it is
/// written; emptied, not freed, between results. Most results are alike
/// in size (one text delta, one argument fragment), so after the first
/// few nothing is reallocated while writing; [`BoundaryStream::seal`]
/// then copies them into one string of the exact size.
#[derive(Debug, Default)]
struct Scratch {
    out: Vec<u8>,
    strs: String,
    lens: Vec<usize>,
}

impl Scratch {
    /// Above this capacity a buffer is freed after its result rather than
    /// kept (one large event must not pin its size for the whole stream).
    const KEEP: usize = 64 * 1024;

    fn clear(&mut self) {
        if self.out.capacity() > Self::KEEP {
            self.out = Vec::new();
        }
        if self.strs.capacity() > Self::KEEP {
            self.strs = String::new();
        }
        if self.lens.capacity() > Self::KEEP {
            self.lens = Vec::new();
        }
        self.out.clear();
        self.strs.clear();
        self.lens.clear();
    }
}

impl Writer {
    pub(crate) fn new(provider: Provider) -> Self {
        Writer {
            provider: provider.name(),
            events: Vec::new(),
            sent: Sent::default(),
            apart: None,
            edits: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// A writer that keeps strings over [`BIG`] bytes apart from its
    /// results (a run's, for the JS half, which takes them with
    /// [`Self::take_apart`]).
    pub(crate) fn keeping_apart(mut self) -> Self {
        self.apart = Some(Vec::new());
        self
    }

    /// The next string kept apart from the last result.
    pub(crate) fn take_apart(&mut self) -> Option<Big> {
        self.apart.as_mut()?.pop()
    }

    /// A result: the events, then the error, or `"done": true` when `end`
    /// says the stream ended well (`events_emitted`: whether any event was
    /// handed out before the error).
    pub(crate) fn result(
        &mut self,
        end: Option<Result<(), &Error>>,
        events_emitted: bool,
    ) -> String {
        self.events_json();
        match end {
            Some(Ok(())) => self.scratch.out.extend_from_slice(b",\"done\":true"),
            Some(Err(e)) => self.with_error(e, events_emitted),
            None => {}
        }
        self.seal()
    }

    /// `{"events":[...],"lens":[...]` into the scratch buffers, with each
    /// event's payload strings left empty in the JSON and appended to its
    /// strings instead (see [`BoundaryStream::feed`]).
    fn events_json(&mut self) {
        let Scratch { out, strs, lens } = &mut self.scratch;
        out.extend_from_slice(b"{\"events\":[");
        // (What JS did not take of an earlier result is not for this one.)
        if let Some(a) = &mut self.apart {
            a.clear();
        }
        let mut strs = Strs {
            text: strs,
            lens,
            apart: self.apart.as_mut(),
        };
        let mut from_events = FromEvents::default();
        let mut edits = std::mem::take(&mut self.edits).into_iter();
        for (i, ev) in self.events.drain(..).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let f = write_event(ev, out, &mut strs, &mut self.sent, &mut edits);
            from_events.args |= f.args;
            from_events.files |= f.files;
        }
        if let Some(a) = &mut strs.apart {
            a.reverse(); // (taken from the end, in order)
        }
        out.extend_from_slice(b"],\"lens\":[");
        for (i, n) in strs.lens.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match *n {
                APART => out.extend_from_slice(b"-1"),
                n => push_decimal(out, n as u64),
            }
        }
        out.push(b']');
        if from_events.args {
            out.extend_from_slice(b",\"argsFromEvents\":true");
        }
        if from_events.files {
            out.extend_from_slice(b",\"filesFromEvents\":true");
        }
    }

    /// The result: the payload strings, a NUL (which the JSON part never
    /// contains unescaped: JS finds it from the end), then the JSON object,
    /// closed. A small result is copied into a string of its exact size and
    /// the scratch buffers kept for the next; a large one's strings become
    /// the result, not copied.
    fn seal(&mut self) -> String {
        let Scratch { out, strs, .. } = &mut self.scratch;
        // The JSON part is the JSON writer's output and ASCII punctuation,
        // so UTF-8; usually small (the strings, most of the bytes, are
        // already `str`), so only it is checked (by `str::from_utf8`:
        // `from_utf8_lossy`'s own scan took 3.7 % of an Anthropic text
        // stream's instructions at opt-level "z").
        let json = crate::sse::utf8(out);
        let mut text = if strs.len() > Scratch::KEEP {
            std::mem::take(strs)
        } else {
            let mut text = String::with_capacity(strs.len() + 2 + json.len());
            text.push_str(strs);
            text
        };
        text.reserve_exact(json.len() + 2);
        text.push('\0');
        text.push_str(&json);
        text.push('}');
        self.scratch.clear();
        text
    }

    fn with_error(&mut self, e: &Error, events_emitted: bool) {
        let out = &mut self.scratch.out;
        out.extend_from_slice(b",\"error\":");
        let mut info = super::error_info::info(e, self.provider);
        // Every kind says whether events had been handed out before it,
        // as this decoder knows: also the kinds without a flag of their
        // own (a content filter, an invalid response), which are never
        // retryable.
        info.events_emitted |= events_emitted;
        let mut w = Out::from_bytes(std::mem::take(out));
        error_info::error_info(&mut w.object(), &info);
        *out = w.into_bytes();
    }
}

impl BoundaryStream {
    /// A decoder for the named provider.
    pub fn new(provider: &str, max_event_bytes: Option<usize>) -> Result<Self, String> {
        let p = provider_named(provider).map_err(|e| error_json(&e, "unknown"))?;
        let inner = match max_event_bytes {
            Some(limit) => StreamDecoder::with_max_event_bytes(p, limit),
            None => StreamDecoder::new(p),
        };
        Ok(BoundaryStream {
            inner,
            writer: Writer::new(p),
        })
    }

    /// Feeds a chunk: `{"events": [...], "lens": [...]}`, plus `"error"` if
    /// the stream failed (events before the failure are still listed), then
    /// a NUL and the events' strings.
    ///
    /// The strings are each event's `raw` frame, the `text` of `text` and
    /// `reasoning` events, the `arguments` of a `tool_call` event's call and,
    /// for `finish`, the `text` of every text or reasoning part and the
    /// `arguments` of every tool-call part of the message, in that order,
    /// except with `"argsFromEvents": true`: then the tool-call parts'
    /// arguments are those of this decoder's `tool_call` events, in order
    /// (sent once, not twice). The strings are empty in the JSON and
    /// follow it, concatenated, `lens` giving
    /// each one's length in UTF-16 units. So payloads are neither escaped
    /// here nor unescaped by `JSON.parse`: JS slices them out. A `text`
    /// event is written as `0` and a `reasoning` event as `1` in the events
    /// array (their raw frame, then their text, are the next strings).
    ///
    /// A chunk that completes no event (most of them, when a server sends
    /// one event per chunk of argument fragments) returns `""`.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        let w = &mut self.writer;
        let result = self.inner.feed(chunk, &mut w.events);
        if result.is_ok() && w.events.is_empty() {
            return String::new();
        }
        let emitted = self.inner.events_emitted();
        w.result(result.as_ref().err().map(Err), emitted)
    }

    /// Ends the body: as [`Self::feed`], with `"done": true` (the response
    /// is in the final `finish` event) or `"error"`.
    pub fn finish(&mut self) -> String {
        let w = &mut self.writer;
        let result = self.inner.finish(&mut w.events);
        let emitted = self.inner.events_emitted();
        w.result(Some(result.as_ref().map(|_| ())), emitted)
    }

    /// Whether any event has been handed out.
    pub fn events_emitted(&self) -> bool {
        self.inner.events_emitted()
    }

    /// Whether the provider's terminal frame has been decoded.
    pub fn is_complete(&self) -> bool {
        self.inner.is_complete()
    }

    /// What has been assembled so far.
    pub fn partial(&self) -> String {
        let r = self.inner.partial();
        object_text(|o| to_json::response(o, &r, to_json::Fields::All))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::expand::{expand_result, Expansion};
    use serde_json::Value;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    /// A decoder result with its strings put back, as the JS shell does,
    /// after checking that no payload is inside the JSON part; `calls`
    /// carries the `tool_call` arguments across one decoder's results.
    fn rebuild_with(s: &str, calls: &mut Expansion) -> Value {
        if let Some((_, json)) = s.rsplit_once('\0') {
            for ev in v(json)["events"].as_array().unwrap() {
                assert!(
                    ev.is_u64() || ev.is_array() || ev["raw"] == "",
                    "payloads are not inside the JSON"
                );
            }
        }
        expand_result(s, calls).expect("a well-formed result that uses every string")
    }

    fn rebuild(s: &str) -> Value {
        rebuild_with(s, &mut Expansion::default())
    }

    #[cfg(feature = "openai")]
    #[test]
    fn the_decoder_reports_events_with_their_strings_then_the_end() {
        let mut d = BoundaryStream::new("openai", None).unwrap();
        let frame = "{\"choices\":[{\"delta\":{\"content\":\"Hé 🌍 \\\"q\\\"\"}}]}";
        let out = rebuild(&d.feed(format!("data: {frame}\n\n").as_bytes()));
        assert_eq!(out["events"][0]["type"], "text");
        assert_eq!(out["events"][0]["text"], "Hé 🌍 \"q\"");
        assert_eq!(out["events"][0]["raw"], frame);
        assert!(d.events_emitted());
        let out = d.feed(
            b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        );
        assert_eq!(out, "", "no event: nothing to say");
        let out = rebuild(&d.finish());
        assert_eq!(out["done"], true);
        assert_eq!(out["events"][0]["type"], "finish");
        // Compact: text, reasoning and toolCalls are derived from the message in JS.
        assert!(out["events"][0]["response"].get("text").is_none());
        assert!(out["events"][0]["response"].get("toolCalls").is_none());
        assert_eq!(
            out["events"][0]["response"]["message"]["parts"][0]["text"],
            "Hé 🌍 \"q\""
        );
        assert_eq!(out["events"][0]["response"]["finishReason"], "stop");
        assert_eq!(out["events"][0]["raw"], "[DONE]");
    }

    /// Every recorded stream: the events rebuilt from the decoder's output
    /// are the core's events, and the finish event's message is the
    /// response's.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn rebuilt_events_equal_the_core_events_on_every_recorded_stream() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut streams = 0;
        let mut from_events = 0;
        for provider in ["openai", "openaicompat", "anthropic", "gemini"] {
            for entry in std::fs::read_dir(dir.join(provider)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().and_then(|e| e.to_str()) != Some("sse") {
                    continue;
                }
                let body = std::fs::read(&path).unwrap();
                let p = provider_named(provider).unwrap();
                let (events, _) = StreamDecoder::decode_all(p, &body);
                let mut d = BoundaryStream::new(provider, None).unwrap();
                let mut got = Vec::new();
                let mut calls = Expansion::default();
                for chunk in body.chunks(997) {
                    let out = rebuild_with(&d.feed(chunk), &mut calls);
                    got.extend(out["events"].as_array().unwrap().clone());
                }
                let end = rebuild_with(&d.finish(), &mut calls);
                if !calls.sent.is_empty() && end.get("error").is_none() {
                    from_events += usize::from(end["argsFromEvents"] == true);
                }
                got.extend(end["events"].as_array().unwrap().clone());
                assert_eq!(got.len(), events.len(), "{}", path.display());
                for (g, e) in got.iter().zip(&events) {
                    let want = serde_json::to_value(e).unwrap();
                    if let StreamEvent::Finish { .. } = e {
                        let (gr, wr) = (&g["response"], &want["response"]);
                        for key in ["message", "usage", "finishReason", "rawFinishReason"] {
                            assert_eq!(gr.get(key), wr.get(key), "{key}: {}", path.display());
                        }
                        assert_eq!(g["raw"], want["raw"]);
                        continue;
                    }
                    assert_eq!(g, &want, "{}", path.display());
                }
                streams += 1;
            }
        }
        assert!(streams > 60, "{streams} streams");
        assert!(
            from_events > 20,
            "{from_events} finish events took the arguments from the events"
        );
    }

    #[cfg(feature = "openai")]
    #[test]
    fn a_decoder_that_ends_early_reports_the_partial_response() {
        let mut d = BoundaryStream::new("openai", None).unwrap();
        assert_eq!(
            d.feed(b"data: {\"choices\":[{\"delta\":"),
            "",
            "no event yet"
        );
        d.feed(b"{\"content\":\"Hi\"}}]}\n\n");
        let out = rebuild(&d.finish());
        assert_eq!(out["error"]["name"], "StreamEndedEarlyError");
        assert_eq!(out["error"]["partial"]["text"], "Hi");
        assert_eq!(out["error"]["retryable"], false);
        assert!(BoundaryStream::new("nope", None).is_err());
    }

    /// `decodeStream`'s in-band error after events keeps what came, as
    /// `client.stream`'s does (from the run machine).
    #[cfg(feature = "anthropic")]
    #[test]
    fn an_in_band_error_after_events_reports_the_partial_response() {
        let mut d = BoundaryStream::new("anthropic", None).unwrap();
        let frames = [
            r#"{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ];
        let body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        d.feed(body.as_bytes());
        let error =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let out = rebuild(&d.feed(format!("event: error\ndata: {error}\n\n").as_bytes()));
        assert_eq!(out["error"]["name"], "OverloadedError");
        assert_eq!(out["error"]["inBand"], true);
        assert_eq!(out["error"]["eventsEmitted"], true);
        assert_eq!(out["error"]["partial"]["text"], "Hi");
    }

    /// The scratch buffers are reused from one result to the next, and a
    /// large event's are not kept: every result stays whole.
    #[cfg(feature = "openai")]
    #[test]
    fn results_reuse_the_scratch_buffers_but_not_a_large_events() {
        let mut d = BoundaryStream::new("openai", None).unwrap();
        let frame = |text: &str| {
            format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n")
        };
        let mut calls = Expansion::default();
        let small = rebuild_with(&d.feed(frame("Hi").as_bytes()), &mut calls);
        assert_eq!(small["events"][0]["text"], "Hi");
        let kept = d.writer.scratch.strs.capacity();
        assert!(kept > 0, "the strings' buffer is kept");
        let again = rebuild_with(&d.feed(frame("there").as_bytes()), &mut calls);
        assert_eq!(again["events"][0]["text"], "there");
        assert_eq!(
            d.writer.scratch.strs.capacity(),
            kept,
            "and not grown again"
        );
        let large = "x".repeat(Scratch::KEEP * 2);
        let out = rebuild_with(&d.feed(frame(&large).as_bytes()), &mut calls);
        assert_eq!(out["events"][0]["text"], large.as_str());
        assert!(d.writer.scratch.strs.capacity() <= Scratch::KEEP);
        assert!(d.writer.scratch.out.is_empty() && d.writer.scratch.lens.is_empty());
    }

    /// Applies a progress event's expanded edits (`[op, path, value or
    /// text]`) to `value`, as `boundary.js` does.
    fn apply_edits(value: &mut Value, edits: &Value) {
        for e in edits.as_array().unwrap() {
            let path = e[1].as_array().unwrap();
            let mut at = &mut *value;
            for step in path {
                if let (Value::Array(items), Some(i)) = (&mut *at, step.as_u64()) {
                    // A new element is pushed.
                    if i as usize == items.len() {
                        items.push(Value::Null);
                    }
                }
                at = match step.as_u64() {
                    Some(i) => &mut at[i as usize],
                    None => &mut at[step.as_str().unwrap()],
                };
            }
            if e[0] == 0 {
                *at = e[2].clone();
            } else {
                let s = format!("{}{}", at.as_str().unwrap(), e[2].as_str().unwrap());
                *at = Value::from(s);
            }
        }
    }

    /// Every recorded stream with calls, through the run the JS shell
    /// drives, with progress asked: each delta names its call's id (from its
    /// start, by index), the deltas join to the call's arguments, and the
    /// edits, applied in order, make the arguments' value.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn progress_events_cross_as_arrays_whose_edits_make_the_arguments() {
        use super::super::BoundaryRun;
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let request = r#"{"messages":[{"role":"user","parts":[{"type":"text","text":"x"}]}],
            "tools":[{"name":"t","parameters":{"type":"object"}}],"partial":{"tools":true}}"#;
        let mut checked = 0;
        for provider in ["openai", "openaicompat", "anthropic", "gemini", "responses"] {
            for entry in std::fs::read_dir(dir.join(provider)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().and_then(|e| e.to_str()) != Some("sse") {
                    continue;
                }
                let body = std::fs::read(&path).unwrap();
                let config = format!(
                    r#"{{"provider":"{provider}","apiKey":"k","model":"m","baseURL":"http://127.0.0.1:1/v1"}}"#
                );
                let mut run = BoundaryRun::new(&config, request, true, 0, 0.0, 0.0, 0.0, 1.0);
                assert_eq!(run.start(false), 1, "{}", run.take_output());
                assert_eq!(run.responded(200, "[]", 0.0), 0, "READ");
                let mut state = Expansion::default();
                let mut events = Vec::new();
                let mut deliver = |run: &mut BoundaryRun, mut step: u32| {
                    while step == 4 {
                        let output = run.take_output();
                        while let Some(s) = run.take_apart_with(str::to_string) {
                            state.apart.push_back(s);
                        }
                        let out = expand_result(&output, &mut state).unwrap();
                        events.extend(out["events"].as_array().unwrap().clone());
                        step = run.delivered();
                    }
                };
                for chunk in body.chunks(97) {
                    let step = run.feed(chunk);
                    deliver(&mut run, step);
                }
                let step = run.ended();
                deliver(&mut run, step);
                let (mut ids, mut texts, mut values) = (Vec::new(), Vec::new(), Vec::new());
                for ev in &events {
                    let at = |ev: &Value| ev["index"].as_u64().unwrap() as usize;
                    match ev["type"].as_str().unwrap() {
                        "tool_call_start" => {
                            assert_eq!(at(ev), ids.len(), "{}", path.display());
                            ids.push(ev["id"].clone());
                            texts.push(String::new());
                            values.push(Value::Null);
                        }
                        "tool_call_delta" => {
                            let i = at(ev);
                            assert_eq!(ev["id"], ids[i], "{}", path.display());
                            texts[i].push_str(ev["argumentsDelta"].as_str().unwrap());
                            apply_edits(&mut values[i], &ev["edits"]);
                        }
                        "tool_call" => {
                            let i = ids.iter().position(|id| *id == ev["call"]["id"]).unwrap();
                            let args = ev["call"]["arguments"].as_str().unwrap();
                            assert_eq!(texts[i], args, "{}", path.display());
                            assert_eq!(values[i], v(args), "{}", path.display());
                            checked += 1;
                        }
                        _ => {}
                    }
                }
            }
        }
        assert!(checked > 50, "{checked} calls");
    }

    /// An error after an event says so, whatever its kind: the JS half
    /// reports `eventsEmitted` from here, as the Rust driver would.
    #[cfg(feature = "openai")]
    #[test]
    fn an_error_after_an_event_says_events_were_handed_out() {
        let text = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        let huge = [b"data: ".as_slice(), &[b'x'; 100]].concat();
        for (first, then) in [(&text[..], &huge[..]), (b"", &huge[..])] {
            let mut d = BoundaryStream::new("openai", Some(64)).unwrap();
            let emitted = !first.is_empty();
            d.feed(first);
            let out = rebuild(&d.feed(then));
            assert_eq!(out["error"]["code"], "event_too_large");
            assert_eq!(out["error"]["eventsEmitted"], emitted);
            assert_eq!(out["error"]["retryable"], false);
        }
    }
}
