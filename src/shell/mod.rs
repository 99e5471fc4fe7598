//! The JSON boundary the JavaScript shell calls: strings in, strings out.
//!
//! Every function here takes and returns JSON text, so the wasm wrappers in
//! `wasm.rs` are one line each and everything is tested natively. Results
//! are `{"ok": ...}`-style objects; failures are `{"error": ErrorInfo}`,
//! never panics or exceptions, so the JS side builds the right `SkylError`
//! subclass in one place.

pub(crate) mod boundary;
// Reached only through the wasm exports (`wasm.rs`) and its tests; left
// out of a build without an embedder (the JS half answers from policy.js).
#[cfg(any(feature = "openai", feature = "gemini"))]
#[cfg_attr(not(all(target_arch = "wasm32", feature = "npm")), allow(dead_code))]
pub(crate) mod embed;
pub(crate) mod error_info;
mod expand;
#[cfg(any(feature = "gemini", feature = "anthropic"))]
pub(crate) mod google_auth;
// (In the default build, with every adapter: the file lists what each
// adapter's table entry says, embeddings included.)
#[cfg(all(
    test,
    not(target_arch = "wasm32"),
    feature = "openai",
    feature = "anthropic",
    feature = "gemini"
))]
mod policy_js;
pub(crate) mod run;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod to_json_tests;
pub(crate) mod tool_loop;
#[cfg(all(target_arch = "wasm32", feature = "npm"))]
pub(crate) mod wasm;

use serde_json::Value;

pub use boundary::{boundary_version, BoundaryStream};
pub use expand::{expand_result, Expansion};
pub use run::BoundaryRun;
pub use tool_loop::BoundaryLoop;

use crate::error::Error;
use crate::http::HttpRequest;
use crate::json::write::quoted;
use crate::model::from_json::{self as read, At, ReadError};
use crate::model::to_json;
use crate::model::validate::{validate_request, validate_tool, validate_tool_call};
use crate::model::{Request, Response};
use crate::providers::{
    decode_error, decode_error_at, decode_response, encode_request, provider_names, ClientConfig,
    Provider,
};
use crate::retry::RetryPolicy;
use crate::run::Fallback;

/// The client options the JS shell passes to [`encode`]: a config, and
/// for the client's own, the providers after it.
#[derive(Default)]
struct ConfigInput {
    config: ClientConfig,
    /// A fallback entry's retries (the client's are the limits').
    max_retries: Option<u32>,
    fallback: Vec<ConfigInput>,
    fallback_on: Vec<u16>,
}

impl ConfigInput {
    fn read(v: Value, at: &At) -> Result<Self, ReadError> {
        let mut input = ConfigInput::default();
        let c = &mut input.config;
        for (k, v) in read::object(v, at)? {
            let at = &At::Key(at, &k);
            match k.as_str() {
                "provider" => {
                    let name = read::string(v, at)?;
                    let known = Provider::from_name(&name);
                    c.provider = Some(known.ok_or_else(|| at.error(unknown_provider(&name)))?);
                }
                "apiKey" => c.api_key = read::opt_string(v, at)?.filter(|k| !k.is_empty()),
                "baseURL" => c.base_url = read::opt_string(v, at)?,
                "model" => c.model = read::opt_string(v, at)?,
                // Only string values: the JS shell has already refused
                // others by name, when the client was made.
                "headers" => {
                    for (name, value) in read::opt_object(v, at)?.unwrap_or_default() {
                        if let Value::String(value) = value {
                            c.headers.push((name, value));
                        }
                    }
                }
                "browser" => c.browser = read::boolean(v, at)?,
                "includeUsage" => c.include_usage = read::boolean(v, at)?,
                // (Bedrock's options: read only in a build with it.)
                #[cfg(feature = "bedrock")]
                "region" => c.region = read::opt_string(v, at)?.filter(|r| !r.is_empty()),
                #[cfg(feature = "bedrock")]
                "credentials" => c.aws = aws_credentials(v, at)?,
                #[cfg(any(feature = "gemini", feature = "anthropic"))]
                "vertex" => c.vertex = vertex(v, at)?,
                #[cfg(any(feature = "gemini", feature = "anthropic"))]
                "accessToken" => c.access_token = read::opt_string(v, at)?,
                "maxRetries" => input.max_retries = read::opt_u32(v, at)?,
                "maxEventBytes" => {
                    let limit = read::opt_u32(v, at)?.filter(|n| *n > 0);
                    c.max_event_bytes = limit.map(|n| n as usize);
                }
                "fallback" => input.fallback = read::array(v, at, ConfigInput::read)?,
                "fallbackOn" => input.fallback_on = read::array(v, at, status)?,
                _ => {}
            }
        }
        read::required(input.config.provider, at, "provider")?;
        Ok(input)
    }
}

