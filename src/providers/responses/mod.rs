//! The OpenAI Responses API (`POST {base}/responses`), and every server that
//! speaks it as "Open Responses" (vLLM, Ollama, LM Studio, OpenRouter,
//! Hugging Face), by base URL.
//!
//! API reference: <https://platform.openai.com/docs/api-reference/responses/create>,
//! the streaming events:
//! <https://platform.openai.com/docs/api-reference/responses-streaming>,
//! the output items: <https://platform.openai.com/docs/api-reference/responses/object>,
//! and the Open Responses specification: <https://www.openresponses.org/specification>.
//!
//! A response is a list of output items. How each kind surfaces:
//!
//! - `message`: its `output_text` is text, its `refusal` the refusal; the
//!   item's `id` and `phase` are kept on the text part to replay it.
//! - `reasoning`: its summary (and LM Studio's raw `reasoning_text`) is
//!   reasoning; `id`, `summary` and `encrypted_content` are kept on the
//!   reasoning part, replayed in place (requests are stateless:
//!   `store: false`).
//! - `function_call`: a tool call, handed out at its `output_item.done`, with
//!   the id of its `call_id` (what a `function_call_output` answers).
//! - `custom_tool_call` (free-form input): a tool call whose arguments are
//!   `{"input": "<the free-form text>"}`, answered by a
//!   `custom_tool_call_output`. One the server ran itself (xAI's X Search
//!   sub-tools: the same response goes on after it) is a provider part
//!   instead, so it is handed out when the response ends or is known to
//!   have gone on.
//! - hosted tools the server ran (`web_search_call`, `file_search_call`,
//!   `code_interpreter_call`, `image_generation_call`, `mcp_call`, ...), the
//!   results it added, and anything unknown: provider parts, kept for
//!   replay, never executable.
//! - built-in actions the client must carry out and answer
//!   ([`CLIENT_ACTIONS`]: local shell, apply patch, computer use, client
//!   tool search, MCP approval): provider parts holding the whole item, each
//!   announced by a `client_action` warning that names the item type that
//!   answers it. The app answers with a provider part of that type
//!   (`{"type": "local_shell_call_output", "call_id": ..., "output": ...}`)
//!   in a user message; it is sent as is.

use serde_json::{Map, Value};

use crate::accumulate::Delta;
use crate::json::{json_text, take_str};
use crate::model::{FinishReason, Usage};

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
    embed: Ok(crate::providers::openai::embed::OPENAI),
    parts: true,
    files: super::adapter::Files::Own,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

/// The default base URL.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The adapter name, the key of its provider data and provider parts.
pub(crate) const NAME: &str = "responses";

/// Items the client must carry out and answer, with the input item type of
/// the answer (`tool_search_call` and `shell_call` only in their client or
/// local form; see [`client_action`]).
pub(crate) const CLIENT_ACTIONS: &[(&str, &str)] = &[
    ("local_shell_call", "local_shell_call_output"),
    ("shell_call", "shell_call_output"),
    ("apply_patch_call", "apply_patch_call_output"),
    ("computer_call", "computer_call_output"),
    ("tool_search_call", "tool_search_output"),
    ("mcp_approval_request", "mcp_approval_response"),
];

/// The answer item type, if `item` is an action the client must carry out:
/// a `shell_call` with no or a `local` environment (a container one ran on
/// the server), a `tool_search_call` with `execution: "client"`.
pub(crate) fn client_action(item: &Value) -> Option<&'static str> {
    let kind = item.get("type").and_then(Value::as_str)?;
    let (_, answer) = CLIENT_ACTIONS.iter().find(|(k, _)| *k == kind)?;
    let str_at = |keys: &[&str]| crate::json::nested(item, keys).and_then(Value::as_str);
    let local = match kind {
        "shell_call" => matches!(str_at(&["environment", "type"]), None | Some("local")),
        "tool_search_call" => str_at(&["execution"]) == Some("client"),
        _ => true,
    };
    local.then_some(*answer)
}

/// The neutral finish of a terminal status: `completed`, or `incomplete`
/// with its `incomplete_details.reason`. `calls` and `refused` say whether
/// the response ended in tool calls or a refusal.
pub(crate) fn finish_delta(response: &Value, calls: bool, refused: bool) -> Option<Delta> {
    let status = response.get("status").and_then(Value::as_str)?;
    let (raw, reason) = match status {
        "completed" if refused => (status.to_string(), FinishReason::Refusal),
        "completed" if calls => (status.to_string(), FinishReason::ToolCalls),
        "completed" => (status.to_string(), FinishReason::Stop),
        "incomplete" => {
            let why = crate::json::nested(response, &["incomplete_details", "reason"])
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let reason = match why {
                "max_output_tokens" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                _ => FinishReason::Other,
            };
            (format!("incomplete:{why}"), reason)
        }
        _ => return None,
    };
    Some(Delta::Finish { raw, reason })
}

/// Reads `usage`: `input_tokens` (cached included), `output_tokens`
/// (reasoning included), `input_tokens_details.cached_tokens`,
/// `output_tokens_details.reasoning_tokens`.
pub(crate) fn map_usage(u: &Value) -> Usage {
    let n = |keys: &[&str]| crate::json::nested(u, keys).and_then(Value::as_u64);
    Usage {
        input: n(&["input_tokens"]),
        output: n(&["output_tokens"]),
        cache_read: n(&["input_tokens_details", "cached_tokens"]),
        cache_write: None,
        reasoning: n(&["output_tokens_details", "reasoning_tokens"]),
        raw: Some(u.clone()),
        ..Usage::default()
    }
    .totalled()
}

