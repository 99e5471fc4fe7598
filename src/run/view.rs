//! What a driver may ask of a [`RunMachine`] between its steps, without
//! changing it.

use super::{Phase, RunMachine, Source, Step, Timers};
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
    /// (a connection failure, a timeout or an abort, say; a stream's own
    /// errors, an event over the size limit and an in-band error after
    /// events keep theirs, [`Error::partial`]).
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

    /// The most one streamed event may hold: the client's own config's
    /// limit, for the whole chain.
    pub(super) fn max_event_bytes(&self) -> usize {
        let own = match &self.source {
            Source::Encode { chain, .. } => chain.max_event_bytes(),
            Source::Given => None,
        };
        own.unwrap_or(crate::sse::DEFAULT_MAX_EVENT_BYTES)
    }

    /// Whether the request is over (after [`Step::Done`] or [`Step::Fail`]).
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Ended
    }
}

#[cfg(all(test, feature = "openai"))]
mod tests {
    use crate::{ClientConfig, Error, Message, Provider, Request, RetryPolicy, RunMachine};
    use crate::{Step, Timers};

    fn machine(config: ClientConfig) -> RunMachine {
        let request = Request {
            messages: vec![Message::user("Hi")],
            ..Request::default()
        };
        let retry = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        RunMachine::new(config, request, true, retry, Timers::default(), 1)
    }

    /// The first event of `bytes` bytes, as a stream's step.
    fn one_event(m: &mut RunMachine, bytes: usize) -> Step {
        assert!(matches!(m.start(), Step::Send(_)));
        assert!(matches!(m.responded(200, Vec::new(), 0), Step::Read));
        let event = format!("data: {}\n\n", "x".repeat(bytes));
        m.feed(event.as_bytes(), &mut Vec::new())
    }

    /// A `retry-after` date is read against the driver's clock, and not
    /// at all without one (0): never as decades to wait.
    #[test]
    fn a_retry_after_date_needs_the_drivers_clock() {
        let config = ClientConfig::new(Provider::OpenAi).with_model("m");
        let date = "Wed, 21 Oct 2026 07:28:30 GMT";
        let at_date_ms = 1_792_567_710_000;
        let waited = |now_ms: u64| {
            let mut m = machine(config.clone());
            assert!(matches!(m.start(), Step::Send(_)));
            let headers = vec![("retry-after".to_string(), date.to_string())];
            assert!(matches!(m.responded(429, headers, now_ms), Step::Read));
            let read = m.feed(br#"{"error":{"message":"slow down"}}"#, &mut Vec::new());
            assert!(matches!(read, Step::Read), "{read:?}");
            match m.ended(&mut Vec::new()) {
                Step::Fail(e) => e.retry_after_ms(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(waited(at_date_ms - 1_500), Some(1_500));
        assert_eq!(waited(0), None);
    }

    #[test]
    fn the_configs_limit_bounds_one_event_and_the_default_is_32_mib() {
        let config = ClientConfig::new(Provider::OpenAi).with_model("m");
        let mut small = machine(config.clone().with_max_event_bytes(1024));
        let Step::Fail(Error::EventTooLarge { limit, .. }) = one_event(&mut small, 2048) else {
            panic!("an event over the config's limit fails");
        };
        assert_eq!(limit, 1024);
        let mut default = machine(config);
        assert_eq!(default.max_event_bytes(), 32 * 1024 * 1024);
        assert!(!matches!(one_event(&mut default, 2048), Step::Fail(_)));
    }
}
