//! What the runner reads from and writes into the history: the calls left
//! unanswered, the tool result parts, the usage summed over steps.

use super::Outcome;
use crate::model::response::sum;
use crate::model::{Message, Part, ToolCall, Usage};

/// The tool calls of `messages` that no later tool result answers, with
/// the path of each. A result answers the earliest open call of its id
/// before it, so ids a provider repeats across turns are told apart by
/// position.
pub(super) fn unanswered(messages: &[Message]) -> Vec<(ToolCall, String)> {
    let mut open: Vec<(ToolCall, String)> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for (j, p) in m.parts.iter().enumerate() {
            match p {
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => open.push((
                    ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    },
                    format!("messages[{i}].parts[{j}]"),
                )),
                Part::ToolResult { call_id, .. } => {
                    if let Some(at) = open.iter().position(|(c, _)| c.id == *call_id) {
                        open.remove(at);
                    }
                }
                _ => {}
            }
        }
    }
    open
}

pub(super) fn error_part(call_id: &str, content: String) -> Part {
    Part::ToolResult {
        call_id: call_id.to_string(),
        content,
        is_error: true,
        provider_data: None,
    }
}

pub(super) fn result(call_id: &str, outcome: &Outcome) -> Part {
    match outcome {
        Outcome::Done(text) => Part::ToolResult {
            call_id: call_id.to_string(),
            content: text.clone(),
            is_error: false,
            provider_data: None,
        },
        Outcome::Failed(message) => error_part(call_id, message.clone()),
    }
}

pub(super) fn denied(call_id: &str) -> Part {
    error_part(call_id, "denied: the user did not approve this call".into())
}

pub(super) fn not_run(call_id: &str, why: &str) -> Part {
    error_part(call_id, why.into())
}

pub(super) fn add_usage(a: &Usage, b: &Usage) -> Usage {
    Usage {
        input: sum(a.input, b.input),
        output: sum(a.output, b.output),
        total: sum(a.total, b.total),
        cache_read: sum(a.cache_read, b.cache_read),
        cache_write: sum(a.cache_write, b.cache_write),
        reasoning: sum(a.reasoning, b.reasoning),
        ..Usage::default()
    }
}
