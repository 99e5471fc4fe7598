//! Google Gemini `generateContent` / `streamGenerateContent?alt=sse`.
//!
//! API reference: <https://ai.google.dev/api/generate-content>, function
//! calling: <https://ai.google.dev/gemini-api/docs/function-calling>, thought
//! signatures: <https://ai.google.dev/gemini-api/docs/thought-signatures>,
//! Vertex AI streamed function-call arguments:
//! <https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling#streaming>.
//!
//! Call ids: the wire `id` when the model sends one (Gemini 3); otherwise the
//! function name, and `name#2`, `name#3`, ... when the same name is called
//! again in the turn, so parallel calls of one tool stay distinguishable. On
//! replay `functionResponse.id` is sent only for wire ids, and `name` is
//! recovered from the call in the history.

use serde_json::Value;

use crate::model::response::sum;
use crate::model::{FinishReason, Usage};

pub(crate) mod embed;
pub(crate) mod error;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stream;

mod fast;
mod partial_args;

/// The provider table's entry (`providers/mod.rs`).
pub(crate) const ADAPTER: super::Adapter = super::Adapter {
    framing: crate::framing::Framing::Sse,
    encode: request::encode,
    response: response::decode,
    is_whole: response::is_whole,
    error: error::decode,
    stream: || Box::new(stream::StreamState::default()),
    embed: Ok(embed::EMBEDDER),
    parts: true,
    files: super::adapter::Files::Any,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

pub(crate) use stream::TurnState;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The API version path segment.
pub const API_VERSION: &str = "v1beta";
/// The documented placeholder signature, sent for a replayed function call
/// whose real `thoughtSignature` was lost (a history from another provider).
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";
/// The adapter name, the key of its provider data and provider parts.
pub(crate) const NAME: &str = "gemini";

/// Maps `finishReason` to the neutral reason.
pub(crate) fn map_finish_reason(raw: &str) -> FinishReason {
    match raw {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "LANGUAGE"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            FinishReason::Error
        }
        _ => FinishReason::Other,
    }
}

/// Reads `usageMetadata`.
pub(crate) fn map_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let reasoning = n("thoughtsTokenCount");
    Usage {
        input: n("promptTokenCount"),
        // Gemini's candidatesTokenCount leaves out its thoughts.
        output: sum(n("candidatesTokenCount"), reasoning),
        cache_read: n("cachedContentTokenCount"),
        cache_write: None,
        reasoning,
        raw: Some(u.clone()),
        ..Usage::default()
    }
    .totalled()
}

/// Whether a call id was made up by skyl (the name, or `name#N`) rather than
/// sent by the model.
pub(crate) fn is_synthetic_id(id: &str, name: &str) -> bool {
    id == name
        || id
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('#'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_ids_are_recognised() {
        assert!(is_synthetic_id("f", "f"));
        assert!(is_synthetic_id("f#2", "f"));
        assert!(!is_synthetic_id("f#", "f"));
        assert!(!is_synthetic_id("abc123", "f"));
    }
}
