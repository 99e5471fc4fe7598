//! [`Request`](crate::Request) to a Responses body: `instructions` from the
//! system text, `input` items from the messages, flat function tools.
//!
//! Stateless by default: `store: false` with
//! `include: ["reasoning.encrypted_content"]`, so a history replays with no
//! server state (a reasoning item goes back with its encrypted content, in
//! place). `providerOptions` (`store`, `previous_response_id`, `reasoning`,
//! `text`, hosted tools in `tools`, ...) is merged in last.

use serde_json::Value;

use super::{DEFAULT_BASE_URL, NAME};
use crate::error::Error;
use crate::json::write::{object_text, Arr, Out};
use crate::model::{Message, Part, Request, ResponseFormat, Role, ToolChoice, ToolChoiceMode};
use crate::providers::{
    data_url, image_source, join_url, joined_system, EncodeInput, Encoded, ImageSource,
};

/// Encodes the request for the Responses API.
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let req = input.request;
    if !req.stop.is_empty() {
        return Err(Error::invalid_request(
            "stop",
            "the Responses API has no stop sequences: leave stop out (or use the \
             openaicompat or openai provider, whose Chat Completions API has them)",
        ));
    }
    let base = (input.config.base_url.as_deref())
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(DEFAULT_BASE_URL);
    let url = join_url(base, "responses");
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    let system = joined_system(
        req.system.iter().cloned().chain(
            (req.messages.iter())
                .filter(|m| m.role == Role::System)
                .map(crate::providers::system_text),
        ),
    );

    let mut out = Out::default();
    let mut body = out.object();
    body.str("model", input.model);
    if let Some(system) = system {
        body.str("instructions", &system);
    }
    {
        let mut items = body.array("input");
        for (m, msg) in req.messages.iter().enumerate() {
            match msg.role {
                Role::System => {}
                Role::User | Role::Tool => encode_user(req, msg, m, &mut items)?,
                Role::Assistant => encode_assistant(msg, &mut items),
            }
        }
    }
    if !req.tools.is_empty() {
        let mut tools = body.array("tools");
        for t in &req.tools {
            let mut d = tools.object();
            d.str("type", "function");
            crate::providers::tool_declaration(&mut d, t, Some("parameters"));
            // The Responses API checks schemas strictly unless told not to
            // (Chat Completions does not): off, as the other providers,
            // unless the tool's own providerOptions say.
            if crate::providers::tool_option(t, "strict").is_none() {
                d.bool("strict", false);
            }
        }
    }
    if let Some(choice) = req.tool_choice.as_ref().filter(|_| !req.tools.is_empty()) {
        let mode = match choice {
            ToolChoice::Mode(ToolChoiceMode::Auto) => "auto",
            ToolChoice::Mode(ToolChoiceMode::None) => "none",
            ToolChoice::Mode(ToolChoiceMode::Required) => "required",
            ToolChoice::Tool(t) => {
                body.object("tool_choice")
                    .str("type", "function")
                    .str("name", &t.name);
                ""
            }
        };
        if !mode.is_empty() {
            body.str("tool_choice", mode);
        }
    }
    if let Some(n) = req.max_tokens {
        body.uint("max_output_tokens", n.into());
    }
    if let Some(t) = req.temperature {
        body.float("temperature", t);
    }
    if let Some(p) = req.top_p {
        body.float("top_p", p);
    }
    // https://platform.openai.com/docs/api-reference/responses/create#responses-create-text
    match &req.response_format {
        Some(ResponseFormat::Json) => {
            body.object("text")
                .object("format")
                .str("type", "json_object");
        }
        Some(ResponseFormat::JsonSchema {
            schema,
            name,
            description,
            strict,
        }) => {
            let mut text = body.object("text");
            let mut format = text.object("format");
            format.str("type", "json_schema");
            let (name, description) = (name.as_deref(), description.as_deref());
            crate::providers::schema_format(&mut format, schema, name, description, *strict);
        }
        None => {}
    }
    body.bool("store", false);
    body.strs("include", &["reasoning.encrypted_content".to_string()]);
    if input.stream {
        body.bool("stream", true);
    }
    drop(body);
    Ok((url, headers, out))
}

