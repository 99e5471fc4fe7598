//! A non-streaming `chat.completion` body to deltas.

use serde_json::Value;

use super::{
    completion_usage, content_deltas, first_choice, map_finish_reason, take_str, CallFields,
    Dialect,
};
use crate::accumulate::Delta;
use crate::model::provider_data::provider_data;
use crate::providers::FrameFailure;

/// Whether `body` is a whole `chat.completion`: a first choice with a
/// `message` (a chunk's has a `delta`), as servers and proxies that ignore
/// `stream` answer.
pub(crate) fn is_whole(body: &Value) -> bool {
    body.get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .is_some_and(|c| c.get("message").is_some())
}

/// The deltas of a whole response, in wire order.
pub(crate) fn decode(body: &Value, dialect: Dialect) -> Result<Vec<Delta>, FrameFailure> {
    if let Some(err) = body.get("error").filter(|e| !e.is_null()) {
        if let Some(e) = super::error::decode_error_object(err) {
            return Err(FrameFailure::Api(Box::new(e)));
        }
    }
    let Value::Object(mut completion) = body.clone() else {
        return Err(FrameFailure::Malformed(
            "a chat completion that is not an object".into(),
        ));
    };
    let Some(mut choice) = first_choice(&mut completion) else {
        return Err(FrameFailure::Malformed(
            "a chat completion without choices".into(),
        ));
    };
    let mut out = vec![Delta::Meta {
        id: take_str(&mut completion, "id"),
        model: take_str(&mut completion, "model"),
    }];
    let mut announced = false;
    let message = match (choice.remove("message"), choice.remove("delta")) {
        (Some(Value::Object(m)), _) | (_, Some(Value::Object(m))) => Some(m),
        _ => None,
    };
    if let Some(mut message) = message {
        content_deltas(&mut message, dialect, &mut announced, &mut out);
        let calls = match message.remove("tool_calls") {
            Some(Value::Array(calls)) => calls,
            _ => super::legacy_function_call(&mut message)
                .map(|call| vec![Value::Object(call)])
                .unwrap_or_default(),
        };
        for (slot, call) in calls.into_iter().enumerate() {
            let Value::Object(mut call) = call else {
                continue;
            };
            let fields = CallFields::take(&mut call);
            out.push(Delta::ToolStart {
                slot,
                id: fields.id,
                name: fields.name,
                data: fields
                    .extra
                    .map(|x| provider_data(dialect.key(), "extra_content", x)),
            });
            if let Some(fragment) = fields.arguments {
                out.push(Delta::ToolArgs { slot, fragment });
            }
        }
    }
    if let Some(reason) = take_str(&mut choice, "finish_reason") {
        out.push(Delta::Finish {
            reason: map_finish_reason(&reason),
            raw: reason,
        });
    }
    out.push(Delta::ToolEndAll);
    if let Some(u) = completion_usage(&completion) {
        out.push(Delta::Usage(u));
    }
    Ok(out)
}
