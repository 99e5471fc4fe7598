//! What a driver or a caller may read of a [`Runner`] between its steps,
//! without changing it: its messages, steps, usage and why it stopped.

use super::{Runner, StopReason};
use crate::model::{Message, Response, ToolCall, Usage};

impl Runner {
    /// Whether the request last handed out is the final answer's, with
    /// the tools off ([`RunLimits::final_answer`](crate::RunLimits::final_answer)).
    pub fn is_final(&self) -> bool {
        self.last
    }

    /// The new messages: assistant turns and tool results, in order, ready
    /// to append to the history.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Every step's response.
    pub fn steps(&self) -> &[Response] {
        &self.steps
    }

    /// The usage summed over the steps.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Why the run stopped, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stopped
    }

    /// The calls handed back ([`StopReason::ClientTool`]) or waiting for a
    /// decision ([`StopReason::ApprovalPending`]).
    pub fn pending(&self) -> &[ToolCall] {
        &self.pending
    }
}
