//! [`Request`](crate::Request) to a `generateContent` body.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{is_synthetic_id, API_VERSION, DEFAULT_BASE_URL, NAME, SKIP_SIGNATURE};
use crate::error::Error;
use crate::providers::{
    group_turns, image_source, join_url, tool_declaration, EncodeInput, Encoded, ImageSource, Turns,
};
use crate::types::{Part, ProviderData, Role, ToolChoice, ToolChoiceMode};

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
    let url = join_url(
        base,
        &format!("{API_VERSION}/models/{}:{method}", encode_segment(model)),
    );
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("x-goog-api-key".to_string(), key.clone()));
    }

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
    let Turns { system, turns } = group_turns(
        req,
        "model",
        |part, _| encode_part(part, &call_names),
        |role, parts| {
            if role == Role::Assistant {
                ensure_call_signature(parts);
            }
        },
    )?;

    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(
            turns
                .into_iter()
                .map(|(role, parts)| json!({"role": role, "parts": parts}))
                .collect(),
        ),
    );
    if let Some(system) = system {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if !req.tools.is_empty() {
        let declarations: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                // Full JSON Schema; `parameters` takes only an OpenAPI subset
                // and rejects keywords such as `additionalProperties`.
                let mut d = tool_declaration(t, "parametersJsonSchema");
                if t.parameters.is_none() {
                    d.remove("parametersJsonSchema");
                }
                Value::Object(d)
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    if let Some(choice) = &req.tool_choice {
        let config = match choice {
            ToolChoice::Mode(ToolChoiceMode::Auto) => json!({"mode": "AUTO"}),
            ToolChoice::Mode(ToolChoiceMode::None) => json!({"mode": "NONE"}),
            ToolChoice::Mode(ToolChoiceMode::Required) => json!({"mode": "ANY"}),
            ToolChoice::Tool(t) => json!({"mode": "ANY", "allowedFunctionNames": [t.name]}),
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": config}),
        );
    }
    let mut generation = Map::new();
    if let Some(max) = req.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(t) = req.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        generation.insert("topP".into(), json!(p));
    }
    if !req.stop.is_empty() {
        generation.insert("stopSequences".into(), json!(req.stop));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Ok((url, headers, body))
}

fn signature(data: &Option<ProviderData>) -> Option<&Value> {
    data.as_ref()?.get(NAME)?.get("thoughtSignature")
}

fn encode_part(part: &Part, call_names: &HashMap<&str, &str>) -> Result<Option<Value>, String> {
    Ok(Some(match part {
        Part::Text {
            text,
            provider_data,
        } => {
            let mut p = Map::new();
            p.insert("text".into(), json!(text));
            if let Some(sig) = signature(provider_data) {
                p.insert("thoughtSignature".into(), sig.clone());
            } else if text.is_empty() {
                return Ok(None);
            }
            Value::Object(p)
        }
        Part::Reasoning {
            text,
            provider_data,
            ..
        } => match signature(provider_data) {
            Some(sig) => json!({"text": text, "thought": true, "thoughtSignature": sig}),
            // Thought summaries without a signature are not needed back.
            None => return Ok(None),
        },
        Part::Image {
            url,
            data,
            media_type,
            ..
        } => image_part(url.as_deref(), data.as_deref(), media_type.as_deref())?,
        Part::ToolCall {
            id,
            name,
            arguments,
            provider_data,
        } => {
            let args = if arguments.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                match serde_json::from_str::<Value>(arguments) {
                    Ok(v @ Value::Object(_)) => v,
                    Ok(_) => return Err("tool-call arguments must be a JSON object".into()),
                    Err(e) => return Err(format!("tool-call arguments are not valid JSON: {e}")),
                }
            };
            let mut call = Map::new();
            if !is_synthetic_id(id, name) {
                call.insert("id".into(), json!(id));
            }
            call.insert("name".into(), json!(name));
            call.insert("args".into(), args);
            let mut p = Map::new();
            p.insert("functionCall".into(), Value::Object(call));
            if let Some(sig) = signature(provider_data) {
                p.insert("thoughtSignature".into(), sig.clone());
            }
            Value::Object(p)
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
            let mut response = Map::new();
            response.insert(
                if *is_error { "error" } else { "output" }.into(),
                json!(content),
            );
            let mut r = Map::new();
            if !is_synthetic_id(call_id, name) {
                r.insert("id".into(), json!(call_id));
            }
            r.insert("name".into(), json!(name));
            r.insert("response".into(), Value::Object(response));
            json!({"functionResponse": r})
        }
        Part::Provider { provider, data } if provider == NAME => data.clone(),
        Part::Provider { .. } => return Ok(None),
    }))
}

/// Gemini 3 rejects a replayed function-call batch whose first call has no
/// signature (only the first of parallel calls carries one). When none of
/// the calls has one, the first gets the documented placeholder.
fn ensure_call_signature(parts: &mut [Value]) {
    let mut calls = parts.iter_mut().filter(|p| p.get("functionCall").is_some());
    let Some(first) = calls.next() else {
        return;
    };
    if first.get("thoughtSignature").is_some() {
        return;
    }
    if calls.any(|p| p.get("thoughtSignature").is_some()) {
        return;
    }
    if let Value::Object(p) = first {
        p.insert("thoughtSignature".into(), json!(SKIP_SIGNATURE));
    }
}

fn image_part(
    url: Option<&str>,
    data: Option<&str>,
    media_type: Option<&str>,
) -> Result<Value, String> {
    Ok(match image_source(url, data, media_type)? {
        ImageSource::Url { url, media_type } => {
            let mut file = Map::new();
            if let Some(m) = media_type {
                file.insert("mimeType".into(), json!(m));
            }
            file.insert("fileUri".into(), json!(url));
            json!({ "fileData": file })
        }
        ImageSource::Base64 { media_type, data } => {
            json!({"inlineData": {"mimeType": media_type, "data": data}})
        }
    })
}

/// Percent-encodes a URL path segment (model names are plain, but a model
/// string is user input).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_are_path_safe() {
        assert_eq!(encode_segment("gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(encode_segment("a/b:c?d"), "a%2Fb%3Ac%3Fd");
    }

    #[test]
    fn the_placeholder_signature_goes_on_the_first_call_only_when_none_has_one() {
        let mut parts = vec![
            json!({"text": "x"}),
            json!({"functionCall": {}}),
            json!({"functionCall": {}}),
        ];
        ensure_call_signature(&mut parts);
        assert_eq!(parts[1]["thoughtSignature"], SKIP_SIGNATURE);
        assert!(parts[2].get("thoughtSignature").is_none());
        let mut parts = vec![json!({"functionCall": {}, "thoughtSignature": "real"})];
        ensure_call_signature(&mut parts);
        assert_eq!(parts[0]["thoughtSignature"], "real");
    }
}
