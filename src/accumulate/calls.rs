//! The tool calls of a turn: opened, filled in, handed out once whole at
//! their boundary, or reported incomplete.

use super::{Accumulator, OpenCall};
use crate::json::grammar::{is_object, is_ws};
use crate::model::provider_data::merge_data;
use crate::model::{
    FinishReason, IncompleteToolCall, Part, ProviderData, Raw, StreamEvent, ToolCall,
};

impl Accumulator {
    /// Opens call `slot`, or fills in what an open one lacks (the first id
    /// and name given win).
    pub(super) fn tool_start(
        &mut self,
        slot: usize,
        id: Option<String>,
        name: Option<String>,
        data: Option<ProviderData>,
    ) {
        let id = id.filter(|s| !s.is_empty());
        let name = name.filter(|s| !s.is_empty());
        if let Some(call) = self.open_call(slot) {
            if call.id.is_none() {
                call.id = id;
            }
            if call.name.is_none() {
                call.name = name;
            }
            if let Some(data) = data {
                merge_data(&mut call.data, data);
            }
        } else {
            self.open.push(OpenCall {
                slot,
                id,
                name,
                arguments: String::new(),
                checked: false,
                data,
                progress: Default::default(),
            });
        }
    }

    pub(super) fn open_call(&mut self, slot: usize) -> Option<&mut OpenCall> {
        self.open.iter_mut().find(|c| c.slot == slot)
    }

    pub(super) fn take_call(&mut self, slot: usize) -> Option<OpenCall> {
        let pos = self.open.iter().position(|c| c.slot == slot)?;
        Some(self.open.remove(pos))
    }

    pub(super) fn incomplete(call: OpenCall, reason: &str) -> IncompleteToolCall {
        IncompleteToolCall {
            id: call.id,
            name: call.name,
            arguments: call.arguments,
            reason: reason.to_string(),
        }
    }

    pub(super) fn reject(
        &mut self,
        call: OpenCall,
        reason: &str,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) {
        let what = call.name.clone().unwrap_or_else(|| "(no name)".into());
        self.push(
            out,
            StreamEvent::Warning {
                code: "tool_call_incomplete".into(),
                message: format!("tool call {what} was not emitted: {reason}"),
                raw: raw.clone(),
            },
        );
        self.response
            .incomplete_tool_calls
            .push(Self::incomplete(call, reason));
    }

    pub(super) fn end_call(&mut self, mut call: OpenCall, raw: &Raw, out: &mut Vec<StreamEvent>) {
        if call.name.is_none() {
            return self.reject(call, "no tool name arrived", raw, out);
        }
        if self.response.finish_reason == FinishReason::Length {
            return self.reject(
                call,
                "the output limit was reached inside the call",
                raw,
                out,
            );
        }
        if call.arguments.bytes().all(is_ws) {
            call.arguments = "{}".into();
        }
        if !call.checked && !is_object(&call.arguments) {
            return self.reject(
                call,
                "the arguments are not a complete JSON object",
                raw,
                out,
            );
        }
        self.progress_of(&mut call, None, true, raw, out);
        let id = match call.id.take() {
            Some(id) => id,
            None => new_id(&mut self.generated_ids),
        };
        let name = call.name.take().unwrap_or_default();
        self.close_parts();
        self.response.message.parts.push(Part::ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: call.arguments.clone(),
            provider_data: call.data,
        });
        let tool_call = ToolCall {
            id,
            name,
            arguments: call.arguments,
        };
        self.response.tool_calls.push(tool_call.clone());
        self.push(
            out,
            StreamEvent::ToolCall {
                call: tool_call,
                raw: raw.clone(),
            },
        );
    }

    /// Reports every still-open call as incomplete.
    pub(super) fn abandon_open_calls(
        &mut self,
        reason: &str,
        raw: &Raw,
        out: &mut Vec<StreamEvent>,
    ) {
        for call in std::mem::take(&mut self.open) {
            self.reject(call, reason, raw, out);
        }
    }
}

/// An id for a call that came without one (vLLM and others may omit
/// ids): nine alphanumerics, as Mistral accepts on replay.
pub(super) fn new_id(generated: &mut u32) -> String {
    *generated += 1;
    format!("skyl{generated:05}")
}
