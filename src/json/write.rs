//! A small JSON writer for request bodies: objects and arrays written
//! straight into one buffer, closed when they go out of scope.
//!
//! Building a `Value` tree first (with `json!`) cost about a third of the
//! wasm's code and most of the time of encoding a request. The output is
//! byte for byte what serde_json writes for the same tree: the same
//! escapes, integers, and floats by zmij as serde_json does (the tests
//! below hold that). Embedded `Value`s are written here too, so serde's
//! serializer is not linked into the wasm at all.

use serde_json::Value;

use super::grammar::plain_run;

/// `s` as a JSON string literal, quotes included: how error messages quote
/// a name or value (instead of `{:?}`, whose escaping code the wasm would
/// link for this alone).
pub(crate) fn quoted(s: &str) -> String {
    let mut out = Out::default();
    out.string(s);
    out.finish().unwrap_or_default()
}

/// The JSON text being written.
#[derive(Default)]
pub(crate) struct Out {
    buf: Vec<u8>,
}

impl Out {
    /// The top-level object.
    pub(crate) fn object(&mut self) -> Obj<'_> {
        Obj::open(self)
    }

    /// The top-level array.
    pub(crate) fn array(&mut self) -> Arr<'_> {
        Arr::open(self)
    }

    /// Text that is already JSON.
    pub(crate) fn json(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    /// The JSON text written (`None` only if a string written was not
    /// UTF-8, which `&str` rules out).
    pub(crate) fn finish(self) -> Option<String> {
        String::from_utf8(self.buf).ok()
    }

    /// The bytes written so far, for a caller writing into its own buffer.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Continues writing at the end of `buf`.
    pub(crate) fn from_bytes(buf: Vec<u8>) -> Self {
        Out { buf }
    }

    fn string(&mut self, s: &str) {
        self.buf.push(b'"');
        let mut rest = s.as_bytes();
        loop {
            let plain = plain_run(rest);
            let (run, tail) = rest.split_at(plain.min(rest.len()));
            self.buf.extend_from_slice(run);
            let Some((&c, tail)) = tail.split_first() else {
                break;
            };
            // As serde_json escapes: the short forms, else \u00XX.
            let short = match c {
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                0x08 => Some(b'b'),
                0x0c => Some(b'f'),
                b'\n' => Some(b'n'),
                b'\r' => Some(b'r'),
                b'\t' => Some(b't'),
                _ => None,
            };
            match short {
                Some(e) => self.buf.extend_from_slice(&[b'\\', e]),
                None => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    let hex = |n: u8| HEX.get(usize::from(n & 0xf)).copied().unwrap_or(b'0');
                    self.buf
                        .extend_from_slice(&[b'\\', b'u', b'0', b'0', hex(c >> 4), hex(c)]);
                }
            }
            rest = tail;
        }
        self.buf.push(b'"');
    }

    /// Writes `v` as serde_json would, without its serializer (keeping
    /// serde's serialisation code out of the wasm).
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.buf.extend_from_slice(b"null"),
            Value::Bool(b) => self.bool(*b),
            Value::Number(n) => self.number(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                let mut a = Arr::open(self);
                for item in items {
                    a.item().value(item);
                }
            }
            Value::Object(map) => {
                let mut o = Obj::open(self);
                for (k, v) in map {
                    o.key(k).value(v);
                }
            }
        }
    }

    fn bool(&mut self, b: bool) {
        let text: &[u8] = if b { b"true" } else { b"false" };
        self.buf.extend_from_slice(text);
    }

    fn number(&mut self, n: &serde_json::Number) {
        if let Some(u) = n.as_u64() {
            self.uint(u);
        } else if let Some(i) = n.as_i64() {
            self.buf.push(b'-');
            self.uint(i.unsigned_abs());
        } else {
            self.float(n.as_f64().unwrap_or(f64::NAN));
        }
    }

    /// A float as serde_json writes it: zmij's shortest form, `null` for
    /// NaN and the infinities.
    pub(crate) fn float(&mut self, x: f64) {
        if x.is_finite() {
            let mut buffer = zmij::Buffer::new();
            self.buf
                .extend_from_slice(buffer.format_finite(x).as_bytes());
        } else {
            self.buf.extend_from_slice(b"null");
        }
    }

    fn uint(&mut self, n: u64) {
        push_decimal(&mut self.buf, n);
    }
}

/// Appends `n` in decimal (itoa: without the formatting machinery).
pub(crate) fn push_decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// An object being written; `}` when dropped.
pub(crate) struct Obj<'a> {
    out: &'a mut Out,
    empty: bool,
}

impl<'a> Obj<'a> {
    fn open(out: &'a mut Out) -> Self {
        out.buf.push(b'{');
        Obj { out, empty: true }
    }

    /// Starts the member `key` and returns the buffer for its value.
    pub(crate) fn key(&mut self, key: &str) -> &mut Out {
        if !std::mem::take(&mut self.empty) {
            self.out.buf.push(b',');
        }
        self.out.string(key);
        self.out.buf.push(b':');
        self.out
    }

