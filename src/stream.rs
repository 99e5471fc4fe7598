//! [`StreamDecoder`]: response body bytes in, [`StreamEvent`]s out.

use crate::accumulate::{kept_frame, Accumulator, Delta, Progress};
use crate::error::Error;
use crate::framing::{Frame, Framer};
use crate::json;
use crate::json::partial::Edit;
use crate::model::{PartialEvents, Raw, Response, StreamEvent};
use crate::providers::{FrameDecoder, FrameFailure, Provider};
use crate::sse::DEFAULT_MAX_EVENT_BYTES;

/// Why a call still open when the stream failed is incomplete.
const STOPPED_WITH_CALL_OPEN: &str = "the stream failed while the call was open";

/// A frame kept for later events: shared already, or its text.
#[derive(Debug)]
enum LastFrame {
    Shared(Raw),
    Text(String),
}

impl LastFrame {
    fn shared(&mut self) -> Raw {
        let raw = match self {
            LastFrame::Shared(raw) => return raw.clone(),
            LastFrame::Text(text) => Raw::from(std::mem::take(text)),
        };
        *self = LastFrame::Shared(raw.clone());
        raw
    }
}

/// Decodes one streamed response: feed it the body's bytes as they arrive,
/// then call [`finish`](Self::finish) at the end of the body.
///
/// ```
/// use skyl::{Provider, StreamDecoder, StreamEvent};
///
/// let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
/// let mut decoder = StreamDecoder::new(Provider::OpenAi);
/// let mut events = Vec::new();
/// for chunk in body.chunks(7) {
///     decoder.feed(chunk, &mut events).unwrap();
/// }
/// let response = decoder.finish(&mut events).unwrap();
/// assert_eq!(response.text, "Hi");
/// assert!(matches!(&events[0], StreamEvent::Text { text, .. } if text == "Hi"));
/// ```
///
/// Failures never lose what came before: events already pushed stay in the
/// output, stream errors carry the partial [`Response`], and
/// [`partial`](Self::partial) returns it at any time. After an error the
/// decoder keeps returning that error.
#[derive(Debug)]
pub struct StreamDecoder {
    /// Cuts the body into frames, as the adapter's framing says.
    framer: Framer,
    frames: FrameDecoder,
    acc: Accumulator,
    events: Vec<Frame>,
    deltas: Vec<Delta>,
    /// The last frame that had deltas (the frame of the final events).
    last_frame: LastFrame,
    /// Passed with deltas that never keep their frame.
    no_frame: Raw,
    outcome: Option<Result<Response, Error>>,
    /// Whether a finished response is kept for a second `finish` (the run
    /// machine never asks twice: it keeps none, so that a large response is
    /// not held twice).
    keep_response: bool,
    /// The body so far while no SSE event has come (up to the event size
    /// limit; `None` once one has, past the limit, or once the body cannot
    /// be JSON): a body without SSE framing (a JSON error, or a whole
    /// response from a server that ignored `stream`) is read as one frame
    /// at the end.
    unframed: Option<Vec<u8>>,
}

