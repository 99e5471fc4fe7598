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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events (`text/event-stream`).
    Sse,
    /// AWS's binary event stream (`application/vnd.amazon.eventstream`):
    /// one frame per message, named by its `:event-type`.
    #[allow(dead_code)] // (only the bedrock adapter has it)
    EventStream,
}

impl Framing {
    /// The media type of a stream so framed, for `accept`.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Framing::Sse => "text/event-stream",
            Framing::EventStream => "application/vnd.amazon.eventstream",
        }
    }
}

/// One body's framer: bytes in, frames out.
#[derive(Debug)]
pub(crate) enum Framer {
    /// [`Framing::Sse`].
    Sse(SseParser),
    /// [`Framing::EventStream`], and what the body's first byte showed:
    /// `None` before it came, `Some(false)` for a body that is JSON (an
    /// error body sent with status 200: left to the decoder, which reads
    /// a body without frames whole), `Some(true)` for messages.
    EventStream(EventStreamParser, Option<bool>, Vec<EventStreamMessage>),
}

impl Framer {
    /// A framer for `framing` whose frames hold at most `limit` bytes each.
    pub(crate) fn new(framing: Framing, limit: usize) -> Self {
        match framing {
            Framing::Sse => Framer::Sse(SseParser::with_max_event_bytes(limit)),
            Framing::EventStream => Framer::EventStream(
                EventStreamParser::with_max_message_bytes(limit),
                None,
                Vec::new(),
            ),
        }
    }

    /// Appends to `out` every frame `chunk` completes.
    #[inline]
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.feed(chunk, out),
            Framer::EventStream(parser, framed, messages) => {
                // A message starts with its length, u32 BE: its first byte
                // is 0 below 16 MiB, never `{`, `[` or whitespace.
                let framed = *framed.get_or_insert_with(|| {
                    !matches!(
                        chunk.first(),
                        Some(b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n')
                    )
                });
                if !framed || chunk.is_empty() {
                    return Ok(());
                }
                // The messages before a broken one are framed first.
                let fed = parser.feed(chunk, messages);
                for message in messages.drain(..) {
                    out.push(frame_of(message)?);
                }
                fed
            }
        }
    }

    /// Ends the body: appends the last frame if it was complete.
    pub(crate) fn finish(&mut self, out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.finish(out).map(|_| ()),
            // A message cut off leaves its bytes: the stream ended early,
            // which the decoder reports (no terminal frame came).
            Framer::EventStream(parser, ..) => {
                parser.finish();
                Ok(())
            }
        }
    }

    /// Takes back a frame's strings once they are no longer needed, to hold
    /// later frames' (no allocation per frame).
    #[inline]
    pub(crate) fn recycle(&mut self, data: Option<String>, name: Option<String>) {
        match self {
            Framer::Sse(sse) => sse.recycle(data, name),
            Framer::EventStream(..) => {}
        }
    }

    /// The size limit for one frame.
    pub(crate) fn max_frame_bytes(&self) -> usize {
        match self {
            Framer::Sse(sse) => sse.max_event_bytes(),
            Framer::EventStream(parser, ..) => parser.max_message_bytes(),
        }
    }
}

/// One event stream message as a frame: an `event` by its `:event-type`;
/// an `exception` or `error` named [`EXCEPTION`] and its type or code. A
/// payload that is not UTF-8 is a malformed stream.
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
