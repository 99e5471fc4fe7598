//! The request-encoding steps every adapter shares: the input and output
//! of an encoder, URLs, tool schemas, image sources, system text and the
//! grouping of messages into turns.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::ClientConfig;
use crate::error::Error;
use crate::json::write;
use crate::model::{Message, Part, Request, Role, Tool};

/// What every encoder returns: URL, provider headers and the JSON body.
pub(crate) type Encoded = (String, Vec<(String, String)>, write::Out);

/// What every encoder gets: the request, the model to use and whether to
/// stream.
pub(crate) struct EncodeInput<'a> {
    pub request: &'a Request,
    pub model: &'a str,
    pub stream: bool,
    pub config: &'a ClientConfig,
}

/// Signs `http` with the config's AWS credentials ([`ClientConfig::aws`],
/// SigV4), if it has any, at `now_ms` (milliseconds since the Unix epoch):
/// a signature is valid for minutes, so a driver signs each attempt
/// anew, as [`crate::RunMachine`] does. The signing service is the
/// provider's name (`bedrock`).
pub fn sign_request(config: &ClientConfig, http: &mut crate::HttpRequest, now_ms: u64) {
    let (Some(credentials), Some(region), Some(provider)) =
        (&config.aws, config.region.as_deref(), config.provider)
    else {
        return;
    };
    let scope = crate::sigv4::SigningScope {
        region,
        service: provider.name(),
        now_ms,
    };
    crate::sigv4::sign(http, credentials, &scope);
}

/// Checks what of `config` a request would carry in its headers (the key,
/// an access token, AWS credentials' key id and session token, the extra
/// headers) and the event limit, before anything is sent: a driver's
/// `fetch` would refuse a header only when sending, as if the network had
/// failed. The error names the field (`apiKey`, `accessToken`,
/// `credentials.accessKeyId`, `credentials.sessionToken`, `headers` for a
/// bad name, `headers.<name>`, `maxEventBytes`), never the secret.
pub(crate) fn check_config(config: &ClientConfig) -> Result<(), Error> {
    let aws = config.aws.as_ref();
    for (path, value) in [
        ("apiKey", config.api_key.as_deref()),
        ("accessToken", config.access_token.as_deref()),
        ("credentials.accessKeyId", aws.map(|c| &*c.access_key_id)),
        (
            "credentials.sessionToken",
            aws.and_then(|c| c.session_token.as_deref()),
        ),
    ] {
        if let Some(problem) = value.and_then(crate::http::header_value_problem) {
            return Err(Error::invalid_request(path, problem));
        }
    }
    if config.max_event_bytes == Some(0) {
        return Err(Error::invalid_request("maxEventBytes", "must be 1 or more"));
    }
    for (name, value) in &config.headers {
        if !crate::http::is_header_name(name) {
            let shown = crate::json::write::quoted(name);
            return Err(Error::invalid_request(
                "headers",
                format!("{shown} is not a header name"),
            ));
        }
        if let Some(problem) = crate::http::header_value_problem(value) {
            return Err(Error::invalid_request(format!("headers.{name}"), problem));
        }
    }
    Ok(())
}

/// Joins a base URL and a path with exactly one `/`; a query string on the
/// base (Azure's `?api-version=...`) stays at the end.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    let (base, query) = match base.find('?') {
        Some(i) => base.split_at_checked(i).unwrap_or((base, "")),
        None => (base, ""),
    };
    format!(
        "{}/{}{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/'),
        query
    )
}

/// The parameters schema of a tool as every provider accepts it: the given
/// schema with a top-level `"type": "object"` (tool arguments are always an
/// object), `$defs`, `$ref`, `oneOf` and every other keyword kept, and
/// non-string entries of `required` dropped. A schema that already
/// satisfies this is returned unchanged. No parameters give
/// `{"type": "object", "properties": {}}`.
pub fn object_schema(parameters: Option<&Value>) -> Value {
    schema_for(parameters).into_owned()
}

