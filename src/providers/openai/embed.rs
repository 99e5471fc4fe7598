//! Embeddings on OpenAI and compatible servers: `POST {baseURL}/embeddings`
//! (<https://platform.openai.com/docs/api-reference/embeddings/create>).
//!
//! Vectors are asked for in base64 (`encoding_format: "base64"`, a third
//! of the bytes of JSON numbers) unless the request says `float`; every
//! item of an answer is read in whichever form it came, since some servers
//! (Ollama, LM Studio) send numbers whatever was asked.

use std::borrow::Cow;

use super::Dialect;
use crate::error::Error;
use crate::json::read::Reader;
use crate::json::write::Out;
use crate::model::{EmbedEncoding, Usage};
use crate::providers::embed::{not_embeddings, vector, EmbedBatch, EmbedInput, Embedder};
use crate::providers::{join_url, Encoded, Provider, BASE_URL_NEEDED};

/// OpenAI's limits: 2,048 inputs and 300,000 tokens per request.
const fn embedder(dialect: Dialect) -> Embedder {
    Embedder {
        max_batch: 2048,
        max_bytes: Some(300_000),
        default_model: if dialect.compat {
            None
        } else {
            Some("text-embedding-3-small")
        },
        task_type: false,
        encode: if dialect.compat {
            |input| encode(input, Dialect::COMPAT)
        } else {
            |input| encode(input, Dialect::OPENAI)
        },
        decode: if dialect.compat {
            |body, n| decode(body, n, Provider::OpenAiCompat)
        } else {
            |body, n| decode(body, n, Provider::OpenAi)
        },
    }
}

/// The `openai` and `responses` entries' embedder.
pub(crate) const OPENAI: Embedder = embedder(Dialect::OPENAI);
/// The `openaicompat` entry's embedder.
pub(crate) const COMPAT: Embedder = embedder(Dialect::COMPAT);

fn encode(input: &EmbedInput<'_>, dialect: Dialect) -> Result<Encoded, Error> {
    let base = match (&input.config.base_url, dialect.compat) {
        (Some(b), _) if !b.trim().is_empty() => b.as_str(),
        (_, false) => super::DEFAULT_BASE_URL,
        (_, true) => return Err(Error::invalid_request("baseURL", BASE_URL_NEEDED)),
    };
    let mut headers = Vec::new();
    if let Some(key) = &input.config.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    let mut out = Out::default();
    let mut body = out.object();
    body.str("model", input.model);
    body.strs("input", input.values);
    let format = match input.request.encoding {
        EmbedEncoding::Float => "float",
        _ => "base64",
    };
    body.str("encoding_format", format);
    if let Some(d) = input.request.dimensions {
        body.uint("dimensions", u64::from(d));
    }
    drop(body);
    Ok((join_url(base, "embeddings"), headers, out))
}

/// `{"object":"list","data":[{"object":"embedding","index":i,"embedding":
/// "<base64>" | [numbers]}],"model","usage":{"prompt_tokens","total_tokens"}}`:
/// each vector placed by its `index` (its position when it has none).
fn decode(body: &str, count: usize, provider: Provider) -> Result<EmbedBatch, Error> {
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; count];
    let mut batch = EmbedBatch::default();
    let mut problem = None;
    let mut r = Reader::new(body);
    let read = r.object(|r, key| match key {
        "data" => {
            let mut i = 0;
            r.array(|r| {
                let at = i;
                i += 1;
                item(r, at, &mut slots, &mut problem)
            })
        }
        "model" => {
            batch.model = r.string().map(Cow::into_owned);
            batch.model.as_ref().map(|_| ())
        }
        "usage" => {
            let mut usage = Usage::default();
            r.object(|r, key| match key {
                "prompt_tokens" => r.u64().map(|n| usage.input = Some(n)),
                "total_tokens" => r.u64().map(|n| usage.total = Some(n)),
                _ => r.skip(),
            })?;
            batch.usage = Some(usage);
            Some(())
        }
        _ => r.skip(),
    });
    if read.is_none() || !r.at_end() || problem.is_some() {
        return Err(not_embeddings(provider, body, problem));
    }
    batch.vectors = placed(slots).map_err(|why| not_embeddings(provider, body, Some(why)))?;
    Ok(batch)
}

/// One item of `data`, the `at`-th: its vector goes to its index's slot.
fn item(
    r: &mut Reader<'_>,
    at: usize,
    slots: &mut [Option<Vec<f32>>],
    problem: &mut Option<String>,
) -> Option<()> {
    let mut index = None;
    let mut v = None;
    r.object(|r, key| match key {
        "index" => r.u64().map(|n| index = Some(n)),
        "embedding" => {
            v = Some(vector(r, problem, || format!("data[{at}].embedding"))?);
            Some(())
        }
        _ => r.skip(),
    })?;
    let index = index.map_or(at, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let fail = |problem: &mut Option<String>, why: String| {
        *problem = Some(format!("data[{at}]{why}"));
        None
    };
    let Some(v) = v else {
        return fail(problem, " has no `embedding`".into());
    };
    match slots.get_mut(index) {
        Some(slot @ None) => *slot = Some(v),
        Some(Some(_)) => return fail(problem, format!(".index {index} came twice")),
        None => {
            let n = slots.len();
            return fail(
                problem,
                format!(".index {index} is past the batch's {n} values"),
            );
        }
    }
    Some(())
}

/// Every vector of a batch of `count`, placed by index, or the index
/// missing.
fn placed(slots: Vec<Option<Vec<f32>>>) -> Result<Vec<Vec<f32>>, String> {
    let mut out = Vec::with_capacity(slots.len());
    for (i, v) in slots.into_iter().enumerate() {
        out.push(v.ok_or_else(|| format!("the answer has no vector for value {i} of the batch"))?);
    }
    Ok(out)
}
