//! Reading the model's input types ([`Request`], [`Message`], [`Part`],
//! [`Tool`], [`ToolCall`]) out of a parsed JSON [`Value`], by hand.
//!
//! serde's derived `Deserialize` would monomorphise a visitor per type and
//! per deserializer, with its error formatting: about a tenth of the wasm.
//! Parsing into a `Value` (which the response side needs anyway) and then
//! reading it here costs a few kilobytes, and an error names the exact
//! field: `messages[2].parts[0].callId: expected a string, got a number`.
//!
//! The rules are serde's for these types, with these differences: an
//! explicit `null` reads as an absent field everywhere, lists included
//! (JavaScript's `JSON.stringify` writes `null` for `NaN` and for
//! `undefined` in arrays); a repeated key keeps its last value (serde's
//! derive refused it); and a struct written as a JSON array, which the
//! derive also took, is refused. Unknown fields are ignored.

use serde_json::{Map, Value};

use crate::json::write::quoted;
use crate::model::{
    Message, Part, PartialEvents, Request, ResponseFormat, Role, Tool, ToolCall, ToolChoice,
};

/// What was wrong, and where: `path` is empty for the value itself.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReadError {
    pub(crate) path: String,
    pub(crate) message: String,
}

impl ReadError {
    /// `path: message` (or the message alone at the root), for the
    /// `TryFrom<Value>` impls that serde's `try_from` uses.
    pub(crate) fn into_message(self) -> String {
        if self.path.is_empty() {
            self.message
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }
}

/// Where a value sits, as a chain to the root; written out only for an
/// error.
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    /// The value read, under a name (`"tool"`) or none (`""`).
    Root(&'a str),
    /// A field of an object.
    Key(&'a At<'a>, &'a str),
    /// An element of an array.
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn path(&self) -> String {
        match self {
            At::Root(name) => (*name).to_string(),
            At::Key(parent, key) => {
                let mut p = parent.path();
                if !p.is_empty() {
                    p.push('.');
                }
                p.push_str(key);
                p
            }
            At::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> ReadError {
        ReadError {
            path: self.path(),
            message: message.into(),
        }
    }

    fn wrong(&self, want: &str, got: &Value) -> ReadError {
        let got = match got {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        self.error(format!("expected {want}, got {got}"))
    }
}

pub(crate) type Read<T> = Result<T, ReadError>;

/// The fields of an object, or an error; `null` is not an object here.
pub(crate) fn object(v: Value, at: &At) -> Read<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(at.wrong("an object", &other)),
    }
}

/// An optional field: `None` for `null`.
pub(crate) fn present(v: Value) -> Option<Value> {
    (!v.is_null()).then_some(v)
}

pub(crate) fn string(v: Value, at: &At) -> Read<String> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(at.wrong("a string", &other)),
    }
}

pub(crate) fn opt_string(v: Value, at: &At) -> Read<Option<String>> {
    present(v).map(|v| string(v, at)).transpose()
}

pub(crate) fn boolean(v: Value, at: &At) -> Read<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        Value::Null => Ok(false),
        other => Err(at.wrong("true or false", &other)),
    }
}

pub(crate) fn opt_object(v: Value, at: &At) -> Read<Option<Map<String, Value>>> {
    present(v).map(|v| object(v, at)).transpose()
}

/// An array's elements, each read by `item` at its index; `null` is empty.
pub(crate) fn array<T>(v: Value, at: &At, item: fn(Value, &At) -> Read<T>) -> Read<Vec<T>> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => {
            // A loop rather than `collect` into a `Result`: its adapter,
            // with `item` inlined, was the largest function of the wasm.
            // Not sized up front: a long list of the wrong things fails at
            // its first element, before anything is reserved for the rest.
            let mut out = Vec::new();
            for (i, v) in a.into_iter().enumerate() {
                out.push(item(v, &At::Index(at, i))?);
            }
            Ok(out)
        }
        other => Err(at.wrong("an array", &other)),
    }
}

fn number(v: Value, at: &At) -> Read<Option<f64>> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64()),
        other => Err(at.wrong("a number", &other)),
    }
}

