//! [`Request`](crate::Request) to a Messages body.

use serde_json::{Map, Value};

use super::{API_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, NAME};
use crate::error::Error;
use crate::json::write::Out;
use crate::model::{Message, Part, ResponseFormat, Role, ToolChoice, ToolChoiceMode};
#[cfg(test)]
use crate::providers::object_schema;
use crate::providers::{
    cache_control, group_turns, image_source, join_url, tool_declaration, tool_id, tool_input,
    tool_option, write_turns, EncodeInput, Encoded, EncodedPart, ImageSource, Turns,
};

/// The `anthropic_version` of a body for Claude on Vertex AI.
const VERTEX_VERSION: &str = "vertex-2023-10-16";

/// Encodes the request for the Messages API.
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let req = input.request;
    let base = input
        .config
        .base_url
        .as_deref()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(DEFAULT_BASE_URL);
    let vertex = input.config.vertex.as_ref();
    let (url, mut headers) = match vertex {
        // Claude on Vertex: the model is in the URL, the version in the body.
        Some(v) => {
            let method = if input.stream {
                "streamRawPredict"
            } else {
                "rawPredict"
            };
            crate::providers::vertex::endpoint(input.config, v, "anthropic", input.model, method)?
        }
        None => {
            let key = input.config.api_key.iter();
            let mut headers: Vec<_> = key.map(|k| ("x-api-key".to_string(), k.clone())).collect();
            headers.push(("anthropic-version".to_string(), API_VERSION.to_string()));
            (join_url(base, "v1/messages"), headers)
        }
    };
    if input.config.browser {
        headers.push((
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ));
    }

    // Consecutive turns of one role are merged.
    check_cache_marks(req)?;
    let Turns { system, mut turns } = group_turns(req, "assistant", encode_part)?;
    for (role, content) in &mut turns {
        if *role == "user" {
            // Tool results must open the user turn that answers the calls;
            // the order within each group is kept (a stable partition: a
            // sort would link 4 KB of driftsort into the wasm).
            let (mut lead, rest): (Vec<EncodedPart>, Vec<EncodedPart>) =
                std::mem::take(content).into_iter().partition(|b| b.lead);
            lead.extend(rest);
            *content = lead;
        }
    }

    let mut out = Out::default();
    let mut body = out.object();
    match vertex {
        Some(_) => body.str("anthropic_version", VERTEX_VERSION),
        None => body.str("model", input.model),
    };
    // max_tokens must exceed a thinking budget: the default comes on top.
    let budget = (req.provider_options.as_ref())
        .and_then(|o| o.get("thinking"))
        .and_then(|t| t.get("budget_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    body.uint(
        "max_tokens",
        req.max_tokens.map_or_else(
            || budget.saturating_add(DEFAULT_MAX_TOKENS.into()),
            u64::from,
        ),
    );
    if system_marked(req) {
        write_marked_system(&mut body, req)?;
    } else if let Some(system) = system {
        body.str("system", &system);
    }
    write_turns(&mut body, "messages", "content", &turns);
    if !req.tools.is_empty() {
        let mut tools = body.array("tools");
        for t in &req.tools {
            let mut d = tools.object();
            tool_declaration(&mut d, t, Some("input_schema"));
            // Progress asked for: the input streams in small pieces
            // (https://docs.claude.com/en/docs/agents-and-tools/tool-use/fine-grained-tool-streaming),
            // unless the tool says otherwise.
            if req.partial.tools && tool_option(t, "eager_input_streaming").is_none() {
                d.bool("eager_input_streaming", true);
            }
            if let Some(ttl) = &t.cache {
                for (k, v) in cache_control(ttl.as_deref()) {
                    d.value(&k, &v);
                }
            }
        }
    }
    // (Without tools a provider refuses a tool choice: it is left out.)
    if let Some(choice) = req.tool_choice.as_ref().filter(|_| !req.tools.is_empty()) {
        let mut c = body.object("tool_choice");
        match choice {
            ToolChoice::Mode(ToolChoiceMode::Auto) => c.str("type", "auto"),
            ToolChoice::Mode(ToolChoiceMode::None) => c.str("type", "none"),
            ToolChoice::Mode(ToolChoiceMode::Required) => c.str("type", "any"),
            ToolChoice::Tool(t) => c.str("type", "tool").str("name", &t.name),
        };
    }
    if let Some(t) = req.temperature {
        body.float("temperature", t);
    }
    if let Some(p) = req.top_p {
        body.float("top_p", p);
    }
    if !req.stop.is_empty() {
        body.strs("stop_sequences", &req.stop);
    }
    // https://docs.claude.com/en/docs/build-with-claude/structured-outputs
    match &req.response_format {
        Some(ResponseFormat::Json) => {
            return Err(Error::invalid_request(
                "responseFormat",
                "Anthropic has no plain JSON mode: give a schema, \
                 { type: \"json_schema\", schema }",
            ))
        }
        Some(ResponseFormat::JsonSchema { schema, .. }) => {
            body.object("output_config")
                .object("format")
                .str("type", "json_schema")
                .value("schema", schema);
        }
        None => {}
    }
    if input.stream {
        body.bool("stream", true);
    }
    drop(body);
    Ok((url, headers, out))
}

