//! The runner's public types: what a driver tells it of its tools, and
//! what it tells the driver to do.

use serde_json::Value;

use crate::error::Error;
use crate::model::{Request, ToolCall};

/// What the runner knows of a tool; the driver holds its function.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name, as in [`Request::tools`].
    pub name: String,
    /// Its parameters' JSON Schema; the arguments are checked against it.
    pub parameters: Option<Value>,
    /// The driver can run it. A call of a tool it cannot run is handed back
    /// to the caller ([`StopReason::ClientTool`]).
    pub executable: bool,
    /// It changes nothing, so it may start while the turn still streams.
    pub read_only: bool,
}

impl ToolSpec {
    /// An executable tool that is not read-only.
    pub fn new(name: impl Into<String>, parameters: Option<Value>) -> Self {
        ToolSpec {
            name: name.into(),
            parameters,
            executable: true,
            read_only: false,
        }
    }

    /// With [`read_only`](Self::read_only) set.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Not run by the driver: its calls are handed back to the caller.
    #[must_use]
    pub fn client(mut self) -> Self {
        self.executable = false;
        self
    }
}

/// The run's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunLimits {
    /// Model requests at most (20 by default), the final answer's aside.
    pub max_steps: u32,
    /// When the step limit is reached, send one more request with the tools
    /// turned off (`toolChoice: none`), so that the run ends in text. The
    /// drivers (`client.run`, `skyl::web::Client::run`) refuse it at the
    /// run's start where a provider of the client's chain cannot send that
    /// request with tools (Bedrock's Converse API has no choice `none`).
    pub final_answer: bool,
}

impl RunLimits {
    /// At most `max_steps` model requests.
    pub fn new(max_steps: u32) -> Self {
        RunLimits {
            max_steps,
            final_answer: false,
        }
    }

    /// With [`final_answer`](Self::final_answer) set.
    #[must_use]
    pub fn with_final_answer(mut self) -> Self {
        self.final_answer = true;
        self
    }

    /// No step at all is no run: `max_steps` of 0 is an
    /// [`Error::InvalidRequest`] naming `maxSteps`.
    pub(crate) fn check(self) -> Result<(), Error> {
        match self.max_steps {
            0 => Err(Error::invalid_request(
                "maxSteps",
                "must be a whole number, 1 or more",
            )),
            _ => Ok(()),
        }
    }
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_steps: 20,
            final_answer: false,
        }
    }
}

/// A call to run now, with its parsed arguments.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Job {
    /// The call.
    pub call: ToolCall,
    /// Its arguments, parsed (a JSON object).
    pub args: Value,
    /// The step (1-based) whose turn made the call; 0 for a call of the
    /// history, resumed.
    pub step: u32,
}

/// How a tool call ended, as the driver reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Its result, as text.
    Done(String),
    /// It failed: the message the model sees (never a stack or a key).
    Failed(String),
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A turn with no calls to run.
    Done,
    /// The step limit.
    MaxSteps,
    /// A turn finished another way than `tool_calls` or `stop` (the output
    /// limit, a filter, a refusal, an error, a pause): none of its calls
    /// ran.
    Truncated,
    /// A call of a tool the driver cannot run, handed back.
    ClientTool,
    /// Calls wait for an approval ([`Runner::pending`](super::Runner::pending)).
    ApprovalPending,
    /// The caller aborted ([`Runner::abort`](super::Runner::abort)).
    Aborted,
}

/// What the driver does next.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Next {
    /// Send this request (the next step), and report its stream's whole
    /// calls ([`Runner::call_whole`](super::Runner::call_whole)) and its response
    /// ([`Runner::finish_step`](super::Runner::finish_step)).
    Request(Box<Request>),
    /// Ask for these calls' approval ([`Runner::decide`](super::Runner::decide) each).
    Approve(Vec<Job>),
    /// Start these calls, and report each one's outcome
    /// ([`Runner::tool_done`](super::Runner::tool_done)); calls started earlier may also be running.
    Run(Vec<Job>),
    /// Tools are still running: wait for their outcomes.
    Wait,
    /// The run is over.
    Stop(StopReason),
}