pub(crate) fn opt_u32(v: Value, at: &At) -> Read<Option<u32>> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_u64().map(u32::try_from) {
            Some(Ok(n)) => Ok(Some(n)),
            _ => Err(at.error(format!(
                "expected a whole number from 0 to {}, got {n}",
                u32::MAX
            ))),
        },
        other => Err(at.wrong("a whole number", &other)),
    }
}

pub(crate) fn required<T>(v: Option<T>, at: &At, field: &str) -> Read<T> {
    v.ok_or_else(|| at.error(format!("missing field `{field}`")))
}

/// A [`Request`]; `at` names the root (`At::Root("")` for paths like
/// `messages[0].role`).
pub(crate) fn request(v: Value, at: &At) -> Read<Request> {
    let mut r = Request::default();
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "model" => r.model = opt_string(v, at)?,
            "system" => r.system = opt_string(v, at)?,
            "messages" => r.messages = array(v, at, message)?,
            "tools" => r.tools = array(v, at, tool)?,
            "toolChoice" => {
                r.tool_choice = present(v)
                    .map(|v| ToolChoice::try_from(v).map_err(|m| at.error(m)))
                    .transpose()?;
            }
            "maxTokens" => r.max_tokens = opt_u32(v, at)?,
            "temperature" => r.temperature = number(v, at)?,
            "topP" => r.top_p = number(v, at)?,
            "stop" => r.stop = array(v, at, string)?,
            "providerOptions" => r.provider_options = opt_object(v, at)?,
            "responseFormat" => {
                r.response_format = present(v).map(|v| response_format(v, at)).transpose()?;
            }
            "partial" => r.partial = partial_events(v, at)?,
            _ => {}
        }
    }
    Ok(r)
}

/// [`PartialEvents`]: `{"tools"?: bool, "output"?: bool}`; another key is
/// an error (a misspelt one would otherwise ask for nothing, silently).
fn partial_events(v: Value, at: &At) -> Read<PartialEvents> {
    let mut out = PartialEvents::default();
    let Some(v) = present(v) else {
        return Ok(out);
    };
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        let on = match present(v) {
            Some(v) => boolean(v, at)?,
            None => false,
        };
        match k.as_str() {
            "tools" => out.tools = on,
            "output" => out.output = on,
            "files" => out.files = on,
            _ => {
                return Err(
                    at.error("is not a kind of partial event: \"tools\", \"output\" or \"files\"")
                )
            }
        }
    }
    Ok(out)
}

/// A [`ResponseFormat`]: `{"type": "json"}` or `{"type": "json_schema",
/// "schema": {...}, "name"?, "description"?, "strict"?}`.
fn response_format(v: Value, at: &At) -> Read<ResponseFormat> {
    let (mut kind, mut schema, mut name, mut description, mut strict) =
        (None, None, None, None, None);
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "type" => kind = Some((string(v, at)?, at.error("is \"json\" or \"json_schema\""))),
            "schema" => {
                schema = match present(v) {
                    Some(s @ Value::Object(_)) => Some(s),
                    Some(other) => return Err(at.wrong("a JSON Schema object", &other)),
                    None => None,
                }
            }
            "name" => name = opt_string(v, at)?,
            "description" => description = opt_string(v, at)?,
            "strict" => strict = present(v).map(|v| boolean(v, at)).transpose()?,
            _ => {}
        }
    }
    let (kind, wrong) = required(kind, at, "type")?;
    match kind.as_str() {
        "json" => Ok(ResponseFormat::Json),
        "json_schema" => Ok(ResponseFormat::JsonSchema {
            schema: required(schema, at, "schema")?,
            name,
            description,
            strict,
        }),
        _ => Err(wrong),
    }
}

/// A [`Message`].
pub(crate) fn message(v: Value, at: &At) -> Read<Message> {
    let mut role = None;
    let mut parts = Vec::new();
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "role" => role = Some(self::role(v, at)?),
            "parts" => parts = array(v, at, part)?,
            _ => {}
        }
    }
    Ok(Message {
        role: required(role, at, "role")?,
        parts,
    })
}

