//! [`Request`](crate::Request) to a Chat Completions body.

use serde_json::Value;

use super::{Dialect, DEFAULT_BASE_URL};
use crate::error::Error;
use crate::json::write::{object_text, Arr, Out};
use crate::model::{Message, Part, ResponseFormat, Role, ToolChoice, ToolChoiceMode};
use crate::providers::{
    image_source, join_url, joined_system, tool_declaration, EncodeInput, Encoded, ImageSource,
    BASE_URL_NEEDED,
};

/// Encodes the request for OpenAI or a compatible server.
pub(crate) fn encode(input: &EncodeInput<'_>, dialect: Dialect) -> Result<Encoded, Error> {
    let req = input.request;
    let base = match (&input.config.base_url, dialect.compat) {
        (Some(b), _) if !b.trim().is_empty() => b.as_str(),
        (_, false) => DEFAULT_BASE_URL,
        (_, true) => return Err(Error::invalid_request("baseURL", BASE_URL_NEEDED)),
    };
    let url = join_url(base, "chat/completions");
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }

    // Many chat templates of compatible servers accept one system message,
    // first: there, all system text goes to it.
    let in_system = |msg: &Message| dialect.compat && msg.role == Role::System;
    let system = joined_system(
        req.system.iter().cloned().chain(
            req.messages
                .iter()
                .filter(|m| in_system(m))
                .map(crate::providers::system_text),
        ),
    );

    let mut out = Out::default();
    let mut body = out.object();
    body.str("model", input.model);
    let mut messages = body.array("messages");
    if let Some(system) = system {
        messages
            .object()
            .str("role", "system")
            .str("content", &system);
    }
    let mut listed = (req.messages.iter().enumerate())
        .filter(|(_, m)| !in_system(m))
        .peekable();
    while let Some((i, msg)) = listed.next() {
        // Consecutive assistant messages are one turn: OpenAI wants an
        // assistant message's tool calls answered by the messages right
        // after it, so `assistant[a], assistant[b], tool[a], tool[b]` (a
        // history other tools write) is sent as one assistant message.
        let mut more = Vec::new();
        let assistant = |m: &(usize, &Message)| m.1.role == Role::Assistant;
        if msg.role == Role::Assistant {
            while let Some((_, next)) = listed.next_if(assistant) {
                more.push(next);
            }
        }
        encode_message(msg, &more, i, dialect, &mut messages)?;
    }
    drop(messages);
    if !req.tools.is_empty() {
        let mut tools = body.array("tools");
        for t in &req.tools {
            let mut tool = tools.object();
            tool.str("type", "function");
            tool_declaration(&mut tool.object("function"), t, Some("parameters"));
        }
    }
    // (Without tools a provider refuses a tool choice: it is left out.)
    if let Some(choice) = req.tool_choice.as_ref().filter(|_| !req.tools.is_empty()) {
        match choice {
            ToolChoice::Mode(mode) => {
                let mode = match mode {
                    ToolChoiceMode::Auto => "auto",
                    ToolChoiceMode::None => "none",
                    ToolChoiceMode::Required => "required",
                };
                body.str("tool_choice", mode);
            }
            ToolChoice::Tool(t) => {
                let mut c = body.object("tool_choice");
                c.str("type", "function");
                c.object("function").str("name", &t.name);
            }
        }
    }
    if let Some(max) = req.max_tokens {
        // OpenAI deprecated max_tokens and rejects it on reasoning models;
        // most compatible servers only know max_tokens.
        let field = if dialect.compat {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        body.uint(field, max.into());
    }
    if let Some(t) = req.temperature {
        body.float("temperature", t);
    }
    if let Some(p) = req.top_p {
        body.float("top_p", p);
    }
    if !req.stop.is_empty() {
        body.strs("stop", &req.stop);
    }
    // https://platform.openai.com/docs/api-reference/chat/create#chat-create-response_format
    match &req.response_format {
        Some(ResponseFormat::Json) => {
            body.object("response_format").str("type", "json_object");
        }
        Some(ResponseFormat::JsonSchema {
            schema,
            name,
            description,
            strict,
        }) => {
            let mut format = body.object("response_format");
            format.str("type", "json_schema");
            let mut json_schema = format.object("json_schema");
            let (name, description) = (name.as_deref(), description.as_deref());
            crate::providers::schema_format(&mut json_schema, schema, name, description, *strict);
        }
        None => {}
    }
    if input.stream {
        body.bool("stream", true);
        if !dialect.compat || input.config.include_usage {
            body.object("stream_options").bool("include_usage", true);
        }
    }
    drop(body);
    Ok((url, headers, out))
}

/// Writes `msg` (for an assistant message, with the assistant messages
/// right after it, `more`, as one turn).
fn encode_message(
    msg: &Message,
    more: &[&Message],
    index: usize,
    dialect: Dialect,
    out: &mut Arr,
) -> Result<(), Error> {
    match msg.role {
        Role::System => {
            out.object()
                .str("role", "system")
                .str("content", &crate::providers::system_text(msg));
        }
        Role::User | Role::Tool => encode_user(msg, index, out)?,
        Role::Assistant => encode_assistant(msg, more, dialect, out),
    }
    Ok(())
}

