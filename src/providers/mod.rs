//! The provider table and the dispatch. Each adapter is one folder with
//! the same file names:
//!
//! - `mod.rs`: the API reference, defaults, finish-reason mapping, and its
//!   entry of the table ([`Adapter`]);
//! - `request.rs`: [`Request`] to an HTTP body;
//! - `response.rs`: a non-streaming body to deltas;
//! - `stream.rs`: stream frames to deltas (its [`FrameStream`]);
//! - `error.rs`: an HTTP error body to an [`ApiError`](crate::ApiError).
//!
//! `openaicompat` is the OpenAI adapter with a dialect switch for the quirks
//! of OpenAI-compatible servers, not a copy.
//!
//! Adding an adapter is adding its folder, its `mod` line below and one
//! entry of the [`providers!`] table: the dispatch, [`Provider::ALL`], the
//! generated `policy.js` and everything that iterates them follow.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::accumulate::{Accumulator, Delta};
use crate::error::{ApiErrorKind, Error};
use crate::framing::{Frame, Framing};
use crate::http::HttpRequest;
use crate::json::read;
use crate::model::validate::validate_request;
use crate::model::{Raw, Request, Response, ToolChoice, ToolChoiceMode};
use serde_json::Value;

#[cfg(feature = "anthropic")]
pub(crate) mod anthropic;
#[cfg(feature = "bedrock")]
pub(crate) mod bedrock;
#[cfg(feature = "gemini")]
pub(crate) mod gemini;
#[cfg(feature = "openai")]
pub(crate) mod openai;
#[cfg(feature = "openai")]
pub(crate) mod responses;

#[cfg(all(test, not(target_arch = "wasm32")))] // proptest is a native dev-dependency
mod fast_differential;

mod adapter;
mod api_error;
mod config;
pub(crate) mod embed;
mod encode;
mod frame;
#[cfg(all(test, not(target_arch = "wasm32"), feature = "openai"))]
mod openapi_tests;
mod options;
mod portability;
#[cfg(all(test, feature = "anthropic"))]
mod portability_tests;
pub(crate) mod vertex;

pub(crate) use adapter::{Adapter, FrameStream};
pub(crate) use api_error::{api_error_from, fallback_message};
pub use config::{ClientConfig, Vertex};
pub use embed::default_embed_model;
pub(crate) use encode::*;
pub use encode::{object_schema, sign_request};
pub(crate) use frame::*;
pub(crate) use options::first_flat;
pub(crate) use portability::left_out;

/// Defines [`Provider`] from the table: one entry per provider, in order,
/// with its doc, name, Cargo feature, whether it needs a base URL (or a
/// region, which names its endpoint), and its
/// adapter's [`Adapter`] (compiled only with that feature).
macro_rules! providers {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal, feature $feature:literal,
        base_url $base_url:ident, adapter $adapter:path;
    )*) => {
        /// Which wire format to speak. New providers come in minor
        /// releases: a `match` needs a wildcard arm.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum Provider {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl Provider {
            /// Every provider, in the table's order.
            pub const ALL: [Provider; [$(Provider::$variant),*].len()] = [$(Provider::$variant),*];

            /// The provider's name: `openai`, `openaicompat`, `anthropic`,
            /// `gemini`, `responses`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Provider::$variant => $name,)*
                }
            }

            /// The Cargo feature that builds its adapter: `openai` (also for
            /// `openaicompat` and `responses`), `anthropic`, `gemini`.
            pub fn feature(self) -> &'static str {
                match self {
                    $(Provider::$variant => $feature,)*
                }
            }

            /// Whether a [`ClientConfig`] for it needs a `base_url`: only
            /// `openaicompat` has no default endpoint ([`encode_request`]
            /// fails without one).
            pub fn needs_base_url(self) -> bool {
                match self {
                    $(Provider::$variant => providers!(@base_url $base_url) == Some(true),)*
                }
            }

            /// Whether its endpoint is its region's: a [`ClientConfig`] for
            /// it needs a `region` unless it has a `base_url` (`bedrock`).
            pub fn needs_region(self) -> bool {
                match self {
                    $(Provider::$variant => providers!(@base_url $base_url).is_none(),)*
                }
            }

            /// Its adapter, or `None` in a build without it.
            pub(crate) fn adapter(self) -> Option<&'static Adapter> {
                match self {
                    $(
                        #[cfg(feature = $feature)]
                        Provider::$variant => Some(&$adapter),
                    )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
    (@base_url required) => { Some(true) };
    (@base_url default) => { Some(false) };
    (@base_url region) => { None::<bool> };
}

