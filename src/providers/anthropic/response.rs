//! A non-streaming Messages body to deltas.

use serde_json::Value;

use super::{content_deltas, finish_delta, map_usage, refusal_explanation};
use crate::accumulate::Delta;
use crate::providers::FrameFailure;

/// Whether `body` is a whole message (`"type": "message"`, or an assistant
/// role with a content list), as a proxy answers a streamed request when it
/// does not stream (LiteLLM's `/v1/messages`).
pub(crate) fn is_whole(body: &Value) -> bool {
    let str_of = |key| body.get(key).and_then(Value::as_str);
    str_of("type") == Some("message")
        || (str_of("role") == Some("assistant") && body.get("content").is_some_and(Value::is_array))
}

/// The deltas of a whole message.
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        if let Some(e) = super::error::decode(body) {
            return Err(FrameFailure::Api(Box::new(e)));
        }
    }
    let Some(content) = body.get("content").and_then(Value::as_array) else {
        return Err(FrameFailure::Malformed("a message without content".into()));
    };
    let mut out = vec![Delta::Meta {
        id: body.get("id").and_then(Value::as_str).map(str::to_string),
        model: body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
    }];
    let blocks = content.iter().cloned().enumerate().collect();
    content_deltas(blocks, finish_delta(body.get("stop_reason")), &mut out);
    if let Some(r) = refusal_explanation(body) {
        out.push(Delta::Refusal(r));
    }
    if let Some(u) = body.get("usage").and_then(Value::as_object) {
        out.push(Delta::Usage(map_usage(u)));
    }
    Ok(out)
}
