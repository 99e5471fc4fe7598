//! A non-streaming `GenerateContentResponse` to deltas.

use serde_json::Value;

use super::Turn;
use crate::accumulate::Delta;
use crate::providers::FrameFailure;

/// The deltas of a whole response.
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    let mut out = Vec::new();
    Turn::default().response(body.clone(), &mut out)?;
    Ok(out)
}
