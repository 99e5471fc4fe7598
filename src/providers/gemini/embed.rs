//! Embeddings on Gemini: `models/{model}:batchEmbedContents`, at most 100
//! values a request, and `:embedContent` for a single value
//! (<https://ai.google.dev/api/embeddings>). Vectors come as JSON numbers
//! (the API has no base64 form); the answer carries no token counts.

use super::{API_VERSION, DEFAULT_BASE_URL};
use crate::error::Error;
use crate::json::read::Reader;
use crate::json::write::{Obj, Out};
use crate::providers::embed::{not_embeddings, vector, EmbedBatch, EmbedInput, Embedder};
use crate::providers::{join_url, Encoded, Provider};

/// The adapter's embedder.
pub(crate) const EMBEDDER: Embedder = Embedder {
    max_batch: 100,
    max_bytes: None,
    default_model: Some("gemini-embedding-001"),
    task_type: true,
    encode,
    decode,
};

fn encode(input: &EmbedInput<'_>) -> Result<Encoded, Error> {
    if input.config.vertex.is_some() {
        // (Vertex embeds with `:predict`, another body: not built yet.)
        return Err(Error::invalid_request(
            "vertex",
            "embeddings through Vertex AI are not supported yet: use the Gemini API",
        ));
    }
    let base = (input.config.base_url.as_deref())
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(DEFAULT_BASE_URL);
    let model = input.model.strip_prefix("models/").unwrap_or(input.model);
    let one = input.values.len() == 1;
    let method = if one {
        "embedContent"
    } else {
        "batchEmbedContents"
    };
    let path = format!(
        "{API_VERSION}/models/{}:{method}",
        crate::http::percent_encode(model.as_bytes(), b"")
    );
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("x-goog-api-key".to_string(), key.clone()));
    }
    let mut out = Out::default();
    let mut body = out.object();
    let settings = |o: &mut Obj<'_>| {
        if let Some(task) = &input.request.task_type {
            o.str("taskType", task);
        }
        if let Some(d) = input.request.dimensions {
            o.uint("outputDimensionality", u64::from(d));
        }
    };
    let content = |o: &mut Obj<'_>, text: &str| {
        o.object("content")
            .array("parts")
            .object()
            .str("text", text);
    };
    if let (true, Some(text)) = (one, input.values.first()) {
        content(&mut body, text);
        settings(&mut body);
    } else {
        let name = format!("models/{model}");
        let mut requests = body.array("requests");
        for text in input.values {
            let mut r = requests.object();
            r.str("model", &name);
            content(&mut r, text);
            settings(&mut r);
        }
    }
    drop(body);
    Ok((join_url(base, &path), headers, out))
}

/// `{"embeddings":[{"values":[...]}]}`, or `{"embedding":{"values":[...]}}`
/// for one value.
fn decode(body: &str, count: usize) -> Result<EmbedBatch, Error> {
    let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(count);
    let mut problem = None;
    let mut r = Reader::new(body);
    let read = r.object(|r, key| match key {
        "embeddings" => r.array(|r| {
            let at = vectors.len();
            vectors.push(values(r, || format!("embeddings[{at}]"), &mut problem)?);
            Some(())
        }),
        "embedding" if count == 1 => {
            vectors.push(values(r, || "embedding".into(), &mut problem)?);
            Some(())
        }
        _ => r.skip(),
    });
    if read.is_none() || !r.at_end() || problem.is_some() {
        return Err(not_embeddings(Provider::Gemini, body, problem));
    }
    let n = vectors.len();
    if n > count {
        return Err(Error::invalid_response(format!(
            "the answer has {n} vectors for {count} values"
        )));
    }
    if n < count {
        let why = format!("the answer has no vector for value {n} of the batch");
        return Err(not_embeddings(Provider::Gemini, body, Some(why)));
    }
    Ok(EmbedBatch {
        vectors,
        ..EmbedBatch::default()
    })
}

/// One `ContentEmbedding`'s `values`; `at()` says where, for a problem.
fn values(
    r: &mut Reader<'_>,
    at: impl Fn() -> String,
    problem: &mut Option<String>,
) -> Option<Vec<f32>> {
    let mut out = None;
    r.object(|r, key| match key {
        "values" => {
            out = Some(vector(r, problem, || format!("{}.values", at()))?);
            Some(())
        }
        _ => r.skip(),
    })?;
    if out.is_none() {
        *problem = Some(format!("{} has no `values`", at()));
    }
    out
}