providers! {
    /// OpenAI Chat Completions.
    OpenAi = "openai", feature "openai", base_url default, adapter openai::OPENAI;
    /// Any OpenAI-compatible server (Groq, Together, OpenRouter, Ollama, vLLM,
    /// DeepSeek, Mistral, ...), by base URL.
    OpenAiCompat = "openaicompat", feature "openai", base_url required, adapter openai::COMPAT;
    /// Anthropic Messages.
    Anthropic = "anthropic", feature "anthropic", base_url default, adapter anthropic::ADAPTER;
    /// Google Gemini generateContent.
    Gemini = "gemini", feature "gemini", base_url default, adapter gemini::ADAPTER;
    /// The OpenAI Responses API, and any Open Responses server (vLLM,
    /// Ollama, LM Studio, OpenRouter, ...) by base URL.
    Responses = "responses", feature "openai", base_url default, adapter responses::ADAPTER;
    /// Amazon Bedrock's Converse API (`ConverseStream`), by region.
    Bedrock = "bedrock", feature "bedrock", base_url region, adapter bedrock::ADAPTER;
}

impl Provider {
    /// The provider for its name.
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its adapter, or the error for a build without it.
    fn built(self) -> Result<&'static Adapter, Error> {
        self.adapter().ok_or_else(|| not_built(self))
    }
}

/// The message of the error for a provider that [`Provider::needs_base_url`]
/// and was given none.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) const BASE_URL_NEEDED: &str =
    "an OpenAI-compatible server needs its base URL (e.g. http://127.0.0.1:11434/v1)";

/// The message of the error for a provider that [`Provider::needs_region`]
/// and was given neither a region nor a base URL.
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) const REGION_NEEDED: &str =
    "Bedrock needs the AWS region of its endpoint (e.g. us-east-1), or a baseURL";

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Validates `request` and encodes it for `config`'s provider. Streaming
/// requests ask for SSE. Nothing is sent: the result is plain data.
pub fn encode_request(
    config: &ClientConfig,
    request: &Request,
    stream: bool,
) -> Result<HttpRequest, Error> {
    let provider = config
        .provider
        .ok_or_else(|| Error::invalid_request("provider", "no provider was given"))?;
    validate_request(request)?;
    // providerOptions keyed by provider: this provider's own entry.
    let resolved = options::resolved(request, provider)?;
    // (Files of assistant turns that this provider does not take back.)
    let resolved = portability::readable(provider, resolved);
    let request: &Request = &resolved;
    check_config(config)?;
    let model = request
        .model
        .as_deref()
        .or(config.model.as_deref())
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| Error::invalid_request("model", "no model was given"))?;
    let input = EncodeInput {
        request,
        model,
        stream,
        config,
    };
    let adapter = provider.built()?;
    if let (Some(why), Some(ToolChoice::Mode(ToolChoiceMode::None))) =
        (adapter.no_tool_choice_none, &request.tool_choice)
    {
        if !request.tools.is_empty() {
            return Err(Error::invalid_request("toolChoice", why));
        }
    }
    let (url, headers, body) = (adapter.encode)(&input)?;
    let mut body = body
        .finish()
        .ok_or_else(|| Error::invalid_request("", "cannot encode the body"))?;
    if let Some(given) = &request.provider_options {
        let reshaped = adapter.options.map(|reshape| reshape(given));
        let options = reshaped.as_ref().unwrap_or(given);
        body = crate::json::merge::merged(&body, options).ok_or_else(|| {
            Error::invalid_request("providerOptions", "cannot be merged into the body")
        })?;
    }
    let accept = stream.then(|| adapter.framing.media_type());
    Ok(post(config, url, headers, body, accept))
}

/// A JSON `POST` to `url` with the provider's `headers`, then the
/// content type (and `accept`: a stream's media type), then the config's
/// extra headers (each replacing one of the same name).
pub(crate) fn post(
    config: &ClientConfig,
    url: String,
    mut headers: Vec<(String, String)>,
    body: String,
    accept: Option<&str>,
) -> HttpRequest {
    headers.push(("content-type".into(), "application/json".into()));
    if let Some(accept) = accept {
        headers.push(("accept".into(), accept.into()));
    }
    for (k, v) in &config.headers {
        let k = k.to_ascii_lowercase();
        headers.retain(|(h, _)| *h != k);
        headers.push((k, v.clone()));
    }
    HttpRequest {
        method: "POST",
        url,
        headers,
        body,
    }
}

/// The error for a provider whose adapter this build leaves out (the
/// `openai`, `anthropic` and `gemini` Cargo features; all are on by
/// default).
pub(crate) fn not_built(provider: Provider) -> Error {
    Error::invalid_request(
        "provider",
        format!(
            "this build of skyl has no {} adapter (Cargo features: {})",
            provider.name(),
            provider_names(|p| p.adapter().is_some())
        ),
    )
}