/// AWS credentials, `{accessKeyId, secretAccessKey, sessionToken?}`
/// (`credentials`; `null`: none).
#[cfg(feature = "bedrock")]
pub(crate) fn aws_credentials(
    v: Value,
    at: &At,
) -> Result<Option<crate::AwsCredentials>, ReadError> {
    let Some(mut fields) = read::opt_object(v, at)? else {
        return Ok(None);
    };
    let mut take = |key: &str| -> Result<Option<String>, ReadError> {
        let v = fields.remove(key).unwrap_or(Value::Null);
        read::opt_string(v, &At::Key(at, key))
    };
    let id = take("accessKeyId")?;
    let secret = take("secretAccessKey")?;
    let token = take("sessionToken")?;
    let id = read::required(id.filter(|s| !s.is_empty()), at, "accessKeyId")?;
    let secret = read::required(secret.filter(|s| !s.is_empty()), at, "secretAccessKey")?;
    let mut credentials = crate::AwsCredentials::new(id, secret);
    credentials.session_token = token.filter(|t| !t.is_empty());
    Ok(Some(credentials))
}

/// Where on Vertex AI, `{project?, location?}` (`vertex`; `null`: not
/// Vertex).
#[cfg(any(feature = "gemini", feature = "anthropic"))]
fn vertex(v: Value, at: &At) -> Result<Option<crate::Vertex>, ReadError> {
    let Some(mut fields) = read::opt_object(v, at)? else {
        return Ok(None);
    };
    let mut take = |key: &str| -> Result<Option<String>, ReadError> {
        let v = fields.remove(key).unwrap_or(Value::Null);
        read::opt_string(v, &At::Key(at, key))
    };
    let mut vertex = crate::Vertex::express();
    vertex.project = take("project")?;
    vertex.location = take("location")?;
    Ok(Some(vertex))
}

/// An HTTP status (`fallbackOn`).
fn status(v: Value, at: &At) -> Result<u16, ReadError> {
    match read::opt_u32(v, at)?.map(u16::try_from) {
        Some(Ok(s @ 100..=599)) => Ok(s),
        _ => Err(at.error("expected an HTTP status from 100 to 599")),
    }
}

/// A client's options: its config, and the providers after it.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) config: ClientConfig,
    pub(crate) fallback: Fallback,
}

/// The message for an unknown provider, naming every provider (from
/// Provider::ALL, so that the list cannot go stale).
fn unknown_provider(name: &str) -> String {
    format!(
        "unknown provider {}: use one of {}",
        quoted(name),
        provider_names(|_| true)
    )
}

fn provider_named(name: &str) -> Result<Provider, Error> {
    Provider::from_name(name)
        .ok_or_else(|| Error::invalid_request("provider", unknown_provider(name)))
}

fn provider_label(name: &str) -> &'static str {
    Provider::from_name(name).map_or("unknown", Provider::name)
}

fn error_json(e: &Error, provider: &'static str) -> String {
    error_json_with(e, provider, None, &[])
}

