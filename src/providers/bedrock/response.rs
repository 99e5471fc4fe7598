//! A `Converse` body to deltas.

use serde_json::Value;

use super::{block_deltas, finish_delta, map_usage};
use crate::accumulate::Delta;
use crate::providers::FrameFailure;

/// Whether `body` is a whole `Converse` response (a proxy that answered a
/// streamed request without streaming).
pub(crate) fn is_whole(body: &Value) -> bool {
    crate::json::nested(body, &["output", "message"]).is_some()
}

/// The deltas of a `Converse` response. The finish goes before the last
/// block: a `toolUse` block cut off by `max_tokens` (only the last one can
/// be) is reported incomplete, and the calls before it stay whole.
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    let Some(content) =
        crate::json::nested(body, &["output", "message", "content"]).and_then(Value::as_array)
    else {
        return Err(match super::error::decode(body) {
            Some(e) => FrameFailure::Api(Box::new(e)),
            None => FrameFailure::Malformed("a Converse body without output.message".into()),
        });
    };
    let mut out = Vec::new();
    let mut finish = body
        .get("stopReason")
        .and_then(Value::as_str)
        .map(finish_delta);
    let last = content.len().saturating_sub(1);
    for (slot, block) in content.iter().cloned().enumerate() {
        if slot == last {
            out.extend(finish.take());
        }
        block_deltas(block, slot, &mut out);
    }
    out.extend(finish);
    if let Some(u) = body.get("usage").and_then(Value::as_object) {
        out.push(Delta::Usage(map_usage(u)));
    }
    Ok(out)
}