/// Anthropic takes at most four cache breakpoints in a request.
const MAX_CACHE_MARKS: usize = 4;

/// The paths of the request's cache marks, in Anthropic's prompt order
/// (tools, system, messages); more than four is an error naming the fifth.
fn check_cache_marks(req: &crate::model::Request) -> Result<(), Error> {
    let tools = (req.tools.iter().enumerate())
        .filter(|(_, t)| t.cache.is_some())
        .map(|(i, _)| format!("tools[{i}].cache"));
    // The marks of the messages whose role `system` says, in order.
    let marks = |system: bool| {
        (req.messages.iter().enumerate())
            .filter(move |(_, msg)| (msg.role == Role::System) == system)
            .flat_map(|(m, msg)| {
                (msg.parts.iter().enumerate())
                    .filter(|(_, p)| matches!(p, Part::Cache { .. }))
                    .map(move |(p, _)| format!("messages[{m}].parts[{p}]"))
            })
    };
    let all: Vec<String> = tools.chain(marks(true)).chain(marks(false)).collect();
    match all.get(MAX_CACHE_MARKS) {
        Some(fifth) => Err(Error::invalid_request(
            fifth.clone(),
            format!(
                "Anthropic takes at most {MAX_CACHE_MARKS} cache breakpoints; this request has {}",
                all.len()
            ),
        )),
        None => Ok(()),
    }
}

/// Whether a system message carries a cache mark (the system prompt is
/// then a list of blocks, to hold it).
fn system_marked(req: &crate::model::Request) -> bool {
    (req.messages.iter())
        .filter(|m| m.role == Role::System)
        .any(|m| m.parts.iter().any(|p| matches!(p, Part::Cache { .. })))
}

/// The system prompt as text blocks (the request's `system`, then each
/// system message's texts), a mark's `cache_control` on the block before it.
fn write_marked_system(
    body: &mut crate::json::write::Obj,
    req: &crate::model::Request,
) -> Result<(), Error> {
    let mut blocks: Vec<Map<String, Value>> = Vec::new();
    let text_block = |text: &str| {
        let mut b = Map::new();
        b.insert("type".into(), Value::from("text"));
        b.insert("text".into(), Value::from(text));
        b
    };
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        blocks.push(text_block(system));
    }
    for (m, msg) in req
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::System)
    {
        for (p, part) in msg.parts.iter().enumerate() {
            match part {
                Part::Text { text, .. } if !text.is_empty() => blocks.push(text_block(text)),
                Part::Cache { ttl } => {
                    let Some(before) = blocks.last_mut() else {
                        return Err(Error::invalid_request(
                            format!("messages[{m}].parts[{p}]"),
                            "a cache mark must follow the system text it marks",
                        ));
                    };
                    before.extend(cache_control(ttl.as_deref()));
                }
                _ => {}
            }
        }
    }
    let mut list = body.array("system");
    for b in blocks {
        list.value(&Value::Object(b));
    }
    Ok(())
}

