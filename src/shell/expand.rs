//! The Rust reading of the boundary format (`boundary.rs`): a result
//! expanded the way the JS half's `decoded()` does, for Rust consumers of
//! the JSON boundary and the tests that hold both halves to one contract.

use std::collections::VecDeque;

use serde_json::Value;

use super::boundary::APART;

/// What [`expand_result`] carries from one result of a decoder to the
/// next, as the JS shell does: the arguments of its `tool_call` events, and
/// the ids of its calls by progress index (from their `tool_call_start`).
#[derive(Debug, Default)]
pub struct Expansion {
    /// The arguments of the `tool_call` events so far, in order.
    pub sent: Vec<String>,
    /// Each started call's id, at its progress index.
    pub ids: Vec<Value>,
    /// The data of the `file` events so far, in order.
    pub files: Vec<String>,
    /// The strings kept apart from the result to expand (`-1` lengths), in
    /// order: a run's `take_apart`, put here before each result.
    pub apart: VecDeque<String>,
}

/// Expands a [`BoundaryStream`](super::BoundaryStream) result the way the JS shell does: the events
/// with their strings put back (see [`BoundaryStream::feed`](super::BoundaryStream::feed); `""` is a result
/// without events), progress events as objects whose `edits` hold their
/// text (their `partial` is left to the reader). `None` if the result is
/// malformed or leaves strings unused. For Rust consumers of the JSON
/// boundary, and the tests that hold both sides to one contract.
pub fn expand_result(result: &str, state: &mut Expansion) -> Option<Value> {
    if result.is_empty() {
        return Some(serde_json::json!({ "events": [] }));
    }
    let (strs, json) = result.rsplit_once('\0')?;
    let mut out: Value = serde_json::from_str(json).ok()?;
    let lens = out
        .get("lens")?
        .as_array()?
        .iter()
        .map(|n| match n.as_i64() {
            Some(-1) => Some(APART),
            _ => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        })
        .collect::<Option<Vec<usize>>>()?;
    let mut apart = std::mem::take(&mut state.apart);
    let units: Vec<u16> = strs.encode_utf16().collect();
    let (mut at, mut k) = (0usize, 0usize);
    let mut next = || -> Option<Value> {
        let n = *lens.get(k)?;
        if n == APART {
            k += 1;
            return apart.pop_front().map(Value::from);
        }
        let text = String::from_utf16(units.get(at..at.checked_add(n)?)?).ok()?;
        k += 1;
        at += n;
        Some(Value::from(text))
    };
    let Expansion {
        sent, ids, files, ..
    } = state;
    let flag = |k: &str| out.get(k) == Some(&Value::Bool(true));
    let (from_events, files_from_events) = (flag("argsFromEvents"), flag("filesFromEvents"));
    for ev in out.get_mut("events")?.as_array_mut()? {
        if let Some(kind) = ev.as_u64() {
            let kind = if kind == 0 { "text" } else { "reasoning" };
            let raw = next()?;
            *ev = serde_json::json!({ "type": kind, "text": next()?, "raw": raw });
            continue;
        }
        if let Some(a) = ev.as_array() {
            *ev = expand_progress(a, ids, &mut next)?;
            continue;
        }
        let ev = ev.as_object_mut()?;
        ev.insert("raw".into(), next()?);
        match ev.get("type").and_then(Value::as_str) {
            Some("tool_call") => {
                let arguments = next()?;
                sent.push(arguments.as_str()?.to_string());
                ev.get_mut("call")?
                    .as_object_mut()?
                    .insert("arguments".into(), arguments);
            }
            Some("file_partial") => {
                let file = ev.get_mut("file")?.as_object_mut()?;
                if file.contains_key("data") {
                    file.insert("data".into(), next()?);
                }
            }
            Some("file") => {
                let file = ev.get_mut("file")?.as_object_mut()?;
                if file.contains_key("data") {
                    let data = next()?;
                    files.push(data.as_str()?.to_string());
                    file.insert("data".into(), data);
                }
            }
            Some("tool_call_start") => {
                let index = usize::try_from(ev.get("index")?.as_u64()?).ok()?;
                if ids.len() <= index {
                    ids.resize(index + 1, Value::Null);
                }
                *ids.get_mut(index)? = ev.get("id")?.clone();
            }
            Some("finish") => {
                let parts = ev
                    .get_mut("response")?
                    .get_mut("message")?
                    .get_mut("parts")?
                    .as_array_mut()?;
                let (mut call, mut file) = (0, 0);
                for part in parts {
                    let part = part.as_object_mut()?;
                    match part.get("type").and_then(Value::as_str) {
                        Some("text" | "reasoning") => {
                            part.insert("text".into(), next()?);
                        }
                        Some("tool_call") => {
                            let arguments = if from_events {
                                Value::from(sent.get(call)?.clone())
                            } else {
                                next()?
                            };
                            call += 1;
                            part.insert("arguments".into(), arguments);
                        }
                        Some("file") if part.contains_key("data") => {
                            let data = if files_from_events {
                                Value::from(files.get(file)?.clone())
                            } else {
                                next()?
                            };
                            file += 1;
                            part.insert("data".into(), data);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (k == lens.len() && at == units.len()).then_some(out)
}

/// A progress event written as an array (`[2, index, edits]`, `[3,
/// edits]`; see [`write_edits`]) as the object JS makes of it, without its
/// `partial`: `edits` in their v5 form, `[op, path, value or text]`.
fn expand_progress(
    a: &[Value],
    ids: &[Value],
    next: &mut impl FnMut() -> Option<Value>,
) -> Option<Value> {
    let raw = next()?;
    let mut ev = serde_json::Map::new();
    let edits = match a {
        [kind, index, edits] if kind == 2 => {
            ev.insert("type".into(), "tool_call_delta".into());
            ev.insert(
                "id".into(),
                ids.get(usize::try_from(index.as_u64()?).ok()?)?.clone(),
            );
            ev.insert("index".into(), index.clone());
            ev.insert("argumentsDelta".into(), next()?);
            edits
        }
        [kind, edits] if kind == 3 => {
            ev.insert("type".into(), "output_delta".into());
            edits
        }
        _ => return None,
    };
    let mut list = Vec::new();
    for e in edits.as_array()? {
        list.push(match e.as_array()?.as_slice() {
            [op, path] if op == 1 => serde_json::json!([1, path, next()?]),
            [op, path, value] if op == 0 => serde_json::json!([0, path, value]),
            _ => return None,
        });
    }
    ev.insert("edits".into(), Value::Array(list));
    ev.insert("raw".into(), raw);
    Some(Value::Object(ev))
}