fn role(v: Value, at: &At) -> Read<Role> {
    let name = string(v, at)?;
    Ok(match name.as_str() {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(at.error(format!(
                "unknown role {}: use system, user, assistant or tool",
                quoted(other)
            )))
        }
    })
}

/// The string fields a [`Part`] may have (read in one loop: twelve inlined
/// reads were 4 KB of wasm).
const PART_STRINGS: [&str; 14] = [
    "type",
    "text",
    "url",
    "mediaType",
    "id",
    "name",
    "arguments",
    "callId",
    "content",
    "signature",
    "redacted",
    "provider",
    "filename",
    "ttl",
];

/// A [`Part`], by its `type`.
pub(crate) fn part(v: Value, at: &At) -> Read<Part> {
    let mut strings: [Option<String>; 14] = Default::default();
    let mut data = None;
    let mut is_error = false;
    let mut provider_data = None;
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        let slot = PART_STRINGS
            .iter()
            .position(|f| *f == k)
            .and_then(|i| strings.get_mut(i));
        match (slot, k.as_str()) {
            (Some(slot), _) => *slot = opt_string(v, at)?,
            (None, "data") => data = present(v),
            (None, "isError") => is_error = boolean(v, at)?,
            (None, "providerData") => provider_data = opt_object(v, at)?,
            _ => {}
        }
    }
    let [kind, text, url, media_type, id, name, arguments, call_id, content, signature, redacted, provider, filename, ttl] =
        strings;
    let base64 = |data: Option<Value>| match data {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(At::Key(at, "data").wrong("base64 text", &other)),
    };
    let kind = required(kind, at, "type")?;
    let need = |v: Option<String>, field: &str| {
        v.ok_or_else(|| at.error(format!("a {kind} part needs `{field}`")))
    };
    Ok(match kind.as_str() {
        "text" => Part::Text {
            text: need(text, "text")?,
            provider_data,
        },
        "image" => Part::Image {
            url,
            data: base64(data)?,
            media_type,
            provider_data,
        },
        "file" => Part::File {
            url,
            data: base64(data)?,
            media_type: need(media_type, "mediaType")?,
            filename,
            provider_data,
        },
        "tool_call" => Part::ToolCall {
            id: need(id, "id")?,
            name: need(name, "name")?,
            arguments: need(arguments, "arguments")?,
            provider_data,
        },
        "tool_result" => Part::ToolResult {
            call_id: need(call_id, "callId")?,
            content: need(content, "content")?,
            is_error,
            provider_data,
        },
        "reasoning" => Part::Reasoning {
            text: text.unwrap_or_default(),
            signature,
            redacted,
            provider_data,
        },
        "provider" => Part::Provider {
            provider: need(provider, "provider")?,
            data: data.unwrap_or(Value::Null),
        },
        "cache" => Part::Cache { ttl },
        other => {
            let kinds = "text, image, file, tool_call, tool_result, reasoning, provider or cache";
            let message = format!("unknown part type {}: use {kinds}", quoted(other));
            return Err(At::Key(at, "type").error(message));
        }
    })
}

/// A [`Tool`].
pub(crate) fn tool(v: Value, at: &At) -> Read<Tool> {
    let mut name = None;
    let mut description = None;
    let mut parameters = None;
    let mut provider_options = None;
    let mut cache = None;
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "name" => name = Some(string(v, at)?),
            "description" => description = opt_string(v, at)?,
            "parameters" => parameters = present(v),
            "providerOptions" => provider_options = opt_object(v, at)?,
            "cache" => {
                cache = match present(v) {
                    None => None,
                    Some(mark) => {
                        let mut ttl = None;
                        for (k, v) in object(mark, at)? {
                            if k == "ttl" {
                                ttl = opt_string(v, &At::Key(at, &k))?;
                            }
                        }
                        Some(ttl)
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Tool {
        name: required(name, at, "name")?,
        description,
        parameters,
        provider_options,
        cache,
    })
}

/// A [`ToolCall`].
pub(crate) fn tool_call(v: Value, at: &At) -> Read<ToolCall> {
    let (mut id, mut name, mut arguments) = (None, None, None);
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "id" => id = Some(string(v, at)?),
            "name" => name = Some(string(v, at)?),
            "arguments" => arguments = Some(string(v, at)?),
            _ => {}
        }
    }
    Ok(ToolCall {
        id: required(id, at, "id")?,
        name: required(name, at, "name")?,
        arguments: required(arguments, at, "arguments")?,
    })
}