/// [`error_json`], reporting `partial` when the error keeps no partial
/// response of its own.
fn error_json_with(
    e: &Error,
    provider: &'static str,
    partial: Option<Response>,
    attempts: &[crate::model::FailedAttempt],
) -> String {
    let mut info = error_info::info(e, provider);
    if info.partial.is_none() {
        info.partial = partial;
    }
    info.attempts = attempts.to_vec();
    to_json::wrapped("error", |o| error_info::error_info(o, &info))
}

/// Parses `json` and reads it with `read` (from `src/read.rs`). An error
/// names the field, under `prefix` (`tool.name`, or `messages[0].role`
/// with no prefix, as validation names them), or else `what` itself.
fn parse<T>(
    json: &str,
    what: &str,
    prefix: &str,
    read: fn(Value, &At) -> Result<T, ReadError>,
) -> Result<T, Error> {
    let value = json_value(json, what)?;
    read(value, &At::Root(prefix)).map_err(|e| read_error(e, what))
}

/// `json` parsed, or the error naming `what`.
#[inline(never)]
fn json_value(json: &str, what: &str) -> Result<Value, Error> {
    crate::json::read::parse(json).map_err(|e| Error::invalid_request(what, e.to_string()))
}

/// A read error as an invalid request, at `what` when it names no field.
#[inline(never)]
fn read_error(e: ReadError, what: &str) -> Error {
    let path = if e.path.is_empty() {
        what.to_string()
    } else {
        e.path
    };
    Error::invalid_request(path, e.message)
}

/// Encodes a request: `{"ok": {"url", "headers": [[k, v]]}}`, a NUL and
/// the body; or `{"error": ...}`.
pub fn encode(config_json: &str, request_json: &str, stream: bool) -> String {
    let (label, input) = config_and_request(config_json, request_json);
    match input.and_then(|(o, request)| encode_request(&o.config, &request, stream)) {
        Ok(http) => http_text(&http),
        Err(e) => error_json(&e, label),
    }
}

/// The client's options and the request, read from their JSON, with the
/// provider's label for an error.
fn config_and_request(
    config_json: &str,
    request_json: &str,
) -> (&'static str, Result<(Options, Request), Error>) {
    config_and(config_json, request_json, read::request)
}

/// [`config_and_request`] for any request that `read` reads.
fn config_and<T>(
    config_json: &str,
    request_json: &str,
    read: fn(Value, &At) -> Result<T, ReadError>,
) -> (&'static str, Result<(Options, T), Error>) {
    let (label, config) = config_from(config_json);
    let result = config.and_then(|c| Ok((c, parse(request_json, "request", "", read)?)));
    (label, result)
}

/// The client's options, read from their JSON, with the provider's label
/// for an error. (Not generic: one copy serves every kind of request.)
#[inline(never)]
fn config_from(config_json: &str) -> (&'static str, Result<Options, Error>) {
    let input = parse(config_json, "options", "", ConfigInput::read);
    let label = input
        .as_ref()
        .ok()
        .and_then(|i| i.config.provider)
        .map_or("unknown", Provider::name);
    let result = input.map(|input| {
        let mut fallback = Fallback::new();
        fallback.on = input.fallback_on;
        for entry in input.fallback {
            let retry = RetryPolicy {
                max_retries: entry
                    .max_retries
                    .unwrap_or(RetryPolicy::default().max_retries),
                ..RetryPolicy::default()
            };
            fallback = fallback.then(entry.config, retry);
        }
        Options {
            config: input.config,
            fallback,
        }
    });
    (label, result)
}

/// An encoded request as the JS half reads it: `{"ok": {"url", "headers":
/// [[k, v]]}}`, a NUL, then the body as it is (JSON text holds no raw
/// NUL): most of the result, so it is neither escaped here nor unescaped by
/// `JSON.parse`.
fn http_text(http: &HttpRequest) -> String {
    let head = to_json::wrapped("ok", |o| {
        o.str("url", &http.url);
        let mut headers = o.array("headers");
        for (k, v) in &http.headers {
            let mut pair = headers.array();
            pair.str(k);
            pair.str(v);
        }
    });
    let mut out = String::with_capacity(head.len() + 1 + http.body.len());
    out.push_str(&head);
    out.push('\0');
    out.push_str(&http.body);
    out
}

