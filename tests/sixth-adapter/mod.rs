//! A throwaway sixth adapter, `echo`, that `scripts/sixth-adapter` adds to
//! a copy of the crate to show what adding an adapter takes: this folder,
//! its `mod` line and one entry of the provider table. Its wire format is
//! made up: the request is `{"model", "prompt", "stream"}`; a stream's
//! frames are `{"text": "..."}` and then `{"done": "<reason>"}`.

use serde_json::Value;

use super::{join_url, EncodeInput, Encoded, FrameFailure, FrameStream};
use crate::accumulate::{Accumulator, Delta};
use crate::error::Error;
use crate::framing::{Frame, Framing};
use crate::json::read;
use crate::model::{FinishReason, Part};

/// The provider table's entry.
pub(crate) const ADAPTER: super::Adapter = super::Adapter {
    framing: Framing::Sse,
    encode,
    response: |body| Ok(deltas(body)),
    is_whole: |body| body.get("done").is_some(),
    error: |body| {
        let message = body.get("error")?.as_str()?.to_string();
        Some(super::api_error_from(None, Some(message), None, None))
    },
    stream: || Box::new(State),
    embed: Err("the echo adapter has no embeddings"),
    parts: false,
    files: super::adapter::Files::None,
    error_type: None,
    options: None,
    sign: None,
    no_tool_choice_none: None,
};

fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    let base = input
        .config
        .base_url
        .as_deref()
        .unwrap_or("http://127.0.0.1:9");
    let prompt: String = (input.request.messages.iter())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let mut body = crate::json::write::Out::default();
    body.object()
        .str("model", input.model)
        .str("prompt", &prompt)
        .bool("stream", input.stream);
    Ok((join_url(base, "echo"), Vec::new(), body))
}

/// The deltas of one frame, or of a whole body.
fn deltas(v: &Value) -> Vec<Delta> {
    let mut out = Vec::new();
    if let Some(text) = v.get("text").and_then(Value::as_str) {
        out.push(Delta::Text(text.to_string()));
    }
    if let Some(reason) = v.get("done").and_then(Value::as_str) {
        let finish = if reason == "stop" {
            FinishReason::Stop
        } else {
            FinishReason::Other
        };
        out.push(Delta::Finish {
            raw: reason.to_string(),
            reason: finish,
        });
        out.push(Delta::Terminal);
    }
    out
}

#[derive(Debug)]
struct State;

impl FrameStream for State {
    fn frame(
        &mut self,
        frame: &Frame,
        _acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        let v = read::parse(&frame.data)
            .map_err(|e| FrameFailure::Malformed(format!("not JSON: {e}")))?;
        if let Some(e) = (ADAPTER.error)(&v) {
            return Err(FrameFailure::Api(Box::new(e)));
        }
        out.extend(deltas(&v));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{decode_response, encode_request, ClientConfig, Error, Provider, StreamDecoder};

    /// Everything that iterates the table has the sixth adapter.
    #[test]
    fn the_sixth_adapter_is_everywhere_the_table_is() {
        let echo = Provider::from_name("echo").unwrap();
        assert_eq!(Provider::ALL.last(), Some(&echo), "the table's last entry");
        assert!(Provider::ALL.len() >= 6);
        assert_eq!((echo.name(), echo.feature()), ("echo", "openai"));
        assert!(!echo.needs_base_url());
        assert_eq!(echo.to_string(), "echo");
        let config = ClientConfig::new(echo).with_model("m");
        let request = crate::Request {
            messages: vec![crate::Message::user("Hi")],
            ..crate::Request::default()
        };
        let http = encode_request(&config, &request, true).unwrap();
        assert_eq!(http.url, "http://127.0.0.1:9/echo");
        assert_eq!(http.body, r#"{"model":"m","prompt":"Hi","stream":true}"#);
        let body =
            b"data: {\"text\":\"He\"}\n\ndata: {\"text\":\"llo\"}\n\ndata: {\"done\":\"stop\"}\n\n";
        let (events, response) = StreamDecoder::decode_all(echo, body);
        assert_eq!(response.unwrap().text, "Hello");
        assert_eq!(events.len(), 3, "{events:?}");
        let (_, cut) = StreamDecoder::decode_all(echo, b"data: {\"text\":\"He\"}\n\n");
        assert!(
            matches!(cut, Err(Error::StreamEndedEarly { .. })),
            "{cut:?}"
        );
        assert_eq!(
            decode_response(echo, r#"{"text":"Hi","done":"stop"}"#)
                .unwrap()
                .text,
            "Hi"
        );
        let e = crate::decode_error(echo, 500, &[], r#"{"error":"down"}"#);
        assert!(e.to_string().contains("down"), "{e}");
    }
}
