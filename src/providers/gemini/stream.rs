//! Stream frames (`streamGenerateContent?alt=sse`): each `data:` is a whole
//! `GenerateContentResponse`. The turn is complete at a `finishReason`.

use serde_json::Value;

use super::Turn;
use crate::accumulate::Delta;
use crate::providers::FrameFailure;
use crate::sse::SseEvent;

/// The frame decoder for Gemini streams.
#[derive(Debug, Default)]
pub struct Decoder {
    turn: Turn,
}

impl Decoder {
    pub(crate) fn frame(
        &mut self,
        ev: &SseEvent,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        let body: Value = serde_json::from_str(&ev.data)
            .map_err(|e| FrameFailure::Malformed(format!("a frame that is not JSON: {e}")))?;
        self.turn.response(body, out)
    }
}
