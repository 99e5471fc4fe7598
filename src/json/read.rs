//! A JSON reader that walks a frame's text in place, for the fast paths.
//!
//! It reads what a fast path needs (keys, strings, small integers) and
//! skips the rest, checking it as strictly as serde_json does: text it
//! accepts is text serde_json accepts. Where it is unsure (`\u` escapes in
//! keys, nesting deeper than [`MAX_DEPTH`]) it gives up with `None`, and
//! the frame takes the general path, so giving up is always safe.
//!
//! [`is_object`] is the exception: it checks a tool call's arguments by
//! JSON's grammar alone, as `JSON.parse` and serde's `IgnoredAny` do (any
//! `\u` escape, numbers of any size, any depth).

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::grammar::{is_ws, number, plain_run};

/// Deeper values are left to the general path (serde_json stops at 128).
const MAX_DEPTH: usize = 64;

/// serde_json refuses the 128th nested array or object.
const VALUE_MAX_DEPTH: usize = 127;

/// A position in one JSON text.
pub(crate) struct Reader<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
    max_depth: usize,
}

/// What [`Reader::members`] calls at each member: a closure, through a
/// trait of one method rather than `dyn FnMut`, whose vtable would also
/// hold a `call_once` shim for each caller's closure, never called.
trait Member<'a> {
    fn member(&mut self, r: &mut Reader<'a>, key: Cow<'a, str>) -> Option<()>;
}

impl<'a, F: FnMut(&mut Reader<'a>, Cow<'a, str>) -> Option<()>> Member<'a> for F {
    fn member(&mut self, r: &mut Reader<'a>, key: Cow<'a, str>) -> Option<()> {
        self(r, key)
    }
}

/// What [`Reader::items`] calls at each element, as [`Member`].
trait Item<'a> {
    fn item(&mut self, r: &mut Reader<'a>) -> Option<()>;
}

