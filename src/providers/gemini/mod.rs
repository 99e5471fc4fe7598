//! Google Gemini `generateContent` / `streamGenerateContent?alt=sse`.
//!
//! API reference: <https://ai.google.dev/api/generate-content>, function
//! calling: <https://ai.google.dev/gemini-api/docs/function-calling>, thought
//! signatures: <https://ai.google.dev/gemini-api/docs/thought-signatures>,
//! Vertex AI streamed function-call arguments:
//! <https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling#streaming>.
//!
//! Call ids: the wire `id` when the model sends one (Gemini 3); otherwise the
//! function name, and `name#2`, `name#3`, ... when the same name is called
//! again in the turn, so parallel calls of one tool stay distinguishable. On
//! replay `functionResponse.id` is sent only for wire ids, and `name` is
//! recovered from the call in the history.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::accumulate::Delta;
use crate::json::read::{Reader, Seen};
use crate::json::write::quoted;
use crate::model::provider_data::provider_data;
use crate::providers::FrameFailure;

use crate::model::{FinishReason, ProviderData, Usage};

pub mod error;
pub mod request;
pub mod response;
pub mod stream;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The API version path segment.
pub const API_VERSION: &str = "v1beta";
/// The documented placeholder signature, sent for a replayed function call
/// whose real `thoughtSignature` was lost (a history from another provider).
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";
/// The adapter name, the key of its provider data and provider parts.
pub(crate) const NAME: &str = "gemini";

/// Maps `finishReason` to the neutral reason.
pub fn map_finish_reason(raw: &str) -> FinishReason {
    match raw {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "LANGUAGE"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            FinishReason::Error
        }
        _ => FinishReason::Other,
    }
}

/// Reads `usageMetadata`.
pub(crate) fn map_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    Usage {
        input: n("promptTokenCount"),
        output: n("candidatesTokenCount"),
        cache_read: n("cachedContentTokenCount"),
        cache_write: None,
        reasoning: n("thoughtsTokenCount"),
        raw: Some(u.clone()),
    }
}

/// Whether a call id was made up by skyl (the name, or `name#N`) rather than
/// sent by the model.
pub(crate) fn is_synthetic_id(id: &str, name: &str) -> bool {
    id == name
        || id
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('#'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A frame of text and whole calls, read in place; see [`Turn::quick`]:
/// one candidate, no finish reason, prompt feedback or error.
struct QuickFrame<'a> {
    parts: Vec<QuickPart<'a>>,
    usage_metadata: Option<&'a str>,
    model_version: Option<Cow<'a, str>>,
    response_id: Option<Cow<'a, str>>,
}

/// Text (or thought text) without a signature, or a whole call.
#[derive(Default)]
struct QuickPart<'a> {
    text: Option<Cow<'a, str>>,
    thought: Option<bool>,
    function_call: Option<QuickCall<'a>>,
    thought_signature: Option<Cow<'a, str>>,
}

/// A call given whole: a name and `args` (kept as text, canonical), nothing
/// streamed.
struct QuickCall<'a> {
    name: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    args: Option<&'a str>,
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

