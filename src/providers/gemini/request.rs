//! [`Request`](crate::Request) to a `generateContent` body.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{is_synthetic_id, API_VERSION, DEFAULT_BASE_URL, NAME, SKIP_SIGNATURE};
use crate::error::Error;
use crate::json::json_text;
use crate::json::write::{Obj, Out};
use crate::model::{Message, Part, ProviderData, ResponseFormat, Role, ToolChoice, ToolChoiceMode};
use crate::providers::{
    group_turns, image_source, join_url, tool_declaration, write_turns, EncodeInput, Encoded,
    EncodedPart, ImageSource, Turns,
};

/// Encodes the request for the Gemini API. Streaming always asks for SSE
/// (`alt=sse`); without it the stream is one JSON array split anywhere.
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let req = input.request;
    let base = input
        .config
        .base_url
        .as_deref()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(DEFAULT_BASE_URL);
    let model = input.model.strip_prefix("models/").unwrap_or(input.model);
    let method = if input.stream {
        "streamGenerateContent?alt=sse"
    } else {
        "generateContent"
    };
    let (url, headers) = match &input.config.vertex {
        // (Vertex's model ids are plain: `gemini-2.5-flash`.)
        Some(vertex) => {
            crate::providers::vertex::endpoint(input.config, vertex, "google", model, method)?
        }
        None => {
            let url = join_url(
                base,
                &format!(
                    "{API_VERSION}/models/{}:{method}",
                    crate::http::percent_encode(model.as_bytes(), b"")
                ),
            );
            let key = input.config.api_key.iter();
            (
                url,
                key.map(|k| ("x-goog-api-key".to_string(), k.clone()))
                    .collect(),
            )
        }
    };

    // Call id -> name, for functionResponse, which needs the name.
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    for msg in &req.messages {
        for part in &msg.parts {
            if let Part::ToolCall { id, name, .. } = part {
                call_names.insert(id, name);
            }
        }
    }

    // Parallel function responses must share one content: consecutive
    // turns of one role are merged.
    // The part that takes the placeholder signature, found once per
    // message (the parts of a message come one after another).
    let mut placeholder: (*const Message, Option<*const Part>) = (std::ptr::null(), None);
    let Turns { system, turns } = group_turns(req, "model", |msg, part| {
        if !std::ptr::eq(placeholder.0, msg) {
            placeholder = (msg, placeholder_part(msg).map(std::ptr::from_ref));
        }
        let here = placeholder.1 == Some(std::ptr::from_ref(part));
        encode_part(part, here, &call_names)
    })?;

    let mut out = Out::default();
    let mut body = out.object();
    write_turns(&mut body, "contents", "parts", &turns);
    if let Some(system) = system {
        let mut instruction = body.object("systemInstruction");
        let mut parts = instruction.array("parts");
        parts.object().str("text", &system);
    }
    if !req.tools.is_empty() {
        let mut tools = body.array("tools");
        let mut group = tools.object();
        let mut declarations = group.array("functionDeclarations");
        for t in &req.tools {
            // Full JSON Schema; `parameters` takes only an OpenAPI subset
            // and rejects keywords such as `additionalProperties`.
            let key = t.parameters.is_some().then_some("parametersJsonSchema");
            tool_declaration(&mut declarations.object(), t, key);
        }
    }
    // (Without tools a provider refuses a tool choice: it is left out.)
    if let Some(choice) = req.tool_choice.as_ref().filter(|_| !req.tools.is_empty()) {
        let mut tool_config = body.object("toolConfig");
        let mut config = tool_config.object("functionCallingConfig");
        match choice {
            ToolChoice::Mode(ToolChoiceMode::Auto) => config.str("mode", "AUTO"),
            ToolChoice::Mode(ToolChoiceMode::None) => config.str("mode", "NONE"),
            ToolChoice::Mode(ToolChoiceMode::Required) => config.str("mode", "ANY"),
            ToolChoice::Tool(t) => config
                .str("mode", "ANY")
                .strs("allowedFunctionNames", std::slice::from_ref(&t.name)),
        };
    }
    if req.max_tokens.is_some()
        || req.temperature.is_some()
        || req.top_p.is_some()
        || !req.stop.is_empty()
        || req.response_format.is_some()
    {
        let mut generation = body.object("generationConfig");
        if let Some(max) = req.max_tokens {
            generation.uint("maxOutputTokens", max.into());
        }
        if let Some(t) = req.temperature {
            generation.float("temperature", t);
        }
        if let Some(p) = req.top_p {
            generation.float("topP", p);
        }
        if !req.stop.is_empty() {
            generation.strs("stopSequences", &req.stop);
        }
        // https://ai.google.dev/gemini-api/docs/structured-output
        if let Some(format) = &req.response_format {
            generation.str("responseMimeType", "application/json");
            if let ResponseFormat::JsonSchema { schema, .. } = format {
                generation.value("responseJsonSchema", schema);
            }
        }
    }
    drop(body);
    Ok((url, headers, out))
}

