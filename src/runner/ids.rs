//! A run's call ids: each call of a run gets its own, though providers
//! that send none make them up per turn.

use super::Runner;
use crate::model::{Part, Response};

impl Runner {
    /// Whether a call id was used before this turn: in the history, in an
    /// earlier step, or by a call started in an earlier step.
    pub(super) fn id_used(&self, id: &str) -> bool {
        let in_messages = (self.request.messages.iter().chain(&self.messages))
            .flat_map(|m| &m.parts)
            .any(|p| matches!(p, Part::ToolCall { id: used, .. } if used == id));
        let started_before =
            self.started.iter().any(|s| s == id) && !self.early.iter().any(|(e, _)| e.id == id);
        in_messages || started_before
    }

    /// Renames the turn's calls whose ids were used before (providers
    /// that send none get ids made up per turn: Gemini's tool names,
    /// `skyl00001`), in the message and the calls alike, so that each
    /// call of a run has its own id: `get_weather` becomes `get_weather#2`.
    pub(super) fn unique_ids(&self, response: &mut Response) {
        let mut renames: Vec<(String, String)> = Vec::new();
        for call in &response.tool_calls {
            if renames.iter().any(|(old, _)| *old == call.id) || !self.id_used(&call.id) {
                continue;
            }
            let base = match call.id.rsplit_once('#') {
                Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
                _ => call.id.as_str(),
            };
            let taken = |id: &str| {
                self.id_used(id)
                    || response.tool_calls.iter().any(|c| c.id == id)
                    || renames.iter().any(|(_, n)| n == id)
            };
            let fresh = (2u32..1000)
                .map(|k| {
                    let mut id = format!("{base}#");
                    id.push_str(itoa::Buffer::new().format(k));
                    id
                })
                .find(|id| !taken(id));
            if let Some(fresh) = fresh {
                renames.push((call.id.clone(), fresh));
            }
        }
        for (old, new) in &renames {
            for call in &mut response.tool_calls {
                if call.id == *old {
                    call.id.clone_from(new);
                }
            }
            for part in &mut response.message.parts {
                if let Part::ToolCall { id, .. } = part {
                    if id == old {
                        id.clone_from(new);
                    }
                }
            }
        }
    }
}