/// A user or tool message: its tool results as output items (they answer
/// the calls before them), then any other content as one user message.
fn encode_user(req: &Request, msg: &Message, m: usize, items: &mut Arr) -> Result<(), Error> {
    let mut content = Vec::new();
    for (p, part) in msg.parts.iter().enumerate() {
        match part {
            Part::ToolResult {
                call_id,
                content: text,
                is_error,
                ..
            } => {
                let output = if *is_error && !text.starts_with("Error") {
                    // No error flag in this API: the text says so.
                    format!("Error: {text}")
                } else {
                    text.clone()
                };
                let kind = if is_custom_call(req, call_id) {
                    "custom_tool_call_output"
                } else {
                    "function_call_output"
                };
                items
                    .object()
                    .str("type", kind)
                    .str("call_id", call_id)
                    .str("output", &output);
            }
            Part::Text { text, .. } => content.push(object_text(|o| {
                o.str("type", "input_text").str("text", text);
            })),
            Part::Image {
                url,
                data,
                media_type,
                provider_data,
            } => {
                let url = match image_source(url.as_deref(), data.as_deref(), media_type.as_deref())
                    .map_err(|e| Error::invalid_request(format!("messages[{m}].parts[{p}]"), e))?
                {
                    ImageSource::Url { url, .. } => url.to_string(),
                    ImageSource::Base64 { media_type, data } => data_url(media_type, data),
                };
                // `detail` is required by the API's schema: the caller's
                // (`providerData.responses.detail`), else "auto".
                let own = provider_data.as_ref().and_then(|d| d.get(NAME));
                let detail = own.and_then(|d| d.get("detail")).and_then(Value::as_str);
                content.push(object_text(|o| {
                    o.str("type", "input_image")
                        .str("image_url", &url)
                        .str("detail", detail.unwrap_or("auto"));
                }));
            }
            // https://platform.openai.com/docs/guides/pdf-files (input_file)
            Part::File {
                url,
                data,
                media_type,
                filename,
                ..
            } => content.push(object_text(|o| {
                o.str("type", "input_file");
                match (data, url) {
                    (Some(data), _) => {
                        o.str("filename", filename.as_deref().unwrap_or("document.pdf"))
                            .str("file_data", &data_url(media_type, data));
                    }
                    (None, Some(url)) => {
                        o.str("file_url", url);
                    }
                    (None, None) => {}
                }
            })),
            // An answer to a client action (a local_shell_call_output, an
            // mcp_approval_response, ...), sent as the app wrote it.
            Part::Provider { provider, data } if provider == NAME => items.value(data),
            _ => {}
        }
    }
    if !content.is_empty() {
        let mut item = items.object();
        item.str("role", "user");
        let mut list = item.array("content");
        for c in &content {
            list.json(c);
        }
    }
    Ok(())
}

/// An assistant turn as the items it came as, in order: reasoning (with its
/// encrypted content), messages (with their phase), calls, and the items
/// kept whole.
fn encode_assistant(msg: &Message, items: &mut Arr) {
    for part in &msg.parts {
        match part {
            Part::Text {
                text,
                provider_data,
            } => {
                if text.is_empty() {
                    continue;
                }
                // An input message with string content: the schema's
                // output message would need an id, a status and
                // annotations, which a stateless history has none of.
                let mut item = items.object();
                item.str("type", "message")
                    .str("role", "assistant")
                    .str("content", text);
                let own = provider_data.as_ref().and_then(|d| d.get(NAME));
                if let Some(phase) = own.and_then(|d| d.get("phase")) {
                    item.value("phase", phase);
                }
            }
            Part::Reasoning { provider_data, .. } => {
                // Only this API's own reasoning items go back (another
                // provider's reasoning has no item to replay).
                let Some(own) = provider_data.as_ref().and_then(|d| d.get(NAME)) else {
                    continue;
                };
                let mut item = items.object();
                item.str("type", "reasoning");
                if let Some(id) = own.get("id") {
                    item.value("id", id);
                }
                if let Some(summary) = own.get("summary") {
                    item.value("summary", summary);
                } else {
                    item.array("summary");
                }
                if let Some(e) = own.get("encrypted_content") {
                    item.value("encrypted_content", e);
                }
            }
            Part::ToolCall {
                id,
                name,
                arguments,
                provider_data,
            } => {
                let own = provider_data.as_ref().and_then(|d| d.get(NAME));
                let custom = own.and_then(|d| d.get("type")).and_then(Value::as_str)
                    == Some("custom_tool_call");
                let mut item = items.object();
                if custom {
                    // The free-form input, out of the {"input": ...} wrapper.
                    let input = crate::json::read::parse(arguments)
                        .ok()
                        .and_then(|v| v.get("input").and_then(Value::as_str).map(str::to_string))
                        .unwrap_or_else(|| arguments.clone());
                    item.str("type", "custom_tool_call")
                        .str("call_id", id)
                        .str("name", name)
                        .str("input", &input);
                } else {
                    let arguments = if arguments.trim().is_empty() {
                        "{}"
                    } else {
                        arguments.as_str()
                    };
                    item.str("type", "function_call")
                        .str("call_id", id)
                        .str("name", name)
                        .str("arguments", arguments);
                }
                if let Some(namespace) = own.and_then(|d| d.get("namespace")) {
                    item.value("namespace", namespace);
                }
            }
            Part::Provider { provider, data } if provider == NAME => items.value(data),
            // An image this API made: its item as it came, with the image.
            Part::File {
                data: Some(data),
                provider_data: Some(d),
                ..
            } => {
                if let Some(Value::Object(kept)) = d.get(NAME) {
                    let mut item = items.object();
                    for (k, v) in kept {
                        item.value(k, v);
                    }
                    item.str("result", data);
                }
            }
            _ => {}
        }
    }
}

