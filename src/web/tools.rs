//! What [`Client::run`](super::Client::run) takes and gives: the tools'
//! handlers, the run's options, its events and its outcome. The loop's
//! decisions are the core's [`Runner`](crate::Runner), as in the npm
//! package's `client.run`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde_json::Value;
use web_sys::AbortSignal;

use crate::error::Error;
use crate::model::{FailedAttempt, Message, Part, Response, StreamEvent, ToolCall, Usage};
use crate::runner::{RunLimits, StopReason};

/// What a tool's handler returns: its result as text, or the message the
/// model reads when it failed (never a stack or a key).
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<String, String>>>>;

type Run = Rc<dyn Fn(Value, ToolContext) -> ToolFuture>;
type Asks = Rc<dyn Fn(&Value, &ToolCall) -> bool>;
type Approver = Rc<dyn Fn(ToolCall, Value) -> Pin<Box<dyn Future<Output = Decision>>>>;

/// What a handler gets besides the arguments.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolContext {
    /// The call.
    pub call: ToolCall,
    /// The step (1-based) whose turn made the call; 0 for a call of the
    /// history.
    pub step: u32,
    /// Aborted when the run is aborted or dropped, or the tool's timeout
    /// passes (`None` in a runtime without `AbortController`).
    pub signal: Option<AbortSignal>,
}

/// A tool the run executes: the name it has in [`crate::Request::tools`]
/// and its async handler, which gets the parsed arguments (already checked
/// against the tool's schema).
#[derive(Clone)]
pub struct Handler {
    pub(crate) name: String,
    pub(crate) run: Run,
    pub(crate) read_only: bool,
    pub(crate) asks: Option<Asks>,
    pub(crate) timeout_ms: Option<u64>,
}

impl Handler {
    /// The handler of the tool `name`, which the request must declare
    /// (a handler for no tool of it is refused when the run is made).
    pub fn new<F, Fut>(name: impl Into<String>, run: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + 'static,
        Fut: Future<Output = Result<String, String>> + 'static,
    {
        Handler {
            name: name.into(),
            run: Rc::new(move |args, context| Box::pin(run(args, context))),
            read_only: false,
            asks: None,
            timeout_ms: None,
        }
    }

    /// It changes nothing: it may start as soon as its call is whole,
    /// while the turn streams.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Every call needs an approval ([`RunOptions::with_approver`], or the
    /// run stops [`StopReason::ApprovalPending`]).
    #[must_use]
    pub fn needs_approval(self) -> Self {
        self.needs_approval_when(|_, _| true)
    }

    /// The calls for which `asks(args, call)` holds need an approval; it
    /// is asked once per call.
    #[must_use]
    pub fn needs_approval_when(
        mut self,
        asks: impl Fn(&Value, &ToolCall) -> bool + 'static,
    ) -> Self {
        self.asks = Some(Rc::new(asks));
        self
    }

    /// After `ms` (1 or more: 0 is refused when the run is made), the
    /// call's result is a "timed out" error and its signal aborts.
    #[must_use]
    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }
}

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handler")
            .field("name", &self.name)
            .field("read_only", &self.read_only)
            .field("asks", &self.asks.is_some())
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

/// An approver's decision on a call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Run it.
    Approve,
    /// Do not: the model reads a "denied" error result, with the reason.
    Deny(Option<String>),
}

/// A run's options: its limits, how many tools run at once, decisions to
/// resume with, and who approves.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub(crate) limits: RunLimits,
    pub(crate) max_concurrency: Option<usize>,
    pub(crate) approvals: Vec<(String, bool)>,
    pub(crate) approver: Option<Approver>,
}

impl RunOptions {
    /// The step limit and the final answer ([`RunLimits`]).
    #[must_use]
    pub fn with_limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// At most `n` tools at once (at least 1).
    #[must_use]
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n.max(1));
        self
    }

    /// Decisions by call id, to resume a run that stopped
    /// [`StopReason::ApprovalPending`].
    #[must_use]
    pub fn with_approvals(mut self, approvals: Vec<(String, bool)>) -> Self {
        self.approvals = approvals;
        self
    }

    /// Decides each call that needs an approval.
    #[must_use]
    pub fn with_approver<F, Fut>(mut self, approve: F) -> Self
    where
        F: Fn(ToolCall, Value) -> Fut + 'static,
        Fut: Future<Output = Decision> + 'static,
    {
        self.approver = Some(Rc::new(move |call, args| Box::pin(approve(call, args))));
        self
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("limits", &self.limits)
            .field("max_concurrency", &self.max_concurrency)
            .field("approvals", &self.approvals)
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

/// An event of a run, as the npm package's `client.run` hands them out.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunEvent {
    /// A step (a model request) begins.
    StepStart {
        /// The step, 1-based.
        step: u32,
    },
    /// An event of the step's stream.
    Stream {
        /// The step.
        step: u32,
        /// The event.
        event: StreamEvent,
    },
    /// A tool starts.
    ToolStart {
        /// The step whose turn made the call.
        step: u32,
        /// The call.
        call: ToolCall,
    },
    /// A tool ended (in completion order; the messages keep call order).
    ToolResult {
        /// The step whose turn made the call.
        step: u32,
        /// The call.
        call: ToolCall,
        /// Its `ToolResult` part.
        result: Part,
        /// How long it ran.
        duration_ms: u64,
    },
    /// A call waits for an approval.
    ApprovalRequest {
        /// The step whose turn made the call.
        step: u32,
        /// The call.
        call: ToolCall,
    },
    /// A step's stream is done.
    StepFinish {
        /// The step.
        step: u32,
        /// Its response.
        response: Box<Response>,
    },
}

/// What a run ended with.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// Only the new messages (assistant and tool turns), to append to the
    /// history: every call of them answered.
    pub messages: Vec<Message>,
    /// Every step's response; the last is the run's answer.
    pub steps: Vec<Response>,
    /// Why it stopped ([`StopReason::Aborted`] for a failed run).
    pub stop_reason: StopReason,
    /// Summed over the steps.
    pub usage: Usage,
    /// The calls handed back (a tool without a handler) or waiting for a
    /// decision.
    pub pending: Vec<ToolCall>,
}

impl RunOutcome {
    /// The last step's response.
    pub fn response(&self) -> Option<&Response> {
        self.steps.last()
    }
}

/// A run that failed: the error, and what it had done (every started call
/// answered, "cancelled" if it was running, so the messages replay).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunFailure {
    /// Why it failed: a step's error, or [`Error::Aborted`].
    pub error: Error,
    /// What it had done.
    pub partial: RunOutcome,
    /// With a fallback chain, when the failing step's chain failed for
    /// good: the providers that failed before the last (whose error is
    /// `error`), in order, as [`super::EventStream::failed_attempts`] says.
    pub failed_attempts: Vec<FailedAttempt>,
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for RunFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