    /// `"key": "value"`.
    pub(crate) fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key).string(value);
        self
    }

    /// `"key": value`, as serde_json writes it.
    pub(crate) fn value(&mut self, key: &str, value: &Value) -> &mut Self {
        self.key(key).value(value);
        self
    }

    /// `"key": n`.
    pub(crate) fn uint(&mut self, key: &str, n: u64) -> &mut Self {
        self.key(key).uint(n);
        self
    }

    /// `"key": x`, or `null` for NaN and infinities (as `json!` writes them).
    pub(crate) fn float(&mut self, key: &str, x: f64) -> &mut Self {
        self.key(key).float(x);
        self
    }

    /// `"key": true` or `false`.
    pub(crate) fn bool(&mut self, key: &str, b: bool) -> &mut Self {
        self.key(key).bool(b);
        self
    }

    /// `"key": "value"` if there is a value.
    pub(crate) fn opt_str(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.str(key, v);
        }
        self
    }

    /// `"key": null`.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn null(&mut self, key: &str) -> &mut Self {
        self.key(key).buf.extend_from_slice(b"null");
        self
    }

    /// `"key": ["a", "b"]`.
    pub(crate) fn strs(&mut self, key: &str, items: &[String]) -> &mut Self {
        let mut a = self.array(key);
        for s in items {
            a.str(s);
        }
        drop(a);
        self
    }

    /// `"key": {...}`.
    pub(crate) fn object(&mut self, key: &str) -> Obj<'_> {
        Obj::open(self.key(key))
    }

    /// `"key": [...]`.
    pub(crate) fn array(&mut self, key: &str) -> Arr<'_> {
        Arr::open(self.key(key))
    }
}

impl Drop for Obj<'_> {
    fn drop(&mut self) {
        self.out.buf.push(b'}');
    }
}

/// An array being written; `]` when dropped.
pub(crate) struct Arr<'a> {
    out: &'a mut Out,
    empty: bool,
}

impl<'a> Arr<'a> {
    fn open(out: &'a mut Out) -> Self {
        out.buf.push(b'[');
        Arr { out, empty: true }
    }

    fn item(&mut self) -> &mut Out {
        if !std::mem::take(&mut self.empty) {
            self.out.buf.push(b',');
        }
        self.out
    }

    /// A string element.
    pub(crate) fn str(&mut self, s: &str) {
        self.item().string(s);
    }

    /// An element that is a JSON value.
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
    pub(crate) fn value(&mut self, v: &Value) {
        self.item().value(v);
    }

    /// A non-negative integer element.
    pub(crate) fn uint(&mut self, n: u64) {
        self.item().uint(n);
    }

    /// An element that is already JSON text.
    pub(crate) fn json(&mut self, text: &str) {
        self.item().buf.extend_from_slice(text.as_bytes());
    }

    /// An object element.
    pub(crate) fn object(&mut self) -> Obj<'_> {
        Obj::open(self.item())
    }

    /// An array element.
    pub(crate) fn array(&mut self) -> Arr<'_> {
        Arr::open(self.item())
    }
}

impl Drop for Arr<'_> {
    fn drop(&mut self) {
        self.out.buf.push(b']');
    }
}

/// A JSON object written on its own (a message part, kept as text until its
/// turn is written).
pub(crate) fn object_text(write: impl FnOnce(&mut Obj)) -> String {
    let mut out = Out::default();
    write(&mut out.object());
    out.finish().unwrap_or_default()
}

#[cfg(all(test, not(target_arch = "wasm32")))] // proptest is a native dev-dependency
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Strings, numbers and nesting come out as serde_json writes them.
        #[test]
        fn writes_what_serde_json_writes(s in "\\PC*|[\\x00-\\x20\"\\\\/\u{7f}é🌍]*",
                n in any::<u64>(), x in any::<f64>(), b in any::<bool>()) {
            let mut out = Out::default();
            {
                let mut o = out.object();
                o.str("s", &s).uint("n", n).float("x", x).bool("b", b).null("z");
                o.str(&format!("k{s}"), "key");
                o.strs("list", &[s.clone(), String::new()]);
                let mut a = o.array("a");
                a.str(&s);
                a.json("[1]");
                a.object().value("v", &serde_json::json!({"k": [s.clone()]}));
            }
            let want = serde_json::json!({
                "s": s, "n": n, "x": x, "b": b, "z": null, (format!("k{s}")): "key",
                "list": [s, ""], "a": [s, [1], {"v": {"k": [s]}}],
            });
            prop_assert_eq!(out.finish().unwrap(), serde_json::to_string(&want).unwrap());
        }
    }

    proptest! {
        /// Any value, as serde_json::to_string writes it.
        #[test]
        fn values_are_written_as_serde_json_writes_them(v in crate::json::canonical::tests::json_value()) {
            prop_assert_eq!(crate::json::json_text(&v), serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn floats_are_written_as_serde_json_writes_them() {
        for x in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e21,
            1e-7,
            123456789.125,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1.5e300,
        ] {
            let v = Value::from(x);
            assert_eq!(
                crate::json::json_text(&v),
                serde_json::to_string(&v).unwrap(),
                "{x}"
            );
        }
    }

    #[test]
    fn every_control_character_is_escaped_as_serde_json_does() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let mut out = Out::default();
        out.object().str("k", &all);
        let text = out.finish().unwrap();
        assert_eq!(
            text,
            serde_json::to_string(&serde_json::json!({"k": all})).unwrap()
        );
    }
}