impl<'a, F: FnMut(&mut Reader<'a>) -> Option<()>> Item<'a> for F {
    fn item(&mut self, r: &mut Reader<'a>) -> Option<()> {
        self(r)
    }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Reader {
            text,
            at: 0,
            depth: 0,
            max_depth: MAX_DEPTH,
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    /// Skips whitespace. Inlined only as far as the first byte's check:
    /// providers write compact JSON, so the loop (out of line) rarely runs.
    #[inline(always)]
    fn ws(&mut self) {
        if self.peek().is_some_and(is_ws) {
            self.ws_run();
        }
    }

    #[inline(never)]
    fn ws_run(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
    }

    /// Whether only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.ws();
        self.at == self.text.len()
    }

    /// An object: `field` is called with each key, positioned at its value,
    /// and must read or skip that value. A key with escapes gives up (the
    /// general path compares keys unescaped).
    #[allow(dead_code)] // (the fast paths' reader: bedrock alone has none)
    pub(crate) fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.members(&mut |r: &mut Self, key: Cow<'a, str>| match key {
            Cow::Borrowed(key) => field(r, key),
            Cow::Owned(_) => None,
        })
    }

    /// As [`Self::object`], with every key (unescaped). One copy of the
    /// loop serves every caller (`dyn`): a copy per closure was most of the
    /// fast paths' code.
    fn members(&mut self, field: &mut dyn Member<'a>) -> Option<()> {
        self.ws();
        if !self.eat(b'{') {
            return None;
        }
        self.enter()?;
        self.ws();
        if !self.eat(b'}') {
            loop {
                self.ws();
                let key = self.string()?;
                self.ws();
                if !self.eat(b':') {
                    return None;
                }
                self.ws();
                field.member(self, key)?;
                self.ws();
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// An array: `item` is called at each element and must read or skip it.
    pub(crate) fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.items(&mut item)
    }

    /// As [`Self::array`], one copy for every caller.
    fn items(&mut self, item: &mut dyn Item<'a>) -> Option<()> {
        self.ws();
        if !self.eat(b'[') {
            return None;
        }
        self.enter()?;
        self.ws();
        if !self.eat(b']') {
            loop {
                self.ws();
                item.item(self)?;
                self.ws();
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= self.max_depth).then_some(())
    }

    /// `true` or `false`.
    pub(crate) fn boolean(&mut self) -> Option<bool> {
        self.ws();
        if self.word("true") {
            Some(true)
        } else if self.word("false") {
            Some(false)
        } else {
            None
        }
    }

    /// A value whose text is canonical but perhaps for whitespace between
    /// its tokens (see [`super::canonical`]), as canonical text (the text
    /// itself when it has no such whitespace); `None` for any other (it
    /// may still be JSON).
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn canonical(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        let rest = self.text.get(self.at..)?;
        let (text, len) = super::canonical::compact_prefix(rest)?;
        self.at += len;
        Some(text)
    }

    /// Consumes `text` if it is next (the whole of a value when `text` is
    /// one value: JSON values end by themselves).
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn exactly(&mut self, text: &str) -> bool {
        self.ws();
        let hit = !text.is_empty()
            && self
                .text
                .get(self.at..)
                .is_some_and(|rest| rest.starts_with(text));
        if hit {
            self.at += text.len();
        }
        hit
    }

    /// Consumes `text` if the input goes on with exactly it, whitespace
    /// included: for a fast path that reads a frame as its provider writes
    /// it, member for member, before it reads it in any order.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn literal(&mut self, text: &str) -> bool {
        self.word(text)
    }

    /// Consumes `null` if it is next.
    pub(crate) fn null(&mut self) -> bool {
        self.ws();
        self.word("null")
    }

    fn word(&mut self, w: &str) -> bool {
        let hit = self.text.as_bytes().get(self.at..self.at + w.len()) == Some(w.as_bytes());
        if hit {
            self.at += w.len();
        }
        hit
    }

    /// A non-negative integer that fits in `u64`, written without fraction
    /// or exponent (what serde_json reads as a `u64`).
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.ws();
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - start;
        let leading_zero = digits > 1 && self.text.as_bytes().get(start) == Some(&b'0');
        if digits == 0 || leading_zero || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(n)
    }

    /// Skips any value, checking it, and returns where it was.
    #[allow(dead_code)] // (used by the responses adapter alone)
    pub(crate) fn skipped(&mut self) -> Option<std::ops::Range<usize>> {
        self.ws();
        let from = self.at;
        self.skip()?;
        Some(from..self.at)
    }

    /// Whether a string is next.
    pub(crate) fn peek_string(&mut self) -> bool {
        self.ws();
        self.peek() == Some(b'"')
    }

    /// A number, read as an `f32` (an embedding's component): through
    /// serde_json's `f64` reading, which the module links anyway (core's
    /// own `f32` parser would add its tables). A decimal written from an
    /// `f32` comes back as that `f32`.
    pub(crate) fn f32(&mut self) -> Option<f32> {
        self.ws();
        let (len, _) = number(self.text.as_bytes().get(self.at..)?)?;
        let text = self.text.get(self.at..self.at + len)?;
        self.at += len;
        Some(text.parse::<Number>().ok()?.as_f64()? as f32)
    }

    /// Where the run of plain string bytes from `from` ends: at a quote, a
    /// backslash or a control character (not allowed in JSON strings).
    #[inline(always)]
    fn run_end(&self, from: usize) -> usize {
        from + plain_run(self.text.as_bytes().get(from..).unwrap_or_default())
    }

    /// A string, borrowed unless it has escapes.
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        if !self.eat(b'"') {
            return None;
        }
        let mut owned: Option<String> = None;
        loop {
            let run = self.at;
            self.at = self.run_end(run);
            let chunk = self.text.get(run..self.at)?;
            if self.eat(b'"') {
                return Some(match owned {
                    None => Cow::Borrowed(chunk),
                    Some(mut s) => {
                        s.push_str(chunk);
                        Cow::Owned(s)
                    }
                });
            }
            if !self.eat(b'\\') {
                return None; // a control character, or the end
            }
            // (Room for the whole string at once: its text is at least as
            // long as its value. Grown by doubling, a large text would
            // take up to twice its size, and as much again of what it
            // outgrew.)
            let s = owned.get_or_insert_with(|| {
                let end = closing_quote(self.text.as_bytes(), run);
                String::with_capacity(end.map_or(0, |end| end - run))
            });
            s.push_str(chunk);
            s.push(self.escape()?);
        }
    }

    /// The string here's length and [`fnv`] hash, read as
    /// [`Self::string`] reads it, without building it.
    fn string_hash(&mut self) -> Option<(usize, u64)> {
        let (mut len, mut hash) = (0, FNV_START);
        self.string_runs(|run| (len, hash) = (len + run.len(), fnv(hash, run.as_bytes())))?;
        Some((len, hash))
    }

    /// Skips a string, checking it as [`Self::string`] does, without
    /// building it.
    #[allow(dead_code)] // (the fast paths' reader: bedrock alone has none)
    fn skip_string(&mut self) -> Option<()> {
        self.string_runs(|_| {})
    }

    /// Reads a string as [`Self::string`] does, handing `each` its value
    /// in runs (the text between escapes, then each escape's character)
    /// instead of building it.
    #[inline(always)]
    fn string_runs(&mut self, mut each: impl FnMut(&str)) -> Option<()> {
        if !self.eat(b'"') {
            return None;
        }
        loop {
            let run = self.at;
            self.at = self.run_end(run);
            each(self.text.get(run..self.at)?);
            if self.eat(b'"') {
                return Some(());
            }
            if !self.eat(b'\\') {
                return None; // a control character, or the end
            }
            let mut utf8 = [0; 4];
            each(self.escape()?.encode_utf8(&mut utf8));
        }
    }

    /// After a backslash: the character it stands for.
    fn escape(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                if (0xDC00..0xE000).contains(&hi) {
                    return None;
                }
                if (0xD800..0xDC00).contains(&hi) {
                    // A surrogate pair, or the general path decides.
                    if !(self.eat(b'\\') && self.eat(b'u')) {
                        return None;
                    }
                    let lo = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                } else {
                    char::from_u32(hi)?
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at + 4)?;
        let n = u32::from_str_radix(digits, 16).ok()?;
        // from_str_radix takes a leading '+'; JSON does not.
        if digits.starts_with('+') {
            return None;
        }
        self.at += 4;
        Some(n)
    }

    /// Skips any value, checking it.
    #[allow(dead_code)] // (the fast paths' reader: bedrock alone has none)
    pub(crate) fn skip(&mut self) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'{' => self.members(&mut |r: &mut Self, _: Cow<'a, str>| r.skip()),
            b'[' => self.array(Self::skip),
            b'"' => self.skip_string(),
            b't' => self.word("true").then_some(()),
            b'f' => self.word("false").then_some(()),
            b'n' => self.word("null").then_some(()),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    #[allow(dead_code)] // (the fast paths' reader: bedrock alone has none)
    fn number(&mut self) -> Option<()> {
        let (len, float) = number(self.text.as_bytes().get(self.at..)?)?;
        let text = self.text.get(self.at..self.at + len)?;
        // serde_json rejects a number out of f64's range (`1e400`, 310
        // digits): so does the reader, asking serde_json's own number
        // parser. Short integers (the common case) are always in range.
        if (float || len > 18) && text.parse::<Number>().is_err() {
            return None;
        }
        self.at += len;
        Some(())
    }

    /// Any value, built: what `serde_json::from_str::<Value>` builds from
    /// the same text (a repeated key keeps its first place and last value;
    /// numbers by serde_json's own number parser).
    fn value(&mut self) -> Option<Value> {
        self.ws();
        Some(match self.peek()? {
            b'{' => {
                let mut map = Map::new();
                self.members(&mut |r: &mut Self, key: Cow<'a, str>| {
                    let v = r.value()?;
                    map.insert(key.into_owned(), v);
                    Some(())
                })?;
                Value::Object(map)
            }
            b'[' => {
                let mut items = Vec::new();
                self.array(|r| {
                    items.push(r.value()?);
                    Some(())
                })?;
                Value::Array(items)
            }
            b'"' => Value::String(self.string()?.into_owned()),
            b't' | b'f' => Value::Bool(self.boolean()?),
            b'n' => self.null().then_some(Value::Null)?,
            _ => {
                let (len, _) = number(self.text.as_bytes().get(self.at..)?)?;
                let n = self
                    .text
                    .get(self.at..self.at + len)?
                    .parse::<Number>()
                    .ok()?;
                self.at += len;
                Value::Number(n)
            }
        })
    }
}

