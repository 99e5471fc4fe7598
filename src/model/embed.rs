//! An embeddings call: what it asks for ([`EmbedRequest`]) and what it
//! gives ([`Embeddings`]), and the request read out of JSON.

use serde_json::Value;

use super::from_json::{array, object, opt_string, opt_u32, present, string, At, Read};
use super::Usage;

/// How vectors are asked to come back. Either way, every vector of a
/// response is read in whichever form it came (a server may ignore the
/// ask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedEncoding {
    /// `encoding_format: "base64"`: little-endian `f32`s in base64, about a
    /// third of the bytes of JSON numbers (OpenAI and compatible servers).
    #[default]
    Base64,
    /// `encoding_format: "float"`, for a server that refuses base64.
    Float,
}

/// One embeddings call: the values to embed, and how.
///
/// Built with [`EmbedRequest::new`]; new fields come in minor releases.
///
/// ```
/// use skyl::EmbedRequest;
///
/// let mut request = EmbedRequest::new(["a question", "a passage"]);
/// request.model = Some("text-embedding-3-small".into());
/// request.dimensions = Some(256);
/// assert_eq!(request.values.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct EmbedRequest {
    /// The texts to embed, each a non-empty string; the result keeps their
    /// order.
    pub values: Vec<String>,
    /// The embedding model; the provider's default when `None` (see
    /// [`crate::default_embed_model`]).
    pub model: Option<String>,
    /// The vectors' length: OpenAI's `dimensions`, Gemini's
    /// `outputDimensionality`.
    pub dimensions: Option<u32>,
    /// Gemini's `taskType` (`RETRIEVAL_QUERY`, `RETRIEVAL_DOCUMENT`, ...),
    /// passed as is; refused for the other providers.
    pub task_type: Option<String>,
    /// How the vectors are asked to come back.
    pub encoding: EmbedEncoding,
    /// At most this many values per request, in place of the provider's
    /// limit (e.g. 32 for a TEI server).
    pub max_batch_size: Option<u32>,
    /// At most this many requests in flight (default 4).
    pub max_concurrency: Option<u32>,
}

impl EmbedRequest {
    /// A request for `values`, everything else default.
    pub fn new<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        EmbedRequest {
            values: values.into_iter().map(Into::into).collect(),
            ..EmbedRequest::default()
        }
    }
}

/// What an embeddings call gives: one vector per value, in the values'
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Embeddings {
    /// One vector per value, in order.
    pub vectors: Vec<Vec<f32>>,
    /// The tokens of every batch, summed (`input` and `total`), when the
    /// provider reports them (OpenAI does; Gemini does not).
    pub usage: Option<Usage>,
    /// The model that answered, as the provider names it, else the one
    /// asked for.
    pub model: Option<String>,
    /// How many requests the values went in.
    pub batches: u32,
}

/// An [`EmbedRequest`] from JSON: `{"values", "model"?, "dimensions"?,
/// "taskType"?, "encodingFormat"?, "maxBatchSize"?, "maxConcurrency"?}`.
#[cfg_attr(
    not(all(
        target_arch = "wasm32",
        feature = "npm",
        any(feature = "openai", feature = "gemini")
    )),
    allow(dead_code)
)] // (the shell's, on wasm32, in a build with an embedder)
pub(crate) fn embed_request(v: Value, at: &At) -> Read<EmbedRequest> {
    let mut r = EmbedRequest::default();
    let mut values = None;
    for (k, v) in object(v, at)? {
        let at = &At::Key(at, &k);
        match k.as_str() {
            "values" => values = Some(array(v, at, string)?),
            "model" => r.model = opt_string(v, at)?,
            "dimensions" => r.dimensions = opt_u32(v, at)?,
            "taskType" => r.task_type = opt_string(v, at)?,
            "encodingFormat" => {
                r.encoding = match present(v).map(|v| string(v, at)).transpose()?.as_deref() {
                    None | Some("base64") => EmbedEncoding::Base64,
                    Some("float") => EmbedEncoding::Float,
                    Some(other) => {
                        return Err(at.error(format!(
                            "expected \"base64\" or \"float\", got {}",
                            crate::json::write::quoted(other)
                        )))
                    }
                };
            }
            "maxBatchSize" => r.max_batch_size = opt_u32(v, at)?,
            "maxConcurrency" => r.max_concurrency = opt_u32(v, at)?,
            _ => {}
        }
    }
    r.values = values.ok_or_else(|| at.error("missing field `values`"))?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::read::parse;

    fn read(text: &str) -> Read<EmbedRequest> {
        embed_request(parse(text).unwrap(), &At::Root(""))
    }

    #[test]
    fn every_field_is_read() {
        let r = read(r#"{"values":["a","b"],"model":"m","dimensions":8,"taskType":"RETRIEVAL_QUERY","encodingFormat":"float","maxBatchSize":32,"maxConcurrency":2}"#).unwrap();
        assert_eq!(r.values, ["a", "b"]);
        assert_eq!(r.model.as_deref(), Some("m"));
        assert_eq!(r.dimensions, Some(8));
        assert_eq!(r.task_type.as_deref(), Some("RETRIEVAL_QUERY"));
        assert_eq!(r.encoding, EmbedEncoding::Float);
        assert_eq!((r.max_batch_size, r.max_concurrency), (Some(32), Some(2)));
    }

    #[test]
    fn a_wrong_field_is_named() {
        let e = read(r#"{"values":["a",3]}"#).unwrap_err();
        assert_eq!(e.path, "values[1]");
        let e = read(r#"{"values":["a"],"encodingFormat":"hex"}"#).unwrap_err();
        assert_eq!(e.path, "encodingFormat");
        assert!(e.message.contains("\"hex\""), "{}", e.message);
        let e = read(r#"{"model":"m"}"#).unwrap_err();
        assert!(e.message.contains("`values`"), "{}", e.message);
        let e = read(r#"{"values":["a"],"dimensions":-1}"#).unwrap_err();
        assert_eq!(e.path, "dimensions");
    }
}
