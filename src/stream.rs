//! [`StreamDecoder`]: response body bytes in, [`StreamEvent`]s out.

use crate::accumulate::{Accumulator, Delta};
use crate::error::Error;
use crate::providers::{FrameDecoder, Provider};
use crate::sse::{SseDecoder, SseEvent, DEFAULT_MAX_EVENT_BYTES};
use crate::types::{Raw, Response, StreamEvent};

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
    sse: SseDecoder,
    frames: FrameDecoder,
    acc: Accumulator,
    events: Vec<SseEvent>,
    deltas: Vec<Delta>,
    last_raw: Raw,
    outcome: Option<Result<Response, Error>>,
}

impl StreamDecoder {
    /// A decoder for `provider` with the default event size limit (16 MiB).
    pub fn new(provider: Provider) -> Self {
        Self::with_max_event_bytes(provider, DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder whose SSE events may hold at most `limit` bytes each.
    pub fn with_max_event_bytes(provider: Provider, limit: usize) -> Self {
        StreamDecoder {
            sse: SseDecoder::with_max_event_bytes(limit),
            frames: FrameDecoder::new(provider),
            acc: Accumulator::new(),
            events: Vec::new(),
            deltas: Vec::new(),
            last_raw: Raw::from(""),
            outcome: None,
        }
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
        self.acc.emitted()
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
        let result = self
            .sse
            .feed(chunk, &mut events)
            .and_then(|()| self.process(&mut events, out));
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
        let result = self
            .sse
            .finish(&mut events)
            .and_then(|_| self.process(&mut events, out))
            .and_then(|()| {
                let raw = self.last_raw.clone();
                self.acc.finish(&raw, out)
            });
        self.outcome = Some(result.clone());
        result
    }

    fn process(
        &mut self,
        events: &mut Vec<SseEvent>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), Error> {
        for ev in events.drain(..) {
            let mut deltas = std::mem::take(&mut self.deltas);
            let result = self.frames.frame(&ev, &mut deltas);
            if deltas.is_empty() && result.is_ok() {
                self.deltas = deltas;
                continue;
            }
            let raw = Raw::from(ev.data);
            for d in deltas.drain(..) {
                self.acc.apply(d, &raw, out);
            }
            self.deltas = deltas;
            self.last_raw = raw;
            if let Err(failure) = result {
                let partial = self
                    .acc
                    .snapshot("the stream failed while the call was open");
                return Err(failure.into_error(Some(200), self.acc.emitted(), partial));
            }
        }
        Ok(())
    }
}
