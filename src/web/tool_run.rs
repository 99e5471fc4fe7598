//! [`ToolRun`]: the tool loop from Rust on wasm32. The core's
//! [`Runner`] decides (which calls run and when, what goes back, when the
//! run stops); this file carries it out, as the npm package's
//! `shell/js/tool-run.js` does: it streams each step through
//! [`Client::stream`], runs the handlers (each as a task of its own, so
//! they overlap), asks the approver, and hands every event out as it
//! happens.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use serde_json::Value;
use web_sys::AbortController;

use super::client::Client;
use super::timer::{self, Clock, Sleep};
use super::tools::{Decision, Handler, RunEvent, RunFailure, RunOptions, RunOutcome, ToolContext};
use crate::error::Error;
use crate::json::read;
use crate::model::{FailedAttempt, Part, Request, StreamEvent, ToolCall};
use crate::policy::scrub_in;
use crate::runner::{Job, Next, Outcome, Runner, StopReason, ToolSpec};

/// A tool that ended, with its outcome.
type Ended = (Job, Outcome);

/// What the driver, the tools' tasks and the [`ToolRun`] share.
#[derive(Default)]
struct Shared {
    events: RefCell<VecDeque<RunEvent>>,
    ended: RefCell<VecDeque<Ended>>,
    /// The poller to wake when a tool ends.
    waker: RefCell<Option<Waker>>,
    /// The running tools' controllers (by a token of their own), aborted
    /// with the run.
    controllers: RefCell<Vec<(u64, AbortController)>>,
    stopped: Cell<bool>,
    /// The failing step's chain: who failed before its last provider.
    failed_attempts: RefCell<Vec<FailedAttempt>>,
}

impl Shared {
    fn push(&self, event: RunEvent) {
        self.events.borrow_mut().push_back(event);
    }

    /// Aborts every running tool's signal; no outcome counts after it.
    fn stop(&self) {
        self.stopped.set(true);
        let running: Vec<_> = self.controllers.borrow_mut().drain(..).collect();
        for (_, c) in running {
            c.abort();
        }
    }
}

type Driver = Pin<Box<dyn Future<Output = Result<(), Error>>>>;

impl Client {
    /// Runs the tool loop for `request`: streams each step, runs the
    /// `handlers` of its calls, sends the results back, until the model
    /// answers or a limit, a cut-off turn, an approval or a call of a tool
    /// without a handler stops it. Every decision is the core's
    /// [`Runner`](crate::Runner), as in the npm package's `client.run`;
    /// each step's request has this client's retries and timeouts.
    ///
    /// ```no_run
    /// use skyl::web::{Client, Handler, RunEvent, RunOptions};
    /// use skyl::Request;
    ///
    /// # async fn run(client: Client, request: Request) -> Result<(), skyl::web::RunFailure> {
    /// let weather = Handler::new("get_weather", |args, _context| async move {
    ///     Ok(format!("21 C in {}", args["city"].as_str().unwrap_or("?")))
    /// })
    /// .read_only();
    /// let mut run = client.run(&request, vec![weather], RunOptions::default());
    /// while let Some(Ok(event)) = run.next().await {
    ///     if let RunEvent::ToolResult { call, duration_ms, .. } = event {
    ///         println!("{} took {duration_ms} ms", call.name);
    ///     }
    /// }
    /// let outcome = run.result().await?;
    /// println!("{:?}: {} new messages", outcome.stop_reason, outcome.messages.len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn run(&self, request: &Request, handlers: Vec<Handler>, options: RunOptions) -> ToolRun {
        ToolRun::new(self, request, handlers, options)
    }
}

/// A running tool loop ([`Client::run`]): a `futures_core::Stream` of
/// [`RunEvent`]s, then its [`RunOutcome`] ([`ToolRun::result`]).
///
/// Nothing is sent until it is first polled. Dropping it, or
/// [`ToolRun::abort`], stops the run: the stream's fetch is aborted, every
/// running tool's signal too, and nothing starts or is sent after it.
pub struct ToolRun {
    /// `None`: the request was refused before anything was sent.
    runner: Option<Rc<RefCell<Runner>>>,
    shared: Rc<Shared>,
    driver: Option<Driver>,
    /// The run's end: `Ok` once the runner stopped, or the error.
    end: Option<Result<(), Error>>,
    /// The end's error is yet to be handed out as an item.
    error_due: bool,
    secrets: Vec<String>,
}

