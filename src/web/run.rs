//! One request from start to end, for both [`super::EventStream`] and
//! [`super::Client::complete`]: this file carries out the steps of the
//! core's [`RunMachine`] (send with fetch, read the body, wait, start and
//! stop the timers, cancel) and tells it what happened.
//!
//! Every decision is the machine's, the same one the npm package's JS half
//! executes: the attempts and their encoded requests, which timer runs
//! when and what it ends when it fires, the error of each failure with its
//! request id, whether and how long to wait before the next attempt, and
//! when decoded events are handed out.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::abort::{Cut, Gate};
use super::body::{Body, ReadError};
use super::fetch::{self, Answer};
use super::google_token::Tokens;
use super::js;
use super::timer::{self, Clock, Sleep, Timer};
use crate::error::{Error, Timeout};
use crate::http::HttpRequest;
use crate::model::{FailedAttempt, Response, StreamEvent};
use crate::providers::vertex::takes_token;
use crate::providers::ClientConfig;
use crate::run::{Cancel, RunMachine, Step, Timers};

/// Where a request's response comes from: a fetch (the global one when
/// `None`), or a body the caller already has.
pub(crate) enum Source {
    Send(Option<Function>),
    Given(JsValue),
}

/// One request.
pub(crate) struct Run {
    /// Shared with the timers' callbacks, which report to it when they fire.
    machine: Rc<RefCell<RunMachine>>,
    source: Source,
    gate: Gate,
    clock: Option<Rc<Clock>>,
    /// The machine's timeouts (they never change).
    limits: Timers,
    alarms: Alarms,
    /// The body of the current attempt's response.
    body: Option<Body>,
    /// Vertex AI's tokens from a service account, and the one this run
    /// gave the machine last.
    tokens: Option<Rc<Tokens>>,
    given: Option<String>,
    /// The tokens' config cannot take them: the run's only step.
    refused: Option<Error>,
}

/// Gives `f` the machine. The machine is never borrowed across an await
/// and a timer's callback never runs inside a borrow, but a conflict is an
/// error rather than a panic.
fn on(machine: &RefCell<RunMachine>, f: impl FnOnce(&mut RunMachine) -> Step) -> Step {
    match machine.try_borrow_mut() {
        Ok(mut m) => f(&mut m),
        Err(_) => Step::Fail(Error::invalid_request(
            "driver",
            "the run machine was busy (a reentrant call)",
        )),
    }
}

/// The timer `which` fired: the machine says what it ends.
fn expire(machine: &RefCell<RunMachine>, gate: &Gate, which: Timeout) {
    let Ok(mut m) = machine.try_borrow_mut() else {
        return;
    };
    let cut = Cut::Timeout(which, m.timers().get(which).unwrap_or(0));
    match m.expired(which) {
        Cancel::Run => gate.stop(cut),
        // The body's end (after the terminal frame) is the attempt's: the
        // read is woken and the machine ends the stream cleanly.
        Cancel::Attempt | Cancel::Body => gate.fail(cut),
        Cancel::Nothing => {}
    }
}

/// The three timers (none in a runtime without `setTimeout`), each
/// reporting to the machine when it fires.
struct Alarms {
    total: Option<Timer>,
    first_byte: Option<Timer>,
    idle: Option<Timer>,
}

impl Alarms {
    fn get(&mut self, which: Timeout) -> Option<&mut Timer> {
        match which {
            Timeout::Total => self.total.as_mut(),
            Timeout::FirstByte => self.first_byte.as_mut(),
            Timeout::Idle => self.idle.as_mut(),
        }
    }

    /// Starts the timer the machine runs during a step
    /// ([`RunMachine::timer`]), if it has one.
    fn start(&mut self, timer: Option<(Timeout, u64)>) {
        if let Some((which, ms)) = timer {
            if let Some(t) = self.get(which) {
                t.start(ms);
            }
        }
    }

