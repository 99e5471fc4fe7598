//! The provider-neutral model's outputs: a response, its usage and finish
//! reason, and the stream events. Plain JSON with camelCase field names,
//! as the inputs in `types.rs`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::{IncompleteToolCall, Message, Part, ToolCall};

/// Token counts, the same on every provider (as the OpenTelemetry GenAI
/// conventions count `gen_ai.usage.input_tokens` and `output_tokens`).
///
/// `input` is every input token, cache reads and writes included
/// (Anthropic reports them apart: they are added); `output` every output
/// token, reasoning included (Gemini reports its thoughts apart: they are
/// added); `total` is their sum. The provider's own object is in `raw`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input (prompt) tokens, cache reads and writes included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output (completion) tokens, reasoning included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// `input` + `output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Input tokens read from the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Input tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    /// The provider's usage object, untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

impl Usage {
    /// The usage with `total` set from `input` and `output`.
    pub(crate) fn totalled(mut self) -> Self {
        self.total = sum(self.input, self.output);
        self
    }
}

/// The sum of the counts given; `None` when none is.
pub(crate) fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

/// Why the model stopped, normalised across providers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end or a stop sequence.
    Stop,
    /// The output token limit.
    Length,
    /// The model called tools and waits for their results.
    ToolCalls,
    /// The provider's content filter stopped or blocked the output.
    ContentFilter,
    /// The model refused.
    Refusal,
    /// The provider paused a long turn (Anthropic `pause_turn`): send the turn
    /// back to continue.
    Pause,
    /// The provider reported an error in place of a finish.
    Error,
    /// Anything else; see the raw reason.
    #[default]
    Other,
}

/// A complete model turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// The provider's response id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The assistant turn, ready to append to the history and replay.
    pub message: Message,
    /// All text of the turn, concatenated.
    pub text: String,
    /// All reasoning text of the turn, concatenated.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// The complete client tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tool calls that did not complete and must not be executed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete_tool_calls: Vec<IncompleteToolCall>,
    /// A refusal message (OpenAI `refusal`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Token counts.
    pub usage: Usage,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// The provider's own finish reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_finish_reason: Option<String>,
    /// The provider that answered (its name, e.g. `"anthropic"`), set by a
    /// run ([`crate::RunMachine`]); the decoders alone leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The providers of a fallback chain that failed before this one
    /// answered, in order ([`crate::Fallback`]); empty when the first
    /// answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<FailedAttempt>,
}

impl Response {
    /// The files the model made (generated images), in order: the `file`
    /// parts of its message. (In JS, `response.files`.)
    pub fn files(&self) -> impl Iterator<Item = &Part> {
        (self.message.parts.iter()).filter(|p| matches!(p, Part::File { .. }))
    }
}

/// A provider of a fallback chain that failed before another answered:
/// who, and how (its error's code, status and message, scrubbed of every
/// key of the chain).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedAttempt {
    /// The provider's name.
    pub provider: String,
    /// The model asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How its last attempt failed.
    pub error: AttemptError,
}

/// How a [`FailedAttempt`] failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptError {
    /// The error's code ([`crate::Error::code`]): `overloaded`,
    /// `rate_limit`, `network`, `timeout`, ...
    pub code: String,
    /// The HTTP status, for an error the provider sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What happened.
    pub message: String,
}

/// The provider frame an event came from: the SSE `data` text (for a
/// non-streaming response, the whole body). Shared, cheap to clone.
pub type Raw = Arc<str>;