/// The names of the providers `which` takes, in the table's order, joined
/// by `, `. (A loop into one string: collecting and joining would link
/// more code into the wasm for an error message.)
pub(crate) fn provider_names(which: impl Fn(Provider) -> bool) -> String {
    let mut out = String::new();
    for p in Provider::ALL {
        if which(p) {
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str(p.name());
        }
    }
    out
}

/// Decodes a non-streaming response body. An error payload inside it (a 200
/// with `{"error": ...}`) is an [`Error::Api`]; a Gemini prompt block is an
/// [`Error::ContentFilter`].
pub fn decode_response(provider: Provider, body: &str) -> Result<Response, Error> {
    let value = read::parse(body)
        .map_err(|e| Error::invalid_response(format!("the body is not JSON: {e}")))?;
    let deltas = (provider.built()?.response)(&value);
    // (The events of a whole body are not handed out: their frame is not
    // needed, and not copied.)
    match deltas {
        Ok(deltas) => Accumulator::run(deltas, &Raw::from("")),
        Err(failure) => Err(failure.into_error(Some(200), false, Response::default())),
    }
}

/// Decodes an HTTP error response (status, headers, body) into an
/// [`Error::Api`]. Works for any body, JSON or not. A `retry-after` given
/// as an HTTP date needs a clock: see [`decode_error_at`].
pub fn decode_error(
    provider: Provider,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> Error {
    decode_error_clocked(provider, status, headers, body, None)
}

/// [`decode_error`] for a driver with a clock: `now_ms`, milliseconds since
/// the Unix epoch, reads a `retry-after` given as an HTTP date
/// ([`crate::retry_after_ms`]). 0 is no clock, as for [`decode_error`]:
/// no driver's clock reads the epoch, and a date read against it would
/// ask for a wait of decades.
pub fn decode_error_at(
    provider: Provider,
    status: u16,
    headers: &[(String, String)],
    body: &str,
    now_ms: u64,
) -> Error {
    let clock = Some(now_ms).filter(|&ms| ms > 0);
    decode_error_clocked(provider, status, headers, body, clock)
}

fn decode_error_clocked(
    provider: Provider,
    status: u16,
    headers: &[(String, String)],
    body: &str,
    now_ms: Option<u64>,
) -> Error {
    // Some proxies frame an error body as SSE (LiteLLM's 500s):
    // `data: {"error": ...}`; its first data line is the error.
    let value = read::parse(body).ok().or_else(|| {
        (body.lines())
            .find_map(|line| line.strip_prefix("data:"))
            .and_then(|data| read::parse(data.trim()).ok())
    });
    let mut err = (value.as_ref())
        .zip(provider.adapter())
        .and_then(|(v, adapter)| (adapter.error)(v))
        .unwrap_or_else(|| api_error_from(None, Some(fallback_message(status, body)), None, None));
    err.status = Some(status);
    let typed = provider.adapter().and_then(|a| a.error_type);
    if let Some((name, kind)) = typed
        .filter(|_| err.provider_type.is_none())
        .and_then(|f| f(status, headers))
    {
        err.provider_type = Some(name);
        err.kind = kind;
    }
    // The status decides, unless it says nothing or the body says more
    // precisely: an overloaded model behind a 503 (Gemini's UNAVAILABLE,
    // typed the same when it comes in a stream), a bad key behind a 400
    // (Gemini's API_KEY_INVALID), refused credentials behind a 403 (AWS's
    // ExpiredTokenException and UnrecognizedClientException).
    let from_body = err.kind;
    err.kind = match (ApiErrorKind::from_status(status), from_body) {
        (ApiErrorKind::Server, ApiErrorKind::Overloaded)
        | (ApiErrorKind::BadRequest | ApiErrorKind::Permission, ApiErrorKind::Authentication)
        | (ApiErrorKind::Other, _) => from_body,
        (by_status, _) => by_status,
    };
    err.request_id = crate::http::request_id(headers);
    if let Some(ms) = crate::http::retry_after_ms(headers, now_ms) {
        err.retry_after_ms = Some(ms);
    }
    err.body = Some(body.to_string());
    Error::Api(Box::new(err))
}

/// One stream's frame decoder: its adapter's stream state behind one type.
pub(crate) struct FrameDecoder {
    /// The adapter and its stream state, or the provider whose
    /// adapter this build leaves out: every frame fails.
    adapter: Result<(&'static Adapter, Box<dyn FrameStream>), Provider>,
}

impl fmt::Debug for FrameDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameDecoder")
            .field("built", &self.adapter.is_ok())
            .finish_non_exhaustive()
    }
}