    fn stop(&mut self, timer: Option<(Timeout, u64)>) {
        if let Some(t) = timer.and_then(|(which, _)| self.get(which)) {
            t.stop();
        }
    }
}

impl Run {
    pub(crate) fn new(machine: RunMachine, source: Source) -> Run {
        let gate = Gate::new();
        let clock = Clock::global();
        let limits = machine.timers();
        let machine = Rc::new(RefCell::new(machine));
        let timer = |which| {
            let (m, g) = (Rc::clone(&machine), gate.clone());
            Some(Timer::new(clock.as_ref()?, move || expire(&m, &g, which)))
        };
        Run {
            alarms: Alarms {
                total: timer(Timeout::Total),
                first_byte: timer(Timeout::FirstByte),
                idle: timer(Timeout::Idle),
            },
            limits,
            machine,
            source,
            gate,
            clock,
            body: None,
            tokens: None,
            given: None,
            refused: None,
        }
    }

    /// With a service account's tokens, given to each attempt: for a
    /// config that can take them (Vertex AI's, no API key or fixed token),
    /// else the run fails by name before anything is sent.
    pub(crate) fn with_tokens(mut self, tokens: Option<Rc<Tokens>>, config: &ClientConfig) -> Self {
        if tokens.is_some() {
            self.refused = takes_token(config, "serviceAccount").err();
        }
        self.tokens = tokens;
        self
    }

    /// Refused with `error` before anything is sent (a key in a browser
    /// page), whatever else would be.
    pub(crate) fn refusing(mut self, error: Option<Error>) -> Self {
        if error.is_some() {
            self.refused = error;
        }
        self
    }

    /// Before an attempt of the client's own provider (entry 0 of the
    /// chain; a fallback's has its own credentials): a valid token for
    /// the machine (a refused one forgotten first), if the client has a
    /// service account.
    async fn renew(&mut self) -> Result<(), Error> {
        let Some(tokens) = self.tokens.clone() else {
            return Ok(());
        };
        let at = self
            .machine
            .try_borrow()
            .map(|m| (m.entry(), m.stale_token()));
        let Ok((0, stale)) = at else {
            return Ok(());
        };
        if let (Some(0), Some(given)) = (stale, &self.given) {
            tokens.forget(given);
        }
        let fetch = match &self.source {
            Source::Send(fetch) => fetch.clone(),
            Source::Given(_) => return Ok(()),
        };
        match tokens.get(fetch.as_ref(), &self.gate).await {
            Ok(token) => {
                if let Ok(mut m) = self.machine.try_borrow_mut() {
                    m.set_access_token(0, token.clone());
                }
                self.given = Some(token);
                Ok(())
            }
            // A cut: the machine's own reason (an abort, the total timeout).
            Err(e) => Err(self
                .machine
                .try_borrow()
                .ok()
                .and_then(|m| m.stopped())
                .unwrap_or(e)),
        }
    }

    /// The request's cancellation state (the stream aborts through it when
    /// dropped).
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The providers of the fallback chain that failed before the current
    /// one ([`RunMachine::failed_attempts`]; scrubbed of the chain's keys).
    pub(crate) fn failed_attempts(&self) -> Vec<FailedAttempt> {
        (self.machine.try_borrow())
            .map(|m| m.failed_attempts().to_vec())
            .unwrap_or_default()
    }

