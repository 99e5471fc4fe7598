//! Non-streaming bodies: the OpenAI decoder in the compatible dialect.

use serde_json::Value;

use super::Dialect;
use crate::accumulate::Delta;
use crate::providers::{openai, FrameFailure};

/// The deltas of a whole response.
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    openai::response::decode(body, Dialect::COMPAT)
}
