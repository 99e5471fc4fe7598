//! The fast path: the most common chunk (text and argument fragments of
//! calls already started) read in place, without a JSON tree.

use super::stream::StreamState;
use crate::accumulate::Delta;
use crate::json::read::{Reader, Seen};

impl StreamState {
    /// The fast path for the most common chunk, read in place: one choice
    /// whose delta is text and/or argument fragments of calls already
    /// started (any other field sends the chunk down the general path).
    /// False, with nothing done, otherwise.
    pub(super) fn fast(&mut self, data: &str, out: &mut Vec<Delta>) -> bool {
        let mark = out.len();
        let read = self.fast_chunk(data, mark, out);
        if read.is_none() {
            out.truncate(mark);
        }
        read.is_some()
    }

    /// Reads the chunk, pushing its deltas after `mark` (the text, found
    /// in any key order, goes first as on the general path).
    fn fast_chunk(&self, data: &str, mark: usize, out: &mut Vec<Delta>) -> Option<()> {
        let mut r = Reader::new(data);
        let mut text = None;
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "choices" => {
                seen.once(0)?;
                let mut n = 0;
                r.array(|r| {
                    n += 1;
                    if n > 1 {
                        return None;
                    }
                    self.fast_choice(r, &mut text, out)
                })?;
                (n == 1).then_some(())
            }
            // Present and not null: the general path's business.
            "usage" => seen.once(1).filter(|()| r.null()),
            "error" => seen.once(2).filter(|()| r.null()),
            "x_groq" => seen.once(3).filter(|()| r.null()),
            _ => r.skip(),
        })?;
        if !(seen.has(0) && r.at_end()) {
            return None;
        }
        if let Some(text) = text {
            out.insert(mark, Delta::Text(text));
        }
        Some(())
    }

    fn fast_choice(
        &self,
        r: &mut Reader,
        text: &mut Option<String>,
        out: &mut Vec<Delta>,
    ) -> Option<()> {
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "delta" => {
                seen.once(0)?;
                self.fast_delta(r, text, out)
            }
            "finish_reason" => seen.once(1).filter(|()| r.null()),
            _ => r.skip(),
        })?;
        seen.has(0).then_some(())
    }

    /// Only `content`, `tool_calls` and `role` (repeated by some servers).
    fn fast_delta(
        &self,
        r: &mut Reader,
        text: &mut Option<String>,
        out: &mut Vec<Delta>,
    ) -> Option<()> {
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "content" => {
                seen.once(0)?;
                if !r.null() {
                    *text = Some(r.string()?.into_owned());
                }
                Some(())
            }
            "tool_calls" => {
                seen.once(1)?;
                if r.null() {
                    return Some(());
                }
                r.array(|r| self.fast_call(r, out))
            }
            "role" => seen.once(2).and_then(|()| r.skip()),
            _ => None,
        })
    }

    /// `{"index": n, "function": {"arguments": "..."}}` of a call being
    /// tracked on that index (one call per index: a reused index needs the
    /// general path's rules).
    fn fast_call(&self, r: &mut Reader, out: &mut Vec<Delta>) -> Option<()> {
        let mut seen = Seen::default();
        let mut index = None;
        let mut fragment = None;
        r.object(|r, key| match key {
            "index" => {
                seen.once(0)?;
                index = Some(r.u64()?);
                Some(())
            }
            "function" => {
                seen.once(1)?;
                let mut got = false;
                r.object(|r, key| match key {
                    "arguments" if !got => {
                        got = true;
                        fragment = Some(r.string()?);
                        Some(())
                    }
                    _ => None,
                })
            }
            _ => None,
        })?;
        let (index, fragment) = (index?, fragment?);
        let mut tracked = self.calls.iter().filter(|t| t.index == Some(index));
        let slot = match (tracked.next(), tracked.next()) {
            (Some(t), None) => t.slot,
            _ => return None,
        };
        // As the general path: a start (nothing new: it reopens a call only
        // after `[DONE]` closed it), then the fragment.
        out.push(Delta::ToolStart {
            slot,
            id: None,
            name: None,
            data: None,
        });
        if !fragment.is_empty() {
            out.push(Delta::ToolArgs {
                slot,
                fragment: fragment.into_owned(),
            });
        }
        Some(())
    }
}