impl ToolRun {
    pub(crate) fn new(
        client: &Client,
        request: &Request,
        handlers: Vec<Handler>,
        options: RunOptions,
    ) -> Self {
        let specs = (request.tools.iter())
            .map(|t| {
                let mut spec = ToolSpec::new(t.name.clone(), t.parameters.clone());
                let handler = handlers.iter().find(|h| h.name == t.name);
                spec.executable = handler.is_some();
                spec.read_only = handler.is_some_and(|h| h.read_only);
                spec
            })
            .collect();
        // (A key in a browser page: refused before a tool of the history runs.)
        let checked = check_handlers(&handlers, request)
            .and_then(|()| client.exposed().map_or(Ok(()), Err))
            .and_then(|()| client.check_final_answer(request, options.limits));
        let handlers = Rc::new(handlers);
        let asked = |c: &ToolCall| asks(&handlers, c);
        let made = checked.and_then(|()| {
            Runner::new(
                request.clone(),
                specs,
                options.limits,
                &options.approvals,
                &asked,
            )
        });
        let shared = Rc::new(Shared::default());
        let mut run = ToolRun {
            runner: None,
            shared: Rc::clone(&shared),
            driver: None,
            end: None,
            error_due: false,
            secrets: client.secrets(),
        };
        match made {
            Ok(runner) => {
                let runner = Rc::new(RefCell::new(runner));
                run.driver = Some(Box::pin(drive(
                    client.clone(),
                    handlers,
                    options,
                    Rc::clone(&runner),
                    shared,
                )));
                run.runner = Some(runner);
            }
            Err(e) => run.finish(Err(e)),
        }
        run
    }

    /// The next event, `None` at the end (the same as `StreamExt::next`).
    /// An error ends the run; [`ToolRun::result`] has it, with what the
    /// run had done.
    pub async fn next(&mut self) -> Option<Result<RunEvent, Error>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Runs to the end (dropping the events not yet taken): the outcome,
    /// or why it failed and what it had done.
    pub async fn result(mut self) -> Result<RunOutcome, RunFailure> {
        while let Some(item) = self.next().await {
            if item.is_err() {
                break;
            }
        }
        let outcome = self.outcome();
        let error = match self.end.take() {
            Some(Ok(())) => return Ok(outcome),
            Some(Err(error)) => error,
            None => Error::aborted(None, false),
        };
        Err(RunFailure {
            error,
            partial: outcome,
            failed_attempts: self.shared.failed_attempts.take(),
        })
    }

    /// Stops the run: its stream and every running tool's signal; nothing
    /// starts or is sent after it. The events end with
    /// [`Error::Aborted`], and [`ToolRun::result`] fails with it.
    pub fn abort(&mut self) {
        if self.end.is_some() {
            return;
        }
        let began = self.runner.as_ref().is_some_and(|r| r.borrow().step() > 0);
        self.finish(Err(Error::aborted(None, began)));
    }

    fn finish(&mut self, end: Result<(), Error>) {
        // Dropping the driver drops the step's stream: its fetch is aborted.
        self.driver = None;
        match end {
            Ok(()) => {
                // A tool still running (an early start of a turn that was
                // cut off) is aborted: nothing runs on after the run.
                self.shared.stop();
                self.end = Some(Ok(()));
            }
            Err(mut e) => {
                // Every call of the turn gets a result: the messages replay.
                if let Some(runner) = &self.runner {
                    runner.borrow_mut().abort();
                }
                self.shared.stop();
                super::events::scrub_all(&mut e, &self.secrets);
                self.end = Some(Err(e));
                self.error_due = true;
            }
        }
    }

    fn outcome(&self) -> RunOutcome {
        let Some(runner) = &self.runner else {
            return RunOutcome {
                messages: Vec::new(),
                steps: Vec::new(),
                stop_reason: StopReason::Aborted,
                usage: Default::default(),
                pending: Vec::new(),
            };
        };
        let r = runner.borrow();
        RunOutcome {
            messages: r.messages().to_vec(),
            steps: r.steps().to_vec(),
            stop_reason: r.stop_reason().unwrap_or(StopReason::Aborted),
            usage: r.usage().clone(),
            pending: r.pending().to_vec(),
        }
    }
}

impl Stream for ToolRun {
    type Item = Result<RunEvent, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.shared.events.borrow_mut().pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            *self.shared.waker.borrow_mut() = Some(cx.waker().clone());
            let Some(driver) = self.driver.as_mut() else {
                // The error once, as the last item.
                if std::mem::take(&mut self.error_due) {
                    if let Some(Err(e)) = &self.end {
                        return Poll::Ready(Some(Err(e.clone())));
                    }
                }
                return Poll::Ready(None);
            };
            match driver.as_mut().poll(cx) {
                Poll::Ready(end) => self.finish(end),
                Poll::Pending if self.shared.events.borrow().is_empty() => return Poll::Pending,
                Poll::Pending => {}
            }
        }
    }
}

impl Drop for ToolRun {
    fn drop(&mut self) {
        self.shared.stop();
    }
}

