//! The fast path: the most common frame, a `content_block_delta` of text,
//! thinking or argument JSON, read in place without a JSON tree.

use std::borrow::Cow;

use super::stream::StreamState;
use crate::accumulate::Delta;
use crate::json::read::Reader;

impl StreamState {
    /// Applies a `content_block_delta` frame of text, thinking or argument
    /// JSON to a block that takes it. False, with nothing done, otherwise
    /// (the frame takes the general path).
    pub(super) fn fast_frame(&mut self, data: &str, out: &mut Vec<Delta>) -> bool {
        if !data.starts_with(r#"{"type":"content_block_delta""#) {
            return false;
        }
        if let Some((index, kind, value)) = literal_delta(data).or_else(|| fast_delta(data)) {
            if self.accepts(index, kind) {
                self.simple_delta(index, value.into_owned(), out);
                return true;
            }
        }
        false
    }
}

/// The frame as the API writes it, read by position: the members in its
/// order, no whitespace, `index` then a `delta` of `type` and its value
/// (`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta",
/// "text":"Hi"}}`, as every recording has it). `None` for anything else,
/// which [`fast_delta`] then reads in any order. It gives what
/// [`fast_delta`] gives on the frames it takes: the same members, each
/// once, read by the same [`Reader`] calls.
fn literal_delta(data: &str) -> Option<(u64, &'static str, Cow<'_, str>)> {
    let mut r = Reader::new(data);
    if !r.literal(r#"{"type":"content_block_delta","index":"#) {
        return None;
    }
    let index = r.u64()?;
    if !r.literal(r#","delta":{"type":""#) {
        return None;
    }
    let kind = if r.literal(r#"text_delta","text":"#) {
        "text_delta"
    } else if r.literal(r#"input_json_delta","partial_json":"#) {
        "input_json_delta"
    } else if r.literal(r#"thinking_delta","thinking":"#) {
        "thinking_delta"
    } else {
        return None;
    };
    // (A quote next, not `null`: a null value takes the other reading.)
    let value = r.string()?;
    (r.literal("}}") && r.at_end()).then_some((index, kind, value))
}

/// The most common frame, `content_block_delta` with text, thinking or
/// argument JSON, read in place instead of through a JSON tree: the block
/// index, the delta type and its value. `None` (the general path) for
/// anything else, or a field given twice.
fn fast_delta(data: &str) -> Option<(u64, &str, Cow<'_, str>)> {
    let mut r = Reader::new(data);
    let (mut kind, mut index, mut delta) = (None, None, None);
    r.object(|r, key| match key {
        "type" if kind.is_none() => {
            kind = Some(r.string()?);
            Some(())
        }
        "index" if index.is_none() => {
            index = Some(r.u64()?);
            Some(())
        }
        "delta" if delta.is_none() => {
            let (mut dkind, mut text, mut thinking, mut json) = (None, None, None, None);
            r.object(|r, key| {
                let slot = match key {
                    "type" => &mut dkind,
                    "text" => &mut text,
                    "thinking" => &mut thinking,
                    "partial_json" => &mut json,
                    _ => return r.skip(),
                };
                if slot.is_some() {
                    return None;
                }
                // serde reads `null` as absent for these optional fields.
                if !r.null() {
                    *slot = Some(r.string()?);
                }
                Some(())
            })?;
            delta = Some(match &*dkind? {
                "text_delta" => ("text_delta", text?),
                "thinking_delta" => ("thinking_delta", thinking?),
                "input_json_delta" => ("input_json_delta", json?),
                _ => return None,
            });
            Some(())
        }
        "type" | "index" | "delta" => None,
        _ => r.skip(),
    })?;
    if !r.at_end() || kind? != "content_block_delta" {
        return None;
    }
    let (dkind, value) = delta?;
    Some((index?, dkind, value))
}