fn signature(data: &Option<ProviderData>) -> Option<&Value> {
    data.as_ref()?.get(NAME)?.get("thoughtSignature")
}

/// For a part that is a function call: whether it carries a signature.
fn call_signed(part: &Part) -> Option<bool> {
    match part {
        Part::ToolCall { provider_data, .. } => Some(signature(provider_data).is_some()),
        Part::Provider { provider, data } if provider == NAME => data
            .get("functionCall")
            .map(|_| data.get("thoughtSignature").is_some()),
        _ => None,
    }
}

/// Gemini 3 rejects a replayed function-call batch whose first call has no
/// signature (only the first of parallel calls carries one). When none of
/// an assistant message's calls has one, the first gets the documented
/// placeholder: that part.
fn placeholder_part(msg: &Message) -> Option<&Part> {
    if msg.role != Role::Assistant {
        return None;
    }
    let mut calls = msg
        .parts
        .iter()
        .filter_map(|p| call_signed(p).map(|signed| (p, signed)));
    let (first, false) = calls.next()? else {
        return None;
    };
    (!calls.any(|(_, signed)| signed)).then_some(first)
}

fn encode_part(
    part: &Part,
    placeholder: bool,
    call_names: &HashMap<&str, &str>,
) -> Result<Option<EncodedPart>, String> {
    Ok(Some(match part {
        Part::Text {
            text,
            provider_data,
        } => {
            let sig = signature(provider_data);
            if sig.is_none() && text.is_empty() {
                return Ok(None);
            }
            EncodedPart::new(|p| {
                p.str("text", text);
                if let Some(sig) = sig {
                    p.value("thoughtSignature", sig);
                }
            })
        }
        Part::Reasoning {
            text,
            provider_data,
            ..
        } => match signature(provider_data) {
            Some(sig) => EncodedPart::new(|p| {
                p.str("text", text)
                    .bool("thought", true)
                    .value("thoughtSignature", sig);
            }),
            // Thought summaries without a signature are not needed back.
            None => return Ok(None),
        },
        Part::Image {
            url,
            data,
            media_type,
            ..
        } => image_part(url.as_deref(), data.as_deref(), media_type.as_deref())?,
        // inlineData or fileData, as an image
        // (https://ai.google.dev/gemini-api/docs/document-processing). A
        // file Gemini made replays as it came: its thought signature (and
        // any other field of its part) beside the data.
        Part::File {
            url,
            data,
            media_type,
            provider_data,
            ..
        } => {
            let source = image_source(url.as_deref(), data.as_deref(), Some(media_type))?;
            let own = provider_data.as_ref().and_then(|d| d.get(NAME));
            EncodedPart::new(|p| {
                source_fields(p, source);
                for (k, v) in own.and_then(Value::as_object).into_iter().flatten() {
                    p.value(k, v);
                }
            })
        }
        // Gemini caches implicitly: a mark has nothing to say here.
        Part::Cache { .. } => return Ok(None),
        Part::ToolCall {
            id,
            name,
            arguments,
            provider_data,
        } => {
            let args = if arguments.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                match crate::json::read::parse(arguments) {
                    Ok(v @ Value::Object(_)) => v,
                    Ok(_) => return Err("tool-call arguments must be a JSON object".into()),
                    Err(e) => return Err(format!("tool-call arguments are not valid JSON: {e}")),
                }
            };
            EncodedPart::new(|p| {
                let mut call = p.object("functionCall");
                if !is_synthetic_id(id, name) {
                    call.str("id", id);
                }
                call.str("name", name).value("args", &args);
                drop(call);
                if let Some(sig) = signature(provider_data) {
                    p.value("thoughtSignature", sig);
                } else if placeholder {
                    p.str("thoughtSignature", SKIP_SIGNATURE);
                }
            })
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            let name = call_names
                .get(call_id.as_str())
                .copied()
                .or_else(|| call_id.split_once('#').map(|(n, _)| n))
                .unwrap_or(call_id);
            EncodedPart::new(|p| {
                let mut r = p.object("functionResponse");
                if !is_synthetic_id(call_id, name) {
                    r.str("id", call_id);
                }
                r.str("name", name)
                    .object("response")
                    .str(if *is_error { "error" } else { "output" }, content);
            })
        }
        Part::Provider { provider, data } if provider == NAME => {
            let json = match data {
                Value::Object(o) if placeholder => {
                    let mut o = o.clone();
                    o.insert("thoughtSignature".into(), Value::from(SKIP_SIGNATURE));
                    json_text(&Value::Object(o))
                }
                other => json_text(other),
            };
            EncodedPart {
                json,
                lead: false,
                mark: None,
            }
        }
        Part::Provider { .. } => return Ok(None),
    }))
}