impl fmt::Debug for ToolRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRun")
            .field("step", &self.runner.as_ref().map(|r| r.borrow().step()))
            .field("ended", &self.end.is_some())
            .finish()
    }
}

/// Whether `call` needs an approval, by its handler.
fn asks(handlers: &[Handler], call: &ToolCall) -> bool {
    let Some(asks) = handlers
        .iter()
        .find(|h| h.name == call.name)
        .and_then(|h| h.asks.as_ref())
    else {
        return false;
    };
    let args = read::parse(&call.arguments).unwrap_or(Value::Null);
    asks(&args, call)
}

/// The handlers' own mistakes, refused before anything is sent: a handler
/// for a tool the request does not declare (the model could never call it,
/// and the tool it was meant for would be handed back), and a timeout of 0.
fn check_handlers(handlers: &[Handler], request: &Request) -> Result<(), Error> {
    for (i, h) in handlers.iter().enumerate() {
        if !request.tools.iter().any(|t| t.name == h.name) {
            let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            let known = match names.is_empty() {
                true => "it declares none".to_string(),
                false => format!("its tools: {}", names.join(", ")),
            };
            return Err(Error::invalid_request(
                format!("handlers[{i}].name"),
                format!("{:?} is not a tool of the request ({known})", h.name),
            ));
        }
        if h.timeout_ms == Some(0) {
            return Err(Error::invalid_request(
                format!("handlers[{i}].timeout_ms"),
                "must be 1 ms or more",
            ));
        }
    }
    Ok(())
}

/// The loop: what the runner says, carried out.
async fn drive(
    client: Client,
    handlers: Rc<Vec<Handler>>,
    options: RunOptions,
    runner: Rc<RefCell<Runner>>,
    shared: Rc<Shared>,
) -> Result<(), Error> {
    let tools = Rc::new(Tools {
        handlers: Rc::clone(&handlers),
        shared: Rc::clone(&shared),
        clock: timer::Clock::global(),
        client: client.clone(),
        running: Cell::new(0),
        next_token: Cell::new(0),
        max: options.max_concurrency.unwrap_or(usize::MAX),
        queued: RefCell::new(VecDeque::new()),
    });
    let mut next = runner.borrow_mut().start();
    loop {
        next = match next {
            Next::Request(request) => {
                let step = runner.borrow().step();
                shared.push(RunEvent::StepStart { step });
                let mut stream = client.stream(&request);
                // Each call's answer, asked once: the streamed call (for an
                // early start) is the turn's.
                let mut answered: Vec<(ToolCall, bool)> = Vec::new();
                while let Some(item) = stream.next().await {
                    let event = item.inspect_err(|_| {
                        *shared.failed_attempts.borrow_mut() = stream.failed_attempts().to_vec();
                    })?;
                    let whole = match &event {
                        StreamEvent::ToolCall { call, .. } => Some(call.clone()),
                        _ => None,
                    };
                    shared.push(RunEvent::Stream { step, event });
                    if let Some(call) = whole {
                        let asked = asks(&handlers, &call);
                        answered.push((call.clone(), asked));
                        let job = runner.borrow_mut().call_whole(&call, &|_| asked);
                        if let Some(job) = job {
                            Tools::start(&tools, job);
                        }
                    }
                }
                let response = stream.response().await?;
                shared.push(RunEvent::StepFinish {
                    step,
                    response: Box::new(response.clone()),
                });
                let asks = |c: &ToolCall| match answered.iter().find(|(a, _)| a == c) {
                    Some((_, asked)) => *asked,
                    None => asks(&handlers, c),
                };
                let next = runner.borrow_mut().finish_step(response, &asks);
                next
            }
            Next::Run(jobs) => {
                for job in jobs {
                    Tools::start(&tools, job);
                }
                Next::Wait
            }
            Next::Approve(jobs) => {
                for job in &jobs {
                    shared.push(RunEvent::ApprovalRequest {
                        step: job.step,
                        call: job.call.clone(),
                    });
                }
                match &options.approver {
                    None => runner.borrow_mut().pause_for_approval(),
                    Some(approve) => {
                        let mut next = Next::Wait;
                        for job in jobs {
                            let decision = approve(job.call.clone(), job.args.clone()).await;
                            let (yes, reason) = match &decision {
                                Decision::Approve => (true, None),
                                Decision::Deny(reason) => (false, reason.as_deref()),
                            };
                            next = runner.borrow_mut().decide(&job.call.id, yes, reason);
                        }
                        next
                    }
                }
            }
            Next::Wait => {
                let (job, outcome) = tools.next_ended().await?;
                let next = runner.borrow_mut().tool_done(&job.call.id, outcome);
                next
            }
            _ => return Ok(()),
        };
    }
}

