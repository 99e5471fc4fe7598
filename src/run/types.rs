//! The run machine's vocabulary: the timers it is given, the steps it
//! asks of a driver and what a fired timer cancels.

#[cfg(doc)]
use super::RunMachine;
use crate::error::{Error, Timeout};
use crate::http::HttpRequest;
use crate::model::Response;

/// The timeouts of a request, in milliseconds; `None` for no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timers {
    /// The whole request, retries and their waits included
    /// ([`Timeout::Total`]).
    pub total_ms: Option<u64>,
    /// From sending to the response's status and headers
    /// ([`Timeout::FirstByte`]).
    pub first_byte_ms: Option<u64>,
    /// Between two chunks of the body ([`Timeout::Idle`]).
    pub idle_ms: Option<u64>,
}

impl Timers {
    /// The three limits.
    pub fn new(total_ms: Option<u64>, first_byte_ms: Option<u64>, idle_ms: Option<u64>) -> Self {
        Timers {
            total_ms,
            first_byte_ms,
            idle_ms,
        }
    }

    /// The limit of `which`.
    pub fn get(&self, which: Timeout) -> Option<u64> {
        match which {
            Timeout::Total => self.total_ms,
            Timeout::FirstByte => self.first_byte_ms,
            Timeout::Idle => self.idle_ms,
        }
    }

    /// A limit of 0 ms would end every attempt at once: an
    /// [`Error::InvalidRequest`] naming it (`timeout.firstByte`), before
    /// anything is sent. (`None` is no limit.)
    pub(crate) fn check(&self) -> Result<(), Error> {
        for which in [Timeout::Total, Timeout::FirstByte, Timeout::Idle] {
            if self.get(which) == Some(0) {
                let path = format!("timeout.{}", which.name());
                return Err(Error::invalid_request(path, "must be 1 ms or more"));
            }
        }
        Ok(())
    }
}

/// What the driver does next.
#[derive(Debug)]
#[must_use]
#[non_exhaustive]
pub enum Step {
    /// Send this request, a new attempt, with the first-byte timer running
    /// ([`RunMachine::timer`]); then [`RunMachine::responded`] with the
    /// response's status and headers, or [`RunMachine::unreachable`].
    Send(HttpRequest),
    /// Take the response the driver was given ([`RunMachine::given`]), as
    /// if it had been sent: then [`RunMachine::responded`] (a bare body:
    /// status 200, no headers).
    Take,
    /// Read the next chunk of the body, with the idle timer running; then
    /// [`RunMachine::feed`], [`RunMachine::ended`] or [`RunMachine::lost`].
    Read,
    /// Close the failed attempt's connection, wait this many milliseconds,
    /// then [`RunMachine::waited`].
    Wait(u64),
    /// Hand the events out (the stream's), then [`RunMachine::delivered`].
    Deliver,
    /// The request succeeded.
    Done(Box<Response>),
    /// The request failed; for a stream, what was received is the
    /// error's [`Error::partial`] or else [`RunMachine::partial`].
    Fail(Error),
}

/// What the driver cancels now, after [`RunMachine::expired`] or
/// [`RunMachine::abort`]. Whatever it was awaiting then completes (or
/// fails) and is reported as usual: the machine knows why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cancel {
    /// Nothing (a timer that fired too late to matter).
    Nothing,
    /// The body's reader: the stream was already complete, so the body
    /// ends there, successfully.
    Body,
    /// The attempt's request and body reader.
    Attempt,
    /// The request, its body reader and any retry wait: the whole request
    /// ends with [`RunMachine::stopped`].
    Run,
}

/// Where a request is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Ready,
    Sending,
    /// The body of a successful response.
    Reading,
    /// The body of an error response.
    ReadingError,
    Waiting,
    Delivering,
    Ended,
}