impl StreamDecoder {
    /// A decoder for `provider` with the default event size limit (32 MiB).
    pub fn new(provider: Provider) -> Self {
        Self::with_max_event_bytes(provider, DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder whose SSE events may hold at most `limit` bytes each.
    pub fn with_max_event_bytes(provider: Provider, limit: usize) -> Self {
        let frames = FrameDecoder::new(provider);
        StreamDecoder {
            framer: Framer::new(frames.framing(), limit),
            frames,
            acc: Accumulator::new(),
            events: Vec::new(),
            deltas: Vec::new(),
            last_frame: LastFrame::Text(String::new()),
            no_frame: Raw::from(""),
            outcome: None,
            keep_response: true,
            unframed: Some(Vec::new()),
        }
    }

    /// Hands out the progress events `which` asks for besides the usual
    /// ones ([`StreamEvent::ToolCallStart`], [`StreamEvent::ToolCallDelta`],
    /// [`StreamEvent::OutputDelta`]), as a driver does for
    /// [`Request::partial`](crate::Request::partial).
    pub fn with_partial_events(self, which: PartialEvents) -> Self {
        self.with_progress(Progress {
            which,
            edits: false,
        })
    }

    pub(crate) fn with_progress(mut self, progress: Progress) -> Self {
        self.acc.set_progress(progress);
        self
    }

    /// The edits of the progress events made so far (see [`Progress::edits`]).
    pub(crate) fn take_edits(&mut self) -> Vec<Vec<Edit>> {
        self.acc.take_edits()
    }

    /// Decodes a whole body at once: every event, then the outcome.
    pub fn decode_all(
        provider: Provider,
        body: &[u8],
    ) -> (Vec<StreamEvent>, Result<Response, Error>) {
        let mut decoder = StreamDecoder::new(provider);
        let mut out = Vec::new();
        let result = decoder
            .feed(body, &mut out)
            .and_then(|()| decoder.finish(&mut out));
        (out, result)
    }

    /// Whether any event has been handed out (retrying is safe only before).
    pub fn events_emitted(&self) -> bool {
        self.acc.events_emitted()
    }

    /// Whether the provider's terminal frame has been seen.
    pub fn is_complete(&self) -> bool {
        self.acc.terminal()
    }

    /// Everything assembled so far; open tool calls are listed as incomplete.
    pub fn partial(&self) -> Response {
        self.acc.snapshot("the call was still open")
    }

    /// Decodes `chunk`, pushing the events it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), Error> {
        if let Some(outcome) = &self.outcome {
            return Err(match outcome {
                Err(e) => e.clone(),
                Ok(_) => Error::invalid_response("the stream was already finished"),
            });
        }
        let mut events = std::mem::take(&mut self.events);
        let fed = self.framer.feed(chunk, &mut events);
        if let Some(body) = &mut self.unframed {
            if !events.is_empty()
                || body.len() + chunk.len() > self.framer.max_frame_bytes()
                || !may_be_json(body, chunk)
            {
                self.unframed = None;
            } else {
                body.extend_from_slice(chunk);
            }
        }
        // The frames before a failure are decoded first: nothing is lost;
        // a broken frame (a bad CRC) ends the stream with what came.
        let result = self.process(&mut events, out).and_then(|()| match fed {
            Err(Error::MalformedStream { message, .. }) => {
                let raw = self.no_frame.clone();
                self.apply(
                    &mut Vec::new(),
                    Err(FrameFailure::Malformed(message)),
                    &raw,
                    out,
                )
            }
            other => other.map_err(|e| self.with_what_came(e)),
        });
        events.clear();
        self.events = events;
        if let Err(e) = &result {
            self.outcome = Some(Err(e.clone()));
        }
        result
    }

    /// Ends the body: decodes what is left and returns the response, or the
    /// error if the stream was cut short or broken.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<Response, Error> {
        if let Some(outcome) = &self.outcome {
            return outcome.clone();
        }
        let mut events = Vec::new();
        // (A framing finds an event over the limit while fed; this is for
        // one that would find it at the end.)
        let result = (self.framer.finish(&mut events))
            .map_err(|e| self.with_what_came(e))
            .and_then(
                |()| match self.unframed.take().filter(|_| events.is_empty()) {
                    Some(body) => self.unframed_body(&body, &mut events, out),
                    None => Ok(()),
                },
            )
            .and_then(|()| self.process(&mut events, out))
            .and_then(|()| {
                let raw = self.last_frame.shared();
                // What the adapter still held (a call waiting for the next
                // frame), then the end.
                let mut held = Vec::new();
                self.frames.end(&mut held);
                self.apply(&mut held, Ok(()), &raw, out)?;
                self.acc.finish(&raw, out)
            });
        self.outcome = Some(match &result {
            Ok(_) if !self.keep_response => Ok(Response::default()),
            other => other.clone(),
        });
        result
    }

    /// For a caller that calls [`Self::finish`] once: a second call would
    /// get an empty response.
    pub(crate) fn finished_once(mut self) -> Self {
        self.keep_response = false;
        self
    }

    /// For a caller that takes the response from the
    /// [`StreamEvent::Finish`] event and derives its `text` and `reasoning`
    /// from its parts (the JS boundary): see
    /// [`Accumulator::finish_in_event`]. [`Self::finish`] then returns an
    /// empty response.
    pub(crate) fn finished_in_event(mut self) -> Self {
        self.acc.finish_in_event();
        self.finished_once()
    }

    /// A body with no SSE framing at all: a whole response (a server or
    /// proxy that ignored `stream`) is decoded as that response; other JSON
    /// (an error payload) is read as one frame; anything else is left to
    /// end the stream early.
    fn unframed_body(
        &mut self,
        body: &[u8],
        events: &mut Vec<Frame>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), Error> {
        let data = crate::sse::utf8(body).trim().to_string();
        if !data.starts_with(['{', '[']) {
            return Ok(());
        }
        let whole = json::read::parse(&data)
            .ok()
            .and_then(|value| self.frames.whole_body(&value));
        let Some(decoded) = whole else {
            events.push(Frame { event: None, data });
            return Ok(());
        };
        let raw = kept_frame(&data, decoded.as_deref().unwrap_or_default(), &[]);
        self.last_frame = LastFrame::Shared(raw.clone());
        let (mut deltas, result) = match decoded {
            Ok(deltas) => (deltas, Ok(())),
            Err(failure) => (Vec::new(), Err(failure)),
        };
        self.apply(&mut deltas, result, &raw, out)
    }