/// A whole response as the JS half reads it: `{"response": ...}`.
fn response_text(r: &Response) -> String {
    to_json::wrapped("response", |o| {
        to_json::response(o, r, to_json::Fields::All);
    })
}

/// Decodes a non-streaming body: `{"response": ...}` or `{"error": ...}`.
pub fn response(provider: &str, body: &str) -> String {
    let label = provider_label(provider);
    match provider_named(provider).and_then(|p| decode_response(p, body)) {
        Ok(r) => response_text(&r),
        Err(e) => error_json(&e, label),
    }
}

/// Decodes an HTTP error response: always `{"error": ...}`. `headers_json`
/// is `[[name, value], ...]`; `now_ms` is the driver's clock (milliseconds
/// since the Unix epoch; 0, negative or NaN: none), for a `retry-after`
/// given as an HTTP date.
pub fn http_error(
    provider: &str,
    status: u16,
    headers_json: &str,
    body: &str,
    now_ms: f64,
) -> String {
    let label = provider_label(provider);
    let headers =
        crate::json::read::parse(headers_json).map_or_else(|_| Vec::new(), read::string_pairs);
    let now = (now_ms.is_finite() && now_ms >= 0.0).then_some(now_ms as u64);
    let e = match (provider_named(provider), now) {
        (Ok(p), Some(now)) => decode_error_at(p, status, &headers, body, now),
        (Ok(p), None) => decode_error(p, status, &headers, body),
        (Err(e), _) => e,
    };
    error_json(&e, label)
}