fn image_part(
    url: Option<&str>,
    data: Option<&str>,
    media_type: Option<&str>,
) -> Result<EncodedPart, String> {
    let source = image_source(url, data, media_type)?;
    Ok(EncodedPart::new(|p| source_fields(p, source)))
}

/// A file's `fileData` (a URL) or `inlineData` (base64).
fn source_fields(p: &mut Obj, source: ImageSource<'_>) {
    match source {
        ImageSource::Url { url, media_type } => {
            let mut file = p.object("fileData");
            if let Some(m) = media_type {
                file.str("mimeType", m);
            }
            file.str("fileUri", url);
        }
        ImageSource::Base64 { media_type, data } => {
            p.object("inlineData")
                .str("mimeType", media_type)
                .str("data", data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file Gemini made goes back as its part: the data, and its thought
    /// signature beside it; another provider's file goes as plain
    /// `inlineData`.
    #[test]
    fn a_file_replays_with_its_signature_and_another_providers_without() {
        let file = |kept: serde_json::Value| Part::File {
            url: None,
            data: Some("iVBORw0KGgo=".into()),
            media_type: "image/png".into(),
            filename: None,
            provider_data: Some(serde_json::from_value(kept).unwrap()),
        };
        let request = crate::Request {
            messages: vec![
                Message::user("Draw."),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        file(serde_json::json!({"gemini": {"thoughtSignature": "c2ln"}})),
                        file(
                            serde_json::json!({"responses": {"type": "image_generation_call", "id": "ig_1"}}),
                        ),
                    ],
                },
                Message::user("Again."),
            ],
            ..crate::Request::default()
        };
        let config = crate::ClientConfig::new(crate::Provider::Gemini).with_model("m");
        let http = crate::encode_request(&config, &request, true).unwrap();
        let body: serde_json::Value = serde_json::from_str(&http.body).unwrap();
        let parts = &body["contents"][1]["parts"];
        assert_eq!(
            parts[0],
            serde_json::json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}, "thoughtSignature": "c2ln"})
        );
        assert_eq!(
            parts[1],
            serde_json::json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}})
        );
    }

    #[test]
    fn the_placeholder_signature_goes_on_the_first_call_only_when_none_has_one() {
        let call = |sig: Option<&str>| Part::ToolCall {
            id: "f".into(),
            name: "f".into(),
            arguments: "{}".into(),
            provider_data: sig.map(|s| {
                serde_json::from_value(serde_json::json!({"gemini": {"thoughtSignature": s}}))
                    .unwrap()
            }),
        };
        let msg = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text {
                    text: "x".into(),
                    provider_data: None,
                },
                call(None),
                call(None),
            ],
        };
        assert!(std::ptr::eq(placeholder_part(&msg).unwrap(), &msg.parts[1]));
        let signed_later = Message {
            parts: vec![call(None), call(Some("real"))],
            ..msg.clone()
        };
        assert!(placeholder_part(&signed_later).is_none());
        let user = Message {
            role: Role::User,
            ..msg.clone()
        };
        assert!(placeholder_part(&user).is_none());
    }
}