/// FNV-1a's offset basis: the hash of nothing.
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// 64-bit FNV-1a of `bytes`, on from `hash`.
pub(crate) fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Where a string value (not a key) of `len` bytes whose [`fnv`] hash is
/// `hash` is in the JSON text `text`: the bytes between its quotes. Only a
/// string whose text is `len` bytes long or longer is read (an escape is
/// longer than what it stands for), and each once, so finding is linear
/// in `text`.
pub(crate) fn find_string(text: &str, (len, hash): (usize, u64)) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let start = at + bytes.get(at..)?.iter().position(|&b| b == b'"')? + 1;
        let end = closing_quote(bytes, start)?;
        if end - start >= len {
            let mut r = Reader::new(text);
            r.at = start - 1;
            if r.string_hash() == Some((len, hash)) && r.at == end + 1 {
                r.ws();
                if r.peek() != Some(b':') {
                    return Some(start..end);
                }
            }
        }
        at = end + 1;
    }
}

/// Where the string whose text starts at `at` ends: its closing quote, the
/// first one no backslash escapes.
fn closing_quote(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at += bytes
            .get(at..)?
            .iter()
            .position(|&b| b == b'"' || b == b'\\')?;
        if bytes.get(at) == Some(&b'"') {
            return Some(at);
        }
        at += 2;
    }
}