fn result_part(call_id: &str, outcome: &Outcome) -> Part {
    let (content, is_error) = match outcome {
        Outcome::Done(text) => (text.clone(), false),
        Outcome::Failed(text) => (text.clone(), true),
        #[allow(unreachable_patterns)]
        _ => (String::new(), true),
    };
    Part::ToolResult {
        call_id: call_id.to_string(),
        content,
        is_error,
        provider_data: None,
    }
}

/// The running tools, shared with their tasks: a task that ends frees its
/// slot and starts the next queued call at once.
struct Tools {
    handlers: Rc<Vec<Handler>>,
    shared: Rc<Shared>,
    clock: Option<Rc<Clock>>,
    /// Its secrets are scrubbed out of every tool's text, read when the
    /// tool ends (a service account's token may be new since the start).
    client: Client,
    running: Cell<usize>,
    next_token: Cell<u64>,
    max: usize,
    queued: RefCell<VecDeque<Job>>,
}

impl Tools {
    /// Starts `job` as a task of its own (or queues it, at the limit).
    fn start(tools: &Rc<Tools>, job: Job) {
        let shared = &tools.shared;
        if shared.stopped.get() {
            return;
        }
        if tools.running.get() >= tools.max {
            tools.queued.borrow_mut().push_back(job);
            return;
        }
        let Some(handler) = tools
            .handlers
            .iter()
            .find(|h| h.name == job.call.name)
            .cloned()
        else {
            return;
        };
        tools.running.set(tools.running.get() + 1);
        shared.push(RunEvent::ToolStart {
            step: job.step,
            call: job.call.clone(),
        });
        let token = tools.next_token.get();
        tools.next_token.set(token + 1);
        let controller = AbortController::new().ok();
        if let Some(c) = &controller {
            shared.controllers.borrow_mut().push((token, c.clone()));
        }
        let context = ToolContext {
            call: job.call.clone(),
            step: job.step,
            signal: controller.as_ref().map(AbortController::signal),
        };
        let began = timer::now_ms();
        let work = (handler.run)(job.args.clone(), context);
        let tools = Rc::clone(tools);
        wasm_bindgen_futures::spawn_local(async move {
            let timeout = handler.timeout_ms.zip(tools.clock.clone());
            let outcome = match timeout {
                Some((ms, clock)) => match first(work, Sleep::new(&clock, ms)).await {
                    Some(done) => done,
                    None => {
                        if let Some(c) = &controller {
                            c.abort();
                        }
                        Err(format!("the tool timed out after {ms} ms"))
                    }
                },
                None => work.await,
            };
            tools.ended(token, job, outcome, timer::now_ms().saturating_sub(began));
        });
    }

    /// A task ended: its event goes out at once (completion order), its
    /// outcome waits for the loop, its slot goes to the next queued call.
    fn ended(self: &Rc<Self>, token: u64, job: Job, outcome: Result<String, String>, ms: u64) {
        let shared = &self.shared;
        shared.controllers.borrow_mut().retain(|(t, _)| *t != token);
        self.running.set(self.running.get().saturating_sub(1));
        if shared.stopped.get() {
            return;
        }
        let secrets = self.client.secrets();
        let scrubbed = |mut text: String| {
            for secret in &secrets {
                scrub_in(&mut text, secret);
            }
            text
        };
        let outcome = match outcome {
            Ok(text) => Outcome::Done(scrubbed(text)),
            Err(message) => Outcome::Failed(scrubbed(message)),
        };
        shared.push(RunEvent::ToolResult {
            step: job.step,
            call: job.call.clone(),
            result: result_part(&job.call.id, &outcome),
            duration_ms: ms,
        });
        shared.ended.borrow_mut().push_back((job, outcome));
        let next = self.queued.borrow_mut().pop_front();
        if let Some(next) = next {
            Tools::start(self, next);
        }
        let waker = shared.waker.borrow_mut().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next tool to end, for the loop.
    async fn next_ended(&self) -> Result<Ended, Error> {
        let idle = self.running.get() == 0 && self.queued.borrow().is_empty();
        if idle && self.shared.ended.borrow().is_empty() {
            return Err(Error::invalid_request(
                "driver",
                "the run waits for no tool",
            ));
        }
        let ended = poll_fn(|cx| match self.shared.ended.borrow_mut().pop_front() {
            Some(ended) => Poll::Ready(ended),
            None => {
                *self.shared.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        Ok(ended)
    }
}

/// `work`'s output, or `None` if `timer` ends first.
async fn first<T>(mut work: Pin<Box<dyn Future<Output = T>>>, mut timer: Sleep) -> Option<T> {
    poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        match Pin::new(&mut timer).poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
