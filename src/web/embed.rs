//! One embeddings call for [`super::Client::embed`]: this file runs the
//! workers of the core's [`EmbedMachine`] (send with fetch, read the body,
//! wait, start and stop the timers, cancel), all in one future, and tells
//! the machine what happened. Every decision is the machine's, the same
//! one the npm package's JS half executes (`shell/js/embed.js`): the
//! batches, how many run at once, each attempt's request, retries, the
//! halving of a batch too large, what a timer ends, and the result.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use js_sys::Function;

use super::abort::{Cut, Gate};
use super::body::{Body, ReadError};
use super::fetch::{self, Answer};
use super::js;
use super::timer::{self, Clock, Sleep, Timer};
use crate::embed::{EmbedFailure, EmbedMachine, EmbedStep};
use crate::error::Timeout;
use crate::model::Embeddings;
use crate::run::Cancel;

/// The machine, shared with the timers' callbacks (never borrowed across
/// an await; a conflict idles the worker rather than panicking).
type Shared = Rc<RefCell<EmbedMachine>>;

fn on(machine: &Shared, f: impl FnOnce(&mut EmbedMachine) -> EmbedStep) -> EmbedStep {
    match machine.try_borrow_mut() {
        Ok(mut m) => f(&mut m),
        Err(_) => EmbedStep::Idle,
    }
}

/// A timer fired for worker `w` (any, for the total one): the machine
/// says what it ends.
fn expire(machine: &Shared, gates: &[Gate], w: usize, which: Timeout) {
    let Ok(mut m) = machine.try_borrow_mut() else {
        return;
    };
    let cut = Cut::Timeout(which, m.timers().get(which).unwrap_or(0));
    match m.expired(w, which) {
        Cancel::Run => gates.iter().for_each(|g| g.stop(cut)),
        Cancel::Attempt | Cancel::Body => {
            if let Some(g) = gates.get(w) {
                g.fail(cut);
            }
        }
        Cancel::Nothing => {}
    }
}

/// The call: the machine, the fetch, and one gate per worker.
struct Call {
    machine: Shared,
    fetch: Option<Function>,
    clock: Option<Rc<Clock>>,
    gates: Rc<[Gate]>,
}

impl Drop for Call {
    /// Ends every connection still open (a drop of the future).
    fn drop(&mut self) {
        self.gates.iter().for_each(|g| g.stop(Cut::Dropped));
    }
}

