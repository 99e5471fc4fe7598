//! [`Request`](crate::Request) to a Chat Completions body.

use serde_json::{json, Map, Value};

use super::{Dialect, DEFAULT_BASE_URL};
use crate::error::Error;
use crate::providers::{
    image_source, join_url, joined_system, tool_declaration, EncodeInput, Encoded, ImageSource,
};
use crate::types::{Message, Part, Role, ToolChoice, ToolChoiceMode};

/// Encodes the request for OpenAI or a compatible server.
pub(crate) fn encode(input: &EncodeInput<'_>, dialect: Dialect) -> Result<Encoded, Error> {
    let req = input.request;
    let base =
        match (&input.config.base_url, dialect.compat) {
            (Some(b), _) if !b.trim().is_empty() => b.as_str(),
            (_, false) => DEFAULT_BASE_URL,
            (_, true) => return Err(Error::invalid_request(
                "baseURL",
                "an OpenAI-compatible server needs its base URL (e.g. http://127.0.0.1:11434/v1)",
            )),
        };
    let url = join_url(base, "chat/completions");
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }

    let mut messages = Vec::new();
    let mut system: Vec<String> = req.system.iter().cloned().collect();
    for (i, msg) in req.messages.iter().enumerate() {
        if dialect.compat && msg.role == Role::System {
            // Many chat templates of compatible servers accept one system
            // message, first: all system text goes there.
            system.push(msg.joined_text());
            continue;
        }
        encode_message(msg, i, dialect, &mut messages)?;
    }
    if let Some(system) = joined_system(system) {
        messages.insert(0, json!({"role": "system", "content": system}));
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(input.model));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": tool_declaration(t, "parameters")}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &req.tool_choice {
        body.insert(
            "tool_choice".into(),
            match choice {
                ToolChoice::Mode(ToolChoiceMode::Auto) => json!("auto"),
                ToolChoice::Mode(ToolChoiceMode::None) => json!("none"),
                ToolChoice::Mode(ToolChoiceMode::Required) => json!("required"),
                ToolChoice::Tool(t) => json!({"type": "function", "function": {"name": t.name}}),
            },
        );
    }
    if let Some(max) = req.max_tokens {
        // OpenAI deprecated max_tokens and rejects it on reasoning models;
        // most compatible servers only know max_tokens.
        let field = if dialect.compat {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        body.insert(field.into(), json!(max));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if !req.stop.is_empty() {
        body.insert("stop".into(), json!(req.stop));
    }
    if input.stream {
        body.insert("stream".into(), json!(true));
        if !dialect.compat || input.config.include_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    Ok((url, headers, body))
}

fn encode_message(
    msg: &Message,
    index: usize,
    dialect: Dialect,
    out: &mut Vec<Value>,
) -> Result<(), Error> {
    match msg.role {
        Role::System => {
            out.push(json!({"role": "system", "content": msg.joined_text()}));
        }
        Role::User | Role::Tool => {
            // Tool results are messages of their own, right after the turn
            // that made the calls; any other content follows as a user turn.
            let mut content = Vec::new();
            let mut all_text = true;
            for (p, part) in msg.parts.iter().enumerate() {
                match part {
                    Part::ToolResult {
                        call_id,
                        content: c,
                        ..
                    } => out.push(json!({"role": "tool", "tool_call_id": call_id, "content": c})),
                    Part::Text { text, .. } => content.push(json!({"type": "text", "text": text})),
                    Part::Image {
                        url,
                        data,
                        media_type,
                        ..
                    } => {
                        all_text = false;
                        let url = image_url(url, data, media_type).map_err(|m| {
                            Error::invalid_request(format!("messages[{index}].parts[{p}]"), m)
                        })?;
                        content.push(json!({"type": "image_url", "image_url": {"url": url}}));
                    }
                    _ => {}
                }
            }
            if !content.is_empty() {
                let content = if all_text && content.len() == 1 {
                    json!(msg.joined_text())
                } else {
                    Value::Array(content)
                };
                out.push(json!({"role": "user", "content": content}));
            }
        }
        Role::Assistant => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert("content".into(), json!(msg.joined_text()));
            let mut calls = Vec::new();
            let mut reasoning = String::new();
            let mut reasoning_field = "reasoning_content".to_string();
            for part in &msg.parts {
                match part {
                    Part::ToolCall {
                        id,
                        name,
                        arguments,
                        provider_data,
                    } => {
                        let mut call = Map::new();
                        call.insert("id".into(), json!(id));
                        call.insert("type".into(), json!("function"));
                        // Servers that parse arguments reject "".
                        let arguments = if arguments.trim().is_empty() {
                            "{}"
                        } else {
                            arguments.as_str()
                        };
                        call.insert(
                            "function".into(),
                            json!({"name": name, "arguments": arguments}),
                        );
                        if let Some(extra) = provider_data
                            .as_ref()
                            .and_then(|d| d.get(dialect.key()))
                            .and_then(|d| d.get("extra_content"))
                        {
                            call.insert("extra_content".into(), extra.clone());
                        }
                        calls.push(Value::Object(call));
                    }
                    // Reasoning an OpenAI-compatible server sent is replayed
                    // under the field it came in (DeepSeek rejects a tool
                    // loop without it); other providers' reasoning is not.
                    Part::Reasoning {
                        text,
                        provider_data,
                        ..
                    } if dialect.compat => {
                        if let Some(field) = provider_data
                            .as_ref()
                            .and_then(|d| d.get(dialect.key()))
                            .and_then(|d| d.get("reasoningField"))
                            .and_then(Value::as_str)
                        {
                            reasoning.push_str(text);
                            if field == "reasoning" {
                                reasoning_field = field.to_string();
                            }
                        }
                    }
                    _ => {}
                }
            }
            if !reasoning.is_empty() {
                // DeepSeek rejects the next turn of a tool loop without it.
                m.insert(reasoning_field, json!(reasoning));
            }
            if !calls.is_empty() {
                if !dialect.compat && msg.joined_text().is_empty() {
                    // The documented form for a turn of only tool calls.
                    m.insert("content".into(), Value::Null);
                }
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(m));
        }
    }
    Ok(())
}

/// The URL of an image part: its own, or a `data:` URL built from base64.
fn image_url(
    url: &Option<String>,
    data: &Option<String>,
    media_type: &Option<String>,
) -> Result<String, String> {
    Ok(
        match image_source(url.as_deref(), data.as_deref(), media_type.as_deref())? {
            ImageSource::Url { url, .. } => url.to_string(),
            ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        },
    )
}
