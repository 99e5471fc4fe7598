//! Whether JSON text is exactly what serde_json writes for the value it
//! denotes, decided by one scan without building the value.
//!
//! Fast paths use it to pass a value's text on as it came (Gemini's whole
//! `functionCall.args`) where the general path parses the value and writes
//! it back: when the text is canonical both give the same bytes. The answer
//! is conservative: `false` sends the text down the general path, so a few
//! canonical texts (deep nesting, long integers, objects with many keys,
//! `\u` escapes) are answered `false`; a non-canonical one never `true`.
//!
//! Text that is canonical but for whitespace between its tokens (Google's
//! printer writes `"key": value`) is made canonical by dropping that
//! whitespace ([`compact_prefix`]); and whether two canonical texts denote
//! different values is mostly told from where they first differ
//! ([`values_differ`]).

use std::borrow::Cow;

use super::grammar::{is_ws, number, plain_run};

/// Deeper nesting is left to the general path (serde_json stops at 128).
const MAX_DEPTH: usize = 64;
/// Objects with more keys are left to the general path (the duplicate-key
/// check is quadratic).
const MAX_KEYS: usize = 32;

/// True only if `serde_json::to_string(&serde_json::from_str::<Value>(text)?)`
/// would be `text` (with `preserve_order`), byte for byte.
#[cfg(test)]
pub(crate) fn is_canonical(text: &str) -> bool {
    canonical_prefix(text) == Some(text.len())
}

/// The length of the canonical JSON value at the start of `text`, if there
/// is one: one pass that finds a value's end and checks it (`None` when the
/// value is not canonical, or not JSON).
#[cfg(test)]
pub(crate) fn canonical_prefix(text: &str) -> Option<usize> {
    let mut scan = Scan::new(text, false);
    scan.value().then_some(scan.at)
}

/// The JSON value at the start of `text` as canonical text, if it is
/// canonical once the whitespace between its tokens is dropped: that text
/// (borrowed when there was none), and the length of the value in `text`.
pub(crate) fn compact_prefix(text: &str) -> Option<(Cow<'_, str>, usize)> {
    let mut scan = Scan::new(text, true);
    if !scan.value() {
        return None;
    }
    let value = text.get(..scan.at)?;
    let compact = if scan.spaced {
        Cow::Owned(without_whitespace(value)?)
    } else {
        Cow::Borrowed(value)
    };
    Some((compact, scan.at))
}

/// `text` (scanned: its strings are whole) without the whitespace
/// outside its strings, copied a run at a time.
fn without_whitespace(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < b.len() {
        // A run of anything but whitespace, strings whole.
        let start = at;
        while let Some(&c) = b.get(at) {
            if is_ws(c) {
                break;
            }
            at += 1;
            if c == b'"' {
                loop {
                    at += plain_run(b.get(at..)?);
                    match b.get(at)? {
                        b'"' => break,
                        _ => at += 2, // an escape (checked by the scan)
                    }
                }
                at += 1;
            }
        }
        out.push_str(text.get(start..at)?);
        while b.get(at).copied().is_some_and(is_ws) {
            at += 1;
        }
    }
    Some(out)
}

/// Whether two canonical, compact texts (as [`compact_prefix`] gives)
/// denote different values; `None` when their first difference does not
/// tell: it is inside an object key (the same members in another order
/// are the same object), or in a float (`-0.0` equals `0.0`). Otherwise
/// it is at the same place in the same structure of both, and each
/// object's keys are unique and every scalar has one spelling: there the
/// values differ (a scalar, a type, or the length of an array or object).
pub(crate) fn values_differ(a: &str, b: &str) -> Option<bool> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if at == a.len() && at == b.len() {
        return Some(false);
    }
    // Where the common prefix leaves off: in a string, and which kind.
    let (mut in_string, mut escaped, mut key, mut expect_key) = (false, false, false, false);
    // Whether each open container is an object, innermost last.
    let mut objects: Vec<bool> = Vec::new();
    for &c in a.get(..at)? {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b'"' => (in_string, key, expect_key) = (true, expect_key, false),
            b'{' | b'[' => {
                objects.push(c == b'{');
                expect_key = c == b'{';
            }
            b'}' | b']' => {
                objects.pop();
            }
            b',' => expect_key = objects.last() == Some(&true),
            _ => expect_key = false,
        }
    }
    if in_string {
        return if key { None } else { Some(true) };
    }
    // A number the difference falls in (or starts): an integer has one
    // spelling per value, a float may not.
    let numeric = |c: &u8| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E');
    let float = |c: &u8| matches!(c, b'.' | b'e' | b'E');
    let before = a.get(..at)?.iter().rev().take_while(|c| numeric(c));
    let after = |t: &'_ [u8]| -> bool {
        t.get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| numeric(c))
            .any(float)
    };
    if before.clone().any(float) || after(a) || after(b) {
        return None;
    }
    Some(true)
}