    /// Starts the total timeout and the first step; an error if a timeout
    /// was asked for in a runtime without timers.
    async fn begin(&mut self) -> Step {
        let limits = self.limits;
        if let Some(e) = timer::unsupported(limits, self.clock.as_ref()) {
            return Step::Fail(e);
        }
        // A service account's exchange is sent only for a request that
        // will go: a config that takes the token, and the request.
        if let Some(e) = self.refused.take() {
            return Step::Fail(e);
        }
        let checked = match (&self.tokens, self.machine.try_borrow_mut()) {
            (Some(_), Ok(mut m)) => m.check_for_token(),
            _ => Ok(()),
        };
        if let Err(e) = checked {
            return Step::Fail(e);
        }
        let total = limits.total_ms.map(|ms| (Timeout::Total, ms));
        self.alarms.start(total);
        // (A token that could not be had: the machine decides, as for an
        // attempt that failed.)
        if let Err(e) = self.renew().await {
            return on(&self.machine, |m| m.unsigned(e));
        }
        on(&self.machine, |m| {
            m.at(super::timer::now_ms());
            m.start()
        })
    }

    /// Carries out steps until one for the caller: deliver, done or fail.
    async fn drive(&mut self, mut step: Step, out: &mut Vec<StreamEvent>) -> Step {
        loop {
            // The timer that runs during the step, as the machine says.
            let timer = self.machine.try_borrow().ok().and_then(|m| m.timer(&step));
            step = match step {
                Step::Send(http) => self.send(&http, timer).await,
                Step::Take => self.take(),
                Step::Read => self.read(out, timer).await,
                Step::Wait(ms) => self.wait(ms).await,
                // (The machine scrubs the tokens it was given; a driver's
                // own error, from the exchange, too.)
                Step::Fail(mut e) => {
                    if let Some(token) = &self.given {
                        e.scrub(token);
                    }
                    return Step::Fail(e);
                }
                end => return end,
            };
        }
    }

    /// Sends an attempt's request, with the step's `timer` running.
    async fn send(&mut self, http: &HttpRequest, timer: Option<(Timeout, u64)>) -> Step {
        self.body = None;
        let Source::Send(fetch) = &self.source else {
            return on(&self.machine, |m| m.unreachable("no request to send"));
        };
        let signal = self.gate.begin_attempt();
        let request = match fetch::build(http, signal.as_ref()) {
            Ok(request) => request,
            Err(e) => return on(&self.machine, |m| m.refused(e)),
        };
        self.alarms.start(timer);
        let sent = fetch::send(fetch.as_ref(), &request, &self.gate).await;
        self.alarms.stop(timer);
        match sent {
            Ok(Ok(value)) => match Answer::read(value) {
                Ok(answer) => self.responded(answer),
                Err(e) => Step::Fail(e),
            },
            // The machine knows why (the timer that fired told it).
            Err(_) => on(&self.machine, |m| m.unreachable("the attempt was cut")),
            Ok(Err(thrown)) => {
                let cause = js::message(&thrown);
                on(&self.machine, |m| m.unreachable(&cause))
            }
        }
    }

    /// Takes the body the caller gave, as a response.
    fn take(&mut self) -> Step {
        let Source::Given(value) = &self.source else {
            return Step::Fail(Error::invalid_request("driver", "no body was given"));
        };
        let answer = if js::method(value, "getReader").is_some() {
            Answer {
                status: 200,
                headers: Vec::new(),
                body: Some(value.clone()),
                response: value.clone(),
            }
        } else {
            match Answer::read(value.clone()) {
                Ok(answer) => answer,
                // The caller's argument, named as the JS `decodeStream`
                // names it.
                Err(_) => {
                    return Step::Fail(Error::invalid_request(
                        "body",
                        format!(
                            "must be a ReadableStream or a Response, not {}",
                            js::describe(value)
                        ),
                    ))
                }
            }
        };
        self.responded(answer)
    }

    /// The response's status and headers go to the machine; its body is
    /// read next (an error response's as far as it can be).
    fn responded(&mut self, answer: Answer) -> Step {
        self.body = match Body::of(&answer) {
            Ok(body) => {
                if let Some(reader) = body.reader() {
                    self.gate.set_reader(&reader);
                }
                Some(body)
            }
            Err(message) if answer.ok() => return Step::Fail(Error::InvalidResponse { message }),
            Err(_) => None,
        };
        let now = timer::now_ms();
        on(&self.machine, |m| {
            m.responded(answer.status, answer.headers, now)
        })
    }

