//! The provider-neutral model's inputs: messages, parts, tools and
//! requests (responses and stream events are in `response.rs`).
//!
//! Every type here serialises to plain JSON with camelCase field names, so a
//! history saved with `JSON.stringify` (or `serde_json::to_string`) and loaded
//! again replays identically. Enums that JavaScript switches on are tagged by
//! a `type` field.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions. Anthropic and Gemini take these out of the message list
    /// and send them as the system prompt.
    System,
    /// The person (or program) talking to the model.
    User,
    /// The model's turn, including its tool calls.
    Assistant,
    /// Results of tool calls, answering the preceding assistant turn.
    Tool,
}

/// One message of a conversation: a role and its ordered parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
}

impl Message {
    /// A message with one text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            parts: vec![Part::Text {
                text: text.into(),
                provider_data: None,
            }],
        }
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }

    /// All text parts, concatenated without a separator.
    pub fn joined_text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let Part::Text { text, .. } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this message makes, in order.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => Some(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// An empty assistant message (the default for [`Response`](crate::Response)).
impl Default for Message {
    fn default() -> Self {
        Message {
            role: Role::Assistant,
            parts: Vec::new(),
        }
    }
}

/// Opaque data a provider needs back when the part is replayed, keyed by
/// adapter name (`"gemini"`, `"openaicompat"`, ...): a Gemini
/// `thoughtSignature`, the field an OpenAI-compatible server used for its
/// reasoning. Adapters read only their own key, so a history can move between
/// providers without sending one provider's data to another.
pub type ProviderData = Map<String, Value>;

/// One piece of a message.
///
/// Read by hand from a JSON value, like the other input types (see
/// `src/read.rs`): smaller wasm than serde's derive, and an error that
/// names the field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "Value")]
#[non_exhaustive]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Replay data for the provider; see [`ProviderData`]. Anthropic
        /// keeps the text's sources here (`{"anthropic": {"citations":
        /// [...]}}`, as the API sent them: web search, documents).
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// An image, by URL or as base64 data with its media type.
    Image {
        /// An `https:` or `data:` URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Base64 data (no `data:` prefix).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// The media type of `data`, e.g. `image/png`.
        #[serde(default, rename = "mediaType", skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        /// Replay data for the provider; see [`ProviderData`].
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// A document (PDF first; plain text where a provider takes it), by
    /// URL or as base64 data, with its media type.
    File {
        /// An `https:` URL (or a provider's file URI).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Base64 data (no `data:` prefix).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// The media type, e.g. `application/pdf` or `text/plain`.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// The file's name, where a provider shows or needs one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
        /// Replay data for the provider; see [`ProviderData`].
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// A call of a client tool made by the model.
    ToolCall {
        /// The call id; tool results answer it.
        id: String,
        /// The tool's name.
        name: String,
        /// The complete JSON text of the arguments.
        arguments: String,
        /// Replay data for the provider; see [`ProviderData`].
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the call this answers.
        #[serde(rename = "callId")]
        call_id: String,
        /// The result, as text (often JSON text).
        content: String,
        /// Whether the tool failed; `content` then describes the error.
        #[serde(default, rename = "isError", skip_serializing_if = "is_false")]
        is_error: bool,
        /// Replay data for the provider; see [`ProviderData`].
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// The model's reasoning ("thinking").
    Reasoning {
        /// The reasoning text (may be a summary, or empty when only a
        /// signature was returned).
        text: String,
        /// Anthropic's thinking signature, needed to replay the block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic's opaque `redacted_thinking` data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
        /// Replay data for the provider; see [`ProviderData`].
        #[serde(
            default,
            rename = "providerData",
            skip_serializing_if = "Option::is_none"
        )]
        provider_data: Option<ProviderData>,
    },
    /// A provider-specific block with no neutral equivalent (Anthropic
    /// server-tool calls and results, compaction summaries, ...), kept whole
    /// so that the turn replays exactly to the same provider. Other adapters
    /// leave it out.
    Provider {
        /// The adapter that produced it, e.g. `"anthropic"`.
        provider: String,
        /// The provider's block, as received.
        data: Value,
    },
    /// A cache breakpoint: the prompt up to the part before it may be
    /// cached. Anthropic's `cache_control` on that part (at most four in a
    /// request, tools' marks included); OpenAI and Gemini cache on their
    /// own and leave it out.
    Cache {
        /// How long: `"5m"` (the default) or `"1h"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ttl: Option<String>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A tool the model may call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct Tool {
    /// The name the model calls it by. Must not be empty.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema for the arguments object. `None` means no arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Fields added to this tool's declaration as the provider's API names
    /// them (they win over a field of the same name): Anthropic's
    /// `{"eager_input_streaming": true}` or `{"strict": true}`, OpenAI's
    /// `{"strict": true}` (inside `function` for Chat Completions).
    #[serde(
        default,
        rename = "providerOptions",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_options: Option<Map<String, Value>>,
    /// A cache breakpoint after this tool (the tools up to it may be
    /// cached): `Some(None)` for the default lifetime, `Some(Some("1h"))`
    /// for another. Anthropic only; see [`Part::Cache`].
    #[serde(default, skip_serializing_if = "Option::is_none", with = "cache_mark")]
    pub cache: Option<Option<String>>,
}

/// A tool's `cache` mark as JSON: `{}` or `{"ttl": "1h"}` (read by hand,
/// with the rest of the tool).
mod cache_mark {
    use serde::{Serialize, Serializer};

    #[derive(Serialize)]
    struct Mark {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ttl: Option<String>,
    }

    pub(super) fn serialize<S: Serializer>(
        mark: &Option<Option<String>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        mark.as_ref()
            .map(|ttl| Mark { ttl: ttl.clone() })
            .serialize(s)
    }
}

/// A complete call of a client tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct ToolCall {
    /// The call id, to answer with [`crate::tool_result_message`].
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The complete JSON text of the arguments (an object).
    ///
    /// Arguments that arrive as text (OpenAI-format `arguments` strings and
    /// fragments, Anthropic's streamed `input_json_delta`) are checked
    /// against JSON's grammar (RFC 8259), which is what `JSON.parse` takes:
    /// a lone surrogate escape (`"\ud800"`) or a number beyond `f64`'s range
    /// (`1e400`) passes, though `serde_json::from_str::<Value>` refuses both.
    /// Arguments that arrive inside a JSON frame or body (Gemini,
    /// non-streaming Anthropic) are read as strictly as serde_json reads
    /// that frame.
    pub arguments: String,
}

/// A tool call that did not complete: the stream ended, the output limit was
/// hit inside it, or its arguments are not valid JSON. It is never handed out
/// as an executable [`ToolCall`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncompleteToolCall {
    /// The call id, if one arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool name, if one arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The argument text received so far.
    pub arguments: String,
    /// Why the call is incomplete.
    pub reason: String,
}

