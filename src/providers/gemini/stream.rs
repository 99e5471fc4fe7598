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
        if crate::providers::fast_paths() && self.turn.quick_text(&ev.data, out) {
            return Ok(());
        }
        let body: Value = serde_json::from_str(&ev.data)
            .map_err(|e| FrameFailure::Malformed(format!("a frame that is not JSON: {e}")))?;
        self.turn.response(body, out)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, FinishReason, Provider, StreamDecoder, StreamEvent};

    fn sse(frames: &[&str]) -> Vec<u8> {
        frames
            .iter()
            .map(|f| format!("data: {f}\r\n\r\n"))
            .collect::<String>()
            .into_bytes()
    }

    fn call_events(events: &[StreamEvent]) -> usize {
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCall { .. }))
            .count()
    }

    #[test]
    fn a_blocked_prompt_is_a_content_filter_error_not_an_empty_success() {
        let (_, res) = StreamDecoder::decode_all(
            Provider::Gemini,
            &sse(&[
                r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5}}"#,
            ]),
        );
        let Err(Error::ContentFilter { reason, .. }) = res else {
            panic!("{res:?}")
        };
        assert_eq!(reason, "SAFETY");
        let res = crate::decode_response(
            Provider::Gemini,
            r#"{"promptFeedback":{"blockReason":"OTHER"}}"#,
        );
        assert!(matches!(res, Err(Error::ContentFilter { .. })));
    }

    #[test]
    fn a_streamed_call_open_at_max_tokens_is_incomplete() {
        let (events, res) = StreamDecoder::decode_all(
            Provider::Gemini,
            &sse(&[
                r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
                r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"a","willContinue":true}],"willContinue":true}}]},"finishReason":"MAX_TOKENS"}]}"#,
            ]),
        );
        assert_eq!(call_events(&events), 0);
        let res = res.unwrap();
        assert_eq!(res.finish_reason, FinishReason::Length);
        assert_eq!(res.incomplete_tool_calls.len(), 1);
        assert_eq!(res.incomplete_tool_calls[0].name.as_deref(), Some("f"));
    }

    #[test]
    fn a_bad_partial_args_path_makes_the_call_incomplete_with_a_warning() {
        let (events, res) = StreamDecoder::decode_all(
            Provider::Gemini,
            &sse(&[
                r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
                r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a[3]","stringValue":"x"}]}}]}}]}"#,
                r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}]}"#,
            ]),
        );
        assert_eq!(call_events(&events), 0);
        assert!(events.iter().any(|e| matches!(e, StreamEvent::Warning { message, .. } if message.contains("skips past the end"))));
        let res = res.unwrap();
        assert_eq!(res.text, "done");
        assert_eq!(res.incomplete_tool_calls.len(), 1);
    }

    #[test]
    fn an_in_band_error_frame_is_a_typed_error() {
        let (_, res) = StreamDecoder::decode_all(
            Provider::Gemini,
            &sse(&[
                r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
            ]),
        );
        let Err(Error::Api(e)) = res else {
            panic!("{res:?}")
        };
        assert_eq!(e.kind, crate::ApiErrorKind::Overloaded);
        assert!(e.retryable());
    }
}
