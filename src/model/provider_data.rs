//! Provider data: what a part carries for its provider to get back on
//! replay (`{"anthropic": {"signature": ...}}`), built and merged here.

use serde_json::Value;

use super::ProviderData;

/// Merges provider data objects key by key (one level per adapter); lists
/// under the same key accumulate (Anthropic's citations come one per delta).
pub(crate) fn merge_data(into: &mut Option<ProviderData>, data: ProviderData) {
    let target = into.get_or_insert_with(ProviderData::new);
    for (k, v) in data {
        match (target.get_mut(&k), v) {
            (Some(Value::Object(old)), Value::Object(new)) => {
                for (key, value) in new {
                    match (old.get_mut(&key), value) {
                        (Some(Value::Array(items)), Value::Array(more)) => items.extend(more),
                        (_, value) => {
                            old.insert(key, value);
                        }
                    }
                }
            }
            (_, v) => {
                target.insert(k, v);
            }
        }
    }
}

/// Builds a one-key provider data object: `{adapter: {key: value}}`.
pub(crate) fn provider_data(adapter: &str, key: &str, value: Value) -> ProviderData {
    let mut inner = serde_json::Map::new();
    inner.insert(key.to_string(), value);
    let mut outer = ProviderData::new();
    outer.insert(adapter.to_string(), Value::Object(inner));
    outer
}
