//! JSON text: the hand reader, the writer and the canonical-text check.
//!
//! The bottom layer: it knows nothing of the model or the providers.

use serde_json::{Map, Value};

#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) mod canonical;
pub(crate) mod grammar;
pub(crate) mod merge;
pub(crate) mod partial;
pub(crate) mod read;
pub(crate) mod write;

/// The value under `keys`, one object key after another (what
/// `Value::pointer` finds for `/a/b`, without the JSON Pointer escapes, whose
/// string handling the wasm would link for these few lookups).
pub(crate) fn nested<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(v, |v, k| v.get(k))
}

/// Takes a string field out of an object (`None` if absent or not a string).
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn take_str(obj: &mut Map<String, Value>, key: &str) -> Option<String> {
    match obj.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// `v` as compact JSON text, byte for byte what `serde_json::to_string`
/// gives, by the hand writer (serde's serializer stays out of the wasm).
pub(crate) fn json_text(v: &Value) -> String {
    let mut out = write::Out::default();
    out.value(v);
    out.finish().unwrap_or_default()
}

/// A string field, or a number shown as a string (error codes are either).
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) fn string_or_number(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
