//! The seam between a body's bytes and an adapter's frames: how a
//! streamed body is cut into frames. Each adapter names its [`Framing`]
//! in its table entry (`providers/adapter.rs`); [`crate::StreamDecoder`]
//! feeds the body to that framing's [`Framer`] and hands each frame to the
//! adapter.
//!
//! A frame is an event name (optional) and its data, the shape of an
//! [`SseEvent`]: the SSE framing makes one per event, and a binary event
//! stream (AWS's, for Bedrock) would make one per message, named by its
//! `:event-type` header. Two framings: SSE (`sse.rs`) and AWS's binary
//! event stream (`eventstream.rs`, Bedrock's).

use crate::error::Error;
use crate::eventstream::{EventStreamMessage, EventStreamParser};
use crate::sse::{SseEvent, SseParser};

/// The name of a frame made of an event stream's `exception` or `error`
/// message starts with this, then the exception type (`throttlingException`)
/// or the error code; its data is the exception's JSON payload (an error
/// message's, `{"message": <:error-message>}`). Event names never start
/// with it.
pub(crate) const EXCEPTION: &str = "!";

/// One frame of a streamed body: an event name and its data.
pub(crate) type Frame = SseEvent;

/// How an adapter's streamed bodies are framed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Framing {
    /// Server-sent events (`text/event-stream`).
    Sse,
    /// Another framing, made by `cutter` (with the frame size limit) for
    /// each body, served as `media_type`. Only the adapters whose entry
    /// names one link its code (AWS's event stream: [`event_stream`]).
    #[allow(dead_code)] // (only the bedrock adapter has one)
    Other {
        media_type: &'static str,
        cutter: fn(usize) -> Box<dyn Cutter>,
    },
}

impl Framing {
    /// AWS's binary event stream (`application/vnd.amazon.eventstream`):
    /// one frame per message, named by its `:event-type`.
    #[allow(dead_code)] // (only the bedrock adapter has it)
    pub(crate) const EVENT_STREAM: Framing = Framing::Other {
        media_type: "application/vnd.amazon.eventstream",
        cutter: event_stream,
    };

    /// The media type of a stream so framed, for `accept`.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Framing::Sse => "text/event-stream",
            Framing::Other { media_type, .. } => media_type,
        }
    }
}

/// A framing other than SSE: bytes in, frames out.
pub(crate) trait Cutter {
    /// Appends to `out` every frame `chunk` completes.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), Error>;
    /// Ends the body.
    fn finish(&mut self, out: &mut Vec<Frame>) -> Result<(), Error>;
    /// The size limit for one frame.
    fn max_frame_bytes(&self) -> usize;
}

/// One body's framer: bytes in, frames out.
pub(crate) enum Framer {
    /// [`Framing::Sse`].
    Sse(SseParser),
    /// [`Framing::Other`].
    Other(Box<dyn Cutter>),
}

impl std::fmt::Debug for Framer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Framer::Sse(sse) => f.debug_tuple("Sse").field(sse).finish(),
            Framer::Other(_) => f.write_str("Other"),
        }
    }
}

impl Framer {
    /// A framer for `framing` whose frames hold at most `limit` bytes each.
    pub(crate) fn new(framing: Framing, limit: usize) -> Self {
        match framing {
            Framing::Sse => Framer::Sse(SseParser::with_max_event_bytes(limit)),
            Framing::Other { cutter, .. } => Framer::Other(cutter(limit)),
        }
    }

    /// Appends to `out` every frame `chunk` completes.
    #[inline]
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.feed(chunk, out),
            Framer::Other(cutter) => cutter.feed(chunk, out),
        }
    }

    /// Ends the body: appends the last frame if it was complete.
    pub(crate) fn finish(&mut self, out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.finish(out).map(|_| ()),
            Framer::Other(cutter) => cutter.finish(out),
        }
    }

    /// Takes back a frame's strings once they are no longer needed, to hold
    /// later frames' (no allocation per frame).
    #[inline]
    pub(crate) fn recycle(&mut self, data: Option<String>, name: Option<String>) {
        if let Framer::Sse(sse) = self {
            sse.recycle(data, name);
        }
    }

    /// The size limit for one frame.
    pub(crate) fn max_frame_bytes(&self) -> usize {
        match self {
            Framer::Sse(sse) => sse.max_event_bytes(),
            Framer::Other(cutter) => cutter.max_frame_bytes(),
        }
    }
}

/// [`Framing::EVENT_STREAM`]'s cutter.
#[allow(dead_code)] // (only the bedrock adapter has it)
fn event_stream(limit: usize) -> Box<dyn Cutter> {
    Box::new(EventStreamFramer {
        parser: EventStreamParser::with_max_message_bytes(limit),
        framed: None,
        messages: Vec::new(),
    })
}

/// AWS's event stream as frames, and what the body's first byte showed:
/// `None` before it came, `Some(false)` for a body that is JSON (an error
/// body sent with status 200: left to the decoder, which reads a body
/// without frames whole), `Some(true)` for messages.
struct EventStreamFramer {
    parser: EventStreamParser,
    framed: Option<bool>,
    messages: Vec<EventStreamMessage>,
}

impl Cutter for EventStreamFramer {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), Error> {
        // A message starts with its length, u32 BE: its first byte is 0
        // below 16 MiB, never `{`, `[` or whitespace.
        let Some(&first) = chunk.first() else {
            return Ok(());
        };
        let framed = *self
            .framed
            .get_or_insert(!matches!(first, b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n'));
        if !framed {
            return Ok(());
        }
        // The messages before a broken one are framed first.
        let fed = self.parser.feed(chunk, &mut self.messages);
        for message in self.messages.drain(..) {
            out.push(frame_of(message)?);
        }
        fed
    }

    /// A message cut off leaves its bytes: the stream ended early, which
    /// the decoder reports (no terminal frame came).
    fn finish(&mut self, _out: &mut Vec<Frame>) -> Result<(), Error> {
        self.parser.finish();
        Ok(())
    }

    fn max_frame_bytes(&self) -> usize {
        self.parser.max_message_bytes()
    }
}

/// One event stream message as a frame: an `event` by its `:event-type`;
/// an `exception` or `error` named [`EXCEPTION`] and its type or code. A
/// payload that is not UTF-8 is a malformed stream.
#[allow(dead_code)] // (only the bedrock adapter has it)
fn frame_of(message: EventStreamMessage) -> Result<Frame, Error> {
    let kind = message.header(":message-type").unwrap_or("event");
    let (event, data) = match kind {
        "error" => {
            let code = message.header(":error-code").unwrap_or("error");
            let text = message.header(":error-message").unwrap_or_default();
            let mut body = crate::json::write::Out::default();
            body.object().str("message", text);
            (
                format!("{EXCEPTION}{code}"),
                body.finish().unwrap_or_default(),
            )
        }
        _ => {
            let event = match kind {
                "exception" => {
                    let name = message.header(":exception-type").unwrap_or("exception");
                    format!("{EXCEPTION}{name}")
                }
                _ => message
                    .header(":event-type")
                    .unwrap_or_default()
                    .to_string(),
            };
            let data = String::from_utf8(message.payload).map_err(|_| Error::MalformedStream {
                message: format!("event stream: the payload of a {event} message is not UTF-8"),
                events_emitted: false,
                partial: Box::default(),
            })?;
            (event, data)
        }
    };
    Ok(Frame {
        event: Some(event),
        data,
    })
}