impl FrameDecoder {
    pub(crate) fn new(provider: Provider) -> Self {
        FrameDecoder {
            adapter: provider
                .adapter()
                .map(|a| (a, (a.stream)()))
                .ok_or(provider),
        }
    }

    /// How this provider's streamed bodies are framed.
    pub(crate) fn framing(&self) -> Framing {
        match &self.adapter {
            Ok((adapter, _)) => adapter.framing,
            Err(_) => Framing::Sse,
        }
    }

    /// The deltas of a body without framing that answered a streamed
    /// request, when it is one of this provider's whole responses (a
    /// server or proxy that ignored `stream`): what [`decode_response`]
    /// reads from it, then the terminal, so a stream of it finishes as
    /// the body's own response. `None` when it is not one: the body is then
    /// read as one frame (an error payload is that error).
    pub(crate) fn whole_body(&self, body: &Value) -> Option<Result<Vec<Delta>, FrameFailure>> {
        let (adapter, _) = self.adapter.as_ref().ok()?;
        if !(adapter.is_whole)(body) {
            return None;
        }
        Some((adapter.response)(body).map(|mut deltas| {
            deltas.push(Delta::Terminal);
            deltas
        }))
    }

    /// The body ended: the deltas the adapter's state still holds.
    pub(crate) fn end(&mut self, out: &mut Vec<Delta>) {
        if let Ok((_, state)) = &mut self.adapter {
            state.end(out);
        }
    }

    /// Decodes one frame into deltas; `acc` is what has been assembled
    /// from the earlier ones.
    #[inline]
    pub(crate) fn frame(
        &mut self,
        frame: &Frame,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        match &mut self.adapter {
            Ok((_, state)) => state.frame(frame, acc, out),
            Err(p) => Err(FrameFailure::Malformed(not_built(*p).to_string())),
        }
    }
}

