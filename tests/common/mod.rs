//! Shared helpers for the integration tests: the conformance corpus.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use skyl::{Error, PartialEvents, Provider, Response, StreamDecoder, StreamEvent};

/// One recorded case: `<adapter>/<name>`.
#[derive(Clone, Debug)]
pub struct Case {
    pub provider: Provider,
    pub name: String,
    pub kind: String,
    pub body_path: PathBuf,
    pub expected: Value,
}

impl Case {
    pub fn id(&self) -> String {
        format!("{}/{}", self.provider, self.name)
    }

    pub fn body(&self) -> Vec<u8> {
        std::fs::read(&self.body_path).unwrap()
    }

    pub fn is_stream(&self) -> bool {
        self.kind == "stream"
    }
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance")
}

/// Every case of the corpus, sorted by id.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for provider in Provider::ALL {
        let dir = corpus_dir().join(provider.name());
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".expected.json").map(str::to_string)
            })
            .collect();
        names.sort();
        for name in names {
            let expected: Value = serde_json::from_slice(
                &std::fs::read(dir.join(format!("{name}.expected.json"))).unwrap(),
            )
            .unwrap();
            let body_path = ["sse", "eventstream", "json"]
                .map(|ext| dir.join(format!("{name}.{ext}")))
                .into_iter()
                .find(|path| path.exists())
                .unwrap();
            out.push(Case {
                provider,
                name,
                kind: expected["kind"].as_str().unwrap().to_string(),
                body_path,
                expected,
            });
        }
    }
    out
}

/// The stream cases.
pub fn stream_cases() -> Vec<Case> {
    cases().into_iter().filter(Case::is_stream).collect()
}

/// Events and the outcome of decoding a body.
pub type Outcome = (Vec<StreamEvent>, Result<Response, Error>);

pub mod consistent;
pub mod joined;

/// Decodes a body fed in the given chunks.
pub fn decode_chunked(provider: Provider, chunks: &[&[u8]]) -> Outcome {
    decode_with(provider, chunks, PartialEvents::default())
}

/// Decodes a body fed in the given chunks, with the progress events `which`.
pub fn decode_with(provider: Provider, chunks: &[&[u8]], which: PartialEvents) -> Outcome {
    let mut d = StreamDecoder::new(provider).with_partial_events(which);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let r = d.finish(&mut out);
    (out, r)
}