/// Whether `call_id` names a custom tool call of the history (its result is
/// a `custom_tool_call_output`).
fn is_custom_call(req: &Request, call_id: &str) -> bool {
    req.messages.iter().flat_map(|m| &m.parts).any(|p| {
        matches!(p, Part::ToolCall { id, provider_data: Some(d), .. }
            if id == call_id
                && d.get(NAME).and_then(|own| own.get("type")).and_then(Value::as_str)
                    == Some("custom_tool_call"))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::model::{Message, Part, Request};
    use crate::providers::{sent, Provider};
    use crate::StreamDecoder;

    /// The assistant turn of a recorded stream, decoded.
    fn turn(case: &str) -> Message {
        let path = format!(
            "{}/tests/fixtures/conformance/responses/{case}.stream.sse",
            env!("CARGO_MANIFEST_DIR")
        );
        let body = std::fs::read(path).unwrap();
        let (_, res) = StreamDecoder::decode_all(Provider::Responses, &body);
        res.unwrap().message
    }

    fn input_of(messages: Vec<Message>) -> Vec<Value> {
        let req = Request {
            messages,
            ..Request::default()
        };
        let (_, body) = sent(Provider::Responses, None, &req);
        assert_eq!(body["store"], false, "stateless by default");
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        body["input"].as_array().unwrap().clone()
    }

    /// A recorded turn with encrypted reasoning replays its reasoning items
    /// in place, each before the item it preceded, with id, summary and
    /// encrypted content, and the calls with their call ids.
    #[test]
    fn reasoning_items_replay_in_place_with_their_encrypted_content() {
        let turn = turn("openai-reasoning-encrypted-content.1");
        let input = input_of(vec![Message::user("hi"), turn.clone()]);
        let kinds: Vec<&str> = (input.iter().skip(1))
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        let parts: Vec<&str> = (turn.parts.iter())
            .filter_map(|p| match p {
                Part::Reasoning { .. } => Some("reasoning"),
                Part::Text { text, .. } if !text.is_empty() => Some("message"),
                Part::ToolCall { .. } => Some("function_call"),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, parts, "one item per part, in order");
        assert!(kinds.contains(&"reasoning"));
        for item in input.iter().filter(|i| i["type"] == "reasoning") {
            assert!(item["id"].as_str().unwrap().starts_with("rs_"), "{item}");
            assert!(item["encrypted_content"].is_string(), "{item}");
            assert!(item["summary"].is_array(), "{item}");
        }
        for item in input.iter().filter(|i| i["type"] == "function_call") {
            assert!(
                item["call_id"].as_str().unwrap().starts_with("call_"),
                "{item}"
            );
        }
    }

    /// A custom tool call replays as one, with its free-form input, and its
    /// result as a custom_tool_call_output.
    #[test]
    fn a_custom_tool_call_and_its_result_replay_as_custom_items() {
        let turn = turn("openai-custom-tool.1");
        let call = turn.tool_calls().into_iter().next().unwrap();
        assert_eq!(
            call.arguments,
            r#"{"input":"SELECT * FROM users WHERE age > 25"}"#
        );
        let result = crate::model::tool_result_message(call.id.clone(), "3 rows");
        let input = input_of(vec![Message::user("sql"), turn, result]);
        let custom = input
            .iter()
            .find(|i| i["type"] == "custom_tool_call")
            .unwrap();
        assert_eq!(custom["input"], "SELECT * FROM users WHERE age > 25");
        assert_eq!(custom["call_id"], json!(call.id));
        let output = input.last().unwrap();
        assert_eq!(output["type"], "custom_tool_call_output");
        assert_eq!(output["call_id"], json!(call.id));
        assert_eq!(output["output"], "3 rows");
    }

    /// Whether an input item has a form the API's published schema
    /// (`CreateResponse`'s `input`) accepts, as the SDKs' own types check
    /// it: an input message (string content, or input content for a
    /// user) with no field beyond `type`, `role`, `content`, `phase`; a
    /// call with its call id, name and arguments; an output with its call
    /// id; a reasoning item with its id and summary. Other items are
    /// provider items, sent back as they came.
    fn accepted(item: &Value) -> Result<(), String> {
        let text = |k: &str| item.get(k).and_then(Value::as_str).is_some();
        let ok = match item["type"].as_str() {
            None | Some("message") => {
                let keys = ["type", "role", "content", "phase"];
                let roles = ["user", "assistant", "system", "developer"];
                let obj = item.as_object().unwrap();
                let content_ok = match &item["content"] {
                    Value::String(_) => true,
                    Value::Array(parts) => {
                        item["role"] != "assistant"
                            && parts.iter().all(|p| match p["type"].as_str() {
                                Some("input_text") => p["text"].is_string(),
                                Some("input_image") => p["detail"].is_string(),
                                Some("input_file") => true,
                                _ => false,
                            })
                    }
                    _ => false,
                };
                obj.keys().all(|k| keys.contains(&k.as_str()))
                    && roles.contains(&item["role"].as_str().unwrap_or(""))
                    && content_ok
            }
            Some("function_call") => text("call_id") && text("name") && text("arguments"),
            Some("function_call_output") => text("call_id") && text("output"),
            Some("reasoning") => text("id") && item["summary"].is_array(),
            Some(_) => true,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("not an input item the schema accepts: {item}"))
        }
    }

    /// Every recorded Responses turn, replayed after a user message with
    /// an image, goes back in forms the schema accepts: assistant text as
    /// an input message with string content (no invented item ids), the
    /// image with its `detail`.
    #[test]
    fn every_recorded_turn_replays_in_forms_the_schema_accepts() {
        let dir = format!(
            "{}/tests/fixtures/conformance/responses",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let image = Message {
            role: crate::model::Role::User,
            parts: vec![
                Part::Text {
                    text: "What is in it?".into(),
                    provider_data: None,
                },
                Part::Image {
                    url: Some("https://example.com/cat.png".into()),
                    data: None,
                    media_type: None,
                    provider_data: None,
                },
            ],
        };
        let mut replayed = 0;
        for name in &names {
            let body = std::fs::read(format!("{dir}/{name}")).unwrap();
            let turn = if name.ends_with(".stream.sse") {
                StreamDecoder::decode_all(Provider::Responses, &body).1.ok()
            } else if name.ends_with(".json") && !name.ends_with(".expected.json") {
                let text = String::from_utf8(body).unwrap();
                crate::decode_response(Provider::Responses, &text).ok()
            } else {
                continue;
            };
            let Some(turn) = turn else { continue }; // (an error case)
            let input = input_of(vec![image.clone(), turn.message]);
            for item in &input {
                if let Err(e) = accepted(item) {
                    panic!("{name}: {e}");
                }
            }
            replayed += 1;
        }
        assert!(replayed >= 40, "{replayed} recorded turns replayed");
        let first = &input_of(vec![image])[0];
        assert_eq!(first["content"][1]["detail"], "auto");
    }

    /// A client action is kept whole and goes back as it came; the app's
    /// answer, a provider part of the answering type, is sent as written.
    #[test]
    fn a_client_action_and_its_answer_are_sent_as_items() {
        let turn = turn("openai-local-shell-tool.1");
        let action = (turn.parts.iter())
            .find_map(|p| match p {
                Part::Provider { data, .. } if data["type"] == "local_shell_call" => {
                    Some(data.clone())
                }
                _ => None,
            })
            .unwrap();
        let answer = Message {
            role: crate::model::Role::User,
            parts: vec![Part::Provider {
                provider: "responses".into(),
                data: json!({"type": "local_shell_call_output", "call_id": action["call_id"], "output": "a b c"}),
            }],
        };
        let input = input_of(vec![Message::user("ls"), turn, answer]);
        assert!(input.contains(&action), "the action, as it came");
        assert_eq!(input.last().unwrap()["type"], "local_shell_call_output");
    }
}
