//! [`Request`](crate::Request) to a `Converse` / `ConverseStream` body.
//!
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html#API_runtime_ConverseStream_RequestSyntax>

use serde_json::{Map, Value};

use super::NAME;
use crate::error::Error;
use crate::json::write::{Obj, Out};
use crate::model::{Message, Part, Request, ResponseFormat, Role, ToolChoice, ToolChoiceMode};
use crate::providers::{
    group_turns, image_source, join_url, tool_declaration, tool_id, tool_input, tool_option,
    write_turns, EncodeInput, Encoded, EncodedPart, ImageSource,
};

/// The top-level fields of a Converse request: a `providerOptions` key
/// among them is merged there; any other goes into
/// `additionalModelRequestFields`, the model's own fields (`thinking`,
/// `top_k`, `reasoning_config`, ...).
pub(crate) const TOP_LEVEL: &[&str] = &[
    "messages",
    "system",
    "inferenceConfig",
    "toolConfig",
    "guardrailConfig",
    "additionalModelRequestFields",
    "additionalModelResponseFieldPaths",
    "promptVariables",
    "requestMetadata",
    "performanceConfig",
    "serviceTier",
    "outputConfig",
];

/// Encodes the request for `Converse` (or `ConverseStream`).
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let req = input.request;
    let config = input.config;
    let region = config.region.as_deref().filter(|r| !r.trim().is_empty());
    if let Some(r) = region {
        if !r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(Error::invalid_request(
                "region",
                "an AWS region is letters, digits and hyphens (e.g. us-east-1)",
            ));
        }
    }
    let base = config.base_url.as_deref().filter(|b| !b.trim().is_empty());
    let base = match (base, region) {
        (Some(base), _) => base.to_string(),
        (None, Some(region)) => super::endpoint(region),
        (None, None) => {
            return Err(Error::invalid_request(
                "region",
                crate::providers::REGION_NEEDED,
            ))
        }
    };
    let mut headers = Vec::new();
    match (&config.aws, &config.api_key) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid_request(
                "apiKey",
                "give a Bedrock API key or AWS credentials, not both",
            ))
        }
        (Some(_), None) if region.is_none() => {
            return Err(Error::invalid_request(
                "region",
                "signing with AWS credentials needs the region (e.g. us-east-1)",
            ))
        }
        (None, Some(key)) => headers.push(("authorization".to_string(), format!("Bearer {key}"))),
        _ => {}
    }
    let operation = if input.stream {
        "converse-stream"
    } else {
        "converse"
    };
    // A model id, inference profile id or ARN is one path segment: `:`
    // and `/` encoded too.
    let url = join_url(
        &base,
        &format!(
            "model/{}/{operation}",
            crate::http::percent_encode(input.model.as_bytes(), b"")
        ),
    );

    let turns = group_turns(req, "assistant", encode_part)?;
    let mut out = Out::default();
    let mut body = out.object();
    write_turns(&mut body, "messages", "content", &turns.turns);
    write_system(&mut body, req)?;
    if req.max_tokens.is_some()
        || req.temperature.is_some()
        || req.top_p.is_some()
        || !req.stop.is_empty()
    {
        let mut c = body.object("inferenceConfig");
        if let Some(n) = req.max_tokens {
            c.uint("maxTokens", n.into());
        }
        if let Some(t) = req.temperature {
            c.float("temperature", t);
        }
        if let Some(p) = req.top_p {
            c.float("topP", p);
        }
        if !req.stop.is_empty() {
            c.strs("stopSequences", &req.stop);
        }
    }
    write_tools(&mut body, req)?;
    match &req.response_format {
        Some(ResponseFormat::Json) => {
            return Err(Error::invalid_request(
                "responseFormat",
                "Bedrock has no plain JSON mode: give a schema, { type: \"json_schema\", schema }",
            ))
        }
        // https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html:
        // the schema goes as JSON text.
        Some(ResponseFormat::JsonSchema {
            schema,
            name,
            description,
            ..
        }) => {
            let mut f = body.object("outputConfig");
            let mut f = f.object("textFormat");
            f.str("type", "json_schema");
            let mut s = f.object("structure");
            let mut s = s.object("jsonSchema");
            s.str("schema", &crate::json::json_text(schema))
                .str("name", name.as_deref().unwrap_or("response"));
            if let Some(d) = description {
                s.str("description", d);
            }
        }
        None => {}
    }
    drop(body);
    Ok((url, headers, out))
}