struct Scan<'a> {
    b: &'a [u8],
    at: usize,
    depth: usize,
    /// The keys of the objects being read, innermost last.
    keys: Vec<&'a [u8]>,
    /// Whitespace between tokens is allowed (and then `spaced` says
    /// whether there was any).
    spaces: bool,
    spaced: bool,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str, spaces: bool) -> Self {
        Scan {
            b: text.as_bytes(),
            at: 0,
            depth: 0,
            keys: Vec::new(),
            spaces,
            spaced: false,
        }
    }

    /// Skips whitespace, where it is allowed.
    #[inline(always)]
    fn ws(&mut self) {
        // (No token starts with a byte at or below the space.)
        while self.spaces && self.peek().is_some_and(|c| c <= b' ' && is_ws(c)) {
            self.at += 1;
            self.spaced = true;
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    fn word(&mut self, w: &[u8]) -> bool {
        let hit = self.b.get(self.at..self.at + w.len()) == Some(w);
        if hit {
            self.at += w.len();
        }
        hit
    }

    fn value(&mut self) -> bool {
        self.ws();
        match self.peek() {
            Some(b'{') => self.nested(Self::object_body),
            Some(b'[') => self.nested(Self::array_body),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn nested(&mut self, body: fn(&mut Self) -> bool) -> bool {
        if self.depth >= MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        self.at += 1;
        let ok = body(self);
        self.depth -= 1;
        ok
    }

    /// After `{`: members without whitespace, keys unique, then `}`.
    fn object_body(&mut self) -> bool {
        self.ws();
        if self.eat(b'}') {
            return true;
        }
        let base = self.keys.len();
        let ok = self.members();
        self.keys.truncate(base);
        ok
    }

    fn members(&mut self) -> bool {
        let base = self.keys.len();
        loop {
            let Some(key) = self.string() else {
                return false;
            };
            // Escapes are limited to one spelling each (see `string`), so
            // equal keys are equal bytes. serde_json keeps one of two equal
            // keys: not the text's shape.
            let seen = self.keys.get(base..).unwrap_or_default();
            if seen.len() >= MAX_KEYS || seen.contains(&key) {
                return false;
            }
            self.ws();
            if !self.eat(b':') || !self.value() {
                return false;
            }
            // (Pushed once its value is read: a scan that fails on the
            // first value allocates nothing.)
            self.keys.push(key);
            self.ws();
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
            self.ws();
        }
    }

    /// After `[`: elements without whitespace, then `]`.
    fn array_body(&mut self) -> bool {
        self.ws();
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value() {
                return false;
            }
            self.ws();
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// A string whose escapes are the ones serde_json writes (`\"`, `\\`
    /// and the short control escapes; it writes `/` and non-ASCII as they
    /// are, so `\/` and `\u` are not canonical). Returns the content bytes.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        loop {
            self.at += plain_run(self.b.get(self.at..).unwrap_or_default());
            match self.peek()? {
                b'"' => {
                    let content = self.b.get(start..self.at);
                    self.at += 1;
                    return content;
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'n' | b't' | b'r' | b'b' | b'f' => self.at += 1,
                        _ => return None,
                    }
                }
                0x00..=0x1f => return None,
                _ => self.at += 1,
            }
        }
    }

    /// An integer serde_json keeps as one (at most 18 digits, no `-0`), or
    /// a float whose text is the one serde_json writes for its value.
    fn number(&mut self) -> bool {
        let rest = self.b.get(self.at..).unwrap_or_default();
        let Some((len, float)) = number(rest) else {
            return false;
        };
        let Some(text) = rest.get(..len) else {
            return false;
        };
        self.at += len;
        if !float {
            let digits = len - usize::from(text.first() == Some(&b'-'));
            return digits <= 18 && text != b"-0";
        }
        // Parsed by serde_json's own number parser, so both agree with the
        // general path (its float parsing is not always Rust's `parse`).
        let parsed = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<serde_json::Number>().ok())
            .and_then(|n| n.as_f64());
        // Written back as serde_json writes a finite float (with zmij).
        match parsed {
            Some(x) if x.is_finite() => zmij::Buffer::new().format_finite(x).as_bytes() == text,
            _ => false,
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))] // proptest is a native dev-dependency
pub(crate) mod tests {
    use super::is_canonical;
    use proptest::prelude::*;
    use serde_json::Value;