    /// A framing's error with what had been handed out and assembled (an
    /// event over the limit, found before the decoder had it).
    fn with_what_came(&self, e: Error) -> Error {
        match e {
            Error::EventTooLarge { limit, .. } => Error::EventTooLarge {
                limit,
                events_emitted: self.acc.events_emitted(),
                partial: Box::new(self.acc.snapshot(STOPPED_WITH_CALL_OPEN)),
            },
            other => other,
        }
    }

    /// Applies a frame's deltas (decoded from the frame `raw`), then its
    /// failure, if any, as the stream's error with what was assembled.
    fn apply(
        &mut self,
        deltas: &mut Vec<Delta>,
        result: Result<(), FrameFailure>,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), Error> {
        for d in deltas.drain(..) {
            self.acc.apply(d, raw, out);
        }
        if let Err(failure) = result {
            let partial = self.acc.snapshot(STOPPED_WITH_CALL_OPEN);
            return Err(failure.into_error(Some(200), self.acc.events_emitted(), partial));
        }
        Ok(())
    }

    fn process(
        &mut self,
        events: &mut Vec<Frame>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), Error> {
        self.acc.begin_batch();
        let result = self.process_frames(events, out);
        self.acc.end_batch(out);
        result
    }

    /// Keeps the frame just decoded as the last one (`shared`: as its
    /// events have it) and gives the SSE parser back a spare string.
    fn settle_frame(&mut self, shared: Option<Raw>, data: String, event: Option<String>) {
        let spare = match shared {
            Some(raw) => {
                self.last_frame = LastFrame::Shared(raw);
                Some(data)
            }
            None => match std::mem::replace(&mut self.last_frame, LastFrame::Text(data)) {
                LastFrame::Text(text) => Some(text),
                LastFrame::Shared(_) => None,
            },
        };
        self.framer.recycle(spare, event);
    }

    /// The frames of [`Self::process`].
    fn process_frames(
        &mut self,
        events: &mut Vec<Frame>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), Error> {
        for ev in events.drain(..) {
            let mut deltas = std::mem::take(&mut self.deltas);
            let result = self.frames.frame(&ev, &self.acc, &mut deltas);
            if deltas.is_empty() && result.is_ok() {
                self.deltas = deltas;
                self.framer.recycle(Some(ev.data), ev.event);
                continue;
            }
            // Most frames (argument fragments) never reach an event: their
            // text is not copied into a shared frame unless it will be.
            // With progress events, a frame of call pieces alone is lent to
            // them: one copies it into its event, or into the event it
            // joins, only then. Strings no longer needed go back to the SSE
            // parser for reuse. The decoder keeps one spare: the frame's
            // text once copied, or else the frame text this one replaces.
            let keep = deltas.iter().any(Delta::keeps_frame);
            let lend =
                !keep && self.acc.progress_tools() && deltas.iter().any(Delta::is_tool_piece);
            let raw = if keep {
                kept_frame(&ev.data, &deltas, self.acc.made())
            } else {
                self.no_frame.clone()
            };
            let applied = if lend {
                self.acc.lend_frame(ev.data);
                let applied = self.apply(&mut deltas, result, &raw, out);
                let data = self.acc.take_frame();
                self.settle_frame(None, data, ev.event);
                applied
            } else {
                // (Before the deltas are applied: a large frame's text is
                // freed before its event's copies are made.)
                self.settle_frame(keep.then(|| raw.clone()), ev.data, ev.event);
                self.apply(&mut deltas, result, &raw, out)
            };
            self.deltas = deltas;
            applied?;
        }
        Ok(())
    }
}