/// A user or tool message: its tool results as messages of their own, right
/// after the turn that made the calls; any other content follows as a user
/// turn.
fn encode_user(msg: &Message, index: usize, out: &mut Arr) -> Result<(), Error> {
    let mut content = Vec::new();
    let mut all_text = true;
    for (p, part) in msg.parts.iter().enumerate() {
        match part {
            Part::ToolResult {
                call_id,
                content: c,
                ..
            } => {
                out.object()
                    .str("role", "tool")
                    .str("tool_call_id", call_id)
                    .str("content", c);
            }
            Part::Text { text, .. } => {
                content.push(object_text(|o| {
                    o.str("type", "text").str("text", text);
                }));
            }
            Part::File {
                url,
                data,
                media_type,
                filename,
                ..
            } => {
                all_text = false;
                let at = || format!("messages[{index}].parts[{p}]");
                // https://platform.openai.com/docs/guides/pdf-files
                let data = match (url, data) {
                    (_, Some(data)) => data,
                    _ => {
                        return Err(Error::invalid_request(
                            format!("{}.url", at()),
                            "Chat Completions takes a file as base64 data, not by URL \
                             (the responses provider takes URLs)",
                        ))
                    }
                };
                if media_type != "application/pdf" {
                    return Err(Error::invalid_request(
                        format!("{}.mediaType", at()),
                        format!(
                            "Chat Completions takes PDF files, not {}",
                            crate::json::write::quoted(media_type)
                        ),
                    ));
                }
                content.push(object_text(|o| {
                    o.str("type", "file")
                        .object("file")
                        .str("filename", filename.as_deref().unwrap_or("document.pdf"))
                        .str("file_data", &crate::providers::data_url(media_type, data));
                }));
            }
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
                content.push(object_text(|o| {
                    o.str("type", "image_url")
                        .object("image_url")
                        .str("url", &url);
                }));
            }
            _ => {}
        }
    }
    if !content.is_empty() {
        let mut m = out.object();
        m.str("role", "user");
        if all_text && content.len() == 1 {
            m.str("content", &msg.joined_text());
        } else {
            let mut parts = m.array("content");
            for c in &content {
                parts.json(c);
            }
        }
    }
    Ok(())
}

/// An assistant message and the consecutive ones in `more`, as one
/// assistant message: text, replayed reasoning and every tool call.
fn encode_assistant(msg: &Message, more: &[&Message], dialect: Dialect, out: &mut Arr) {
    let parts = || msg.parts.iter().chain(more.iter().flat_map(|m| &m.parts));
    let calls = parts().any(|p| matches!(p, Part::ToolCall { .. }));
    let (reasoning, reasoning_field) = replayed_reasoning(parts(), dialect);
    let mut text = msg.joined_text();
    for m in more {
        text.push_str(&m.joined_text());
    }
    let mut m = out.object();
    m.str("role", "assistant");
    if calls && !dialect.compat && text.is_empty() {
        // The documented form for a turn of only tool calls.
        m.null("content");
    } else {
        m.str("content", &text);
    }
    if !reasoning.is_empty() {
        // DeepSeek rejects the next turn of a tool loop without it.
        m.str(reasoning_field, &reasoning);
    }
    if calls {
        write_tool_calls(&mut m.array("tool_calls"), parts(), dialect);
    }
}

/// The reasoning an OpenAI-compatible server sent, to replay under the
/// field it came in (DeepSeek rejects a tool loop without it), and that
/// field; other providers' reasoning is not replayed.
fn replayed_reasoning<'a>(
    parts: impl Iterator<Item = &'a Part>,
    dialect: Dialect,
) -> (String, &'static str) {
    let mut reasoning = String::new();
    let mut field = "reasoning_content";
    if !dialect.compat {
        return (reasoning, field);
    }
    for part in parts {
        let Part::Reasoning {
            text,
            provider_data,
            ..
        } = part
        else {
            continue;
        };
        if let Some(came_in) = provider_data
            .as_ref()
            .and_then(|d| d.get(dialect.key()))
            .and_then(|d| d.get("reasoningField"))
            .and_then(Value::as_str)
        {
            reasoning.push_str(text);
            if came_in == "reasoning" {
                field = "reasoning";
            }
        }
    }
    (reasoning, field)
}

/// The `tool_calls` list of an assistant message.
fn write_tool_calls<'a>(list: &mut Arr, parts: impl Iterator<Item = &'a Part>, dialect: Dialect) {
    for part in parts {
        let Part::ToolCall {
            id,
            name,
            arguments,
            provider_data,
        } = part
        else {
            continue;
        };
        let mut call = list.object();
        call.str("id", id).str("type", "function");
        // Servers that parse arguments reject "".
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments.as_str()
        };
        call.object("function")
            .str("name", name)
            .str("arguments", arguments);
        if let Some(extra) = provider_data
            .as_ref()
            .and_then(|d| d.get(dialect.key()))
            .and_then(|d| d.get("extra_content"))
        {
            call.value("extra_content", extra);
        }
    }
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
            ImageSource::Base64 { media_type, data } => {
                crate::providers::data_url(media_type, data)
            }
        },
    )
}