/// How the model may use the tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, try_from = "Value")]
#[non_exhaustive]
pub enum ToolChoice {
    /// `"auto"`, `"none"` or `"required"`.
    Mode(ToolChoiceMode),
    /// `{ "type": "tool", "name": "..." }`: this tool must be called.
    Tool(NamedToolChoice),
}

/// The tool-choice modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
}

/// A tool the model must call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedToolChoice {
    /// Always `"tool"`.
    #[serde(rename = "type")]
    pub kind: NamedToolTag,
    /// The tool's name.
    pub name: String,
}

impl TryFrom<Value> for ToolChoice {
    type Error = String;

    fn try_from(v: Value) -> Result<Self, String> {
        let mode = |m: &str| match m {
            "auto" => Some(ToolChoiceMode::Auto),
            "none" => Some(ToolChoiceMode::None),
            "required" => Some(ToolChoiceMode::Required),
            _ => None,
        };
        match &v {
            Value::String(m) => mode(m).map(ToolChoice::Mode),
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("tool") => o
                .get("name")
                .and_then(Value::as_str)
                .map(|name| {
                    ToolChoice::Tool(NamedToolChoice {
                        kind: NamedToolTag::Tool,
                        name: name.to_string(),
                    })
                }),
            _ => None,
        }
        .ok_or_else(|| {
            // (json_text, not `{v}`: Value's Display links a formatter adapter.)
            let got = crate::json::json_text(&v);
            format!(r#"toolChoice must be "auto", "none", "required" or {{"type": "tool", "name": ...}}; got {got}"#)
        })
    }
}

/// The tag of [`NamedToolChoice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamedToolTag {
    /// `"tool"`.
    Tool,
}

/// One request to a chat model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Value")]
pub struct Request {
    /// The model; required unless the client has a default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// How the model may use the tools (sent only with tools: providers
    /// refuse a tool choice without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// The output token limit. Anthropic requires one: see
    /// [`crate::providers::anthropic::DEFAULT_MAX_TOKENS`] (added to a
    /// `thinking` budget in `provider_options`, which it must exceed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling. Recent Anthropic models (Claude 4.5 and later)
    /// reject a request that sets both `temperature` and `top_p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A JSON object deep-merged into the provider's request body last, for
    /// anything the model does not cover (`reasoning_effort`, `thinking`,
    /// `safetySettings`, ...). Its values win over skyl's, except that a
    /// `tools` list adds to the request's tools (a provider's server or
    /// built-in tools beside the functions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_options: Option<Map<String, Value>>,
    /// Structured output: the answer as JSON, or as JSON that matches a
    /// schema, in each provider's own form. The text of the answer is the
    /// JSON; it is whole only when the finish reason is
    /// [`FinishReason::Stop`](crate::FinishReason::Stop) (a cut-off answer finishes `Length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Progress events while the answer streams, besides the usual ones:
    /// none unless asked for (see [`PartialEvents`]).
    #[serde(default, skip_serializing_if = "PartialEvents::is_none")]
    pub partial: PartialEvents,
}