/// The block for one part, `None` for parts Anthropic has no place for.
fn encode_part(msg: &Message, part: &Part) -> Result<Option<EncodedPart>, String> {
    Ok(Some(match part {
        // Anthropic refuses a text block with only whitespace (which it
        // sends itself, e.g. "\n\n" before a tool_use).
        Part::Text { text, .. } if text.trim().is_empty() => return Ok(None),
        Part::Text {
            text,
            provider_data,
        } => EncodedPart::new(|b| {
            b.str("type", "text").str("text", text);
            // Its sources, as they came (see `citations` in the decoder).
            if let Some(list) = provider_data
                .as_ref()
                .and_then(|d| d.get(NAME))
                .and_then(|d| d.get("citations"))
            {
                b.value("citations", list);
            }
        }),
        Part::Image {
            url,
            data,
            media_type,
            ..
        } => image_block(url.as_deref(), data.as_deref(), media_type.as_deref())?,
        Part::File {
            url,
            data,
            media_type,
            filename,
            ..
        } => document_block(
            url.as_deref(),
            data.as_deref(),
            media_type,
            filename.as_deref(),
        )?,
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => {
            let input = tool_input(arguments, "Anthropic")?;
            EncodedPart::new(|b| {
                b.str("type", "tool_use")
                    .str("id", &tool_id(id))
                    .str("name", name)
                    .value("input", &input);
            })
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => EncodedPart {
            lead: true,
            ..EncodedPart::new(|b| {
                // An error result may not be empty.
                let content = if content.trim().is_empty() && *is_error {
                    "the tool failed without a message"
                } else {
                    content.as_str()
                };
                b.str("type", "tool_result")
                    .str("tool_use_id", &tool_id(call_id))
                    .str("content", content);
                if *is_error {
                    b.bool("is_error", true);
                }
            })
        },
        Part::Reasoning {
            redacted: Some(data),
            ..
        } => EncodedPart::new(|b| {
            b.str("type", "redacted_thinking").str("data", data);
        }),
        Part::Reasoning {
            text,
            signature: Some(sig),
            ..
        } if msg.role == Role::Assistant => EncodedPart::new(|b| {
            b.str("type", "thinking")
                .str("thinking", text)
                .str("signature", sig);
        }),
        // Reasoning without a signature (another provider's) cannot be
        // verified by Anthropic and would be rejected: left out.
        Part::Reasoning { .. } => return Ok(None),
        // A replayed block goes first too if it is a tool result.
        Part::Provider { provider, data } if provider == NAME => EncodedPart {
            json: crate::json::json_text(data),
            lead: data.get("type").and_then(Value::as_str) == Some("tool_result"),
            mark: None,
        },
        Part::Provider { .. } => return Ok(None),
        // https://docs.claude.com/en/docs/build-with-claude/prompt-caching
        Part::Cache { ttl } => EncodedPart::mark(cache_control(ttl.as_deref())),
    }))
}

/// A file as a `document` block: a PDF by URL or base64, plain text as a
/// text source (https://docs.claude.com/en/docs/build-with-claude/pdf-support,
/// .../citations for the text source). Anthropic takes no other kind.
fn document_block(
    url: Option<&str>,
    data: Option<&str>,
    media_type: &str,
    filename: Option<&str>,
) -> Result<EncodedPart, String> {
    let text = match (media_type, url, data) {
        ("application/pdf", _, _) => None,
        ("text/plain", None, Some(data)) => Some(
            crate::base64::bytes(data, false)
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or("a text/plain file's data must be base64 of UTF-8 text")?,
        ),
        ("text/plain", _, _) => {
            return Err("Anthropic takes a text/plain file as base64 data, not by URL".into())
        }
        (other, _, _) => {
            return Err(format!(
                "Anthropic takes application/pdf and text/plain files, not {}",
                crate::json::write::quoted(other)
            ))
        }
    };
    Ok(EncodedPart::new(|b| {
        b.str("type", "document");
        {
            let mut s = b.object("source");
            match (&text, url, data) {
                (Some(text), _, _) => s
                    .str("type", "text")
                    .str("media_type", "text/plain")
                    .str("data", text),
                (None, Some(url), _) => s.str("type", "url").str("url", url),
                (None, None, Some(data)) => s
                    .str("type", "base64")
                    .str("media_type", media_type)
                    .str("data", data),
                (None, None, None) => &mut s,
            };
        }
        if let Some(title) = filename {
            b.str("title", title);
        }
    }))
}

fn image_block(
    url: Option<&str>,
    data: Option<&str>,
    media_type: Option<&str>,
) -> Result<EncodedPart, String> {
    let source = image_source(url, data, media_type)?;
    Ok(EncodedPart::new(|b| {
        b.str("type", "image");
        let mut s = b.object("source");
        match source {
            ImageSource::Url { url, .. } => s.str("type", "url").str("url", url),
            ImageSource::Base64 { media_type, data } => s
                .str("type", "base64")
                .str("media_type", media_type)
                .str("data", data),
        };
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Cache marks: at most four (tools' marks counted), each after the
    /// part it marks; a bad lifetime is refused by name.
    #[test]
    fn cache_marks_are_counted_and_must_follow_a_part() {
        use crate::model::Request;
        use crate::providers::Provider;
        let config = {
            let mut c = crate::ClientConfig::new(Provider::Anthropic);
            c.model = Some("m".into());
            c
        };
        let user = |parts: Value| -> Request {
            serde_json::from_value(json!({"messages": [{"role": "user", "parts": parts}]})).unwrap()
        };
        let text = json!({"type": "text", "text": "t"});
        let mark = json!({"type": "cache"});
        let four = user(json!([text, mark, text, mark, text, mark, text, mark]));
        assert!(crate::encode_request(&config, &four, false).is_ok());
        let mut five = four.clone();
        five.tools = vec![crate::model::Tool {
            name: "f".into(),
            cache: Some(None),
            ..crate::model::Tool::default()
        }];
        let err = crate::encode_request(&config, &five, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid request: messages[0].parts[7]: Anthropic takes at most 4 cache breakpoints; this request has 5"
        );
        let err = crate::encode_request(&config, &user(json!([mark, text])), false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid request: messages[0].parts[0]: a cache mark must follow"),
            "{err}"
        );
        let bad = user(json!([text, {"type": "cache", "ttl": "2h"}]));
        let err = crate::encode_request(&config, &bad, false).unwrap_err();
        assert!(
            err.to_string().contains("messages[0].parts[1].ttl"),
            "{err}"
        );
    }

    /// Tool results open a user turn, replayed provider blocks that are
    /// tool results included; the other blocks keep their order.
    #[test]
    fn tool_results_open_the_user_turn() {
        let request: crate::model::Request = serde_json::from_value(json!({"messages": [
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "t", "name": "f", "arguments": "{}"}]},
            {"role": "user", "parts": [
                {"type": "text", "text": "a"},
                {"type": "provider", "provider": "anthropic", "data": {"type": "tool_result", "tool_use_id": "s"}},
                {"type": "text", "text": "b"},
                {"type": "tool_result", "callId": "t", "content": "1"}]}]}))
        .unwrap();
        let (_, body) =
            crate::providers::sent(crate::providers::Provider::Anthropic, None, &request);
        let kinds: Vec<&str> = body["messages"][1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["tool_use_id"].as_str().or(b["text"].as_str()).unwrap())
            .collect();
        assert_eq!(kinds, ["s", "t", "a", "b"]);
    }

    /// Tool progress asked for: each tool's input streams eagerly, unless
    /// the tool sets `eager_input_streaming` itself; not asked: not sent.
    #[test]
    fn partial_tools_stream_tool_input_eagerly() {
        let request = |partial: Value| -> crate::model::Request {
            serde_json::from_value(json!({
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
                "tools": [{"name": "a"},
                    {"name": "b", "providerOptions": {"eager_input_streaming": false}}],
                "partial": partial}))
            .unwrap()
        };
        let eager = |partial: Value| {
            let (_, body) = crate::providers::sent(
                crate::providers::Provider::Anthropic,
                None,
                &request(partial),
            );
            body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.get("eager_input_streaming").cloned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            eager(json!({"tools": true})),
            [Some(json!(true)), Some(json!(false))]
        );
        assert_eq!(eager(json!({"output": false})), [None, Some(json!(false))]);
        assert_eq!(eager(json!(null)), [None, Some(json!(false))]);
    }

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
        assert_eq!(tool_input("", "Anthropic").unwrap(), json!({}));
        assert_eq!(
            tool_input(r#"{"a":1}"#, "Anthropic").unwrap(),
            json!({"a": 1})
        );
        assert!(tool_input(r#"{"a":"#, "Anthropic")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(tool_input("[1]", "Anthropic")
            .unwrap_err()
            .contains("JSON object"));
    }
}
