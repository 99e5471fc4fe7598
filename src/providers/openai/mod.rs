//! OpenAI Chat Completions.
//!
//! API reference: <https://platform.openai.com/docs/api-reference/chat/create>
//! and the streaming chunk object,
//! <https://platform.openai.com/docs/api-reference/chat/streaming>.
//!
//! The same code serves OpenAI-compatible servers through [`Dialect`]; see
//! [`compat`] for the quirks it handles.

use serde_json::{Map, Value};

use crate::accumulate::Delta;
pub(crate) use crate::json::take_str;
use crate::model::provider_data::provider_data;
use crate::model::{FinishReason, Usage};

pub(crate) mod compat;
pub(crate) mod embed;
pub(crate) mod error;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stream;

mod fast;

/// The provider table's entry for OpenAI Chat Completions
/// (`providers/mod.rs`).
pub(crate) const OPENAI: super::Adapter = super::Adapter {
    framing: crate::framing::Framing::Sse,
    encode: |input| request::encode(input, Dialect::OPENAI),
    response: |body| response::decode(body, Dialect::OPENAI),
    is_whole: response::is_whole,
    error: error::decode,
    stream: || Box::new(stream::StreamState::new(Dialect::OPENAI)),
    embed: Ok(embed::OPENAI),
    parts: false,
    files: super::adapter::Files::None,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

/// The provider table's entry for OpenAI-compatible servers: the same
/// adapter in [`Dialect::COMPAT`].
pub(crate) const COMPAT: super::Adapter = super::Adapter {
    framing: crate::framing::Framing::Sse,
    encode: |input| request::encode(input, Dialect::COMPAT),
    response: |body| response::decode(body, Dialect::COMPAT),
    is_whole: response::is_whole,
    error: error::decode,
    stream: || Box::new(stream::StreamState::new(Dialect::COMPAT)),
    embed: Ok(embed::COMPAT),
    parts: false,
    files: super::adapter::Files::None,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

pub(crate) use compat::Dialect;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Maps `finish_reason` to the neutral reason.
pub(crate) fn map_finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" | "eos" | "end_turn" | "stop_sequence" => FinishReason::Stop,
        "length" | "max_tokens" | "model_length" => FinishReason::Length,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        "refusal" => FinishReason::Refusal,
        "error" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// Reads an OpenAI usage object.
pub(crate) fn map_usage(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    Usage {
        input: n(u.get("prompt_tokens")),
        output: n(u.get("completion_tokens")),
        cache_read: n(crate::json::nested(
            u,
            &["prompt_tokens_details", "cached_tokens"],
        ))
        .or_else(|| n(u.get("prompt_cache_hit_tokens"))),
        cache_write: None,
        reasoning: n(crate::json::nested(
            u,
            &["completion_tokens_details", "reasoning_tokens"],
        )),
        raw: Some(u.clone()),
        ..Usage::default()
    }
    .totalled()
}

/// A legacy `function_call` (the functions API, before `tool_calls`; some
/// OpenAI-compatible servers still answer with it) as the one `tool_calls[]`
/// entry it stands for: index 0, no id (one is generated).
pub(crate) fn legacy_function_call(message: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    let Some(Value::Object(function)) = message.remove("function_call") else {
        return None;
    };
    let mut call = Map::new();
    call.insert("index".into(), Value::from(0));
    call.insert("function".into(), Value::Object(function));
    Some(call)
}

/// The fields of a `tool_calls[]` entry (a whole call or a stream delta),
/// taken out of it.
pub(crate) struct CallFields {
    pub id: Option<String>,
    pub name: Option<String>,
    pub arguments: Option<String>,
    /// Gemini's OpenAI endpoint: `extra_content` to replay.
    pub extra: Option<Value>,
}

impl CallFields {
    pub(crate) fn take(call: &mut Map<String, Value>) -> Self {
        let (name, arguments) = match call.remove("function") {
            Some(Value::Object(mut f)) => (
                take_str(&mut f, "name"),
                arguments_text(f.remove("arguments")),
            ),
            _ => (None, None),
        };
        CallFields {
            id: take_str(call, "id"),
            name,
            arguments,
            extra: call.remove("extra_content"),
        }
    }
}

/// The usage of a completion or chunk, wherever the server put it
/// (`x_groq.usage` on Groq).
pub(crate) fn completion_usage(body: &Map<String, Value>) -> Option<Usage> {
    body.get("usage")
        .filter(|u| u.is_object())
        .or_else(|| body.get("x_groq").and_then(|x| x.get("usage")))
        .filter(|u| u.is_object())
        .map(map_usage)
}

/// The first choice of a completion or chunk (n > 1 is not supported).
pub(crate) fn first_choice(body: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    match body.get_mut("choices") {
        Some(Value::Array(choices)) if !choices.is_empty() => match choices.swap_remove(0) {
            Value::Object(c) => Some(c),
            _ => None,
        },
        _ => None,
    }
}

/// Text, reasoning and refusal of a message or delta, as deltas.
/// `announced` remembers that the reasoning field name was recorded.
pub(crate) fn content_deltas(
    msg: &mut Map<String, Value>,
    dialect: Dialect,
    announced: &mut bool,
    out: &mut Vec<Delta>,
) {
    let reasoning = match (
        take_str(msg, "reasoning_content"),
        take_str(msg, "reasoning"),
    ) {
        (Some(r), _) if !r.is_empty() => Some(("reasoning_content", r)),
        (_, Some(r)) if !r.is_empty() => Some(("reasoning", r)),
        _ => None,
    };
    if let Some((field, text)) = reasoning {
        out.push(Delta::Reasoning(text));
        if !*announced {
            *announced = true;
            out.push(Delta::PartData {
                reasoning: true,
                data: provider_data(dialect.key(), "reasoningField", Value::String(field.into())),
            });
        }
    }
    match msg.remove("content") {
        Some(Value::String(t)) => out.push(Delta::Text(t)),
        Some(Value::Array(chunks)) => {
            for chunk in chunks {
                typed_chunk(chunk, out);
            }
        }
        _ => {}
    }
    if let Some(r) = take_str(msg, "refusal") {
        out.push(Delta::Refusal(r));
    }
}

/// One Mistral-style typed content chunk: `{type: "text", text}` or
/// `{type: "thinking", thinking: [chunks] | "text"}`.
fn typed_chunk(chunk: Value, out: &mut Vec<Delta>) {
    let Value::Object(mut obj) = chunk else {
        return;
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => {
            if let Some(Value::String(t)) = obj.remove("text") {
                out.push(Delta::Text(t));
            }
        }
        Some("thinking") => match obj.remove("thinking") {
            Some(Value::String(t)) => out.push(Delta::Reasoning(t)),
            Some(Value::Array(parts)) => {
                for p in parts {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        out.push(Delta::Reasoning(t.to_string()));
                    }
                }
            }
            _ => {}
        },
        _ => {}
    }
}

/// The argument text of a call delta: a string fragment, or an object some
/// servers send whole.
pub(crate) fn arguments_text(v: Option<Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(crate::json::json_text(&other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_map_to_neutral_ones() {
        assert_eq!(map_finish_reason("stop"), FinishReason::Stop);
        assert_eq!(map_finish_reason("length"), FinishReason::Length);
        assert_eq!(map_finish_reason("tool_calls"), FinishReason::ToolCalls);
        assert_eq!(map_finish_reason("function_call"), FinishReason::ToolCalls);
        assert_eq!(
            map_finish_reason("content_filter"),
            FinishReason::ContentFilter
        );
        assert_eq!(map_finish_reason("whatever"), FinishReason::Other);
    }

    #[test]
    fn usage_reads_cached_and_reasoning_details() {
        let u = map_usage(&serde_json::json!({
            "prompt_tokens": 10, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 4},
            "completion_tokens_details": {"reasoning_tokens": 2}
        }));
        assert_eq!(
            (u.input, u.output, u.cache_read, u.reasoning),
            (Some(10), Some(5), Some(4), Some(2))
        );
    }
}