/// JSON text that is not valid, with where reading stopped.
#[derive(Debug)]
pub(crate) struct NotJson {
    at: usize,
}

impl std::fmt::Display for NotJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not valid JSON (reading stopped at byte {})", self.at)
    }
}

/// Parses JSON text into a [`Value`], accepting exactly what
/// `serde_json::from_str::<Value>` accepts and building the same value (a
/// proptest compares them), without serde's deserializer in the wasm.
pub(crate) fn parse(text: &str) -> Result<Value, NotJson> {
    let mut r = Reader::new(text);
    r.max_depth = VALUE_MAX_DEPTH;
    match r.value() {
        Some(v) if r.at_end() => Ok(v),
        _ => Err(NotJson { at: r.at }),
    }
}

/// Which of a fast-path object's fields have been read (a repeated one
/// gives up, and the general path decides what it means).
#[derive(Default)]
#[allow(dead_code)] // (a one-adapter build may leave it unused)
pub(crate) struct Seen(u8);

impl Seen {
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn once(&mut self, field: u8) -> Option<()> {
        let bit = 1 << field;
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }

    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn has(&self, field: u8) -> bool {
        self.0 & (1 << field) != 0
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))] // proptest is a native dev-dependency
mod tests {
    use super::*;
    use crate::json::grammar::{is_object, plain_run};
    use proptest::prelude::*;
    use serde_json::Value;

    fn skip_all(text: &str) -> Option<()> {
        let mut r = Reader::new(text);
        r.skip()?;
        r.at_end().then_some(())
    }

