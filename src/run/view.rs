//! What a driver may ask of a [`RunMachine`] between its steps, without
//! changing it.

use super::{Phase, RunMachine, Step, Timers};
use crate::error::{Error, Timeout};
use crate::model::Response;

impl RunMachine {
    /// The request's timeouts. The total one runs from [`Self::start`] to
    /// the end; the others as [`Self::timer`] says.
    pub fn timers(&self) -> Timers {
        self.timers
    }

    /// The timer that runs while the driver carries out `step`, and its
    /// limit: the first-byte timer while sending, the idle timer while
    /// reading.
    pub fn timer(&self, step: &Step) -> Option<(Timeout, u64)> {
        let which = match step {
            Step::Send(_) => Timeout::FirstByte,
            Step::Read => Timeout::Idle,
            _ => return None,
        };
        Some((which, self.timers.get(which)?))
    }

    /// Whether an event has been handed out (nothing is retried after).
    pub fn events_emitted(&self) -> bool {
        self.attempts.events_emitted()
    }

    /// What the stream had assembled, once events have been handed out: a
    /// driver reports it with a failure whose error keeps none of its own
    /// (an in-band error after events, say).
    pub fn partial(&self) -> Option<Response> {
        let decoder = self.decoder.as_ref().filter(|_| self.events_emitted())?;
        Some(decoder.partial())
    }

    /// The error that ended the whole request early (an abort, the total
    /// timeout), once [`Cancel::Run`](super::Cancel::Run) was returned, with what the stream
    /// had assembled.
    pub fn stopped(&self) -> Option<Error> {
        let e = self.stop.clone()?;
        Some(self.with_partial(e))
    }

    /// How the stream ends after the events of [`Step::Deliver`]: well
    /// (`Ok`), with an error, or not yet (`None`). The JS half writes it
    /// beside the events, so that `response()` settles before the `finish`
    /// event is handed out.
    pub(crate) fn ending(&self) -> Option<Result<(), &Error>> {
        self.pending.as_ref().map(|end| end.as_ref().map(|_| ()))
    }

    /// Whether the request is over (after [`Step::Done`] or [`Step::Fail`]).
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Ended
    }
}