/// Runs the call to its end.
pub(crate) async fn embed(
    machine: EmbedMachine,
    fetch: Option<Function>,
) -> Result<Embeddings, EmbedFailure> {
    let limits = machine.timers();
    let workers = machine.workers();
    let clock = Clock::global();
    if let Some(error) = timer::unsupported(limits, clock.as_ref()).filter(|_| workers > 0) {
        return Err(EmbedFailure::nothing_sent(error, machine.values()));
    }
    let gates: Rc<[Gate]> = (0..workers).map(|_| Gate::new()).collect();
    let call = Call {
        machine: Rc::new(RefCell::new(machine)),
        fetch,
        clock,
        gates,
    };
    let mut total = call.timer(0, Timeout::Total);
    if let (Some(t), Some(ms)) = (&mut total, limits.total_ms) {
        t.start(ms);
    }
    let futures = (0..workers)
        .map(|w| Box::pin(call.worker(w)) as Pin<Box<dyn Future<Output = ()> + '_>>)
        .map(Some)
        .collect();
    JoinAll(futures).await;
    drop(total);
    #[allow(clippy::let_and_return)] // (the borrow ends before `call` drops)
    let result = call.machine.borrow_mut().finish();
    result
}

impl Call {
    /// A timer that reports `which` for worker `w` when it fires.
    fn timer(&self, w: usize, which: Timeout) -> Option<Timer> {
        let (m, gates) = (Rc::clone(&self.machine), Rc::clone(&self.gates));
        let clock = self.clock.as_ref()?;
        Some(Timer::new(clock, move || expire(&m, &gates, w, which)))
    }

    /// Worker `w`: its steps until it is idle.
    async fn worker(&self, w: usize) {
        let Some(gate) = self.gates.get(w) else {
            return;
        };
        let mut first_byte = self.timer(w, Timeout::FirstByte);
        let mut idle = self.timer(w, Timeout::Idle);
        let mut body: Option<Body> = None;
        let mut step = on(&self.machine, |m| m.next(w));
        loop {
            let limit = self.machine.try_borrow().ok().and_then(|m| m.timer(&step));
            let alarm = match limit {
                Some((Timeout::FirstByte, _)) => first_byte.as_mut(),
                Some((Timeout::Idle, _)) => idle.as_mut(),
                _ => None,
            };
            step = match step {
                EmbedStep::Send(http) => {
                    let signal = gate.begin_attempt();
                    let request = match fetch::build(&http, signal.as_ref()) {
                        Ok(request) => request,
                        Err(e) => {
                            step = on(&self.machine, |m| m.refused(w, e));
                            continue;
                        }
                    };
                    let send = fetch::send(self.fetch.as_ref(), &request, gate);
                    let sent = timed(alarm, limit, send).await.map(|r| r.map(Answer::read));
                    let cause = match sent {
                        Ok(Ok(Ok(answer))) => {
                            body = Body::of(&answer).ok();
                            if let Some(reader) = body.as_ref().and_then(Body::reader) {
                                gate.set_reader(&reader);
                            }
                            let now = timer::now_ms();
                            step = on(&self.machine, |m| {
                                m.responded(w, answer.status, answer.headers, now)
                            });
                            continue;
                        }
                        Ok(Ok(Err(e))) => e.to_string(),
                        Ok(Err(thrown)) => js::message(&thrown),
                        // The machine knows why (the timer that fired told it).
                        Err(_) => "the attempt was cut".to_string(),
                    };
                    on(&self.machine, |m| m.unreachable(w, &cause))
                }
                EmbedStep::Read => {
                    let Some(b) = body.as_mut() else {
                        step = on(&self.machine, |m| m.ended(w));
                        continue;
                    };
                    match timed(alarm, limit, b.next(gate)).await {
                        Ok(Some(chunk)) => {
                            if let Ok(mut m) = self.machine.try_borrow_mut() {
                                m.feed(w, chunk);
                            }
                            EmbedStep::Read
                        }
                        Ok(None) => {
                            body = None;
                            on(&self.machine, |m| m.ended(w))
                        }
                        Err(ReadError::Failed(cause) | ReadError::NotBytes(cause)) => {
                            on(&self.machine, |m| m.lost(w, &cause))
                        }
                        Err(ReadError::Cut) => {
                            on(&self.machine, |m| m.lost(w, "the attempt was cut"))
                        }
                    }
                }
                EmbedStep::Wait(ms) => {
                    gate.next_attempt();
                    body = None;
                    if let Some(clock) = &self.clock {
                        // A cut ends the wait early; the machine knows why.
                        let _ = gate.guard(Sleep::new(clock, ms)).await;
                    }
                    on(&self.machine, |m| m.waited(w))
                }
                _ => break,
            };
        }
        gate.end_attempt();
    }
}

/// `future`, with `alarm` running for the step's `limit` meanwhile.
async fn timed<F: Future>(
    alarm: Option<&mut Timer>,
    limit: Option<(Timeout, u64)>,
    future: F,
) -> F::Output {
    let mut alarm = alarm.zip(limit);
    if let Some((t, (_, ms))) = &mut alarm {
        t.start(*ms);
    }
    let out = future.await;
    if let Some((t, _)) = alarm {
        t.stop();
    }
    out
}

/// Every worker's future, polled until all are done (one task: the
/// runtime is single-threaded).
struct JoinAll<'a>(Vec<Option<Pin<Box<dyn Future<Output = ()> + 'a>>>>);

impl Future for JoinAll<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut pending = false;
        for slot in self.0.iter_mut() {
            if let Some(f) = slot {
                if f.as_mut().poll(cx).is_ready() {
                    *slot = None;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}
