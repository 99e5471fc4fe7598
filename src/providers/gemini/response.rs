//! A non-streaming `GenerateContentResponse` to deltas.

use serde_json::Value;

use super::TurnState;
use crate::accumulate::Delta;
use crate::providers::FrameFailure;

/// Whether `body` is a whole `GenerateContentResponse` with candidates or
/// prompt feedback (a server that answered a streamed request in one
/// piece). An error object or the REST API's JSON list is not: those are
/// read as one frame.
pub(crate) fn is_whole(body: &Value) -> bool {
    body.is_object()
        && !body.get("error").is_some_and(|e| !e.is_null())
        && (body.get("candidates").is_some() || body.get("promptFeedback").is_some())
}

/// The deltas of a whole response. One without candidates (`{}`, an
/// empty list) is an error, not an empty success, unless the prompt was
/// blocked (a content-filter error).
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    if body.is_array() {
        // The REST API's JSON-array form, an error in it included.
        return Err(match super::error::decode(body) {
            Some(e) => FrameFailure::Api(Box::new(e)),
            None => FrameFailure::Malformed("a list of responses, not one response".into()),
        });
    }
    let mut out = Vec::new();
    TurnState::default().response(body.clone(), &mut out)?;
    let answered = body
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    if !answered {
        return Err(FrameFailure::Malformed(
            "a response without candidates".into(),
        ));
    }
    Ok(out)
}