/// The URL and the JSON body skyl sends for `request` (model "m"), for
/// tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn sent(
    provider: Provider,
    base_url: Option<&str>,
    request: &Request,
) -> (String, serde_json::Value) {
    let mut config = ClientConfig::new(provider);
    config.model = Some("m".into());
    config.base_url = base_url.map(str::to_string);
    let http = encode_request(&config, request, false).unwrap();
    (http.url, serde_json::from_str(&http.body).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;
    use crate::StreamDecoder;
    use serde_json::Value;

    #[test]
    fn data_urls_are_base64_sources_split_at_the_first_marker() {
        let base64 = |url| match image_source(Some(url), None, None) {
            Ok(ImageSource::Base64 { media_type, data }) => Some((media_type, data)),
            _ => None,
        };
        assert_eq!(
            base64("data:image/png;base64,iVBO"),
            Some(("image/png", "iVBO"))
        );
        assert_eq!(
            base64("data:text/plain;charset=é;base64,QQ;base64,=="),
            Some(("text/plain;charset=é", "QQ;base64,=="))
        );
        assert_eq!(base64("data:image/png;base64,"), Some(("image/png", "")));
        for url in [
            "data:,hi",
            "data:image/png;base64",
            "https://x/a;base64,b",
            "data:é",
        ] {
            assert_eq!(base64(url), None, "{url}");
            assert!(matches!(
                image_source(Some(url), None, None),
                Ok(ImageSource::Url { .. })
            ));
        }
    }

    /// `needs_base_url` (what the JS constructor checks, from the
    /// generated policy.js) is what encoding does.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn only_the_providers_that_need_a_base_url_fail_without_one() {
        let request = Request {
            model: Some("m".into()),
            messages: vec![crate::model::Message::user("hi")],
            ..Request::default()
        };
        for p in Provider::ALL {
            let got = encode_request(&ClientConfig::new(p), &request, false);
            if p.needs_base_url() {
                let want = Error::invalid_request("baseURL", BASE_URL_NEEDED);
                assert_eq!(got.err(), Some(want), "{p}");
            } else if p.needs_region() {
                assert!(
                    matches!(got, Err(Error::InvalidRequest { ref path, .. }) if path == "region"),
                    "{p}: {got:?}"
                );
                let config = ClientConfig::new(p).with_region("us-east-1");
                assert!(encode_request(&config, &request, false).is_ok(), "{p}");
            } else {
                assert!(got.is_ok(), "{p}: {got:?}");
            }
            let mut config = ClientConfig::new(p);
            config.base_url = Some("http://127.0.0.1:1/v1".into());
            assert!(encode_request(&config, &request, false).is_ok(), "{p}");
        }
    }

    #[test]
    fn client_config_debug_never_shows_the_key() {
        let mut config = ClientConfig::new(Provider::Gemini);
        config.api_key = Some("AIza-SECRET-0000".into());
        config.headers = vec![
            ("Authorization".into(), "Bearer SECRET2".into()),
            ("x-trace".into(), "t".into()),
        ];
        let shown = format!("{config:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("x-trace") && shown.contains("<redacted>"));
    }

    #[test]
    fn the_fast_paths_decode_every_recorded_stream_exactly_like_the_general_path() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
        let mut compared = 0;
        for provider in Provider::ALL {
            for entry in std::fs::read_dir(root.join(provider.name())).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().and_then(|e| e.to_str()) != Some("sse") {
                    continue;
                }
                let body = std::fs::read(&path).unwrap();
                for chunk in [usize::MAX, 7] {
                    let decode = || {
                        let mut d = crate::StreamDecoder::new(provider);
                        let mut out = Vec::new();
                        let r = body
                            .chunks(chunk.min(body.len().max(1)))
                            .try_for_each(|c| d.feed(c, &mut out))
                            .and_then(|()| d.finish(&mut out));
                        (out, r)
                    };
                    let fast = decode();
                    GENERAL_PATH_ONLY.with(|g| g.set(true));
                    let general = decode();
                    GENERAL_PATH_ONLY.with(|g| g.set(false));
                    assert_eq!(fast, general, "{}", path.display());
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 236, "every stream case (118), two chunkings");
    }

    #[test]
    fn provider_options_merge_deeply_and_win() {
        let body = crate::json::json_text(&serde_json::json!({"a": {"b": 1, "c": 2}, "d": 3}));
        let from = serde_json::json!({"a": {"c": 9}, "e": 4});
        assert_eq!(
            crate::json::merge::merged(&body, from.as_object().unwrap()).unwrap(),
            r#"{"a":{"b":1,"c":9},"d":3,"e":4}"#
        );
    }

    /// Merging leaves every value it does not touch as it was written: no
    /// float is parsed again (serde_json's parser can land one step off a
    /// 17-digit value) and no nesting limit applies.
    #[cfg(feature = "anthropic")]
    #[test]
    fn provider_options_leave_other_values_exactly_as_written() {
        let mut config = ClientConfig::new(Provider::Anthropic);
        config.model = Some("m".into());
        let mut deep = serde_json::json!(1);
        for _ in 0..300 {
            deep = serde_json::json!({ "a": deep });
        }
        let request = Request {
            top_p: Some(0.999_999_999_999_999_9),
            tools: vec![Tool {
                name: "f".into(),
                description: None,
                parameters: Some(
                    serde_json::json!({"type": "object", "x": 2.207_527_275_049_914_4e-7, "deep": deep}),
                ),
                ..Tool::default()
            }],
            messages: vec![crate::model::Message::user("hi")],
            provider_options: serde_json::json!({"top_k": 5}).as_object().cloned(),
            ..Request::default()
        };
        let with = encode_request(&config, &request, false).unwrap().body;
        let without = encode_request(
            &config,
            &Request {
                provider_options: None,
                ..request.clone()
            },
            false,
        )
        .unwrap()
        .body;
        assert_eq!(
            with,
            format!("{},\"top_k\":5}}", without.strip_suffix('}').unwrap())
        );
    }

    fn kind_of(e: &Error) -> (ApiErrorKind, String) {
        match e {
            Error::Api(a) => (a.kind, a.message.clone()),
            other => panic!("not an API error: {other:?}"),
        }
    }

    /// Error bodies typed by what they say: an OpenAI-format `code` where
    /// the type says nothing (OpenRouter's status inside a 200), vLLM's
    /// error object, Gemini's bad key behind a 400 and overloaded model
    /// behind a 503, a proxy's `{"error": "text"}`.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn error_bodies_are_typed_by_what_they_say() {
        let http =
            |p: Provider, status: u16, body: &str| kind_of(&decode_error(p, status, &[], body));
        let stream = |p: Provider, body: &str| {
            let (_, res) = StreamDecoder::decode_all(p, body.as_bytes());
            kind_of(&res.unwrap_err())
        };
        let k = |e: (ApiErrorKind, String)| e.0;
        assert_eq!(
            k(stream(Provider::OpenAiCompat, ": OPENROUTER PROCESSING\n\ndata: {\"error\":{\"code\":429,\"message\":\"Provider returned error\"}}\n\n")),
            ApiErrorKind::RateLimit
        );
        assert_eq!(
            k(stream(
                Provider::OpenAiCompat,
                "data: {\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}\n\n"
            )),
            ApiErrorKind::Server
        );
        assert_eq!(
            stream(Provider::OpenAiCompat, "data: {\"object\":\"error\",\"message\":\"maximum context length is 8192\",\"type\":\"BadRequestError\",\"code\":400}\n\n"),
            (ApiErrorKind::BadRequest, "maximum context length is 8192".into())
        );
        assert_eq!(
            http(
                Provider::OpenAiCompat,
                400,
                r#"{"object":"error","message":"bad model","type":"NotFoundError","code":404}"#
            ),
            (ApiErrorKind::BadRequest, "bad model".into())
        );
        assert_eq!(
            http(Provider::Gemini, 400, r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#).0,
            ApiErrorKind::Authentication
        );
        assert_eq!(
            http(
                Provider::Gemini,
                400,
                r#"{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}"#
            )
            .0,
            ApiErrorKind::BadRequest
        );
        assert_eq!(
            http(Provider::Gemini, 503, r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#).0,
            ApiErrorKind::Overloaded
        );
        assert_eq!(
            http(
                Provider::Gemini,
                500,
                r#"{"error":{"code":500,"message":"internal","status":"INTERNAL"}}"#
            )
            .0,
            ApiErrorKind::Server
        );
        for p in [Provider::Anthropic, Provider::Gemini, Provider::OpenAi] {
            assert_eq!(
                http(p, 401, r#"{"error":"Unauthorized proxy"}"#),
                (ApiErrorKind::Authentication, "Unauthorized proxy".into())
            );
        }
    }

    /// A stream request answered with a body that has no SSE framing is
    /// read as one frame: a JSON error is that error (not an early end,
    /// retried), a whole response (a server that ignored `stream`) is the
    /// response. A body with only comments still ended early.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn an_unframed_stream_body_is_read_as_one_frame() {
        let (_, res) = StreamDecoder::decode_all(
            Provider::OpenAiCompat,
            br#"{"error":{"message":"model 'llama9' not found, try pulling it first","type":"not_found_error"}}"#,
        );
        assert_eq!(
            kind_of(&res.unwrap_err()),
            (
                ApiErrorKind::NotFound,
                "model 'llama9' not found, try pulling it first".into()
            )
        );
        let (_, res) = StreamDecoder::decode_all(
            Provider::Anthropic,
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(kind_of(&res.unwrap_err()).0, ApiErrorKind::Overloaded);
        let (events, res) = StreamDecoder::decode_all(
            Provider::OpenAiCompat,
            br#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}"#,
        );
        assert_eq!(res.unwrap().text, "Hi");
        assert!(matches!(
            events.last(),
            Some(crate::model::StreamEvent::Finish { .. })
        ));
        let (_, res) = StreamDecoder::decode_all(Provider::Anthropic, b": ping\n\n");
        assert!(
            matches!(res, Err(Error::StreamEndedEarly { .. })),
            "{res:?}"
        );
    }

    /// A tool's own providerOptions go into its declaration, where each
    /// API declares a tool, and win over a field of the same name.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn tool_provider_options_are_merged_into_the_declaration() {
        let tool = |options: Value| Tool {
            name: "write".into(),
            parameters: Some(serde_json::json!({"type": "object", "properties": {}})),
            provider_options: options.as_object().cloned(),
            ..Tool::default()
        };
        let request = |options: Value| Request {
            messages: vec![crate::model::Message::user("hi")],
            tools: vec![tool(options)],
            ..Request::default()
        };
        let eager = serde_json::json!({"eager_input_streaming": true});
        let (_, body) = sent(Provider::Anthropic, None, &request(eager));
        assert_eq!(body["tools"][0]["eager_input_streaming"], true);
        assert_eq!(body["tools"][0]["name"], "write");
        let strict = serde_json::json!({"strict": true});
        let (_, body) = sent(Provider::OpenAi, None, &request(strict.clone()));
        assert_eq!(body["tools"][0]["function"]["strict"], true);
        let (_, body) = sent(Provider::Responses, None, &request(strict));
        assert_eq!(body["tools"][0]["strict"], true, "{}", body["tools"]);
        let text = serde_json::to_string(&body["tools"][0]).unwrap();
        assert_eq!(text.matches("strict").count(), 1, "once: {text}");
        let (_, body) = sent(Provider::Responses, None, &request(Value::Null));
        assert_eq!(body["tools"][0]["strict"], false, "the default");
        let described = serde_json::json!({"description": "Writes a file."});
        let (_, body) = sent(Provider::Gemini, None, &request(described));
        let declared = &body["tools"][0]["functionDeclarations"][0];
        assert_eq!(declared["description"], "Writes a file.");
    }

    /// An error body framed as SSE (LiteLLM's 500s) is read from its first
    /// data line, not shown raw.
    #[cfg(feature = "openai")]
    #[test]
    fn an_sse_framed_error_body_is_read_from_its_data() {
        let body = "data: {\"error\": {\"message\": \"upstream failed\", \"type\": \"server_error\", \"code\": \"500\"}}\n\ndata: [DONE]\n\n";
        let Error::Api(e) = decode_error(Provider::OpenAiCompat, 500, &[], body) else {
            panic!("not an API error");
        };
        assert_eq!(e.message, "upstream failed");
        assert_eq!(e.kind, ApiErrorKind::Server);
        assert_eq!(
            e.body.as_deref(),
            Some(body),
            "the body as received is kept"
        );
    }

    /// A whole response answering a streamed request (a proxy that does not
    /// stream, as LiteLLM's `/v1/messages`) is that response, in every
    /// adapter, with its events and a normal finish, and a JSON body that is
    /// neither a response nor an error still ended early.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn a_whole_response_answering_a_stream_is_that_response() {
        let bodies = [
            (
                Provider::Anthropic,
                // LiteLLM's shape: keys sorted, no "type" before "content".
                r#"{"content":[{"text":"Hi there","type":"text"}],"id":"msg_1","model":"claude","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message","usage":{"input_tokens":3,"output_tokens":2}}"#,
            ),
            (
                Provider::Anthropic,
                r#"{"content":[{"type":"text","text":"Hi there"}],"id":"msg_1","role":"assistant","stop_reason":"end_turn"}"#,
            ),
            (
                Provider::Gemini,
                r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi there"}]},"finishReason":"STOP"}],"modelVersion":"g"}"#,
            ),
            (
                Provider::OpenAi,
                r#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}]}"#,
            ),
        ];
        for (provider, body) in bodies {
            let (events, res) = StreamDecoder::decode_all(provider, body.as_bytes());
            let res = res.unwrap_or_else(|e| panic!("{provider}: {e:?}"));
            assert_eq!(res, decode_response(provider, body).unwrap(), "{provider}");
            assert_eq!(res.text, "Hi there");
            use crate::model::StreamEvent;
            let texts: Vec<&str> = (events.iter())
                .filter_map(|e| match e {
                    StreamEvent::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(texts, ["Hi there"], "{provider}");
            assert!(
                matches!(events.last(), Some(StreamEvent::Finish { raw, .. }) if &**raw == body),
                "{provider}: {events:?}"
            );
        }
        for (provider, body) in [
            (Provider::Anthropic, r#"{"id":"x","role":"user"}"#),
            (Provider::Gemini, r#"{"usage":1}"#),
            (
                Provider::OpenAi,
                r#"{"choices":[{"delta":{"content":"Hi"}}]}"#,
            ),
        ] {
            let (_, res) = StreamDecoder::decode_all(provider, body.as_bytes());
            assert!(
                matches!(res, Err(Error::StreamEndedEarly { .. })),
                "{provider} {body}: {res:?}"
            );
        }
    }

    /// A whole Gemini body without candidates is an error, not an empty
    /// success; an error inside the REST API's JSON list is that error.
    #[cfg(feature = "gemini")]
    #[test]
    fn a_gemini_response_without_candidates_is_an_error() {
        for body in [
            "{}",
            r#"{"candidates":[]}"#,
            r#"{"usageMetadata":{"promptTokenCount":3}}"#,
        ] {
            let err = decode_response(Provider::Gemini, body).unwrap_err();
            assert!(
                err.to_string().contains("without candidates"),
                "{body}: {err}"
            );
        }
        let err = decode_response(Provider::Gemini, r#"[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]"#).unwrap_err();
        assert_eq!(kind_of(&err).0, ApiErrorKind::Overloaded);
    }

    /// `sent` for a request given as JSON.
    fn body_of(provider: Provider, base_url: Option<&str>, request: Value) -> (String, Value) {
        sent(
            provider,
            base_url,
            &serde_json::from_value(request).unwrap(),
        )
    }

    /// The `key` field of every object in the list `list`.
    fn each<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
        (list.as_array().unwrap().iter())
            .map(|o| o[key].as_str().unwrap())
            .collect()
    }

    /// Requests a provider would refuse are not sent that way: a tool
    /// choice without tools, Anthropic's whitespace-only text and empty
    /// error results, max_tokens under a thinking budget.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn requests_providers_would_refuse_are_not_sent() {
        let ask = serde_json::json!([{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]);
        for p in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
            let (_, body) = body_of(
                p,
                None,
                serde_json::json!({"messages": ask, "toolChoice": "required"}),
            );
            assert!(
                body.get("tool_choice").is_none() && body.get("toolConfig").is_none(),
                "{p:?}: {body}"
            );
            let (_, body) = body_of(
                p,
                None,
                serde_json::json!({"messages": ask, "toolChoice": "required",
                "tools": [{"name": "f", "parameters": {"type": "object"}}]}),
            );
            assert!(
                body.get("tool_choice").is_some() || body.get("toolConfig").is_some(),
                "{p:?}: {body}"
            );
        }
        let (_, body) = body_of(
            Provider::Anthropic,
            None,
            serde_json::json!({"messages": [
            {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "parts": [{"type": "text", "text": "\n\n"},
                {"type": "tool_call", "id": "toolu_1", "name": "f", "arguments": "{}"}]},
            {"role": "tool", "parts": [{"type": "tool_result", "callId": "toolu_1", "content": "", "isError": true}]}]}),
        );
        assert_eq!(
            body["messages"][1]["content"].as_array().unwrap().len(),
            1,
            "{body}"
        );
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(
            body["messages"][2]["content"][0]["content"],
            "the tool failed without a message"
        );
        let (_, body) = body_of(
            Provider::Anthropic,
            None,
            serde_json::json!({"messages": ask,
            "providerOptions": {"thinking": {"type": "enabled", "budget_tokens": 8000}}}),
        );
        assert_eq!(
            body["max_tokens"],
            8000 + u64::from(anthropic::DEFAULT_MAX_TOKENS)
        );
        let (_, body) = body_of(
            Provider::Anthropic,
            None,
            serde_json::json!({"messages": ask, "maxTokens": 9000,
            "providerOptions": {"thinking": {"type": "enabled", "budget_tokens": 8000}}}),
        );
        assert_eq!(body["max_tokens"], 9000);
    }

    /// providerOptions `tools` add a provider's own tools beside the
    /// request's functions; a base URL's query string stays at the end.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn provider_tools_add_to_the_functions_and_base_url_queries_stay_last() {
        let (_, body) = body_of(
            Provider::Anthropic,
            None,
            serde_json::json!({
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            "tools": [{"name": "lookup", "parameters": {"type": "object"}}],
            "providerOptions": {"tools": [{"type": "web_search_20250305", "name": "web_search"}]}}),
        );
        assert_eq!(each(&body["tools"], "name"), ["lookup", "web_search"]);
        let (_, body) = body_of(
            Provider::Gemini,
            None,
            serde_json::json!({
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            "providerOptions": {"tools": [{"googleSearch": {}}]}}),
        );
        assert_eq!(body["tools"], serde_json::json!([{"googleSearch": {}}]));
        let (url, _) = body_of(
            Provider::OpenAiCompat,
            Some("https://r.openai.azure.com/openai/deployments/d/?api-version=2024-10-21"),
            serde_json::json!({"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]}),
        );
        assert_eq!(url, "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21");
        assert_eq!(join_url("http://h/v1/", "/chat"), "http://h/v1/chat");
    }

    /// A system message's text parts stay separate paragraphs.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
    #[test]
    fn system_text_parts_are_not_glued() {
        let request = serde_json::json!({"messages": [
            {"role": "system", "parts": [{"type": "text", "text": "You are X."}, {"type": "text", "text": "Be brief."}]},
            {"role": "user", "parts": [{"type": "text", "text": "hi"}]}]});
        let want = "You are X.\n\nBe brief.";
        assert_eq!(
            body_of(Provider::Anthropic, None, request.clone()).1["system"],
            want
        );
        assert_eq!(
            body_of(Provider::OpenAi, None, request.clone()).1["messages"][0]["content"],
            want
        );
        assert_eq!(
            body_of(
                Provider::OpenAiCompat,
                Some("http://127.0.0.1:1/v1"),
                request.clone()
            )
            .1["messages"][0]["content"],
            want
        );
        assert_eq!(
            body_of(Provider::Gemini, None, request).1["systemInstruction"]["parts"][0]["text"],
            want
        );
    }

    /// Consecutive assistant messages are one OpenAI assistant message, so
    /// each call is answered right after the message that made it.
    #[cfg(feature = "openai")]
    #[test]
    fn consecutive_assistant_messages_are_one_openai_turn() {
        let request = serde_json::json!({"messages": [
            {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "parts": [{"type": "text", "text": "Two calls."}, {"type": "tool_call", "id": "a", "name": "f", "arguments": "{}"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "b", "name": "g", "arguments": "{}"}]},
            {"role": "tool", "parts": [{"type": "tool_result", "callId": "a", "content": "1"}]},
            {"role": "tool", "parts": [{"type": "tool_result", "callId": "b", "content": "2"}]}]});
        for p in [Provider::OpenAi, Provider::OpenAiCompat] {
            let (_, body) = body_of(p, Some("http://127.0.0.1:1/v1"), request.clone());
            let roles = each(&body["messages"], "role");
            assert_eq!(roles, ["user", "assistant", "tool", "tool"], "{p:?}");
            let ids = each(&body["messages"][1]["tool_calls"], "id");
            assert_eq!(ids, ["a", "b"]);
            assert_eq!(body["messages"][1]["content"], "Two calls.");
        }
    }
}
