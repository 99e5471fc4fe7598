//! The `providerOptions` merge: a caller's provider-specific JSON merged
//! into a request body this crate wrote, on text.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::write::Out;

/// `body` (an object this module wrote) with `from` deep-merged in: an
/// object in `from` merges key by key into an object at the same key, a
/// `tools` list adds to the tools already there (a provider's server or
/// built-in tools beside the request's functions), any other value
/// replaces the old one in its place, new keys go last.
/// Every value the merge does not reach is kept as its text, so nothing is
/// parsed again (serde_json's float parsing can land one step off a
/// 17-digit value) and no nesting limit applies. `None` if `body` is not an
/// object.
pub(crate) fn merged(body: &str, from: &Map<String, Value>) -> Option<String> {
    let mut members = members(body)?;
    for (k, v) in from {
        let at = members.iter().position(|(key, _)| key == k);
        let text = match (at.and_then(|i| members.get(i)), v) {
            (Some((_, old)), Value::Object(inner)) if old.starts_with('{') => merged(old, inner)?,
            (Some((_, old)), Value::Array(more)) if k == "tools" && old.starts_with('[') => {
                let added = crate::json::json_text(v);
                match (old.strip_suffix(']'), added.strip_prefix('[')) {
                    _ if more.is_empty() => old.to_string(),
                    // (`head` is "[" when the old list is empty.)
                    (Some(head), Some(tail)) if head != "[" => format!("{head},{tail}"),
                    _ => added,
                }
            }
            _ => crate::json::json_text(v),
        };
        match at.and_then(|i| members.get_mut(i)) {
            Some((_, old)) => *old = Cow::Owned(text),
            None => members.push((Cow::Owned(k.clone()), Cow::Owned(text))),
        }
    }
    let mut out = Out::default();
    let mut o = out.object();
    for (k, v) in &members {
        o.key(k).json(v);
    }
    drop(o);
    out.finish()
}

/// The members of a JSON object as written here (no whitespace): each key,
/// unescaped, and its value's text.
fn members(text: &str) -> Option<Vec<(Cow<'_, str>, Cow<'_, str>)>> {
    let b = text.as_bytes();
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 1;
    if b.get(at) == Some(&b'}') {
        return Some(out);
    }
    loop {
        let key_end = value_end(b, at);
        let key = super::read::Reader::new(text.get(at..key_end)?).string()?;
        if b.get(key_end) != Some(&b':') {
            return None;
        }
        let end = value_end(b, key_end + 1);
        out.push((key, Cow::Borrowed(text.get(key_end + 1..end)?)));
        match b.get(end) {
            Some(b',') => at = end + 1,
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

/// Where the value starting at `at` ends, in JSON text written here (so
/// valid, without whitespace): after its closing quote or bracket, or at
/// the `,`, `}` or `]` after a number or word. No recursion, so no depth
/// limit.
fn value_end(b: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    let mut in_string = false;
    while let Some(&c) = b.get(at) {
        if in_string {
            match c {
                b'\\' => at += 1,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return at + 1;
                    }
                }
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return at,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return at + 1;
                    }
                }
                b',' if depth == 0 => return at,
                _ => {}
            }
        }
        at += 1;
    }
    at
}

#[cfg(all(test, not(target_arch = "wasm32")))] // proptest is a native dev-dependency
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tree merge `merged` does on text.
    fn deep_merge(into: &mut Map<String, Value>, from: &Map<String, Value>) {
        for (k, v) in from {
            match (into.get_mut(k), v) {
                (Some(Value::Object(old)), Value::Object(new)) => deep_merge(old, new),
                _ => {
                    into.insert(k.clone(), v.clone());
                }
            }
        }
    }

    proptest! {
        /// Merging text gives the text of the merged trees.
        #[test]
        fn merging_text_is_merging_trees(
            body in prop::collection::vec(("[a-c\"]{0,2}", crate::json::canonical::tests::json_value()), 0..5),
            from in prop::collection::vec(("[a-c\"]{0,2}", crate::json::canonical::tests::json_value()), 0..5),
        ) {
            let mut tree: Map<String, Value> = body.into_iter().collect();
            let from: Map<String, Value> = from.into_iter().collect();
            let text = crate::json::json_text(&Value::Object(tree.clone()));
            let got = merged(&text, &from).unwrap();
            deep_merge(&mut tree, &from);
            prop_assert_eq!(got, serde_json::to_string(&Value::Object(tree)).unwrap());
        }
    }
}