    /// What the general path writes for `text`, if it parses.
    fn rewritten(text: &str) -> Option<String> {
        serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| serde_json::to_string(&v).unwrap())
    }

    #[test]
    fn canonical_texts_are_recognised() {
        for t in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"x\"y\\z\n"},"e":-12.5,"f":0.001,"g":1e-7,"h":1.0}"#,
            r#"{"query":"lookup 6","limit":16,"rows":[{"value":5326.1,"tags":["a"]}]}"#,
            "{}",
            "[]",
            r#""é 🌍 /""#,
            "123456789012345678",
            "-5",
        ] {
            assert_eq!(rewritten(t).as_deref(), Some(t), "{t} round trips");
            assert!(is_canonical(t), "{t}");
        }
    }

    #[test]
    fn other_spellings_of_a_value_are_not() {
        for t in [
            r#"{"a": 1}"#,
            "{ }",
            r#"{"a":1,"a":2}"#,
            r#""\u00e9""#,
            r#""\/""#,
            "1.50",
            "1e2",
            "1E-7",
            "-0",
            "12345678901234567890",
            "01",
            "1.",
            "[1,]",
            "{\"a\":1}x",
            "tru",
            "\"open",
            "\"\u{1}\"",
            "",
        ] {
            assert!(!is_canonical(t), "{t}");
        }
    }

    #[test]
    fn a_prefix_is_measured_up_to_the_end_of_its_value() {
        use super::canonical_prefix;
        assert_eq!(canonical_prefix(r#"{"a":[1,"}"]},"next":2}"#), Some(13));
        assert_eq!(canonical_prefix("12]"), Some(2));
        assert_eq!(canonical_prefix(r#"{"a": 1},"#), None);
        assert_eq!(canonical_prefix(r#"{"a":1.50}"#), None);
    }

    #[test]
    fn whitespace_between_tokens_is_dropped() {
        use super::compact_prefix;
        let spaced = "{\"a\": 1,\"b\": [1, 2,\n true],\"c\": {\"d\": \"x y\\\" \"} },";
        let (compact, len) = compact_prefix(spaced).unwrap();
        assert_eq!(compact, r#"{"a":1,"b":[1,2,true],"c":{"d":"x y\" "}}"#);
        assert_eq!(len, spaced.len() - 1);
        let (same, _) = compact_prefix(r#"{"a":1}"#).unwrap();
        assert!(matches!(same, std::borrow::Cow::Borrowed(_)));
        for t in [
            r#"{"a": 1.50}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": "\u0041"}"#,
            "[1 2]",
            "{\"a\" 1}",
        ] {
            assert_eq!(compact_prefix(t), None, "{t}");
        }
    }

    #[test]
    fn where_two_texts_differ_tells_whether_their_values_do() {
        use super::values_differ;
        for (a, b, differ) in [
            (r#"{"a":1,"b":[2]}"#, r#"{"a":1,"b":[2]}"#, Some(false)),
            (r#"{"a":1,"b":2}"#, r#"{"a":1,"b":3}"#, Some(true)),
            (r#"{"a":1}"#, r#"{"a":12}"#, Some(true)),
            (r#"{"a":-1}"#, r#"{"a":1}"#, Some(true)),
            (r#"{"a":1}"#, r#"{"a":1,"b":2}"#, Some(true)),
            ("{}", r#"{"a":1}"#, Some(true)),
            ("[1]", "[1,2]", Some(true)),
            (r#"{"a":"x"}"#, r#"{"a":"y"}"#, Some(true)),
            (r#"{"a":"x\"y"}"#, r#"{"a":"x\"z"}"#, Some(true)),
            (r#"{"a":null}"#, r#"{"a":{}}"#, Some(true)),
            (r#"{"a":true}"#, r#"{"a":false}"#, Some(true)),
            (
                r#"{"a":[{"b":1}],"c":2}"#,
                r#"{"a":[{"b":1}],"c":3}"#,
                Some(true),
            ),
            // A key: the same members may come in another order.
            (r#"{"a":1}"#, r#"{"b":1}"#, None),
            (r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, None),
            (r#"{"a":"\"","b":1}"#, r#"{"a":"\"","c":1}"#, None),
            (r#"{"a":{"x":1}}"#, r#"{"a":{"y":1}}"#, None),
            // A float: -0.0 equals 0.0.
            (r#"{"a":0.0}"#, r#"{"a":-0.0}"#, None),
            (r#"{"a":1.5}"#, r#"{"a":2.5}"#, None),
            (r#"{"a":1}"#, r#"{"a":1.5}"#, None),
        ] {
            assert_eq!(values_differ(a, b), differ, "{a} {b}");
            assert_eq!(values_differ(b, a), differ, "{b} {a}");
        }
    }

    #[test]
    fn deep_or_wide_values_are_left_to_the_general_path() {
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        assert!(!is_canonical(&deep));
        let wide: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        assert!(!is_canonical(&format!("{{{}}}", wide.join(","))));
    }

    /// Any JSON value (also used by the writer's tests).
    pub(crate) fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z\"\\\\/\n\t\u{1}é🌍]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::vec(("[a-c\"]{0,3}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Small objects from few keys and values, so that two of them are
    /// often alike: usage objects from one frame to the next.
    fn near_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(serde_json::json!(0)),
            Just(serde_json::json!(1)),
            Just(serde_json::json!(12)),
            Just(serde_json::json!(-1)),
            Just(serde_json::json!(1.5)),
            Just(serde_json::json!(0.0)),
            Just(serde_json::json!(-0.0)),
            Just(serde_json::json!("x")),
            Just(serde_json::json!("x\"")),
            Just(serde_json::json!(null)),
            Just(serde_json::json!(true)),
        ];
        let inner = leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::vec(("[ab]", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        });
        prop::collection::vec(("[abc]", inner), 0..4)
            .prop_map(|kv| Value::Object(kv.into_iter().collect()))
    }

    proptest! {
        /// `true` is only ever said of text the general path leaves as it is.
        #[test]
        fn canonical_means_unchanged_by_a_round_trip(v in json_value(), ws in 0usize..4, at in any::<prop::sample::Index>()) {
            let mut text = serde_json::to_string(&v).unwrap();
            if ws > 0 {
                // Add whitespace (or mutate) somewhere: rarely canonical.
                let i = at.index(text.len() + 1);
                if text.is_char_boundary(i) {
                    text.insert_str(i, [" ", "\\u0041", "0"][ws - 1]);
                }
            }
            if is_canonical(&text) {
                prop_assert_eq!(rewritten(&text), Some(text));
            }
        }

        /// Pretty-printed text compacts to serde_json's compact text of
        /// the same value, whenever that is canonical.
        #[test]
        fn spaced_text_compacts_to_the_canonical_text(v in json_value()) {
            let text = serde_json::to_string(&v).unwrap();
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            let compact = super::compact_prefix(&pretty);
            if is_canonical(&text) {
                prop_assert_eq!(compact, Some((text.as_str().into(), pretty.len())));
            } else if let Some((compact, _)) = compact {
                prop_assert_eq!(rewritten(&compact), Some(compact.into_owned()));
            }
        }

        /// Whenever the texts tell, they tell what comparing the values
        /// (as `Usage` does, serde_json's `==`) says.
        #[test]
        fn values_differ_as_the_values_do(a in near_value(), b in near_value()) {
            let (ta, tb) = (serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
            if is_canonical(&ta) && is_canonical(&tb) {
                if let Some(differ) = super::values_differ(&ta, &tb) {
                    prop_assert_eq!(differ, a != b, "{} {}", ta, tb);
                }
            }
        }

        /// serde_json's own output, when a round trip leaves it alone, is
        /// recognised unless it needs a conservative `false` (long
        /// integers, `\u` escapes; depth and width are within bounds here).
        #[test]
        fn serde_output_is_mostly_canonical(v in json_value()) {
            let text = serde_json::to_string(&v).unwrap();
            let long_int = text.split(|c: char| !c.is_ascii_digit()).any(|d| d.len() > 18);
            let unchanged = rewritten(&text).as_ref() == Some(&text);
            if unchanged && !long_int && !text.contains("\\u") {
                prop_assert!(is_canonical(&text), "{}", text);
            }
        }
    }
}