/// [`object_schema`], borrowing the given schema when it is returned
/// unchanged (the common case: no copy).
fn schema_for(parameters: Option<&Value>) -> Cow<'_, Value> {
    let Some(p @ Value::Object(given)) = parameters else {
        // (Built by hand: `json!` would link serde's value serializer.)
        let mut schema = Map::new();
        schema.insert("type".into(), Value::from("object"));
        schema.insert("properties".into(), Value::Object(Map::new()));
        return Cow::Owned(Value::Object(schema));
    };
    let required_ok = given.get("required").map_or(true, |r| {
        r.as_array().is_some_and(|r| r.iter().all(Value::is_string))
    });
    if required_ok && given.get("type").and_then(Value::as_str) == Some("object") {
        return Cow::Borrowed(p);
    }
    let mut schema = given.clone();
    match schema.get_mut("required") {
        Some(Value::Array(required)) => required.retain(Value::is_string),
        Some(_) => {
            schema.remove("required");
        }
        None => {}
    }
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return Cow::Owned(Value::Object(schema));
    }
    // Insert (or correct) "type" first, as the providers document it.
    let mut ordered = Map::new();
    ordered.insert("type".into(), Value::from("object"));
    for (k, v) in schema {
        if k != "type" {
            ordered.insert(k, v);
        }
    }
    Cow::Owned(Value::Object(ordered))
}

/// Where an image part's bytes are.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) enum ImageSource<'a> {
    /// An `http(s):` (or other non-`data:`) URL, with its media type if given.
    Url {
        url: &'a str,
        media_type: Option<&'a str>,
    },
    /// Base64 data, from `data` + `mediaType` or a `data:...;base64,` URL.
    Base64 { media_type: &'a str, data: &'a str },
}

/// A data URL's media type and base64 payload, around the first
/// `;base64,` (what `split_once(";base64,")` gives, without the substring
/// searcher and its panic path in the wasm).
fn base64_payload(rest: &str) -> Option<(&str, &str)> {
    const MARK: &[u8] = b";base64,";
    let at = rest
        .as_bytes()
        .windows(MARK.len())
        .position(|w| w == MARK)?;
    Some((rest.get(..at)?, rest.get(at + MARK.len()..)?))
}

/// The `data:` URL of base64 data.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// Reads an image part's fields.
pub(crate) fn image_source<'a>(
    url: Option<&'a str>,
    data: Option<&'a str>,
    media_type: Option<&'a str>,
) -> Result<ImageSource<'a>, String> {
    if let Some(url) = url {
        if let Some((media, b64)) = url.strip_prefix("data:").and_then(base64_payload) {
            return Ok(ImageSource::Base64 {
                media_type: media,
                data: b64,
            });
        }
        return Ok(ImageSource::Url { url, media_type });
    }
    match (data, media_type) {
        (Some(data), Some(media_type)) => Ok(ImageSource::Base64 { media_type, data }),
        (Some(_), None) => Err("base64 image data needs a mediaType".into()),
        (None, _) => Err("an image needs a url or base64 data".into()),
    }
}

/// Writes a tool's `name`, `description` and parameters schema (under
/// `schema_key`, unless it is `None`), as every provider declares them,
/// then the tool's own `providerOptions` (Anthropic's `strict` or
/// `eager_input_streaming`, OpenAI's `strict`), which win over a field of
/// the same name.
pub(crate) fn tool_declaration(d: &mut write::Obj, tool: &Tool, schema_key: Option<&str>) {
    let own = |key: &str| tool_option(tool, key).is_some();
    if !own("name") {
        d.str("name", &tool.name);
    }
    if let Some(desc) = tool.description.as_ref().filter(|_| !own("description")) {
        d.str("description", desc);
    }
    if let Some(key) = schema_key.filter(|k| !own(k)) {
        d.value(key, &schema_for(tool.parameters.as_ref()));
    }
    for (k, v) in tool.provider_options.iter().flatten() {
        d.value(k, v);
    }
}

/// Writes an OpenAI-style JSON schema format (`response_format.json_schema`
/// of Chat Completions, `text.format` of the Responses API): `name`
/// (`"response"` unless given), `description`, `schema`, `strict`.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn schema_format(
    d: &mut write::Obj,
    schema: &Value,
    name: Option<&str>,
    description: Option<&str>,
    strict: Option<bool>,
) {
    d.str("name", name.unwrap_or("response"));
    if let Some(desc) = description {
        d.str("description", desc);
    }
    d.value("schema", schema);
    if let Some(strict) = strict {
        d.bool("strict", strict);
    }
}

/// The tool's own `providerOptions` value for `key`, if it sets one.
pub(crate) fn tool_option<'a>(tool: &'a Tool, key: &str) -> Option<&'a Value> {
    tool.provider_options.as_ref()?.get(key)
}