/// `[[name, value], ...]` pairs of strings (HTTP headers); anything else
/// in the list is skipped.
pub(crate) fn string_pairs(v: Value) -> Vec<(String, String)> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|item| match item {
            Value::Array(pair) => {
                let mut pair = pair.into_iter();
                match (pair.next(), pair.next(), pair.next()) {
                    (Some(Value::String(k)), Some(Value::String(v)), None) => Some((k, v)),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// `TryFrom<Value>` for the types serde reads through [`Value`]
/// (`#[serde(try_from = "Value")]`).
macro_rules! from_value {
    ($($ty:ty => $read:ident),* $(,)?) => {$(
        impl TryFrom<Value> for $ty {
            type Error = String;

            fn try_from(v: Value) -> Result<Self, String> {
                $read(v, &At::Root("")).map_err(ReadError::into_message)
            }
        }
    )*};
}

from_value!(
    Request => request,
    Message => message,
    Part => part,
    Tool => tool,
    ToolCall => tool_call,
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(r: Read<impl std::fmt::Debug>) -> (String, String) {
        let e = r.unwrap_err();
        (e.path, e.message)
    }

    #[test]
    fn errors_name_the_exact_field() {
        let bad = json!({"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {"role": "tool", "parts": [{"type": "tool_result", "callId": 7, "content": "x"}]}]});
        assert_eq!(
            err(request(bad, &At::Root(""))),
            (
                "messages[1].parts[0].callId".into(),
                "expected a string, got a number".into()
            )
        );
        let (path, message) = err(request(json!({"messages": [{"parts": []}]}), &At::Root("")));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("messages[0]", "missing field `role`")
        );
        let (path, message) = err(tool(json!({"name": 1}), &At::Root("tool")));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("tool.name", "expected a string, got a number")
        );
        let (path, _) = err(request(json!([]), &At::Root("request")));
        assert_eq!(path, "request");
        let (path, message) = err(request(json!({"maxTokens": 1.5}), &At::Root("")));
        assert_eq!(path, "maxTokens");
        assert!(message.contains("whole number"), "{message}");
        assert!(request(json!({"maxTokens": 5_000_000_000u64}), &At::Root("")).is_err());
        let (path, message) = err(part(
            json!({"type": "tool_call", "id": "c", "name": "f"}),
            &At::Root(""),
        ));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("", "a tool_call part needs `arguments`")
        );
        let (path, message) = err(part(json!({"type": "video"}), &At::Root("")));
        assert_eq!(path, "type");
        assert!(message.contains("unknown part type \"video\""), "{message}");
        let (path, _) = err(part(json!({"type": "image", "data": 5}), &At::Root("p")));
        assert_eq!(path, "p.data");
        let (path, message) = err(part(json!({"type": "file", "data": "AA=="}), &At::Root("")));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("", "a file part needs `mediaType`")
        );
    }

    /// A response format names its field when it is wrong, and reads the
    /// same as serde's derive when it is right.
    #[test]
    fn partial_events_are_read_and_a_wrong_key_is_named() {
        let read = |p: Value| request(json!({"partial": p}), &At::Root(""));
        let got = read(json!({"tools": true})).unwrap().partial;
        assert!(got.tools && !got.output);
        assert!(read(json!(null)).unwrap().partial.is_none());
        let e = read(json!({"tool": true})).unwrap_err();
        assert_eq!(e.path, "partial.tool");
        let e = read(json!({"output": "yes"})).unwrap_err();
        assert_eq!(e.path, "partial.output");
        let e = read(json!(true)).unwrap_err();
        assert_eq!(e.path, "partial");
        // Output progress reads the answer as JSON: it needs a format.
        let r = read(json!({"output": true})).unwrap();
        let e = crate::model::validate::validate_request(&r).unwrap_err();
        assert_eq!(e.path, "partial.output");
    }

    #[test]
    fn response_formats_are_read_with_their_paths() {
        let read = |f: Value| request(json!({"responseFormat": f}), &At::Root(""));
        assert_eq!(
            read(json!({"type": "json"})).unwrap().response_format,
            Some(ResponseFormat::Json)
        );
        let f = json!({"type": "json_schema", "schema": {"type": "object"}, "name": "n", "strict": true});
        let ours = read(f.clone()).unwrap().response_format.unwrap();
        assert_eq!(ours, serde_json::from_value::<ResponseFormat>(f).unwrap());
        assert_eq!(read(json!(null)).unwrap().response_format, None);
        for (f, path, says) in [
            (json!({"type": "xml"}), "responseFormat.type", "json_schema"),
            (json!({}), "responseFormat", "missing field `type`"),
            (
                json!({"type": "json_schema"}),
                "responseFormat",
                "missing field `schema`",
            ),
            (
                json!({"type": "json_schema", "schema": "x"}),
                "responseFormat.schema",
                "JSON Schema",
            ),
            (
                json!({"type": "json", "strict": 1}),
                "responseFormat.strict",
                "true or false",
            ),
        ] {
            let (p, m) = err(read(f.clone()));
            assert_eq!(p, path, "{f}");
            assert!(m.contains(says), "{f}: {m}");
        }
    }

    #[test]
    fn every_field_is_read_and_null_is_absent() {
        let r = request(
            json!({"model": "m", "system": "s", "maxTokens": 10, "temperature": 0.5, "topP": null,
                "stop": ["x"], "toolChoice": "auto", "providerOptions": {"a": 1}, "unknown": [1],
                "tools": [{"name": "f", "description": null, "parameters": {"type": "object"}}],
                "messages": [{"role": "assistant", "parts": [
                    {"type": "reasoning", "text": "t", "signature": "sig", "redacted": null},
                    {"type": "tool_call", "id": "c", "name": "f", "arguments": "{}", "providerData": {"gemini": {}}},
                    {"type": "image", "url": "https://x", "mediaType": "image/png"},
                    {"type": "provider", "provider": "anthropic", "data": {"k": 1}}]},
                    {"role": "tool", "parts": [{"type": "tool_result", "callId": "c", "content": "1", "isError": true}]}]}),
            &At::Root(""),
        )
        .unwrap();
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(
            back,
            json!({"model": "m", "system": "s", "maxTokens": 10, "temperature": 0.5,
                "stop": ["x"], "toolChoice": "auto", "providerOptions": {"a": 1},
                "tools": [{"name": "f", "parameters": {"type": "object"}}],
                "messages": [{"role": "assistant", "parts": [
                    {"type": "reasoning", "text": "t", "signature": "sig"},
                    {"type": "tool_call", "id": "c", "name": "f", "arguments": "{}", "providerData": {"gemini": {}}},
                    {"type": "image", "url": "https://x", "mediaType": "image/png"},
                    {"type": "provider", "provider": "anthropic", "data": {"k": 1}}]},
                    {"role": "tool", "parts": [{"type": "tool_result", "callId": "c", "content": "1", "isError": true}]}]})
        );
    }

    #[test]
    fn serde_reads_the_types_through_these_readers() {
        let e = serde_json::from_str::<Message>(r#"{"role":"boss"}"#).unwrap_err();
        assert!(e.to_string().contains("role: unknown role \"boss\""), "{e}");
        let call: ToolCall =
            serde_json::from_str(r#"{"id":"a","name":"b","arguments":"{}"}"#).unwrap();
        assert_eq!(call.name, "b");
    }

    #[test]
    fn header_pairs_keep_only_pairs_of_strings() {
        assert_eq!(
            string_pairs(json!([
                ["a", "1"],
                ["b"],
                ["c", 2],
                "d",
                ["e", "5", "x"],
                ["f", "6"]
            ])),
            vec![("a".into(), "1".into()), ("f".into(), "6".into())]
        );
        assert!(string_pairs(json!({"a": "1"})).is_empty());
    }
}
