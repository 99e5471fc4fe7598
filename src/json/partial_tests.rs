use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

#[path = "../../tests/common/consistent.rs"]
#[allow(unreachable_pub)]
mod check;
use check::consistent;

/// Reads `pieces` one by one, checking after each that the value is
/// consistent with the text's final value and that the edits given out
/// rebuild it; returns the reader.
fn read_all(pieces: &[&str]) -> PartialJson {
    let text: String = pieces.concat();
    let whole = crate::json::read::parse(&text).ok();
    let mut p = PartialJson::new();
    let mut by_edits = PartialJson::new();
    let mut rebuilt = None;
    for piece in pieces {
        let mut edits = Vec::new();
        let changed = by_edits.read(piece, Some(&mut edits));
        assert_eq!(changed, !edits.is_empty());
        assert_eq!(p.push(piece), changed);
        for e in edits {
            apply(&mut rebuilt, e);
        }
        assert_eq!(rebuilt.as_ref(), p.value(), "edits rebuild the value");
        if let (Some(whole), Some(v)) = (&whole, p.value()) {
            assert!(consistent(v, whole), "{v} after {piece:?} vs {whole}");
        }
    }
    p
}

fn chars(text: &str) -> Vec<&str> {
    text.char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect()
}

#[test]
fn a_file_write_shows_its_path_before_its_content() {
    let mut p = PartialJson::new();
    assert!(!p.push(" "));
    assert_eq!(p.value(), None);
    p.push(r#"{"path": "/tmp/a."#);
    assert_eq!(p.value(), Some(&json!({"path": "/tmp/a."})));
    p.push(r#"txt", "content": "hel"#);
    assert_eq!(
        p.value(),
        Some(&json!({"path": "/tmp/a.txt", "content": "hel"}))
    );
    p.push(r#"lo"}"#);
    assert_eq!(
        p.value(),
        Some(&json!({"path": "/tmp/a.txt", "content": "hello"}))
    );
    assert!(!p.failed());
}

#[test]
fn unfinished_numbers_literals_and_keys_are_left_out() {
    let cases: [(&str, Value); 9] = [
        (r#"{"a":12"#, json!({})),
        (r#"{"a":12,"#, json!({"a": 12})),
        (r#"{"a":1,"b"#, json!({"a": 1})),
        (r#"{"a":1,"b":"#, json!({"a": 1})),
        (r#"{"a":tr"#, json!({})),
        (r#"{"a":true"#, json!({"a": true})),
        ("[1,2,[3", json!([1, 2, []])),
        ("[1,2,[3]", json!([1, 2, [3]])),
        (
            r#"{"a":[{"b":null,"c":-0.5e3}"#,
            json!({"a": [{"b": null, "c": -500.0}]}),
        ),
    ];
    for (text, want) in cases {
        let p = read_all(&chars(text));
        assert_eq!(p.value(), Some(&want), "{text}");
        assert!(!p.failed(), "{text}");
    }
}

#[test]
fn escapes_are_added_once_whole_in_any_split() {
    let text = r#"{"k\u00e9y":"a\"b\\c\n\u00e9\ud83d\ude00z/\/"}"#;
    let whole = crate::json::read::parse(text).unwrap();
    for cut in 1..text.len() {
        let p = read_all(&[&text[..cut], &text[cut..]]);
        assert_eq!(p.value(), Some(&whole), "cut at {cut}");
    }
    let p = read_all(&chars(text));
    assert_eq!(p.value(), Some(&whole));
    // Mid-escape, the text before it is there and the escape is not.
    let mut p = PartialJson::new();
    p.push(r#"{"s":"ab\u00"#);
    assert_eq!(p.value(), Some(&json!({"s": "ab"})));
    p.push(r#"e9\ud83d"#);
    assert_eq!(p.value(), Some(&json!({"s": "abé"})));
}

#[test]
fn text_that_is_not_json_stops_the_reading_and_keeps_the_value() {
    for (text, kept) in [
        (r#"{"a":"x"}}"#, json!({"a": "x"})),
        (r#"{"a":"x",]"#, json!({"a": "x"})),
        (r#"{"a":tru "#, json!({})),
        (r#"{"a":01"#, json!({})),
        (r#"{"a":"x	"#, json!({"a": "x"})),
        (r#"{"a":"\ud800x"#, json!({"a": ""})),
        (r#"{"a":"\q"#, json!({"a": ""})),
        (r#"{"a" 1"#, json!({})),
        ("[1 2]", json!([1])),
    ] {
        let mut p = PartialJson::new();
        for piece in chars(text) {
            p.push(piece);
        }
        p.push(r#"","more":1}"#);
        assert!(p.failed(), "{text}");
        assert_eq!(p.value(), Some(&kept), "{text}");
    }
}

#[test]
fn nesting_deeper_than_the_limit_stops_without_overflowing() {
    let mut p = PartialJson::new();
    p.push(&"[".repeat(100_000));
    assert!(p.failed());
    let mut depth = 0;
    let mut v = p.value().unwrap();
    while let Some(inner) = v.as_array().and_then(|a| a.first()) {
        depth += 1;
        v = inner;
    }
    assert_eq!(depth, MAX_DEPTH - 1);
}

#[test]
fn scalars_at_the_root() {
    assert_eq!(read_all(&["\"ab", "c\""]).value(), Some(&json!("abc")));
    // A number at the root has no end until the text does.
    assert_eq!(read_all(&["12"]).value(), None);
    assert_eq!(read_all(&["12 "]).value(), Some(&json!(12)));
    assert_eq!(read_all(&["nul", "l"]).value(), Some(&json!(null)));
}

/// JSON values of every kind, nested a few levels.
fn values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_in_any_pieces_is_read_consistently(
        v in values(),
        pretty in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        let mut at: Vec<usize> = cuts
            .iter()
            .map(|i| i.index(text.len() + 1))
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        at.push(0);
        at.push(text.len());
        at.sort_unstable();
        at.dedup();
        let pieces: Vec<&str> = at.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        let mut p = read_all(&pieces);
        // Scalars at the root end with the text: a space ends a number.
        p.push(" ");
        prop_assert!(!p.failed());
        // (As the reader reads it: serde_json's float parsing, which it
        // follows, may differ in the last digit from `v`.)
        let whole = crate::json::read::parse(&text).unwrap();
        prop_assert_eq!(p.value(), Some(&whole));
    }

    #[test]
    fn any_text_in_any_pieces_never_panics(
        text in "[\\[\\]{}\",:0-9a-z\\\\ .eE+-]{0,64}",
        cut in any::<prop::sample::Index>(),
    ) {
        let cut = cut.index(text.len() + 1);
        read_all(&[&text[..cut], &text[cut..]]);
    }
}