/// All system text of a request (its `system` and any system messages), or
/// `None` when there is none.
pub(crate) fn joined_system(parts: impl IntoIterator<Item = String>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().filter(|s| !s.is_empty()).collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A system message's text: its text parts as separate paragraphs, as
/// [`joined_system`] joins system texts (not glued: "You are X." and "Be
/// brief." stay two sentences).
pub(crate) fn system_text(msg: &Message) -> String {
    let texts = msg.parts.iter().filter_map(|p| match p {
        Part::Text { text, .. } => Some(text.clone()),
        _ => None,
    });
    joined_system(texts).unwrap_or_default()
}

/// The messages of a request as the turns of a provider that keeps system
/// text out of the message list and wants one turn per role change
/// (Anthropic, Gemini).
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) struct Turns {
    /// The system prompt: `system` and every system message, joined.
    pub system: Option<String>,
    /// (wire role, encoded parts); consecutive turns of one role merged.
    pub turns: Vec<(&'static str, Vec<EncodedPart>)>,
}

/// One encoded part: its JSON text, and whether it must open a user turn
/// (Anthropic's tool results).
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) struct EncodedPart {
    /// The part as a JSON object.
    pub json: String,
    /// Sorted to the front of a user turn.
    pub lead: bool,
    /// Not a part but a mark: fields merged into the part before it in
    /// its message (Anthropic's `cache_control`).
    pub mark: Option<Map<String, Value>>,
}

impl EncodedPart {
    /// A block written by `write`, in no particular place.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn new(write: impl FnOnce(&mut write::Obj)) -> Self {
        EncodedPart {
            json: write::object_text(write),
            lead: false,
            mark: None,
        }
    }

    /// A mark for the part before it.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn mark(fields: Map<String, Value>) -> Self {
        EncodedPart {
            json: String::new(),
            lead: false,
            mark: Some(fields),
        }
    }
}

/// Anthropic's `cache_control` for a cache mark with this `ttl`.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn cache_control(ttl: Option<&str>) -> Map<String, Value> {
    let mut control = Map::new();
    control.insert("type".into(), Value::from("ephemeral"));
    if let Some(ttl) = ttl {
        control.insert("ttl".into(), Value::from(ttl));
    }
    let mut fields = Map::new();
    fields.insert("cache_control".into(), Value::Object(control));
    fields
}

/// Groups messages into [`Turns`]. `encode` turns a part of a message into
/// the wire's part (`None` leaves it out; an error names the part's path).
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn group_turns(
    req: &Request,
    assistant_role: &'static str,
    mut encode: impl FnMut(&Message, &Part) -> Result<Option<EncodedPart>, String>,
) -> Result<Turns, Error> {
    let mut system: Vec<String> = req.system.iter().cloned().collect();
    let mut turns: Vec<(&'static str, Vec<EncodedPart>)> = Vec::new();
    for (m, msg) in req.messages.iter().enumerate() {
        let role = match msg.role {
            Role::System => {
                system.push(system_text(msg));
                continue;
            }
            Role::User | Role::Tool => "user",
            Role::Assistant => assistant_role,
        };
        let mut parts: Vec<EncodedPart> = Vec::new();
        for (p, part) in msg.parts.iter().enumerate() {
            let at = || format!("messages[{m}].parts[{p}]");
            let encoded = encode(msg, part).map_err(|e| Error::invalid_request(at(), e))?;
            match encoded {
                Some(EncodedPart {
                    mark: Some(fields), ..
                }) => {
                    // A mark goes on the part before it, in its message.
                    let Some(before) = parts.last_mut() else {
                        return Err(Error::invalid_request(
                            at(),
                            "a cache mark must follow the part it marks, in the same message",
                        ));
                    };
                    before.json = crate::json::merge::merged(&before.json, &fields)
                        .ok_or_else(|| Error::invalid_request(at(), "cannot mark this part"))?;
                }
                other => parts.extend(other),
            }
        }
        if parts.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(parts),
            _ => turns.push((role, parts)),
        }
    }
    Ok(Turns {
        system: joined_system(system),
        turns,
    })
}

