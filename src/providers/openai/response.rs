//! A non-streaming `chat.completion` body to deltas.

use serde_json::Value;

use super::{arguments_text, content_deltas, map_finish_reason, Dialect, WireCompletion};
use crate::accumulate::{provider_data, Delta};
use crate::providers::FrameFailure;

/// The deltas of a whole response, in wire order.
pub(crate) fn decode(body: &Value, dialect: Dialect) -> Result<Vec<Delta>, FrameFailure> {
    let mut out = Vec::new();
    if let Some(err) = body.get("error").filter(|e| !e.is_null()) {
        if let Some(e) = super::error::decode_error_object(err) {
            return Err(FrameFailure::Api(Box::new(e)));
        }
    }
    let mut completion: WireCompletion = serde_json::from_value(body.clone())
        .map_err(|e| FrameFailure::Malformed(format!("not a chat completion: {e}")))?;
    let Some(choice) = completion.choices.take().and_then(|c| c.into_iter().next()) else {
        return Err(FrameFailure::Malformed(
            "a chat completion without choices".into(),
        ));
    };
    out.push(Delta::Meta {
        id: completion.id.take(),
        model: completion.model.take(),
    });
    let mut announced = false;
    if let Some(mut message) = choice.message.or(choice.delta) {
        content_deltas(&mut message, dialect, &mut announced, &mut out);
        for (slot, call) in message
            .tool_calls
            .take()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let (name, args) = match call.function {
                Some(f) => (f.name, arguments_text(f.arguments)),
                None => (None, None),
            };
            out.push(Delta::ToolStart {
                slot,
                id: call.id,
                name,
                data: call
                    .extra_content
                    .map(|x| provider_data(dialect.key(), "extra_content", x)),
            });
            if let Some(fragment) = args {
                out.push(Delta::ToolArgs { slot, fragment });
            }
        }
    }
    if let Some(reason) = choice.finish_reason {
        out.push(Delta::Finish {
            reason: map_finish_reason(&reason),
            raw: reason,
        });
    }
    out.push(Delta::ToolEndAll);
    if let Some(u) = completion.usage() {
        out.push(Delta::Usage(u));
    }
    Ok(out)
}