    /// What serde_json makes of `text`, as text (key order included).
    fn serde_parse(text: &str) -> Option<String> {
        serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| v.to_string())
    }

    fn own_parse(text: &str) -> Option<String> {
        parse(text).ok().map(|v| v.to_string())
    }

    #[test]
    fn parse_agrees_with_serde_json_on_the_edges() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let mut cases: Vec<String> = [
            "",
            " ",
            "null",
            " true ",
            "fals",
            "-0",
            "-0.0",
            "0",
            "01",
            "1.",
            ".5",
            "1e400",
            "-1e400",
            "1e-400",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "0.30000000000000004",
            "123456789012345678901234567890",
            r#""\ud83c""#,
            r#""\ud83c\udf0d""#,
            r#""\u0000""#,
            "\"a\u{1}\"",
            r#"{"a":1,"a":2,"b":3}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,}"#,
            "[1,]",
            "[1 2]",
            r#"{"a" 1}"#,
            "{1:2}",
            "[1] x",
            "\u{feff}1",
            " \t\n\r[ 1 , { \"k\" : [ ] } ]\n",
            r#"{"\u0061":1,"a":2}"#,
            r#""\/""#,
            "nul",
            "[",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.push(deep(127));
        cases.push(deep(128));
        for text in cases {
            assert_eq!(own_parse(&text), serde_parse(&text), "{text:?}");
        }
    }

    proptest! {
        /// Any JSON value, and then changed at one place: parsed or
        /// refused as serde_json does, to the same value.
        #[test]
        fn parse_agrees_with_serde_json(text in near_json(false)) {
            prop_assert_eq!(own_parse(&text), serde_parse(&text), "{:?}", text);
        }
    }

    /// Any JSON value (within an object if `object`) written compactly or
    /// pretty, and then, most of the time, changed at one place by a
    /// character or token that often makes it invalid.
    fn near_json(object: bool) -> impl Strategy<Value = String> {
        let edit = prop::option::of((
            any::<prop::sample::Index>(),
            0usize..3,
            prop::sample::select(vec![
                "", " ", ",", ":", "\"", "\\", "{", "}", "[", "]", "0", "-", ".", "e", "1e999",
                "\\u", "\\ud800", "n", "t", "\u{1}", "é",
            ]),
        ));
        (
            crate::json::canonical::tests::json_value(),
            any::<bool>(),
            edit,
        )
            .prop_map(move |(v, pretty, edit)| {
                let v = if object {
                    serde_json::json!({ "v": v })
                } else {
                    v
                };
                let mut text = if pretty {
                    serde_json::to_string_pretty(&v).unwrap()
                } else {
                    v.to_string()
                };
                if let Some((at, op, s)) = edit {
                    let mut at = at.index(text.len() + 1);
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                    match op {
                        0 => text.insert_str(at, s),
                        1 => text.replace_range(at..end, s),
                        _ => text.replace_range(at..end, ""),
                    }
                }
                text
            })
    }

    /// What `is_object` must say: serde_json skipping the value without
    /// building it (`IgnoredAny`: grammar only, any depth), and an object.
    fn grammar_object(text: &str) -> bool {
        text.trim_start().starts_with('{')
            && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    #[test]
    fn object_grammar_on_the_edges() {
        let deep = |n: usize| format!("{{\"a\":{}1{}}}", "[{\"b\":".repeat(n), "}]".repeat(n));
        let mut cases: Vec<String> = [
            "{}",
            " { } ",
            "{",
            "}",
            "[1]",
            "\"{}\"",
            r#"{"a":1} x"#,
            r#"{"a":1}{}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":}"#,
            r#"{,"a":1}"#,
            "{1:2}",
            r#"{"a":[1,]}"#,
            r#"{"a":[,1]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":[]}"#,
            r#"{"a":[[],{}]}"#,
            r#"{"a":1e400,"b":-1e-400}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"\udc00":"\ud83c\udf0d"}"#,
            r#"{"a":"\u00e"}"#,
            r#"{"a":"\u+0e9"}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\u{7f}é\"}",
            r#"{"a":tru}"#,
            r#"{"a":nulll}"#,
            r#"{"a":true,"b":false,"c":null}"#,
            "\u{feff}{}",
            "{\"a\":1}\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.push(deep(100_000));
        cases.push(deep(3)[..20].to_string());
        for text in cases {
            assert_eq!(is_object(&text), grammar_object(&text), "{text:?}");
        }
        for n in [0, 1, 2, 200, 100_000] {
            assert!(is_object(&deep(n)), "{n}");
        }
    }

    proptest! {
        /// Any JSON object, written compactly or pretty, then changed at
        /// one place: taken or refused as serde_json's grammar does.
        #[test]
        fn object_grammar_agrees_with_serde_json(text in near_json(true)) {
            prop_assert_eq!(is_object(&text), grammar_object(&text), "{:?}", text);
        }
    }

    #[test]
    fn strings_are_unescaped_and_borrowed_when_plain() {
        let mut r = Reader::new(r#"  "plain" "a\"b\\c\/d\n\u00e9\ud83c\udf0d""#);
        assert!(matches!(r.string(), Some(Cow::Borrowed("plain"))));
        assert_eq!(r.string().as_deref(), Some("a\"b\\c/d\né🌍"));
        for bad in [
            r#""\ud83c""#,
            r#""\udf0d""#,
            r#""\x""#,
            "\"a\u{1}\"",
            r#""\u+041""#,
            "\"open",
        ] {
            assert_eq!(Reader::new(bad).string(), None, "{bad}");
        }
    }

    proptest! {
        /// The word-at-a-time scan stops where a byte-at-a-time one does.
        #[test]
        fn plain_runs_end_at_the_first_special_byte(b in prop::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff, Just(b'a')], 0..40)) {
            let slow = b.iter().take_while(|&&c| !matches!(c, b'"' | b'\\' | 0x00..=0x1f)).count();
            prop_assert_eq!(plain_run(&b), slow);
        }
    }

    #[test]
    fn objects_arrays_and_integers() {
        let mut seen = Vec::new();
        let ok = Reader::new(r#"{ "a" : 12 , "b":[1,{"c":null}], "d":"x" }"#).object(|r, k| {
            seen.push(k);
            match k {
                "a" => r.u64().map(drop),
                _ => r.skip(),
            }
        });
        assert_eq!(ok, Some(()));
        assert_eq!(seen, ["a", "b", "d"]);
        for bad in ["01", "-1", "1.0", "1e3", "18446744073709551616"] {
            assert_eq!(Reader::new(bad).u64(), None, "{bad}");
        }
        assert_eq!(Reader::new("18446744073709551615").u64(), Some(u64::MAX));
    }

    #[test]
    fn numbers_out_of_range_are_left_to_the_general_path() {
        for t in ["1e400", "-1e400", &"9".repeat(320), "[1,2e999]"] {
            assert_eq!(skip_all(t), None, "{t}");
            assert!(serde_json::from_str::<Value>(t).is_err());
        }
        for t in ["1e-400", "123456789012345678901234", "1.5e300"] {
            assert_eq!(skip_all(t), Some(()), "{t}");
            assert!(serde_json::from_str::<Value>(t).is_ok());
        }
    }

    #[test]
    fn deep_values_are_left_to_the_general_path() {
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        assert_eq!(skip_all(&deep), None);
        assert!(serde_json::from_str::<Value>(&deep).is_ok());
    }

    proptest! {
        /// Whatever the reader accepts, serde_json accepts.
        #[test]
        fn accepted_text_is_json(text in r#"[\[\]{}",:0-9a-z\\ .eE+\-]{0,24}"#) {
            if skip_all(&text).is_some() {
                // `Value`, as the general path parses (`IgnoredAny` does not
                // check a number's range).
                prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{}", text);
            }
        }

        /// And JSON serde_json writes (compact or pretty), it reads, with
        /// the same strings.
        #[test]
        fn written_json_is_read(v in any::<Vec<(String, Option<i64>)>>(), pretty in any::<bool>()) {
            let value: Value = v.iter().map(|(k, n)| (k.clone(), n.map_or(Value::Null, Value::from))).collect::<serde_json::Map<_, _>>().into();
            let text = if pretty { serde_json::to_string_pretty(&value).unwrap() } else { value.to_string() };
            prop_assert_eq!(skip_all(&text), Some(()));
            let mut r = Reader::new(&text);
            let mut back = serde_json::Map::new();
            let read = r.object(|r, k| {
                let v = if r.null() { Value::Null } else { r.skip()?; value[k].clone() };
                back.insert(k.to_string(), v);
                Some(())
            });
            // Keys with escapes are left to the general path.
            if read.is_some() {
                prop_assert_eq!(Value::Object(back), value);
            }
        }
    }
}