/// Whether a body that begins with `body` then `chunk` may still be JSON
/// for [`StreamDecoder::unframed_body`], which reads only a body whose text,
/// trimmed, starts with `{` or `[`: false once its first byte that is not
/// ASCII whitespace is another ASCII byte. (A non-ASCII byte may begin
/// Unicode whitespace, which the trim removes: such a body is kept.) An SSE
/// body starts with `data:`, `event:` or `:`, so a large first event is not
/// copied twice.
fn may_be_json(body: &[u8], chunk: &[u8]) -> bool {
    let space = |b: &&u8| matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r');
    match body.iter().chain(chunk).find(|b| !space(b)) {
        Some(&b) => b == b'{' || b == b'[' || !b.is_ascii(),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    /// An SSE body is not also kept as a possible unframed body once its
    /// first byte shows it is not JSON (a large first event would be held
    /// twice); JSON after whitespace still is.
    #[test]
    fn an_sse_body_is_not_kept_as_an_unframed_one() {
        let mut d = StreamDecoder::new(Provider::OpenAi);
        let mut out = Vec::new();
        d.feed(b"\r\n ", &mut out).unwrap();
        assert!(d.unframed.is_some());
        d.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"H", &mut out)
            .unwrap();
        assert!(d.unframed.is_none());
        for (body, json) in [
            (&b" \n\t{}"[..], true),
            (b"[", true),
            (b"\xC2\xA0{", true),
            (b"", true),
            (b": ping", false),
            (b"event: x", false),
            (b"\xEF\xBB\xBFdata", true),
        ] {
            assert_eq!(may_be_json(b"", body), json, "{body:?}");
            assert_eq!(
                may_be_json(body, b"x"),
                json && !body.is_empty(),
                "{body:?}"
            );
        }
    }

    /// A whole response where a stream was asked for (a server that
    /// ignored `stream`) is one frame: its file event's frame is kept
    /// without the file's base64, as a streamed one is.
    #[cfg(feature = "gemini")]
    #[test]
    fn a_whole_body_keeps_its_file_out_of_its_frame() {
        let body = br#"{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"QUJDRA=="}}],"role":"model"},"finishReason":"STOP","index":0}]}"#;
        let (events, result) = StreamDecoder::decode_all(Provider::Gemini, body);
        assert_eq!(result.unwrap().files().count(), 1);
        let raw = events
            .iter()
            .find_map(|e| match e {
                StreamEvent::File { raw, .. } => Some(raw),
                _ => None,
            })
            .unwrap();
        assert!(!raw.contains("QUJDRA=="), "{raw}");
        assert!(raw.contains("<skyl: 8 bytes of base64, in the event's file.data>"));
    }

    /// An event over the limit after others keeps what came, and says that
    /// events had been handed out, whether or not its line has ended (the
    /// framing finds it while fed); before any, it says none were.
    #[cfg(feature = "anthropic")]
    #[test]
    fn an_event_over_the_limit_keeps_what_came() {
        let frames = [
            r#"{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ];
        let body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        let big = format!("data: {}", "x".repeat(4096));
        for tail in [format!("{big}\n\n"), big] {
            let mut d = StreamDecoder::with_max_event_bytes(Provider::Anthropic, 1024);
            let mut out = Vec::new();
            d.feed(body.as_bytes(), &mut out).unwrap();
            assert!(!out.is_empty());
            let e = d.feed(tail.as_bytes(), &mut out).unwrap_err();
            assert!(
                matches!(e, Error::EventTooLarge { limit: 1024, .. }),
                "{e:?}"
            );
            assert!(e.events_emitted() && !e.retryable());
            assert_eq!(e.partial().map(|p| &*p.text), Some("Hi"));
            // The decoder ends with the same error.
            assert_eq!(d.finish(&mut out).unwrap_err(), e);
        }
        let mut d = StreamDecoder::with_max_event_bytes(Provider::Anthropic, 1024);
        let e = d
            .feed(b"data: {\"x\":\"", &mut Vec::new())
            .and_then(|()| d.feed("x".repeat(2048).as_bytes(), &mut Vec::new()));
        let e = e.unwrap_err();
        assert!(!e.events_emitted() && e.partial().is_some_and(|p| p.text.is_empty()));
    }

    /// Each event's `raw` is its own frame, whether or not the frames in
    /// between were copied (argument fragments are not).
    #[cfg(feature = "anthropic")]
    #[test]
    fn events_carry_their_own_frames() {
        let frames = [
            r#"{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        let (events, result) = StreamDecoder::decode_all(Provider::Anthropic, body.as_bytes());
        assert!(result.is_ok());
        let raws: Vec<(&str, &str)> = events
            .iter()
            .map(|e| match e {
                StreamEvent::ToolCall {
                    call: ToolCall { arguments, .. },
                    raw,
                } => {
                    assert_eq!(arguments, r#"{"a":1}"#);
                    ("tool_call", &**raw)
                }
                StreamEvent::Usage { raw, .. } => ("usage", &**raw),
                StreamEvent::Finish { raw, .. } => ("finish", &**raw),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            raws,
            [
                // (Handed out at the frame that says how the message
                // ended: see the Anthropic decoder's module doc.)
                ("tool_call", frames[5]),
                ("usage", frames[5]),
                ("finish", frames[6])
            ]
        );
    }
}