/// Validates a `tool`, `toolCall` or `request`: `""` when valid, else
/// `{"error": ...}`.
pub fn validate(kind: &str, json: &str) -> String {
    let result = match kind {
        "tool" => parse(json, "tool", "tool", read::tool).and_then(|t| Ok(validate_tool(&t)?)),
        "toolCall" => parse(json, "toolCall", "toolCall", read::tool_call)
            .and_then(|c| Ok(validate_tool_call(&c)?)),
        "request" => {
            parse(json, "request", "", read::request).and_then(|r| Ok(validate_request(&r)?))
        }
        other => Err(Error::invalid_request(
            "",
            format!("nothing to validate as {}", quoted(other)),
        )),
    };
    match result {
        Ok(()) => String::new(),
        Err(e) => error_json(&e, "unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn an_unknown_provider_is_refused_naming_every_provider() {
        let Err(e) = provider_named("vertex") else {
            panic!("vertex is not a provider yet");
        };
        assert_eq!(
            e.to_string(),
            "invalid request: provider: unknown provider \"vertex\": \
             use one of openai, openaicompat, anthropic, gemini, responses, bedrock"
        );
    }

    #[cfg(feature = "gemini")]
    #[test]
    fn encode_returns_the_http_request_or_a_typed_error() {
        let result = encode(
            r#"{"provider":"gemini","apiKey":"k","model":"gemini-2.5-flash","headers":{"x-a":"1"}}"#,
            r#"{"messages":[{"role":"user","parts":[{"type":"text","text":"hi \u0000 \"q\""}]}]}"#,
            true,
        );
        let (head, body) = result.split_once('\0').unwrap();
        let out = v(head);
        let ok = &out["ok"];
        assert!(ok.get("body").is_none(), "the body follows the NUL");
        let body = v(body);
        assert_eq!(body["contents"][0]["parts"][0]["text"], "hi \u{0} \"q\"");
        assert!(ok["url"]
            .as_str()
            .unwrap()
            .ends_with(":streamGenerateContent?alt=sse"));
        assert!(ok["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "x-a"));

        let err = v(&encode(r#"{"provider":"nope"}"#, "{}", false));
        assert_eq!(err["error"]["name"], "InvalidRequestError");
        assert_eq!(err["error"]["path"], "provider");

        let err = v(&encode(
            r#"{"provider":"openai","model":"m"}"#,
            r#"{"messages":[{"role":"robot"}]}"#,
            false,
        ));
        assert_eq!(err["error"]["path"], "messages[0].role");
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#"unknown role "robot""#));
        assert_eq!(err["error"]["provider"], "openai");
        let err = v(&encode(r#"{"provider":"openai"}"#, "[]", false));
        assert_eq!(err["error"]["path"], "request");
        assert_eq!(
            err["error"]["message"],
            "invalid request: request: expected an object, got an array"
        );
    }

    #[test]
    fn a_fallback_chain_is_read_from_the_options_and_its_errors_name_the_entry() {
        let (label, o) = config_from(
            r#"{"provider":"openai","apiKey":"k1","fallback":[
                {"provider":"anthropic","apiKey":"k2","model":"claude","maxRetries":0,
                 "headers":{"x-a":"1"}},
                {"provider":"gemini"}],"fallbackOn":[401,404]}"#,
        );
        let o = o.unwrap();
        assert_eq!(label, "openai");
        assert_eq!(o.config.provider, Some(Provider::OpenAi));
        let chain = &o.fallback.chain;
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[0].0.provider, Some(Provider::Anthropic));
        assert_eq!(chain[0].0.model.as_deref(), Some("claude"));
        assert_eq!(chain[0].0.headers, [("x-a".to_string(), "1".to_string())]);
        assert_eq!(chain[0].1.max_retries, 0);
        assert_eq!(chain[1].1, RetryPolicy::default());
        assert_eq!(o.fallback.on, [401, 404]);
        for (options, path) in [
            (
                r#"{"provider":"openai","fallback":[{"provider":"vertex"}]}"#,
                "fallback[0].provider",
            ),
            (r#"{"provider":"openai","fallback":[{}]}"#, "fallback[0]"),
            (r#"{"provider":"openai","fallback":{}}"#, "fallback"),
            (
                r#"{"provider":"openai","fallback":[{"provider":"gemini","maxRetries":-1}]}"#,
                "fallback[0].maxRetries",
            ),
            (
                r#"{"provider":"openai","fallbackOn":[4000]}"#,
                "fallbackOn[0]",
            ),
            (
                r#"{"provider":"openai","fallbackOn":["401"]}"#,
                "fallbackOn[0]",
            ),
        ] {
            match config_from(options).1 {
                Err(Error::InvalidRequest { path: p, .. }) => assert_eq!(p, path, "{options}"),
                other => panic!("{options}: {other:?}"),
            }
        }
    }

    #[test]
    fn http_errors_and_validation_are_json() {
        let out = v(&http_error(
            "anthropic",
            529,
            r#"[["retry-after","2"],["request-id","req_9"]]"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            -1.0,
        ));
        assert_eq!(out["error"]["name"], "OverloadedError");
        assert_eq!(out["error"]["retryAfterMs"], 2000);
        assert_eq!(out["error"]["requestId"], "req_9");
        // A retry-after date is read against the clock JS passes.
        let dated = r#"[["retry-after","Wed, 21 Oct 2015 07:28:00 GMT"]]"#;
        let at =
            |now| v(&http_error("openai", 429, dated, "{}", now))["error"]["retryAfterMs"].clone();
        assert_eq!(at(1_445_412_478_500.0), 1_500);
        assert_eq!(at(-1.0), Value::Null);
        assert_eq!(at(f64::NAN), Value::Null);
        assert_eq!(validate("tool", r#"{"name":"f"}"#), "");
        assert_eq!(
            v(&validate("tool", r#"{"name":""}"#))["error"]["path"],
            "tool.name"
        );
        assert!(
            validate("toolCall", r#"{"id":"","name":"f","arguments":"{}"}"#)
                .contains("toolCall.id")
        );
        assert!(!validate("nonsense", "{}").is_empty());
    }
}
