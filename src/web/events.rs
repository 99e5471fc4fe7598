//! [`EventStream`]: a streamed response as a `futures_core::Stream` of
//! events, and its final [`Response`].

use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::stream::FusedStream;
use futures_core::Stream;

use super::abort::{Cut, Gate};
use super::run::Run;
use crate::error::Error;
use crate::model::{FailedAttempt, Response, StreamEvent};

/// The events a step of the run decoded, and the outcome if the stream
/// ended.
type Decoded = (Vec<StreamEvent>, Option<Result<Response, Error>>);

/// What a step gives back: the run, and what it decoded.
type Step = (Box<Run>, Decoded);

enum State {
    /// Not started, or between reads: the next poll reads on.
    Idle { run: Box<Run>, opened: bool },
    /// Reading: the step owns the run until it ends.
    Busy(Pin<Box<dyn Future<Output = Step>>>),
    /// The stream is over.
    Done,
}

/// `e` without any of `secrets` (the keys of a client and its fallback).
pub(crate) fn scrub_all(e: &mut Error, secrets: &[String]) {
    for secret in secrets {
        e.scrub(secret);
    }
}

/// The events of one streamed response, as they arrive, then its
/// [`Response`] ([`EventStream::response`]).
///
/// It implements [`futures_core::Stream`] (`Item = Result<StreamEvent,
/// Error>`), so any `StreamExt` works on it; [`EventStream::next`] needs
/// none. Nothing is sent until it is first polled. Retries happen only
/// before the first event; after an error the stream ends (the error is its
/// last item, and [`EventStream::response`] returns it too).
///
/// Dropping it before the end aborts the fetch: the server sees the
/// connection close, and its timers are cleared.
pub struct EventStream {
    state: State,
    queue: VecDeque<StreamEvent>,
    /// The outcome, once known.
    outcome: Option<Result<Response, Error>>,
    /// The outcome's error is yet to be handed out as an item.
    error_due: bool,
    /// Scrubbed out of every error.
    secrets: Vec<String>,
    gate: Option<Gate>,
    /// The providers that failed before the last, once the stream is over.
    attempts: Vec<FailedAttempt>,
}

impl EventStream {
    pub(crate) fn new(run: Run, secrets: Vec<String>) -> Self {
        let gate = Some(run.gate().clone());
        EventStream {
            state: State::Idle {
                run: Box::new(run),
                opened: false,
            },
            queue: VecDeque::new(),
            outcome: None,
            error_due: false,
            secrets,
            gate,
            attempts: Vec::new(),
        }
    }

    /// With a fallback chain ([`super::Client::with_fallback`]): the
    /// providers that failed before the one that answered or failed last,
    /// in order, once the stream is over (before, none). On success they
    /// are the response's `attempts` too; after a failure, only here (the
    /// error is the last provider's). Read it before
    /// [`EventStream::response`], which takes the stream.
    pub fn failed_attempts(&self) -> &[FailedAttempt] {
        &self.attempts
    }

    /// The next event, `None` at the end (the same as `StreamExt::next`).
    pub async fn next(&mut self) -> Option<Result<StreamEvent, Error>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// The final [`Response`], reading (and dropping) the events not yet
    /// taken; or the error that ended the stream.
    pub async fn response(mut self) -> Result<Response, Error> {
        while self.next().await.is_some() {}
        match self.outcome.take() {
            Some(outcome) => outcome,
            None => Err(Error::aborted(None, false)),
        }
    }

    /// Ends the stream with the outcome of a step.
    fn end(&mut self, outcome: Result<Response, Error>) {
        self.state = State::Done;
        self.gate = None;
        let outcome = outcome.map_err(|mut e| {
            scrub_all(&mut e, &self.secrets);
            e
        });
        self.error_due = outcome.is_err();
        self.outcome = Some(outcome);
    }
}

impl Stream for EventStream {
    type Item = Result<StreamEvent, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => {
                    self.state = State::Done;
                    if self.error_due {
                        self.error_due = false;
                        if let Some(Err(e)) = &self.outcome {
                            return Poll::Ready(Some(Err(e.clone())));
                        }
                    }
                    return Poll::Ready(None);
                }
                State::Idle { mut run, opened } => {
                    self.state = State::Busy(Box::pin(async move {
                        let mut out = Vec::new();
                        let end = if opened {
                            run.pull(&mut out).await
                        } else {
                            run.open(&mut out).await
                        };
                        (run, (out, end))
                    }));
                }
                State::Busy(mut step) => match step.as_mut().poll(cx) {
                    Poll::Pending => {
                        self.state = State::Busy(step);
                        return Poll::Pending;
                    }
                    Poll::Ready((run, (events, end))) => {
                        self.queue.extend(events);
                        match end {
                            None => self.state = State::Idle { run, opened: true },
                            Some(outcome) => {
                                self.attempts = run.failed_attempts();
                                drop(run);
                                self.end(outcome);
                            }
                        }
                    }
                },
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let queued = self.queue.len();
        match self.state {
            State::Done => {
                let left = queued + usize::from(self.error_due);
                (left, Some(left))
            }
            _ => (queued, None),
        }
    }
}

impl FusedStream for EventStream {
    fn is_terminated(&self) -> bool {
        matches!(self.state, State::Done) && self.queue.is_empty() && !self.error_due
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        if let Some(gate) = &self.gate {
            gate.stop(Cut::Dropped);
        }
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Idle { opened: false, .. } => "not started",
            State::Idle { .. } | State::Busy(_) => "streaming",
            State::Done => "done",
        };
        f.debug_struct("EventStream")
            .field("state", &state)
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}