impl<'a> QuickFrame<'a> {
    /// `None` (the general path) for any other frame, or a field given
    /// twice (the general path decides what that means).
    fn read(data: &'a str) -> Option<Self> {
        let mut r = Reader::new(data);
        let mut seen = Seen::default();
        let mut frame = QuickFrame {
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
                frame.usage_metadata = nullable(r, Reader::raw)?;
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

    fn candidate(r: &mut Reader<'a>, parts: &mut Vec<QuickPart<'a>>) -> Option<()> {
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

    fn part(r: &mut Reader<'a>) -> Option<QuickPart<'a>> {
        let mut part = QuickPart::default();
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

    fn call(r: &mut Reader<'a>) -> Option<QuickCall<'a>> {
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
                // Passed on as they came only if canonical (the text the
                // general path writes back): found and checked in one pass.
                args = nullable(r, Reader::canonical)?;
                Some(())
            }
            _ => None,
        })?;
        Some(QuickCall {
            name: name?,
            id,
            args,
        })
    }
}

impl QuickPart<'_> {
    /// Whether the general path would read this part as the fast path does.
    fn is_quick(&self) -> bool {
        match &self.function_call {
            // The arguments' text is passed on as it came only when it is
            // the text the general path writes back for them.
            Some(call) => {
                self.text.is_none()
                    && self.thought.is_none()
                    && !call.name.is_empty()
                    && call.args.map_or(true, |a| a.starts_with('{'))
            }
            None => self.text.is_some() && self.thought_signature.is_none(),
        }
    }
}

/// The deepest `partialArgs` path accepted; deeper ones abort the call.
const MAX_PATH_DEPTH: usize = 64;

/// A call whose arguments arrive as `partialArgs` pieces.
#[derive(Debug)]
struct StreamedCall {
    slot: usize,
    args: Value,
}

/// The state that spans the candidates of one turn: call ids and the call
/// being streamed. A non-streaming body uses a fresh one.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    names: Vec<(String, u32)>,
    next_slot: usize,
    streamed: Option<StreamedCall>,
    /// The last response id, model and usage passed on (Gemini repeats
    /// them in every frame): only changes become deltas.
    meta: (Option<String>, Option<String>),
    usage: Option<Value>,
    /// The text `usage` was last read from by the fast path (`None` when
    /// the general path set it).
    usage_text: Option<String>,
}

impl Turn {
    /// The id for a call: the wire id, else a unique id derived from the name.
    fn call_id(&mut self, wire: Option<&str>, name: &str) -> String {
        if let Some(id) = wire.filter(|s| !s.is_empty()) {
            return id.to_string();
        }
        match self.names.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => {
                *count += 1;
                format!("{name}#{count}")
            }
            None => {
                self.names.push((name.to_string(), 1));
                name.to_string()
            }
        }
    }