    /// Reads chunks, the step's `timer` guarding each, until the machine
    /// asks for something else (a chunk that completes no event is
    /// followed by the next read).
    async fn read(&mut self, out: &mut Vec<StreamEvent>, timer: Option<(Timeout, u64)>) -> Step {
        loop {
            let Some(body) = self.body.as_mut() else {
                return on(&self.machine, |m| m.ended(out));
            };
            self.alarms.start(timer);
            let read = body.next(&self.gate).await;
            self.alarms.stop(timer);
            let step = match read {
                Ok(Some(chunk)) => on(&self.machine, |m| m.feed(chunk, out)),
                Ok(None) => on(&self.machine, |m| m.ended(out)),
                // (A chunk that is not bytes ends the body as a break does.)
                Err(ReadError::Failed(cause) | ReadError::NotBytes(cause)) => {
                    on(&self.machine, |m| m.lost(&cause, out))
                }
                // The machine knows why (the timer that fired told it).
                Err(ReadError::Cut) => on(&self.machine, |m| m.lost("the attempt was cut", out)),
            };
            if !matches!(step, Step::Read) {
                return step;
            }
        }
    }

    /// Closes the failed attempt's connection, then waits; the total
    /// timeout or a drop ends the wait.
    async fn wait(&mut self, ms: u64) -> Step {
        self.gate.next_attempt();
        self.body = None;
        // (0 ms: the switch to a fallback, or a token to renew.)
        if let Some(clock) = self.clock.as_ref().filter(|_| ms > 0) {
            // A cut ends the wait early; the machine knows why.
            let _ = self.gate.guard(Sleep::new(clock, ms)).await;
        }
        if let Err(e) = self.renew().await {
            return on(&self.machine, |m| m.unsigned(e));
        }
        on(&self.machine, |m| {
            m.at(super::timer::now_ms());
            m.waited()
        })
    }

    /// What a step the caller handles means: `None` when events were
    /// decoded (in `out`), else the outcome.
    fn outcome(step: Step) -> Option<Result<Response, Error>> {
        match step {
            Step::Deliver => None,
            Step::Done(response) => Some(Ok(*response)),
            Step::Fail(e) => Some(Err(e)),
            other => Some(Err(Error::invalid_request(
                "driver",
                format!("the run machine asked for {other:?} out of turn"),
            ))),
        }
    }

    // ------------------------------------------------------ the stream

    /// Starts the stream: `None` when its first events are in `out`, else
    /// its outcome (an error before any event, after the retries).
    pub(crate) async fn open(
        &mut self,
        out: &mut Vec<StreamEvent>,
    ) -> Option<Result<Response, Error>> {
        let first = self.begin().await;
        Self::outcome(self.drive(first, out).await)
    }

    /// The next events, once the last ones were handed out: `None` while
    /// the stream goes on, else its outcome.
    pub(crate) async fn pull(
        &mut self,
        out: &mut Vec<StreamEvent>,
    ) -> Option<Result<Response, Error>> {
        let next = on(&self.machine, RunMachine::delivered);
        Self::outcome(self.drive(next, out).await)
    }

    // ------------------------------------------------- the whole body

    /// The whole response, retrying while the policy allows.
    pub(crate) async fn complete(&mut self) -> Result<Response, Error> {
        let first = self.begin().await;
        let mut out = Vec::new();
        let end = self.drive(first, &mut out).await;
        Self::outcome(end).unwrap_or_else(|| {
            Err(Error::invalid_request(
                "driver",
                "events were decoded from a response that is not streamed",
            ))
        })
    }
}

impl Drop for Run {
    /// Ends the connection if the body was not read to its end (an error,
    /// a drop); the timers are cleared as they drop.
    fn drop(&mut self) {
        self.gate.end_attempt();
    }
}
