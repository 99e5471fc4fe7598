//! The fast path: the most common events, a text delta and an argument
//! delta of a call already tracked, read in place without a JSON tree.

use std::borrow::Cow;

use super::stream::{Kind, StreamState};
use crate::accumulate::Delta;
use crate::json::read::{Reader, Seen};

/// What the fast path reads from a delta event.
struct FastDelta<'a> {
    text: bool,
    delta: Cow<'a, str>,
    output_index: Option<u64>,
}

impl StreamState {
    /// Applies an `output_text.delta` or a `function_call_arguments.delta`
    /// of a call tracked on its `output_index`. False, with nothing done,
    /// for anything else (the general path reads it).
    pub(super) fn fast_frame(&mut self, data: &str, out: &mut Vec<Delta>) -> bool {
        let Some(d) = read(data) else {
            return false;
        };
        if d.text {
            out.push(Delta::Text(d.delta.into_owned()));
            return true;
        }
        let Some(Kind::Call(slot)) = d.output_index.and_then(|i| self.kind(i)) else {
            return false;
        };
        if !d.delta.is_empty() {
            out.push(Delta::ToolArgs {
                slot,
                fragment: d.delta.into_owned(),
            });
        }
        true
    }
}

/// `{"type": "response.output_text.delta" | "response.function_call_arguments.delta", "delta": "...", ...}`
/// with any other fields (sequence number, ids, indexes, logprobs,
/// obfuscation) skipped; a field given twice gives up.
fn read(data: &str) -> Option<FastDelta<'_>> {
    const TEXT: &str = r#"{"type":"response.output_text.delta""#;
    const ARGS: &str = r#"{"type":"response.function_call_arguments.delta""#;
    let text = data.starts_with(TEXT);
    if !text && !data.starts_with(ARGS) {
        return None;
    }
    let mut r = Reader::new(data);
    let mut seen = Seen::default();
    let mut delta = None;
    let mut output_index = None;
    r.object(|r, key| match key {
        "type" => seen.once(0).and_then(|()| r.skip()),
        "delta" => {
            seen.once(1)?;
            delta = Some(r.string()?);
            Some(())
        }
        "output_index" => {
            seen.once(2)?;
            output_index = Some(r.u64()?);
            Some(())
        }
        _ => r.skip(),
    })?;
    if !r.at_end() {
        return None;
    }
    Some(FastDelta {
        text,
        delta: delta?,
        output_index,
    })
}