    /// The deltas of one `GenerateContentResponse` (a whole body or one
    /// stream frame).
    pub(crate) fn response(
        &mut self,
        mut body: Value,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        if body.get("error").is_some_and(|e| !e.is_null()) {
            return Err(match error::decode(&body) {
                Some(api) => FrameFailure::Api(Box::new(api)),
                None => FrameFailure::Malformed("an error without details".into()),
            });
        }
        self.meta(
            body.get("responseId").and_then(Value::as_str),
            body.get("modelVersion").and_then(Value::as_str),
            out,
        );
        let candidate = body
            .get_mut("candidates")
            .and_then(Value::as_array_mut)
            .and_then(|c| (!c.is_empty()).then(|| c.swap_remove(0)));
        let Some(mut candidate) = candidate else {
            if let Some(reason) = crate::json::nested(&body, &["promptFeedback", "blockReason"])
                .and_then(Value::as_str)
            {
                let message = crate::json::nested(&body, &["promptFeedback", "blockReasonMessage"])
                    .and_then(Value::as_str)
                    .map_or_else(
                        || format!("the prompt was blocked ({reason})"),
                        str::to_string,
                    );
                return Err(FrameFailure::ContentFilter {
                    reason: reason.to_string(),
                    message,
                });
            }
            self.usage(body.get("usageMetadata"), out);
            return Ok(());
        };
        if let Some(Value::Array(parts)) = candidate
            .get_mut("content")
            .and_then(|c| c.get_mut("parts"))
            .map(Value::take)
        {
            for part in parts {
                self.part(part, out);
            }
        }
        self.usage(body.get("usageMetadata"), out);
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            out.push(Delta::Finish {
                reason: map_finish_reason(reason),
                raw: reason.to_string(),
            });
            out.push(Delta::Terminal);
        }
        Ok(())
    }

    /// Passes on `usageMetadata` when it changes.
    fn usage(&mut self, usage_metadata: Option<&Value>, out: &mut Vec<Delta>) {
        self.usage_text = None;
        if let Some(u) = usage_metadata.filter(|u| u.is_object()) {
            if self.usage.as_ref() != Some(u) {
                out.push(Delta::Usage(map_usage(u)));
                self.usage = Some(u.clone());
            }
        }
    }

    /// Passes on the response id and model when they change.
    fn meta(&mut self, id: Option<&str>, model: Option<&str>, out: &mut Vec<Delta>) {
        let same =
            |have: &Option<String>, new: Option<&str>| new.is_none() || have.as_deref() == new;
        if same(&self.meta.0, id) && same(&self.meta.1, model) {
            return;
        }
        if let Some(id) = id {
            self.meta.0 = Some(id.to_string());
        }
        if let Some(model) = model {
            self.meta.1 = Some(model.to_string());
        }
        out.push(Delta::Meta {
            id: id.map(str::to_string),
            model: model.map(str::to_string),
        });
    }

    /// The fast path for the most common frames: one candidate whose parts
    /// are plain text, thought text or whole calls, nothing else (no text
    /// signature, streamed call, finish, feedback or error). False, with
    /// nothing done, otherwise.
    pub(crate) fn quick(&mut self, data: &str, out: &mut Vec<Delta>) -> bool {
        let Some(frame) = QuickFrame::read(data) else {
            return false;
        };
        if !frame.parts.iter().all(QuickPart::is_quick)
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
                end_call(slot, call.args.unwrap_or("{}").to_string(), out);
            } else if let Some(text) = &part.text {
                out.push(text_delta(part.thought == Some(true), text.to_string()));
            }
        }
        // Repeated in every frame: parsed only when its text changes.
        if let Some(text) = frame.usage_metadata {
            if self.usage_text.as_deref() != Some(text) {
                if let Ok(u) = crate::json::read::parse(text) {
                    self.usage(Some(&u), out);
                }
                self.usage_text = Some(text.to_string());
            }
        }
        true
    }

    fn part(&mut self, part: Value, out: &mut Vec<Delta>) {
        let Value::Object(mut part) = part else {
            return;
        };
        let signature = match part.remove("thoughtSignature") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        if let Some(Value::Object(call)) = part.remove("functionCall") {
            return self.function_call(call, signature.map(signature_data), out);
        }
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(Value::String(text)) = part.remove("text") {
            out.push(text_delta(thought, text));
            if let Some(sig) = signature {
                out.push(Delta::PartData {
                    reasoning: thought,
                    data: signature_data(sig),
                });
            }
            return;
        }
        // inlineData, executableCode, codeExecutionResult, ...: kept whole.
        if let Some(sig) = signature {
            part.insert("thoughtSignature".into(), Value::String(sig));
        }
        if !part.is_empty() {
            out.push(Delta::Opaque {
                provider: NAME,
                data: Value::Object(part),
            });
        }
    }

    fn function_call(
        &mut self,
        mut call: Map<String, Value>,
        data: Option<ProviderData>,
        out: &mut Vec<Delta>,
    ) {
        let will_continue = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        let name = match call.remove("name") {
            Some(Value::String(n)) if !n.is_empty() => Some(n),
            _ => None,
        };
        if let Some(name) = name {
            let slot = self.start_call(call.get("id").and_then(Value::as_str), name, data, out);
            let mut args = match call.remove("args") {
                Some(a @ Value::Object(_)) => a,
                _ => Value::Object(Map::new()),
            };
            let mut ok = true;
            if let Some(Value::Array(pieces)) = call.remove("partialArgs") {
                ok = apply_pieces(&mut args, pieces, slot, out);
            }
            if !ok {
                return;
            }
            if will_continue {
                self.streamed = Some(StreamedCall { slot, args });
            } else {
                end_call(slot, crate::json::json_text(&args), out);
            }
            return;
        }
        // A piece of the streamed call (or its empty `{}` terminator).
        let Some(mut open) = self.streamed.take() else {
            return;
        };
        if let Some(d) = data {
            out.push(Delta::ToolStart {
                slot: open.slot,
                id: None,
                name: None,
                data: Some(d),
            });
        }
        if let Some(Value::Array(pieces)) = call.remove("partialArgs") {
            if !apply_pieces(&mut open.args, pieces, open.slot, out) {
                return;
            }
        }
        if will_continue {
            self.streamed = Some(open);
        } else {
            end_call(open.slot, crate::json::json_text(&open.args), out);
        }
    }

    /// Starts a call (aborting one still being streamed): its slot.
    fn start_call(
        &mut self,
        wire_id: Option<&str>,
        name: String,
        data: Option<ProviderData>,
        out: &mut Vec<Delta>,
    ) -> usize {
        if let Some(open) = self.streamed.take() {
            out.push(Delta::ToolAbort {
                slot: open.slot,
                reason: "a new call started before this one was closed".into(),
            });
        }
        let id = self.call_id(wire_id, &name);
        let slot = self.next_slot;
        self.next_slot += 1;
        out.push(Delta::ToolStart {
            slot,
            id: Some(id),
            name: Some(name),
            data,
        });
        slot
    }
}