/// One event of a streamed response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of assistant text.
    Text {
        /// The new text.
        text: String,
        /// The frame it came from.
        raw: Raw,
    },
    /// A piece of reasoning text.
    Reasoning {
        /// The new text.
        text: String,
        /// The frame it came from.
        raw: Raw,
    },
    /// A whole tool call, emitted once, when its arguments are complete.
    ToolCall {
        /// The call.
        call: ToolCall,
        /// The frame that completed it.
        raw: Raw,
    },
    /// A tool call began: its id and name are known. Only with
    /// [`PartialEvents::tools`](crate::PartialEvents::tools); for showing
    /// progress, never for running: the call runs once its
    /// [`ToolCall`](StreamEvent::ToolCall) event comes, and a call cut off
    /// has none.
    ToolCallStart {
        /// The call's id (the one its `ToolCall` event will have).
        id: String,
        /// The tool's name.
        name: String,
        /// The call's place among this response's calls, from 0.
        index: usize,
        /// The frame it came from.
        raw: Raw,
    },
    /// A piece of a tool call's arguments, after its
    /// [`ToolCallStart`](StreamEvent::ToolCallStart). The pieces of a call
    /// concatenate to exactly the arguments of its `ToolCall` event. The
    /// pieces of one call that one [`StreamDecoder::feed`](crate::StreamDecoder::feed)
    /// decodes, one after the other, make one event: their texts joined,
    /// the value after the last, their frames in `raw`, one per line.
    ToolCallDelta {
        /// The call's id.
        id: String,
        /// The call's place among this response's calls.
        index: usize,
        /// The new text.
        #[serde(rename = "argumentsDelta")]
        arguments_delta: String,
        /// The arguments read so far (see [`crate::PartialJson`]): each
        /// string a prefix of its final text, numbers, literals and keys
        /// only once whole, open objects and arrays closed. `None` until
        /// a value begins.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<Value>,
        /// The frame it came from (the frames, one per line, of pieces
        /// joined).
        raw: Raw,
    },
    /// The structured answer read so far, after a text event that changed
    /// it. Only with [`PartialEvents::output`](crate::PartialEvents::output).
    OutputDelta {
        /// The answer's JSON so far, by the rules of
        /// [`ToolCallDelta`](StreamEvent::ToolCallDelta)'s `partial`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<Value>,
        /// The frame it came from.
        raw: Raw,
    },
    /// Final token counts, just before `finish`.
    Usage {
        /// The counts.
        usage: Usage,
        /// The frame that last updated them.
        raw: Raw,
    },
    /// A file the model made (a generated image), once whole: the same
    /// `file` part as in the response's message.
    File {
        /// The [`Part::File`](crate::Part::File), with its base64 `data`
        /// and `mediaType`, and what replays it to its provider in
        /// `providerData`.
        file: Part,
        /// The frame it came from.
        raw: Raw,
    },
    /// A partial image a provider streamed before the file, when
    /// [`PartialEvents::files`](crate::PartialEvents::files) asks for it:
    /// something to show while the image is made, never a part of the
    /// message (the `file` event follows with the whole image).
    FilePartial {
        /// Which partial image of its file this is (0, 1, ...).
        index: u32,
        /// A [`Part::File`](crate::Part::File) with the partial image's
        /// base64 `data`, and in `providerData` the item it belongs to.
        file: Part,
        /// The frame it came from, its base64 replaced by a marker.
        raw: Raw,
    },
    /// Something odd that did not stop the stream.
    Warning {
        /// A stable code, e.g. `tool_call_incomplete`, `non_json_data`.
        code: String,
        /// What happened.
        message: String,
        /// The frame it concerns.
        raw: Raw,
    },
    /// The end of the turn, with the assembled response.
    Finish {
        /// The whole response, as [`crate::decode_response`] gives for the
        /// same content.
        response: Box<Response>,
        /// The terminal frame.
        raw: Raw,
    },
}

impl StreamEvent {
    /// Takes the frame out of the event, leaving an empty one.
    pub(crate) fn take_raw(&mut self) -> Raw {
        let raw = match self {
            StreamEvent::Text { raw, .. }
            | StreamEvent::Reasoning { raw, .. }
            | StreamEvent::ToolCall { raw, .. }
            | StreamEvent::ToolCallStart { raw, .. }
            | StreamEvent::ToolCallDelta { raw, .. }
            | StreamEvent::OutputDelta { raw, .. }
            | StreamEvent::Usage { raw, .. }
            | StreamEvent::File { raw, .. }
            | StreamEvent::FilePartial { raw, .. }
            | StreamEvent::Warning { raw, .. }
            | StreamEvent::Finish { raw, .. } => raw,
        };
        std::mem::replace(raw, Raw::from(""))
    }

    /// The provider frame this event came from.
    pub fn raw(&self) -> &Raw {
        match self {
            StreamEvent::Text { raw, .. }
            | StreamEvent::Reasoning { raw, .. }
            | StreamEvent::ToolCall { raw, .. }
            | StreamEvent::ToolCallStart { raw, .. }
            | StreamEvent::ToolCallDelta { raw, .. }
            | StreamEvent::OutputDelta { raw, .. }
            | StreamEvent::Usage { raw, .. }
            | StreamEvent::File { raw, .. }
            | StreamEvent::FilePartial { raw, .. }
            | StreamEvent::Warning { raw, .. }
            | StreamEvent::Finish { raw, .. } => raw,
        }
    }
}