/// `providerOptions` as Bedrock takes them: a Converse field
/// ([`TOP_LEVEL`]) at the top level, any other into
/// `additionalModelRequestFields`.
pub(crate) fn options(given: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut model = Map::new();
    for (k, v) in given {
        if TOP_LEVEL.contains(&k.as_str()) {
            out.insert(k.clone(), v.clone());
        } else {
            model.insert(k.clone(), v.clone());
        }
    }
    if model.is_empty() {
        return out;
    }
    // (Beside an additionalModelRequestFields given whole, whose keys win.)
    match out.get_mut("additionalModelRequestFields") {
        Some(Value::Object(given)) => {
            for (k, v) in model {
                given.entry(k).or_insert(v);
            }
        }
        _ => {
            out.insert("additionalModelRequestFields".into(), Value::Object(model));
        }
    }
    out
}

/// A cache point block: where the cached prefix ends.
fn cache_point(o: &mut Obj) {
    o.object("cachePoint").str("type", "default");
}

/// `system`: the request's system text, then each system message's text
/// and cache marks, in order.
fn write_system(body: &mut Obj, req: &Request) -> Result<(), Error> {
    let given = req.system.as_deref().filter(|s| !s.is_empty());
    let messages = (req.messages.iter().enumerate()).filter(|(_, m)| m.role == Role::System);
    if given.is_none() && messages.clone().next().is_none() {
        return Ok(());
    }
    let mut list = body.array("system");
    let mut any = false;
    if let Some(text) = given {
        list.object().str("text", text);
        any = true;
    }
    for (m, msg) in messages {
        for (p, part) in msg.parts.iter().enumerate() {
            match part {
                Part::Text { text, .. } if !text.is_empty() => {
                    list.object().str("text", text);
                    any = true;
                }
                Part::Cache { .. } if any => cache_point(&mut list.object()),
                Part::Cache { .. } => {
                    return Err(Error::invalid_request(
                        format!("messages[{m}].parts[{p}]"),
                        "a cache mark must follow the system text it marks",
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// `toolConfig`: the tools (a cache point after a marked one) and the
/// choice. Converse has no choice `none` (the adapter's
/// `no_tool_choice_none`: refused before this).
fn write_tools(body: &mut Obj, req: &Request) -> Result<(), Error> {
    if req.tools.is_empty() {
        return Ok(());
    }
    let mut config = body.object("toolConfig");
    {
        let mut tools = config.array("tools");
        for t in &req.tools {
            {
                let mut entry = tools.object();
                let mut spec = entry.object("toolSpec");
                tool_declaration(&mut spec, t, None);
                if tool_option(t, "inputSchema").is_none() {
                    spec.object("inputSchema").value(
                        "json",
                        &crate::providers::object_schema(t.parameters.as_ref()),
                    );
                }
            }
            if t.cache.is_some() {
                cache_point(&mut tools.object());
            }
        }
    }
    if let Some(choice) = &req.tool_choice {
        let mut c = config.object("toolChoice");
        match choice {
            ToolChoice::Mode(ToolChoiceMode::Required) => {
                c.object("any");
            }
            ToolChoice::Tool(t) => {
                c.object("tool").str("name", &t.name);
            }
            _ => {
                c.object("auto");
            }
        }
    }
    Ok(())
}

/// The block for one part, `None` for parts Converse has no place for.
fn encode_part(msg: &Message, part: &Part) -> Result<Option<EncodedPart>, String> {
    Ok(Some(match part {
        // Converse refuses a blank text block.
        Part::Text { text, .. } if text.trim().is_empty() => return Ok(None),
        Part::Text {
            text,
            provider_data,
        } => {
            let cited = (provider_data.as_ref())
                .and_then(|d| d.get(NAME))
                .and_then(|d| d.get("citations"));
            EncodedPart::new(|b| match cited {
                // Its sources, as they came: a citationsContent block.
                Some(list) => {
                    let mut c = b.object("citationsContent");
                    c.value("citations", list);
                    c.array("content").object().str("text", text);
                }
                None => {
                    b.str("text", text);
                }
            })
        }
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
            let input = tool_input(arguments, "Bedrock")?;
            EncodedPart::new(|b| {
                b.object("toolUse")
                    .str("toolUseId", &tool_id(id))
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
                let content = if content.trim().is_empty() && *is_error {
                    "the tool failed without a message"
                } else {
                    content.as_str()
                };
                let mut r = b.object("toolResult");
                r.str("toolUseId", &tool_id(call_id));
                r.array("content").object().str("text", content);
                if *is_error {
                    r.str("status", "error");
                }
            })
        },
        Part::Reasoning {
            redacted: Some(data),
            ..
        } => EncodedPart::new(|b| {
            b.object("reasoningContent").str("redactedContent", data);
        }),
        Part::Reasoning {
            text,
            signature: Some(sig),
            ..
        } if msg.role == Role::Assistant => EncodedPart::new(|b| {
            b.object("reasoningContent")
                .object("reasoningText")
                .str("text", text)
                .str("signature", sig);
        }),
        // Reasoning without a signature (another provider's) cannot be
        // verified and would be rejected: left out.
        Part::Reasoning { .. } => return Ok(None),
        Part::Provider { provider, data } if provider == NAME => EncodedPart {
            json: crate::json::json_text(data),
            lead: data.get("toolResult").is_some(),
            mark: None,
        },
        Part::Provider { .. } => return Ok(None),
        // https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
        Part::Cache { .. } => EncodedPart::new(cache_point),
    }))
}

/// The format Converse names a media type by, for `kinds` (`image/png`
/// is `png`).
fn format_of<'a>(media_type: &str, kinds: &[(&str, &'a str)]) -> Option<&'a str> {
    let media_type = media_type.split(';').next().unwrap_or_default().trim();
    kinds
        .iter()
        .find(|(m, _)| m.eq_ignore_ascii_case(media_type))
        .map(|(_, f)| *f)
}

const IMAGES: &[(&str, &str)] = &[
    ("image/png", "png"),
    ("image/jpeg", "jpeg"),
    ("image/jpg", "jpeg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
];

const DOCUMENTS: &[(&str, &str)] = &[
    ("application/pdf", "pdf"),
    ("text/csv", "csv"),
    ("application/msword", "doc"),
    (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "docx",
    ),
    ("application/vnd.ms-excel", "xls"),
    (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "xlsx",
    ),
    ("text/html", "html"),
    ("text/plain", "txt"),
    ("text/markdown", "md"),
];

/// The source of an image or document: base64 `bytes`, or an `s3://`
/// location. Converse fetches no other URL.
fn write_source(b: &mut Obj, url: Option<&str>, data: &str) {
    let mut s = b.object("source");
    match url {
        Some(uri) => {
            s.object("s3Location").str("uri", uri);
        }
        None => {
            s.str("bytes", data);
        }
    }
}

fn image_block(
    url: Option<&str>,
    data: Option<&str>,
    media_type: Option<&str>,
) -> Result<EncodedPart, String> {
    let (url, media_type, data) = match image_source(url, data, media_type)? {
        ImageSource::Base64 { media_type, data } => (None, Some(media_type), data),
        ImageSource::Url { url, media_type } if url.starts_with("s3://") => {
            (Some(url), media_type, "")
        }
        ImageSource::Url { .. } => {
            return Err(
                "Bedrock takes an image as base64 data or an s3:// URL, not by web URL".into(),
            )
        }
    };
    let media_type = media_type.ok_or("an s3:// image needs its mediaType")?;
    let format = format_of(media_type, IMAGES).ok_or_else(|| {
        format!(
            "Bedrock takes png, jpeg, gif and webp images, not {}",
            crate::json::write::quoted(media_type)
        )
    })?;
    Ok(EncodedPart::new(|b| {
        let mut i = b.object("image");
        i.str("format", format);
        write_source(&mut i, url, data);
    }))
}

fn document_block(
    url: Option<&str>,
    data: Option<&str>,
    media_type: &str,
    filename: Option<&str>,
) -> Result<EncodedPart, String> {
    let format = format_of(media_type, DOCUMENTS).ok_or_else(|| {
        format!(
            "Bedrock takes pdf, csv, doc, docx, xls, xlsx, html, txt and md documents, not {}",
            crate::json::write::quoted(media_type)
        )
    })?;
    let url = match (url, data) {
        (Some(url), _) if url.starts_with("s3://") => Some(url),
        (Some(_), _) => return Err("Bedrock takes a file as base64 data or an s3:// URL".into()),
        (None, Some(_)) => None,
        (None, None) => return Err("a file needs a url or base64 data".into()),
    };
    Ok(EncodedPart::new(|b| {
        let mut d = b.object("document");
        d.str("format", format)
            .str("name", &document_name(filename));
        write_source(&mut d, url, data.unwrap_or_default());
    }))
}

/// A document's `name` as Converse accepts it: ASCII letters, digits,
/// single spaces, hyphens, parentheses and square brackets, up to 200 characters
/// (the file name without its extension, others replaced by `-`), or
/// `document`.
fn document_name(filename: Option<&str>) -> String {
    let stem = filename
        .map(|f| f.rsplit_once('.').map_or(f, |(stem, _)| stem))
        .unwrap_or_default();
    let mut name = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') {
            c
        } else if c.is_ascii_whitespace() {
            ' '
        } else {
            '-'
        };
        if !(c == ' ' && name.ends_with(' ')) {
            name.push(c);
        }
        if name.chars().count() >= 200 {
            break;
        }
    }
    let name = name.trim();
    if name.is_empty() {
        "document".into()
    } else {
        name.into()
    }
}
