//! The fast path: the most common Gemini frames (text, thought text and
//! whole calls, usage repeated) read in place, without a JSON tree.

use std::borrow::Cow;

use super::map_usage;
use super::stream::{end_call, signature_data, text_delta, TurnState};
use crate::accumulate::{Delta, ReadUsage};
use crate::json::read::{Reader, Seen};

/// A frame of text and whole calls, read in place; see [`TurnState::fast`]:
/// one candidate, no finish reason, prompt feedback or error.
struct FastFrame<'a> {
    parts: Vec<FastPart<'a>>,
    /// Canonical text (as compacted by [`Reader::canonical`]).
    usage_metadata: Option<Cow<'a, str>>,
    model_version: Option<Cow<'a, str>>,
    response_id: Option<Cow<'a, str>>,
}

/// Text (or thought text) without a signature, or a whole call.
#[derive(Default)]
struct FastPart<'a> {
    text: Option<Cow<'a, str>>,
    thought: Option<bool>,
    function_call: Option<FastCall<'a>>,
    thought_signature: Option<Cow<'a, str>>,
}

/// A call given whole: a name and `args` (kept as text, canonical), nothing
/// streamed.
struct FastCall<'a> {
    name: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    args: Option<Cow<'a, str>>,
}

/// `null` (`None`) or what `read` makes of the value.
fn nullable<'a, T>(
    r: &mut Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Option<T>,
) -> Option<Option<T>> {
    if r.null() {
        Some(None)
    } else {
        read(r).map(Some)
    }
}

impl<'a> FastFrame<'a> {
    /// `None` (the general path) for any other frame, or a field given
    /// twice (the general path decides what that means). `usage` is the
    /// last usage passed on: a frame that repeats it has no usage here.
    fn read(data: &'a str, usage: &str) -> Option<Self> {
        let mut r = Reader::new(data);
        let mut seen = Seen::default();
        let mut frame = FastFrame {
            parts: Vec::new(),
            usage_metadata: None,
            model_version: None,
            response_id: None,
        };
        let mut candidates = 0;
        r.object(|r, key| match key {
            "candidates" => {
                seen.once(0)?;
                r.array(|r| {
                    candidates += 1;
                    (candidates == 1).then_some(())?;
                    Self::candidate(r, &mut frame.parts)
                })
            }
            "usageMetadata" => {
                seen.once(1)?;
                if !r.exactly(usage) {
                    frame.usage_metadata = nullable(r, Reader::canonical)?;
                }
                Some(())
            }
            "modelVersion" => {
                seen.once(2)?;
                frame.model_version = nullable(r, Reader::string)?;
                Some(())
            }
            "responseId" => {
                seen.once(3)?;
                frame.response_id = nullable(r, Reader::string)?;
                Some(())
            }
            "promptFeedback" => seen.once(4).filter(|()| r.null()),
            "error" => seen.once(5).filter(|()| r.null()),
            _ => r.skip(),
        })?;
        (candidates == 1 && r.at_end()).then_some(frame)
    }

    fn candidate(r: &mut Reader<'a>, parts: &mut Vec<FastPart<'a>>) -> Option<()> {
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "content" => {
                seen.once(0)?;
                let mut has_parts = false;
                r.object(|r, key| match key {
                    "parts" if !has_parts => {
                        has_parts = true;
                        r.array(|r| {
                            parts.push(Self::part(r)?);
                            Some(())
                        })
                    }
                    "parts" => None,
                    _ => r.skip(),
                })?;
                has_parts.then_some(())
            }
            "finishReason" => seen.once(1).filter(|()| r.null()),
            _ => r.skip(),
        })?;
        seen.has(0).then_some(())
    }

    fn part(r: &mut Reader<'a>) -> Option<FastPart<'a>> {
        let mut part = FastPart::default();
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "text" => {
                seen.once(0)?;
                part.text = nullable(r, Reader::string)?;
                Some(())
            }
            "thought" => {
                seen.once(1)?;
                part.thought = nullable(r, Reader::boolean)?;
                Some(())
            }
            "functionCall" => {
                seen.once(2)?;
                part.function_call = nullable(r, Self::call)?;
                Some(())
            }
            "thoughtSignature" => {
                seen.once(3)?;
                part.thought_signature = nullable(r, Reader::string)?;
                Some(())
            }
            _ => None,
        })?;
        Some(part)
    }

    fn call(r: &mut Reader<'a>) -> Option<FastCall<'a>> {
        let (mut name, mut id, mut args) = (None, None, None);
        let mut seen = Seen::default();
        r.object(|r, key| match key {
            "name" => {
                seen.once(0)?;
                name = Some(r.string()?);
                Some(())
            }
            "id" => {
                seen.once(1)?;
                id = nullable(r, Reader::string)?;
                Some(())
            }
            "args" => {
                seen.once(2)?;
                // Passed on as text only if canonical (the text the general
                // path writes back) once the whitespace between tokens is
                // dropped, as Google's printer puts a space after each
                // colon: found and checked in one pass.
                args = nullable(r, Reader::canonical)?;
                Some(())
            }
            _ => None,
        })?;
        Some(FastCall {
            name: name?,
            id,
            args,
        })
    }
}

impl FastPart<'_> {
    /// Whether the general path would read this part as the fast path does.
    fn is_fast(&self) -> bool {
        match &self.function_call {
            // The arguments' text is passed on as it came only when it is
            // the text the general path writes back for them.
            Some(call) => {
                self.text.is_none()
                    && self.thought.is_none()
                    && !call.name.is_empty()
                    && call.args.as_ref().map_or(true, |a| a.starts_with('{'))
            }
            None => self.text.is_some() && self.thought_signature.is_none(),
        }
    }
}

impl TurnState {
    /// The fast path for the most common frames: one candidate whose parts
    /// are plain text, thought text or whole calls, nothing else (no text
    /// signature, streamed call, finish, feedback or error). False, with
    /// nothing done, otherwise.
    pub(crate) fn fast(&mut self, data: &str, out: &mut Vec<Delta>) -> bool {
        let Some(frame) = FastFrame::read(data, &self.usage_text) else {
            return false;
        };
        if !frame.parts.iter().all(FastPart::is_fast)
            || (self.streamed.is_some() && frame.parts.iter().any(|p| p.function_call.is_some()))
        {
            return false;
        }
        self.meta(
            frame.response_id.as_deref(),
            frame.model_version.as_deref(),
            out,
        );
        for part in &frame.parts {
            if let Some(call) = &part.function_call {
                let data = part
                    .thought_signature
                    .as_deref()
                    .map(|sig| signature_data(sig.to_string()));
                let slot = self.start_call(call.id.as_deref(), call.name.to_string(), data, out);
                end_call(slot, call.args.as_deref().unwrap_or("{}").to_string(), out);
            } else if let Some(text) = &part.text {
                out.push(text_delta(part.thought == Some(true), text.to_string()));
            }
        }
        // Repeated in every frame, usually changed: passed on as text,
        // read only when the response needs it (accumulate/usage.rs).
        if let Some(text) = frame.usage_metadata.filter(|t| t.starts_with('{')) {
            if self.usage_text != *text {
                self.usage_text.clear();
                self.usage_text.push_str(&text);
                out.push(Delta::UsageText {
                    json: text.into_owned(),
                    read: ReadUsage(map_usage),
                });
            }
        }
        true
    }
}
