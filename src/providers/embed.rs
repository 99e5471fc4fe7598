//! Embeddings, per provider: each adapter's entry of the provider table
//! says whether it has them ([`Embedder`]), its batch limits, and how to
//! encode a batch and decode its answer. The batching, the retries and the
//! halving of a batch that is too large are the run machine's
//! ([`crate::EmbedMachine`]).

// An Anthropic-only build has no embedder: the helpers go unused.
#![cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]

use super::{check_config, not_built, ClientConfig, Encoded, Provider};
use crate::base64;
use crate::error::Error;
use crate::http::HttpRequest;
use crate::json::read::{self, Reader};
use crate::model::{EmbedRequest, Usage};

/// How one provider embeds: an adapter's `embed` entry.
pub(crate) struct Embedder {
    /// At most this many values per request.
    pub(crate) max_batch: u32,
    /// At most this many UTF-8 bytes of values per request: a bound on
    /// tokens, as no token is shorter than a byte (OpenAI's 300,000 tokens
    /// per request).
    pub(crate) max_bytes: Option<usize>,
    /// The model when the request names none.
    pub(crate) default_model: Option<&'static str>,
    /// Whether it takes a `taskType`.
    pub(crate) task_type: bool,
    /// A batch to URL, provider headers and body.
    pub(crate) encode: fn(&EmbedInput<'_>) -> Result<Encoded, Error>,
    /// A success body to the batch's vectors.
    pub(crate) decode: fn(&str, usize) -> Result<EmbedBatch, Error>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("max_batch", &self.max_batch)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// What an embeddings encoder gets: one batch of the request's values.
pub(crate) struct EmbedInput<'a> {
    pub(crate) config: &'a ClientConfig,
    pub(crate) request: &'a EmbedRequest,
    pub(crate) values: &'a [String],
    pub(crate) model: &'a str,
}

/// One batch's answer: a vector per value, in the batch's order.
#[derive(Debug, Default)]
pub(crate) struct EmbedBatch {
    pub(crate) vectors: Vec<Vec<f32>>,
    pub(crate) usage: Option<Usage>,
    pub(crate) model: Option<String>,
}

/// `provider`'s embedder, or the error that says why it has none.
pub(crate) fn embedder(provider: Provider) -> Result<&'static Embedder, Error> {
    let adapter = provider.adapter().ok_or_else(|| not_built(provider))?;
    adapter
        .embed
        .as_ref()
        .map_err(|why| Error::invalid_request("provider", *why))
}

/// The model a request for `provider` embeds with: the request's, else
/// the provider's default (`None` for `openaicompat`, which has none).
pub fn default_embed_model(provider: Provider) -> Option<&'static str> {
    embedder(provider).ok()?.default_model
}

/// Checks an embeddings request for `config` before anything is sent;
/// returns its embedder and model. Every error names the field.
pub(crate) fn check_embed(
    config: &ClientConfig,
    request: &EmbedRequest,
) -> Result<(&'static Embedder, String), Error> {
    let provider = config
        .provider
        .ok_or_else(|| Error::invalid_request("provider", "no provider was given"))?;
    let embedder = embedder(provider)?;
    check_config(config)?;
    let model = request
        .model
        .as_deref()
        .or(embedder.default_model)
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| {
            Error::invalid_request(
                "model",
                "no embedding model was given (this provider has no default)",
            )
        })?;
    if let Some(i) = request.values.iter().position(String::is_empty) {
        return Err(Error::invalid_request(
            format!("values[{i}]"),
            "is empty: the providers refuse an empty text",
        ));
    }
    if request.dimensions == Some(0) {
        return Err(Error::invalid_request("dimensions", "must be 1 or more"));
    }
    if request.task_type.is_some() && !embedder.task_type {
        return Err(Error::invalid_request(
            "taskType",
            format!("is Gemini's; {provider} takes none"),
        ));
    }
    for (name, n) in [
        ("maxBatchSize", request.max_batch_size),
        ("maxConcurrency", request.max_concurrency),
    ] {
        if n == Some(0) {
            return Err(Error::invalid_request(name, "must be 1 or more"));
        }
    }
    Ok((embedder, model.to_string()))
}

/// Encodes the values `values` of `request` as one request for `config`'s
/// provider (checked by [`check_embed`] first).
pub(crate) fn encode_embed(
    config: &ClientConfig,
    request: &EmbedRequest,
    embedder: &Embedder,
    model: &str,
    values: &[String],
) -> Result<HttpRequest, Error> {
    let input = EmbedInput {
        config,
        request,
        values,
        model,
    };
    let (url, headers, body) = (embedder.encode)(&input)?;
    let body = body
        .finish()
        .ok_or_else(|| Error::invalid_request("", "cannot encode the body"))?;
    Ok(super::post(config, url, headers, body, None))
}

/// Whether an error answer says the batch was too large, so that halving
/// it may succeed: a 413, or a 400 whose message says so (the texts are in
/// the README, "Embeddings").
pub(crate) fn too_large(e: &Error) -> bool {
    let Error::Api(api) = e else { return false };
    match api.status {
        Some(413) => true,
        Some(400) => {
            let m = api.message.as_bytes();
            (TOO_LARGE.iter()).any(|t| {
                m.windows(t.len())
                    .any(|w| w.eq_ignore_ascii_case(t.as_bytes()))
            })
        }
        _ => false,
    }
}

/// What a 400's message says when the batch was too large (lowercase).
pub(crate) const TOO_LARGE: &[&str] = &[
    "too many",
    "too large",
    "too long",
    "batch size",
    "at most",
    "maximum",
    "exceed",
];

/// The vector of the JSON value at the reader: base64 text or an array of
/// numbers, whichever came. `None` when it is neither, with `problem`
/// saying what was wrong where (`at()`, written only then: say,
/// `data[3].embedding`).
pub(crate) fn vector(
    r: &mut Reader<'_>,
    problem: &mut Option<String>,
    at: impl FnOnce() -> String,
) -> Option<Vec<f32>> {
    let mut out = Vec::new();
    let read = if r.peek_string() {
        match r.string() {
            Some(text) => base64::f32s(&text, &mut out).map_err(|e| e.message()),
            None => Err("is not a JSON string".to_string()),
        }
    } else {
        r.array(|r| {
            out.push(r.f32()?);
            Some(())
        })
        .ok_or_else(|| "is neither base64 text nor an array of numbers".to_string())
    };
    match read {
        Ok(()) => Some(out),
        Err(why) => {
            *problem = Some(format!("{} {why}", at()));
            None
        }
    }
}

/// The error for a success body that is not an embeddings answer: an API
/// error inside it (typed by the adapter), else `problem` (what was wrong),
/// else that it is not one.
pub(crate) fn not_embeddings(provider: Provider, body: &str, problem: Option<String>) -> Error {
    match read::parse(body) {
        Ok(v) if v.get("error").is_some_and(|e| !e.is_null()) => {
            super::decode_error(provider, 200, &[], body)
        }
        Ok(_) => Error::invalid_response(
            problem.unwrap_or_else(|| "the body is not an embeddings answer".into()),
        ),
        Err(e) => {
            Error::invalid_response(problem.unwrap_or_else(|| format!("the body is not JSON: {e}")))
        }
    }
}
