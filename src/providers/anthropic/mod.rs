//! Anthropic Messages.
//!
//! API reference: <https://docs.anthropic.com/en/api/messages>, streaming:
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>, tool use:
//! <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>.
//!
//! Content blocks the neutral model has no part for (`server_tool_use`,
//! `*_tool_result`, `mcp_tool_use`, `compaction`, `fallback`, ...) become
//! [`crate::Part::Provider`] parts holding the block as received, so the turn
//! replays unchanged. Their names are listed by [`server_tool_names`].

use serde_json::{Map, Value};

use crate::accumulate::Delta;
use crate::json::take_str;
use crate::model::response::sum;
use crate::model::{FinishReason, Message, Part, Usage};

pub(crate) mod error;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stream;

mod fast;

/// The provider table's entry (`providers/mod.rs`).
pub(crate) const ADAPTER: super::Adapter = super::Adapter {
    framing: crate::framing::Framing::Sse,
    encode: request::encode,
    response: response::decode,
    is_whole: response::is_whole,
    error: error::decode,
    stream: || Box::new(stream::StreamState::default()),
    embed: Err(NO_EMBEDDINGS),
    parts: true,
    files: super::adapter::Files::None,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

/// Why `anthropic` cannot embed, and where to go instead.
pub(crate) const NO_EMBEDDINGS: &str = "Anthropic has no embeddings API; it recommends Voyage AI, which skyl reaches as provider openaicompat with baseURL https://api.voyageai.com/v1 and a Voyage model (e.g. voyage-3.5)";

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";
/// The `max_tokens` sent when a request sets none: the API requires the
/// field. 4096 fits every current model's output limit.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The adapter name, the key of its provider data and provider parts.
pub(crate) const NAME: &str = "anthropic";

/// Maps `stop_reason` to the neutral reason.
pub(crate) fn map_finish_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::Refusal,
        "pause_turn" => FinishReason::Pause,
        _ => FinishReason::Other,
    }
}

/// Reads a (merged) usage object.
pub(crate) fn map_usage(u: &Map<String, Value>) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let (cache_read, cache_write) = (
        n("cache_read_input_tokens"),
        n("cache_creation_input_tokens"),
    );
    Usage {
        // Anthropic's input_tokens leave out cache reads and writes.
        input: sum(sum(n("input_tokens"), cache_read), cache_write),
        output: n("output_tokens"),
        cache_read,
        cache_write,
        reasoning: None,
        raw: Some(Value::Object(u.clone())),
        ..Usage::default()
    }
    .totalled()
}

/// The names of the server-side tool calls (`server_tool_use`,
/// `mcp_tool_use`) in a message: Anthropic ran them, the client must not.
pub fn server_tool_names(message: &Message) -> Vec<String> {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Provider { provider, data } if provider == NAME => {
                let kind = data.get("type").and_then(Value::as_str)?;
                if kind == "server_tool_use" || kind == "mcp_tool_use" {
                    data.get("name").and_then(Value::as_str).map(str::to_string)
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect()
}

/// The deltas of one whole content block (a non-streaming body, or a block
/// that arrived whole inside `message_start`). `slot` keys a tool call.
pub(crate) fn block_deltas(block: Value, slot: usize, out: &mut Vec<Delta>) {
    let Value::Object(mut b) = block else {
        return;
    };
    let kind = b
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match kind.as_str() {
        "text" => {
            out.push(Delta::Break);
            out.push(Delta::Text(take_str(&mut b, "text").unwrap_or_default()));
            if let Some(Value::Array(list)) = b.remove("citations") {
                if !list.is_empty() {
                    out.push(citations(list));
                }
            }
        }
        "thinking" => {
            out.push(Delta::Break);
            out.push(Delta::Reasoning(
                take_str(&mut b, "thinking").unwrap_or_default(),
            ));
            if let Some(sig) = take_str(&mut b, "signature") {
                out.push(Delta::ReasoningSignature(sig));
            }
            out.push(Delta::Break);
        }
        "redacted_thinking" => {
            out.push(Delta::RedactedReasoning(
                take_str(&mut b, "data").unwrap_or_default(),
            ));
        }
        "tool_use" => {
            let id = take_str(&mut b, "id");
            let name = take_str(&mut b, "name");
            let input = b
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
        }
        _ => out.push(Delta::ProviderPart {
            provider: NAME,
            data: Value::Object(b),
        }),
    }
}

/// Citations of the open text part: its provider data
/// `{"anthropic": {"citations": [...]}}`, which the request encoder sends
/// back as the text block's `citations`.
pub(crate) fn citations(list: Vec<Value>) -> Delta {
    Delta::PartData {
        reasoning: false,
        data: crate::model::provider_data::provider_data(NAME, "citations", Value::Array(list)),
    }
}

/// The finish of a message, given its `stop_reason`.
pub(crate) fn finish_delta(stop_reason: Option<&Value>) -> Option<Delta> {
    let reason = stop_reason.and_then(Value::as_str)?;
    Some(Delta::Finish {
        reason: map_finish_reason(reason),
        raw: reason.to_string(),
    })
}

/// A message's whole content blocks (`(slot, block)`) and its finish. The
/// finish goes before the last block: a `tool_use` block cut off by
/// `max_tokens` (only the last one can be) is reported incomplete, not
/// executed, and the calls before it stay whole.
pub(crate) fn content_deltas(
    blocks: Vec<(usize, Value)>,
    finish: Option<Delta>,
    out: &mut Vec<Delta>,
) {
    let mut finish = finish;
    let last = blocks.len().saturating_sub(1);
    for (i, (slot, block)) in blocks.into_iter().enumerate() {
        if i == last {
            out.extend(finish.take());
        }
        block_deltas(block, slot, out);
    }
    out.extend(finish);
}

/// The refusal explanation of a message, if it carries `stop_details`.
pub(crate) fn refusal_explanation(message: &Value) -> Option<String> {
    crate::json::nested(message, &["stop_details", "explanation"])
        .and_then(Value::as_str)
        .map(str::to_string)
}
