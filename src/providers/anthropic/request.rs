//! [`Request`](crate::Request) to a Messages body.

use serde_json::{json, Map, Value};

use super::{API_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, NAME};
use crate::error::Error;
#[cfg(test)]
use crate::providers::object_schema;
use crate::providers::{
    group_turns, image_source, join_url, tool_declaration, EncodeInput, Encoded, ImageSource, Turns,
};
use crate::types::{Part, Role, ToolChoice, ToolChoiceMode};

/// Encodes the request for the Messages API.
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let req = input.request;
    let base = input
        .config
        .base_url
        .as_deref()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(DEFAULT_BASE_URL);
    let url = join_url(base, "v1/messages");
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("x-api-key".to_string(), key.clone()));
    }
    headers.push(("anthropic-version".to_string(), API_VERSION.to_string()));
    if input.config.browser {
        headers.push((
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ));
    }

    // Consecutive turns of one role are merged.
    let Turns { system, turns } = group_turns(req, "assistant", encode_part, |_, _| {})?;
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, mut content)| {
            if role == "user" {
                // Tool results must open the user turn that answers the calls.
                content
                    .sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
            }
            json!({"role": role, "content": content})
        })
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(input.model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Some(system) = system {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| Value::Object(tool_declaration(t, "input_schema")))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &req.tool_choice {
        body.insert(
            "tool_choice".into(),
            match choice {
                ToolChoice::Mode(ToolChoiceMode::Auto) => json!({"type": "auto"}),
                ToolChoice::Mode(ToolChoiceMode::None) => json!({"type": "none"}),
                ToolChoice::Mode(ToolChoiceMode::Required) => json!({"type": "any"}),
                ToolChoice::Tool(t) => json!({"type": "tool", "name": t.name}),
            },
        );
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if !req.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(req.stop));
    }
    if input.stream {
        body.insert("stream".into(), json!(true));
    }
    Ok((url, headers, body))
}

/// The block for one part, `None` for parts Anthropic has no place for.
fn encode_part(part: &Part, role: Role) -> Result<Option<Value>, String> {
    Ok(Some(match part {
        Part::Text { text, .. } if text.is_empty() => return Ok(None),
        Part::Text { text, .. } => json!({"type": "text", "text": text}),
        Part::Image {
            url,
            data,
            media_type,
            ..
        } => image_block(url.as_deref(), data.as_deref(), media_type.as_deref())?,
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => {
            let input = tool_input(arguments)?;
            json!({"type": "tool_use", "id": tool_id(id), "name": name, "input": input})
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            let mut b = Map::new();
            b.insert("type".into(), json!("tool_result"));
            b.insert("tool_use_id".into(), json!(tool_id(call_id)));
            b.insert("content".into(), json!(content));
            if *is_error {
                b.insert("is_error".into(), json!(true));
            }
            Value::Object(b)
        }
        Part::Reasoning {
            redacted: Some(data),
            ..
        } => json!({"type": "redacted_thinking", "data": data}),
        Part::Reasoning {
            text,
            signature: Some(sig),
            ..
        } if role == Role::Assistant => {
            json!({"type": "thinking", "thinking": text, "signature": sig})
        }
        // Reasoning without a signature (another provider's) cannot be
        // verified by Anthropic and would be rejected: left out.
        Part::Reasoning { .. } => return Ok(None),
        Part::Provider { provider, data } if provider == NAME => data.clone(),
        Part::Provider { .. } => return Ok(None),
    }))
}

/// A tool-call id as Anthropic accepts it (`^[a-zA-Z0-9_-]+$`): ids from
/// other providers (Gemini's `name#2`) get every other character replaced by
/// `_`, the same way in the call and its result.
fn tool_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The `input` of a replayed tool call: its arguments, which must be a JSON
/// object. Empty arguments are `{}`.
fn tool_input(arguments: &str) -> Result<Value, String> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("tool-call arguments must be a JSON object for Anthropic".into()),
        Err(e) => Err(format!("tool-call arguments are not valid JSON: {e}")),
    }
}

fn image_block(
    url: Option<&str>,
    data: Option<&str>,
    media_type: Option<&str>,
) -> Result<Value, String> {
    Ok(match image_source(url, data, media_type)? {
        ImageSource::Url { url, .. } => {
            json!({"type": "image", "source": {"type": "url", "url": url}})
        }
        ImageSource::Base64 { media_type, data } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_tool_ids_are_made_valid_for_anthropic() {
        assert_eq!(tool_id("read_screen#2"), "read_screen_2");
        assert_eq!(tool_id("toolu_01A-b"), "toolu_01A-b");
    }

    #[test]
    fn the_schema_gets_a_top_level_object_type_and_keeps_refs() {
        let s = object_schema(Some(&json!({
            "$defs": {"a": {"type": "string"}},
            "oneOf": [{"$ref": "#/$defs/a"}],
            "required": ["x", 1, null, "y"]
        })));
        assert_eq!(
            s,
            json!({"type": "object", "$defs": {"a": {"type": "string"}}, "oneOf": [{"$ref": "#/$defs/a"}], "required": ["x", "y"]})
        );
        assert_eq!(
            object_schema(None),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(Some(&json!({"type": "array", "required": true}))),
            json!({"type": "object"})
        );
    }

    #[test]
    fn replayed_arguments_must_be_a_json_object() {
        assert_eq!(tool_input("").unwrap(), json!({}));
        assert_eq!(tool_input(r#"{"a":1}"#).unwrap(), json!({"a": 1}));
        assert!(tool_input(r#"{"a":"#)
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(tool_input("[1]").unwrap_err().contains("JSON object"));
    }
}