/// Ends the call in `slot` with its whole arguments (JSON text written from
/// an object, or checked canonical).
fn end_call(slot: usize, arguments: String, out: &mut Vec<Delta>) {
    out.push(Delta::ToolArgsWhole { slot, arguments });
    out.push(Delta::ToolEnd { slot });
}

/// A part's `thoughtSignature`, kept to replay it.
fn signature_data(sig: String) -> ProviderData {
    provider_data(NAME, "thoughtSignature", Value::String(sig))
}

/// Text, or reasoning when the part is a thought.
fn text_delta(thought: bool, text: String) -> Delta {
    if thought {
        Delta::Reasoning(text)
    } else {
        Delta::Text(text)
    }
}

/// Applies `partialArgs` pieces; on a bad piece, aborts the call and returns
/// false.
fn apply_pieces(args: &mut Value, pieces: Vec<Value>, slot: usize, out: &mut Vec<Delta>) -> bool {
    for piece in pieces {
        if let Err(reason) = apply_piece(args, &piece) {
            out.push(Delta::ToolAbort { slot, reason });
            return false;
        }
    }
    true
}

/// One `partialArgs` piece: `{jsonPath, stringValue | numberValue |
/// boolValue | nullValue, willContinue?}`. A string value is appended to a
/// string already at the path (strings arrive in pieces).
fn apply_piece(args: &mut Value, piece: &Value) -> Result<(), String> {
    let path = piece
        .get("jsonPath")
        .and_then(Value::as_str)
        .ok_or("a partialArgs piece without jsonPath")?;
    let steps = parse_path(path)?;
    let slot = locate(args, &steps).map_err(|e| format!("jsonPath {}: {e}", quoted(path)))?;
    if let Some(s) = piece.get("stringValue").and_then(Value::as_str) {
        match slot {
            Value::String(existing) => existing.push_str(s),
            other => *other = Value::String(s.to_string()),
        }
    } else if let Some(n) = piece.get("numberValue") {
        *slot = number(n)
            .ok_or_else(|| format!("jsonPath {}: numberValue is not a number", quoted(path)))?;
    } else if let Some(b) = piece.get("boolValue").and_then(Value::as_bool) {
        *slot = Value::Bool(b);
    } else if piece.get("nullValue").is_some() {
        *slot = Value::Null;
    } else if slot.is_null() {
        // A piece with no value (only willContinue): the path exists.
        *slot = Value::String(String::new());
    }
    Ok(())
}

/// A JSON number, as an integer when it is one.
fn number(n: &Value) -> Option<Value> {
    let f = n.as_f64()?;
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(Value::Number(Number::from(f as i64)))
    } else {
        Number::from_f64(f).map(Value::Number)
    }
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Parses `$.a.b[0]['c d']`.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let bad = || format!("unsupported jsonPath {}", quoted(path));
    let mut rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if steps.len() >= MAX_PATH_DEPTH {
            return Err(format!(
                "jsonPath {} is deeper than {MAX_PATH_DEPTH}",
                quoted(path)
            ));
        }
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let (key, tail) = r.split_at_checked(end).ok_or_else(bad)?;
            if key.is_empty() {
                return Err(bad());
            }
            steps.push(Step::Key(key.to_string()));
            rest = tail;
        } else if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or_else(bad)?;
            let (inner, tail) = r.split_at_checked(close).ok_or_else(bad)?;
            rest = tail.get(1..).unwrap_or_default();
            let key = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            match key {
                Some(key) => steps.push(Step::Key(key.to_string())),
                None => steps.push(Step::Index(inner.parse().map_err(|_| bad())?)),
            }
        } else {
            return Err(bad());
        }
    }
    if steps.is_empty() {
        return Err(bad());
    }
    Ok(steps)
}

