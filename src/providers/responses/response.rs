//! A non-streaming response object to deltas, item by item as a stream of
//! it would give them.

use serde_json::Value;

use super::{
    call_end, call_start, custom_arguments, finish_delta, kept_item, map_usage, message_content,
    meta, part_end, reasoning_text,
};
use crate::accumulate::Delta;
use crate::providers::FrameFailure;

/// Whether `body` is a whole response object (`"object": "response"`, or
/// an `output` list with a `status`), as a server that ignored `stream`
/// answers.
pub(crate) fn is_whole(body: &Value) -> bool {
    body.get("object").and_then(Value::as_str) == Some("response")
        || (body.get("output").is_some_and(Value::is_array) && body.get("status").is_some())
}

/// The deltas of a whole response.
pub(crate) fn decode(body: &Value) -> Result<Vec<Delta>, FrameFailure> {
    if body.get("object").and_then(Value::as_str) != Some("response") {
        if let Some(e) = super::error::decode(body) {
            return Err(FrameFailure::Api(Box::new(e)));
        }
    }
    if body.get("status").and_then(Value::as_str) == Some("failed") {
        return Err(match super::error::failed(body) {
            Some(e) => FrameFailure::Api(Box::new(e)),
            None => FrameFailure::Malformed("the response failed without an error".into()),
        });
    }
    let Some(items) = body.get("output").and_then(Value::as_array) else {
        return Err(FrameFailure::Malformed("a response without output".into()));
    };
    let mut out = vec![meta(body)];
    let (mut calls, mut refused) = (false, false);
    let mut slot = 0;
    for (i, item) in items.iter().enumerate() {
        let Value::Object(fields) = item else {
            continue;
        };
        match fields.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                out.push(call_start(slot, fields));
                let arguments = fields.get("arguments").and_then(Value::as_str);
                out.push(Delta::ToolArgs {
                    slot,
                    fragment: arguments.unwrap_or_default().to_string(),
                });
                out.push(call_end(slot, fields, &mut calls));
                slot += 1;
            }
            // A custom tool call the response went on after was run by the
            // server (xAI); one that ends it is the client's.
            Some("custom_tool_call") if is_last_call(items, i) => {
                out.push(call_start(slot, fields));
                out.push(Delta::ToolArgsWhole {
                    slot,
                    arguments: custom_arguments(item),
                });
                out.push(call_end(slot, fields, &mut calls));
                slot += 1;
            }
            Some("message") => {
                let mut fields = fields.clone();
                let (text, refusal) = message_content(&mut fields);
                out.push(Delta::Text(text));
                if let Some(r) = refusal {
                    refused = true;
                    out.push(Delta::Refusal(r));
                }
                part_end(fields, false, &mut out);
            }
            Some("reasoning") => {
                out.push(Delta::Reasoning(reasoning_text(item)));
                part_end(fields.clone(), true, &mut out);
            }
            _ => kept_item(item.clone(), &mut out),
        }
    }
    if let Some(u) = body.get("usage").filter(|u| u.is_object()) {
        out.push(Delta::Usage(map_usage(u)));
    }
    if let Some(finish) = finish_delta(body, calls, refused) {
        out.push(finish);
    }
    Ok(out)
}

/// Whether only client calls follow item `i` (the response did not go on
/// to an answer after it).
fn is_last_call(items: &[Value], i: usize) -> bool {
    items.iter().skip(i + 1).all(|item| {
        matches!(
            item.get("type").and_then(Value::as_str),
            Some("custom_tool_call" | "function_call")
        )
    })
}