/// The `id` and `model` of a response object.
pub(crate) fn meta(response: &Value) -> Delta {
    let s = |k| response.get(k).and_then(Value::as_str).map(str::to_string);
    Delta::Meta {
        id: s("id"),
        model: s("model"),
    }
}

/// A function or custom tool call's start: its `call_id` as the id, its
/// name, and what replaying it needs (the item id, its type if custom, a
/// tool search `namespace`, a program `caller`).
pub(crate) fn call_start(slot: usize, item: &Map<String, Value>) -> Delta {
    let s = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
    let mut keep = Map::new();
    for key in ["id", "namespace", "caller"] {
        if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
            keep.insert(key.to_string(), v.clone());
        }
    }
    if s("type").as_deref() == Some("custom_tool_call") {
        keep.insert("type".into(), Value::from("custom_tool_call"));
    }
    let mut data = crate::model::ProviderData::new();
    data.insert(NAME.to_string(), Value::Object(keep));
    Delta::ToolStart {
        slot,
        id: s("call_id").filter(|c| !c.is_empty()),
        name: s("name"),
        data: Some(data),
    }
}

/// A custom tool call's arguments: `{"input": "<its input>"}`.
pub(crate) fn custom_arguments(item: &Value) -> String {
    let mut args = Map::new();
    let input = item
        .get("input")
        .and_then(Value::as_str)
        .unwrap_or_default();
    args.insert("input".into(), Value::from(input));
    json_text(&Value::Object(args))
}

/// The end of a call whose `output_item.done` came: whole, unless its
/// status says it was cut off. `calls` records that a call completed (the
/// response then finishes as tool calls).
pub(crate) fn call_end(slot: usize, item: &Map<String, Value>, calls: &mut bool) -> Delta {
    match item.get("status").and_then(Value::as_str) {
        Some("incomplete") => Delta::ToolAbort {
            slot,
            reason: "the call's item ended incomplete".into(),
        },
        _ => {
            *calls = true;
            Delta::ToolEnd { slot }
        }
    }
}

/// What a finished `message` or `reasoning` item leaves on its part for
/// replay (the text or reasoning itself came before), then a break.
pub(crate) fn part_end(mut item: Map<String, Value>, reasoning: bool, out: &mut Vec<Delta>) {
    let mut keep = Map::new();
    let keys: &[&str] = if reasoning {
        &["id", "summary", "encrypted_content"]
    } else {
        &["id", "phase"]
    };
    for key in keys {
        if let Some(v) = item.remove(*key).filter(|v| !v.is_null()) {
            keep.insert((*key).to_string(), v);
        }
    }
    if reasoning || keep.contains_key("phase") || keep.contains_key("id") {
        let mut data = crate::model::ProviderData::new();
        data.insert(NAME.to_string(), Value::Object(keep));
        out.push(Delta::PartData { reasoning, data });
    }
    out.push(Delta::Break);
}

/// An item kept whole as a provider part; a client action is announced;
/// a generated image is a `file` part.
pub(crate) fn kept_item(item: Value, out: &mut Vec<Delta>) {
    let item = match generated_image(item) {
        Ok(file) => {
            out.push(Delta::Break);
            out.push(file);
            return;
        }
        Err(item) => item,
    };
    if let Some(answer) = client_action(&item) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        out.push(Delta::Warning {
            code: "client_action",
            message: format!(
                "the model asked the client to carry out a {kind}: it is a provider part of \
                 the message; answer it with a {answer} item (a provider part) in the next request"
            ),
        });
    }
    out.push(Delta::Break);
    out.push(Delta::ProviderPart {
        provider: NAME,
        data: item,
    });
}

/// A finished `image_generation_call` with its image (`result`, base64):
/// a file of `image/{output_format}` (PNG by default), the item without
/// its image kept to replay it. Anything else is given back.
fn generated_image(item: Value) -> Result<Delta, Value> {
    let Value::Object(mut fields) = item else {
        return Err(item);
    };
    let is_image = fields.get("type").and_then(Value::as_str) == Some("image_generation_call");
    let data = match fields.remove("result") {
        Some(Value::String(data)) if is_image && !data.is_empty() => data,
        other => {
            if let Some(result) = other {
                fields.insert("result".into(), result);
            }
            return Err(Value::Object(fields));
        }
    };
    let format = fields.get("output_format").and_then(Value::as_str);
    let media_type = format!("image/{}", format.unwrap_or("png"));
    Ok(Delta::File {
        media_type,
        data,
        provider: NAME,
        kept: Value::Object(fields),
    })
}

/// The text of a body's `message` item: its `output_text` parts joined,
/// and its refusal, if any.
pub(crate) fn message_content(item: &mut Map<String, Value>) -> (String, Option<String>) {
    let mut text = String::new();
    let mut refusal: Option<String> = None;
    if let Some(Value::Array(parts)) = item.get_mut("content") {
        for part in parts {
            let Value::Object(part) = part else { continue };
            match part.get("type").and_then(Value::as_str) {
                Some("output_text") => text.push_str(&take_str(part, "text").unwrap_or_default()),
                Some("refusal") => refusal
                    .get_or_insert_with(String::new)
                    .push_str(&take_str(part, "refusal").unwrap_or_default()),
                _ => {}
            }
        }
    }
    (text, refusal)
}

/// The reasoning text of a body's `reasoning` item: its summaries, then its
/// raw `reasoning_text` content (LM Studio), joined.
pub(crate) fn reasoning_text(item: &Value) -> String {
    let mut text = String::new();
    for key in ["summary", "content"] {
        for part in item
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                text.push_str(t);
            }
        }
    }
    text
}