/// The value at `steps`, created (objects, arrays, null leaf) as needed. An
/// array index may be at most one past the end, so memory stays bounded by
/// the input.
fn locate<'a>(root: &'a mut Value, steps: &[Step]) -> Result<&'a mut Value, String> {
    let mut cur = root;
    for step in steps {
        cur = match step {
            Step::Key(k) => {
                if !cur.is_object() {
                    if !cur.is_null() {
                        return Err(format!(
                            "{} is inside a value that is not an object",
                            quoted(k)
                        ));
                    }
                    *cur = Value::Object(Map::new());
                }
                match cur {
                    Value::Object(m) => m.entry(k.clone()).or_insert(Value::Null),
                    _ => return Err("not an object".into()),
                }
            }
            Step::Index(i) => {
                if !cur.is_array() {
                    if !cur.is_null() {
                        return Err(format!("[{i}] is inside a value that is not an array"));
                    }
                    *cur = Value::Array(Vec::new());
                }
                match cur {
                    Value::Array(a) => {
                        if *i == a.len() {
                            a.push(Value::Null);
                        }
                        a.get_mut(*i)
                            .ok_or_else(|| format!("index {i} skips past the end of the array"))?
                    }
                    _ => return Err("not an array".into()),
                }
            }
        };
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn build(pieces: &[Value]) -> Result<Value, String> {
        let mut args = json!({});
        for p in pieces {
            apply_piece(&mut args, p)?;
        }
        Ok(args)
    }

    #[test]
    fn partial_args_build_nested_objects_and_arrays() {
        let args = build(&[
            json!({"jsonPath": "$.recipe.steps[0]", "stringValue": "Pre", "willContinue": true}),
            json!({"jsonPath": "$.recipe.steps[0]", "stringValue": "heat"}),
            json!({"jsonPath": "$.recipe.items[0].price", "numberValue": 0.5}),
            json!({"jsonPath": "$.recipe.items[0].n", "numberValue": 3}),
            json!({"jsonPath": "$.recipe['odd key']", "boolValue": true}),
        ])
        .unwrap();
        assert_eq!(
            args,
            json!({"recipe": {"steps": ["Preheat"], "items": [{"price": 0.5, "n": 3}], "odd key": true}})
        );
        assert!(
            args.to_string().contains("\"n\":3"),
            "integers stay integers"
        );
    }

    #[test]
    fn a_path_that_skips_array_slots_or_is_malformed_is_an_error() {
        assert!(build(&[json!({"jsonPath": "$.a[5]", "stringValue": "x"})]).is_err());
        assert!(build(&[json!({"jsonPath": "$.a[999999999999]", "stringValue": "x"})]).is_err());
        assert!(build(&[json!({"jsonPath": "a.b", "stringValue": "x"})]).is_err());
        assert!(build(&[json!({"jsonPath": "$", "stringValue": "x"})]).is_err());
        assert!(build(&[json!({"jsonPath": "$.a[0", "stringValue": "x"})]).is_err());
        let deep = format!("${}", ".a".repeat(MAX_PATH_DEPTH + 1));
        assert!(build(&[json!({"jsonPath": deep, "stringValue": "x"})]).is_err());
        assert!(build(&[
            json!({"jsonPath": "$.a", "stringValue": "x"}),
            json!({"jsonPath": "$.a.b", "stringValue": "y"})
        ])
        .is_err());
    }

    #[test]
    fn synthetic_ids_are_recognised() {
        assert!(is_synthetic_id("f", "f"));
        assert!(is_synthetic_id("f#2", "f"));
        assert!(!is_synthetic_id("f#", "f"));
        assert!(!is_synthetic_id("abc123", "f"));
    }

    #[test]
    fn repeated_names_get_unique_ids() {
        let mut t = Turn::default();
        assert_eq!(t.call_id(None, "f"), "f");
        assert_eq!(t.call_id(None, "f"), "f#2");
        assert_eq!(t.call_id(Some(""), "g"), "g");
        assert_eq!(t.call_id(Some("wire"), "f"), "wire");
        assert_eq!(t.call_id(None, "f"), "f#3");
    }
}
