//! Amazon Bedrock's Converse API: `ConverseStream` and `Converse`.
//!
//! API reference:
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html>,
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html>;
//! the content blocks:
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html>.
//!
//! Streams are AWS's binary event stream (`framing.rs`,
//! `eventstream.rs`), one JSON payload per message. Requests are signed
//! with SigV4 (`sigv4.rs`) by the run machine at each attempt, or carry a
//! Bedrock API key as a bearer token. Blocks the neutral model has no part
//! for (`guardContent`, `image`, ...) become [`crate::Part::Provider`] parts
//! holding the block as received, so the turn replays unchanged.

use serde_json::{Map, Value};

use crate::accumulate::Delta;
use crate::json::take_str;
use crate::model::response::sum;
use crate::model::{FinishReason, Usage};

pub(crate) mod error;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stream;

/// The provider table's entry (`providers/mod.rs`).
pub(crate) const ADAPTER: super::Adapter = super::Adapter {
    framing: crate::framing::Framing::EVENT_STREAM,
    encode: request::encode,
    response: response::decode,
    is_whole: response::is_whole,
    error: error::decode,
    stream: || Box::new(stream::StreamState::default()),
    embed: Err(NO_EMBEDDINGS),
    parts: true,
    files: super::adapter::Files::None,
    error_type: Some(error::error_type),
    options: Some(request::options),
    sign: Some(crate::providers::sign_request),
    no_tool_choice_none: Some("Bedrock's Converse API has no tool choice \"none\""),
};

/// Why `bedrock` cannot embed (yet), and where to go instead.
pub(crate) const NO_EMBEDDINGS: &str = "skyl does not reach Bedrock's embeddings models (InvokeModel) yet; Cohere's and OpenAI-compatible embeddings APIs are reached with provider openaicompat";

/// The adapter name, the key of its provider data and provider parts.
pub(crate) const NAME: &str = "bedrock";

/// The endpoint of a region: `https://bedrock-runtime.{region}.amazonaws.com`.
pub fn endpoint(region: &str) -> String {
    format!("https://bedrock-runtime.{region}.amazonaws.com")
}

/// Maps `stopReason` to the neutral reason.
pub(crate) fn map_finish_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// Reads a usage object (`metadata.usage`, a body's `usage`).
pub(crate) fn map_usage(u: &Map<String, Value>) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let (cache_read, cache_write) = (n("cacheReadInputTokens"), n("cacheWriteInputTokens"));
    Usage {
        // inputTokens leave out cache reads and writes, as Anthropic's do.
        input: sum(sum(n("inputTokens"), cache_read), cache_write),
        output: n("outputTokens"),
        cache_read,
        cache_write,
        reasoning: None,
        raw: Some(Value::Object(u.clone())),
        ..Usage::default()
    }
    .totalled()
}

/// The finish of a message, given its `stopReason`.
pub(crate) fn finish_delta(stop_reason: &str) -> Delta {
    Delta::Finish {
        reason: map_finish_reason(stop_reason),
        raw: stop_reason.to_string(),
    }
}

/// Citations of the open text part: its provider data
/// `{"bedrock": {"citations": [...]}}`, which the request encoder sends
/// back as a `citationsContent` block.
pub(crate) fn citations(list: Vec<Value>) -> Delta {
    Delta::PartData {
        reasoning: false,
        data: crate::model::provider_data::provider_data(NAME, "citations", Value::Array(list)),
    }
}

/// The deltas of one whole content block of a `Converse` body. `slot`
/// keys a tool call.
pub(crate) fn block_deltas(block: Value, slot: usize, out: &mut Vec<Delta>) {
    let Value::Object(mut b) = block else {
        return;
    };
    if let Some(text) = take_str(&mut b, "text") {
        out.push(Delta::Break);
        out.push(Delta::Text(text));
        out.push(Delta::Break);
        return;
    }
    if let Some(Value::Object(mut tool)) = b.remove("toolUse") {
        let id = take_str(&mut tool, "toolUseId");
        let name = take_str(&mut tool, "name");
        let input = tool
            .remove("input")
            .unwrap_or_else(|| Value::Object(Map::new()));
        out.push(Delta::ToolStart {
            slot,
            id,
            name,
            data: None,
        });
        out.push(Delta::ToolArgs {
            slot,
            fragment: crate::json::json_text(&input),
        });
        out.push(Delta::ToolEnd { slot });
        return;
    }
    if let Some(Value::Object(mut reasoning)) = b.remove("reasoningContent") {
        if let Some(data) = take_str(&mut reasoning, "redactedContent") {
            out.push(Delta::RedactedReasoning(data));
            return;
        }
        let mut text = match reasoning.remove("reasoningText") {
            Some(Value::Object(t)) => t,
            _ => Map::new(),
        };
        out.push(Delta::Break);
        out.push(Delta::Reasoning(
            take_str(&mut text, "text").unwrap_or_default(),
        ));
        if let Some(sig) = take_str(&mut text, "signature") {
            out.push(Delta::ReasoningSignature(sig));
        }
        out.push(Delta::Break);
        return;
    }
    if let Some(Value::Object(mut cited)) = b.remove("citationsContent") {
        let text: String = match cited.get("content") {
            Some(Value::Array(content)) => content
                .iter()
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect(),
            _ => String::new(),
        };
        out.push(Delta::Break);
        if let Some(Value::Array(list)) = cited.remove("citations") {
            out.push(citations(list));
        }
        out.push(Delta::Text(text));
        out.push(Delta::Break);
        return;
    }
    out.push(Delta::ProviderPart {
        provider: NAME,
        data: Value::Object(b),
    });
}

#[cfg(test)]
mod tests;
