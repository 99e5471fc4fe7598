//! [`Delta`]: the neutral unit a frame decoder emits and the accumulator
//! applies.

use serde_json::Value;

use crate::json::partial::Edit;
use crate::model::{FinishReason, ProviderData, Usage};

/// A provider-neutral piece of a model turn, produced by a frame decoder.
#[derive(Clone, Debug, PartialEq)]
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) enum Delta {
    /// Response id and model; `None` leaves a known value unchanged.
    Meta {
        id: Option<String>,
        model: Option<String>,
    },
    /// Assistant text, appended to the current text part.
    Text(String),
    /// Reasoning text, appended to the current reasoning part.
    Reasoning(String),
    /// The signature of the current reasoning part.
    ReasoningSignature(String),
    /// A redacted reasoning block (its own part).
    RedactedReasoning(String),
    /// Provider replay data for the open text (or reasoning) part, merged
    /// in; with no such part open, an empty one is started to hold it.
    PartData { reasoning: bool, data: ProviderData },
    /// The next text or reasoning starts a new part.
    Break,
    /// Opens tool call `slot`, or fills in its id/name/data if already open.
    ToolStart {
        slot: usize,
        id: Option<String>,
        name: Option<String>,
        data: Option<ProviderData>,
    },
    /// Appends to the arguments of tool call `slot`.
    ToolArgs { slot: usize, fragment: String },
    /// The whole arguments of tool call `slot`, JSON text that is one
    /// object if it starts with `{` (Gemini gives them whole, parsed or
    /// checked): not parsed again when the call ends.
    ToolArgsWhole { slot: usize, arguments: String },
    /// Changes to the arguments of tool call `slot` that came as patches
    /// (Vertex AI's `partialArgs`), not as text: for progress events only;
    /// the text comes whole, in `ToolArgsWhole`, at the end.
    ToolEdits { slot: usize, edits: Vec<Edit> },
    /// Tool call `slot` is whole (a structural boundary).
    ToolEnd { slot: usize },
    /// Every open tool call is whole (OpenAI `finish_reason`, `[DONE]`).
    ToolEndAll,
    /// Tool call `slot` cannot complete (e.g. a bad argument path).
    ToolAbort { slot: usize, reason: String },
    /// A file the model made, whole (a generated image): a `file` part
    /// with `data` in base64, and `kept` under the provider's name in its
    /// `providerData`, to replay it.
    File {
        media_type: String,
        data: String,
        provider: &'static str,
        kept: Value,
    },
    /// A partial image streamed before its file (the `index`-th), for a
    /// `file_partial` event: never a part of the message.
    FilePartial {
        index: u32,
        media_type: String,
        data: String,
        provider: &'static str,
        kept: Value,
    },
    /// A provider block kept whole for replay: a [`Part::Provider`].
    ProviderPart { provider: &'static str, data: Value },
    /// Refusal text.
    Refusal(String),
    /// The usage so far (replaces the previous value).
    Usage(Usage),
    /// The usage so far as the provider's usage object, in canonical
    /// compact JSON text (`json/canonical.rs`), read with `read` only when
    /// the response is needed (replaces the previous value).
    UsageText {
        json: String,
        read: super::ReadUsage,
    },
    /// The finish reason.
    Finish { raw: String, reason: FinishReason },
    /// The terminal frame: the turn is complete.
    Terminal,
    /// More follows after a terminal frame (another message in the same
    /// body): not complete until its own terminal frame.
    Reopen,
    /// A non-fatal oddity.
    Warning { code: &'static str, message: String },
}

impl Delta {
    /// Whether this is a piece of a tool call before its end, which makes a
    /// progress event (and so keeps its frame) when they are asked for.
    pub(crate) fn is_tool_piece(&self) -> bool {
        matches!(
            self,
            Delta::ToolStart { .. }
                | Delta::ToolArgs { .. }
                | Delta::ToolArgsWhole { .. }
                | Delta::ToolEdits { .. }
        )
    }

    /// Whether applying this delta may keep its frame (in an event, or as
    /// the frame of the usage); the others never look at it.
    pub(crate) fn keeps_frame(&self) -> bool {
        match self {
            Delta::Text(_)
            | Delta::Reasoning(_)
            | Delta::ToolEnd { .. }
            | Delta::ToolEndAll
            | Delta::ToolAbort { .. }
            | Delta::Usage(_)
            | Delta::File { .. }
            | Delta::FilePartial { .. }
            | Delta::Warning { .. } => true,
            Delta::UsageText { .. } => true,
            Delta::Meta { .. }
            | Delta::ReasoningSignature(_)
            | Delta::RedactedReasoning(_)
            | Delta::PartData { .. }
            | Delta::Break
            | Delta::ToolStart { .. }
            | Delta::ToolArgs { .. }
            | Delta::ToolArgsWhole { .. }
            | Delta::ToolEdits { .. }
            | Delta::ProviderPart { .. }
            | Delta::Refusal(_)
            | Delta::Finish { .. }
            | Delta::Terminal
            | Delta::Reopen => false,
        }
    }
}
