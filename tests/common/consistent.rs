//! The consistency rule of progress events' `partial` values, shared by the
//! unit tests of `json/partial.rs` and `tests/partial_events.rs`.

use serde_json::Value;

/// Whether `partial` is consistent with `whole`: the same kind of value;
/// each string a prefix of the final one; each key and element there
/// consistent with its final value; numbers, booleans and null equal.
pub fn consistent(partial: &Value, whole: &Value) -> bool {
    match (partial, whole) {
        (Value::String(p), Value::String(w)) => w.starts_with(p.as_str()),
        (Value::Object(p), Value::Object(w)) => p
            .iter()
            .all(|(k, v)| w.get(k).is_some_and(|wv| consistent(v, wv))),
        (Value::Array(p), Value::Array(w)) => {
            p.len() <= w.len() && p.iter().zip(w).all(|(p, w)| consistent(p, w))
        }
        (p, w) => p == w,
    }
}
