//! The seam between a body's bytes and an adapter's frames: how a
//! streamed body is cut into frames. Each adapter names its [`Framing`]
//! in its table entry (`providers/adapter.rs`); [`crate::StreamDecoder`]
//! feeds the body to that framing's [`Framer`] and hands each frame to the
//! adapter.
//!
//! A frame is an event name (optional) and its data, the shape of an
//! [`SseEvent`]: the SSE framing makes one per event, and a binary event
//! stream (AWS's, for Bedrock) would make one per message, named by its
//! `:event-type` header. SSE (`sse.rs`) is the only framing today.

use crate::error::Error;
use crate::sse::{SseEvent, SseParser};

/// One frame of a streamed body: an event name and its data.
pub(crate) type Frame = SseEvent;

/// How an adapter's streamed bodies are framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events (`text/event-stream`).
    Sse,
}

/// One body's framer: bytes in, frames out.
#[derive(Debug)]
pub(crate) enum Framer {
    /// [`Framing::Sse`].
    Sse(SseParser),
}

impl Framer {
    /// A framer for `framing` whose frames hold at most `limit` bytes each.
    pub(crate) fn new(framing: Framing, limit: usize) -> Self {
        match framing {
            Framing::Sse => Framer::Sse(SseParser::with_max_event_bytes(limit)),
        }
    }

    /// Appends to `out` every frame `chunk` completes.
    #[inline]
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.feed(chunk, out),
        }
    }

    /// Ends the body: appends the last frame if it was complete.
    pub(crate) fn finish(&mut self, out: &mut Vec<Frame>) -> Result<(), Error> {
        match self {
            Framer::Sse(sse) => sse.finish(out).map(|_| ()),
        }
    }

    /// Takes back a frame's strings once they are no longer needed, to hold
    /// later frames' (no allocation per frame).
    #[inline]
    pub(crate) fn recycle(&mut self, data: Option<String>, name: Option<String>) {
        match self {
            Framer::Sse(sse) => sse.recycle(data, name),
        }
    }

    /// The size limit for one frame.
    pub(crate) fn max_frame_bytes(&self) -> usize {
        match self {
            Framer::Sse(sse) => sse.max_event_bytes(),
        }
    }
}