/// Which progress events a stream hands out ([`Request::partial`]). They
/// are for showing progress: a tool call is still handed out once, whole,
/// as its `tool_call` event, and only then may it run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PartialEvents {
    /// `tool_call_start` when a call's id and name are known, then
    /// `tool_call_delta` with each piece of its arguments and the arguments
    /// read so far. With Anthropic it also streams tool input in small
    /// pieces (`eager_input_streaming`, unless a tool sets it).
    pub tools: bool,
    /// `output_delta` with the answer's JSON read so far, for a request
    /// with a [`Request::response_format`].
    pub output: bool,
    /// `file_partial` with each partial image a provider streams before
    /// the file (the Responses API's image generation tool, given
    /// `partial_images`). Never a file of the message.
    pub files: bool,
}

impl PartialEvents {
    /// Whether none is asked for.
    pub fn is_none(&self) -> bool {
        !self.tools && !self.output && !self.files
    }
}

/// What shape the answer takes ([`Request::response_format`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseFormat {
    /// Any JSON value (Chat Completions' `json_object`; Anthropic has no
    /// such mode and refuses it with a clear error).
    Json,
    /// JSON that matches `schema`.
    JsonSchema {
        /// The JSON Schema, sent as given: a keyword a provider does not
        /// support comes back as its own typed 400.
        schema: Value,
        /// A name for the schema (`"response"` where one is required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// What the answer is, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// OpenAI's strict schema adherence.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strict: Option<bool>,
    },
}

/// A `tool` message answering `call_id` with `content`.
pub fn tool_result_message(call_id: impl Into<String>, content: impl Into<String>) -> Message {
    tool_message(call_id.into(), content.into(), false)
}

/// A `tool` message telling the model that the call `call_id` failed with
/// `error`.
pub fn tool_error_message(call_id: impl Into<String>, error: impl Into<String>) -> Message {
    tool_message(call_id.into(), error.into(), true)
}

fn tool_message(call_id: String, content: String, is_error: bool) -> Message {
    Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult {
            call_id,
            content,
            is_error,
            provider_data: None,
        }],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_message_round_trips_through_json_unchanged() {
        let msg = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "think".into(),
                    signature: Some("sig".into()),
                    redacted: None,
                    provider_data: None,
                },
                Part::Text {
                    text: "hi".into(),
                    provider_data: Some(
                        serde_json::from_str(r#"{"gemini":{"thoughtSignature":"x"}}"#).unwrap(),
                    ),
                },
                Part::ToolCall {
                    id: "c1".into(),
                    name: "f".into(),
                    arguments: "{\"a\":1}".into(),
                    provider_data: None,
                },
                Part::Provider {
                    provider: "anthropic".into(),
                    data: serde_json::json!({"type": "server_tool_use", "id": "s"}),
                },
            ],
        };
        let text = serde_json::to_string(&msg).unwrap();
        assert!(text.contains(r#""type":"tool_call""#));
        assert!(text.contains(r#""providerData""#));
        let back: Message = serde_json::from_str(&text).unwrap();
        assert_eq!(back, msg);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn tool_choice_accepts_a_mode_string_or_a_named_tool() {
        let auto: ToolChoice = serde_json::from_str(r#""auto""#).unwrap();
        assert_eq!(auto, ToolChoice::Mode(ToolChoiceMode::Auto));
        let named: ToolChoice = serde_json::from_str(r#"{"type":"tool","name":"f"}"#).unwrap();
        assert_eq!(
            named,
            ToolChoice::Tool(NamedToolChoice {
                kind: NamedToolTag::Tool,
                name: "f".into()
            })
        );
        assert!(serde_json::from_str::<ToolChoice>(r#""sometimes""#).is_err());
    }

    #[test]
    fn tool_helpers_build_tool_messages() {
        let ok = tool_result_message("c1", "42");
        let err = tool_error_message("c2", "boom");
        assert_eq!(ok.role, Role::Tool);
        assert!(matches!(
            &ok.parts[..],
            [Part::ToolResult {
                is_error: false,
                ..
            }]
        ));
        assert!(
            matches!(&err.parts[..], [Part::ToolResult { is_error: true, content, .. }] if content == "boom")
        );
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["parts"][0]["isError"], true);
        assert_eq!(json["parts"][0]["callId"], "c2");
    }
}
