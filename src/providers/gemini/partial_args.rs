//! Vertex AI's streamed function-call arguments: `partialArgs` pieces, each
//! a JSON path and a value, applied to the arguments being built.

use serde_json::{Map, Number, Value};

use crate::accumulate::Delta;
use crate::json::partial::{Edit, Step};
use crate::json::write::quoted;

/// The deepest `partialArgs` path accepted; deeper ones abort the call.
const MAX_PATH_DEPTH: usize = 64;

/// Applies `partialArgs` pieces, adding to `edits` what each changed (for
/// progress events); on a bad piece, aborts the call and returns false.
pub(super) fn apply_pieces(
    args: &mut Value,
    pieces: Vec<Value>,
    slot: usize,
    out: &mut Vec<Delta>,
    edits: &mut Vec<Edit>,
) -> bool {
    for piece in pieces {
        if let Err(reason) = apply_piece(args, &piece, edits) {
            out.push(Delta::ToolAbort { slot, reason });
            return false;
        }
    }
    true
}

/// One `partialArgs` piece: `{jsonPath, stringValue | numberValue |
/// boolValue | nullValue, willContinue?}`. A string value is appended to a
/// string already at the path (strings arrive in pieces).
fn apply_piece(args: &mut Value, piece: &Value, edits: &mut Vec<Edit>) -> Result<(), String> {
    let path = piece
        .get("jsonPath")
        .and_then(Value::as_str)
        .ok_or("a partialArgs piece without jsonPath")?;
    let steps = parse_path(path)?;
    let slot =
        locate(args, &steps, edits).map_err(|e| format!("jsonPath {}: {e}", quoted(path)))?;
    let value = if let Some(s) = piece.get("stringValue").and_then(Value::as_str) {
        if let Value::String(existing) = slot {
            existing.push_str(s);
            edits.push(Edit::Append(steps, s.to_string()));
            return Ok(());
        }
        Value::String(s.to_string())
    } else if let Some(n) = piece.get("numberValue") {
        number(n)
            .ok_or_else(|| format!("jsonPath {}: numberValue is not a number", quoted(path)))?
    } else if let Some(b) = piece.get("boolValue").and_then(Value::as_bool) {
        Value::Bool(b)
    } else if piece.get("nullValue").is_some() {
        Value::Null
    } else if slot.is_null() {
        // A piece with no value (only willContinue): the path exists.
        Value::String(String::new())
    } else {
        return Ok(());
    };
    *slot = value.clone();
    edits.push(Edit::Set(steps, value));
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

/// The value at `steps`, created (objects, arrays, null leaf) as needed;
/// each object or array made is added to `edits`. An array index may be at
/// most one past the end, so memory stays bounded by the input.
fn locate<'a>(
    root: &'a mut Value,
    steps: &[Step],
    edits: &mut Vec<Edit>,
) -> Result<&'a mut Value, String> {
    let mut cur = root;
    for (depth, step) in steps.iter().enumerate() {
        let made = |edits: &mut Vec<Edit>, empty: Value| {
            edits.push(Edit::Set(
                steps.get(..depth).unwrap_or_default().to_vec(),
                empty,
            ));
        };
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
                    made(edits, Value::Object(Map::new()));
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
                    made(edits, Value::Array(Vec::new()));
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
            apply_piece(&mut args, p, &mut Vec::new())?;
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
}