/// Writes `turns` as `[{"role": ..., <parts_key>: [...]}, ...]` under `key`.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn write_turns(
    body: &mut write::Obj,
    key: &str,
    parts_key: &str,
    turns: &[(&'static str, Vec<EncodedPart>)],
) {
    let mut list = body.array(key);
    for (role, blocks) in turns {
        let mut turn = list.object();
        turn.str("role", role);
        let mut parts = turn.array(parts_key);
        for b in blocks {
            parts.json(&b.json);
        }
    }
}

/// A tool-call id as Anthropic and Bedrock accept it (`^[a-zA-Z0-9_-]+$`):
/// ids from other providers (Gemini's `name#2`) get every other character
/// replaced by `_`, the same way in the call and its result.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn tool_id(id: &str) -> String {
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

/// The `input` of a replayed tool call (Anthropic's, Bedrock's): its
/// arguments, which must be a JSON object for `provider`. Empty arguments
/// are `{}`.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn tool_input(arguments: &str, provider: &str) -> Result<Value, String> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match crate::json::read::parse(arguments) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(format!(
            "tool-call arguments must be a JSON object for {provider}"
        )),
        Err(e) => Err(format!("tool-call arguments are not valid JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;

    /// The key and headers fetch would refuse fail before anything is
    /// sent, naming the field and the character's position, never the key.
    #[test]
    fn headers_fetch_would_refuse_are_refused_before_sending() {
        let ok = |key: Option<&str>, headers: &[(&str, &str)]| {
            let mut config = ClientConfig::new(Provider::OpenAi);
            config.api_key = key.map(str::to_string);
            config.headers = (headers.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            check_config(&config).map_err(|e| match e {
                Error::InvalidRequest { path, message } => (path, message),
                other => (String::new(), other.to_string()),
            })
        };
        assert_eq!(
            ok(Some(" sk-1\n"), &[("x-a", "b c"), ("X_Y.z~", "\té")]),
            Ok(())
        );
        assert_eq!(ok(None, &[]), Ok(()));
        let (path, message) = ok(Some("sk-secret\u{201C}x"), &[]).unwrap_err();
        assert_eq!(path, "apiKey");
        assert_eq!(
            message,
            "has a character that cannot be sent in an HTTP header (U+201C at position 10; a pasted quote or line break?)"
        );
        assert!(!message.contains("secret"));
        // A unit above U+FFFF is named by its first UTF-16 unit, as JS does.
        let (_, message) = ok(Some("a\u{1F600}"), &[]).unwrap_err();
        assert!(message.contains("U+D83D at position 2"), "{message}");
        for (name, value, want) in [
            ("x a", "v", "headers"),
            ("", "v", "headers"),
            ("x-é", "v", "headers"),
            ("x-a", "a\rb", "headers.x-a"),
            ("x-a", "a\0", "headers.x-a"),
        ] {
            assert_eq!(
                ok(None, &[(name, value)]).unwrap_err().0,
                want,
                "{name:?} {value:?}"
            );
        }
        assert_eq!(
            ok(None, &[("x a", "v")]).unwrap_err().1,
            "\"x a\" is not a header name"
        );
    }

    /// An access token and AWS credentials go in headers too (the key id
    /// inside `Authorization`): checked the same way, by their own names.
    /// A limit of 0 bytes per event would fail every stream: refused.
    #[test]
    fn tokens_credentials_and_the_event_limit_are_checked_by_name() {
        let path = |edit: &dyn Fn(&mut ClientConfig)| {
            let mut config = ClientConfig::new(Provider::Gemini);
            edit(&mut config);
            match check_config(&config) {
                Err(Error::InvalidRequest { path, message }) => {
                    assert!(!message.contains("SECRET"), "{message}");
                    path
                }
                other => format!("{other:?}"),
            }
        };
        assert_eq!(path(&|c| c.access_token = Some("ya29.ok".into())), "Ok(())");
        assert_eq!(
            path(&|c| c.access_token = Some("ya29.SECRET\u{201D}".into())),
            "accessToken"
        );
        let aws = |id: &str, token: Option<&str>| {
            let mut c = crate::AwsCredentials::new(id, "SECRET");
            c.session_token = token.map(str::to_string);
            Some(c)
        };
        assert_eq!(path(&|c| c.aws = aws("AKIA1", Some("IQo"))), "Ok(())");
        for id in ["AKIA\nSECRET", "AKIA\u{201C}1"] {
            assert_eq!(path(&|c| c.aws = aws(id, None)), "credentials.accessKeyId");
        }
        assert_eq!(
            path(&|c| c.aws = aws("AKIA1", Some("IQo\u{2028}SECRET"))),
            "credentials.sessionToken"
        );
        assert_eq!(path(&|c| c.max_event_bytes = Some(0)), "maxEventBytes");
        assert_eq!(path(&|c| c.max_event_bytes = Some(1)), "Ok(())");
    }
}
