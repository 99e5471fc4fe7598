//! JSON that arrives in pieces (a tool call's arguments, a structured
//! answer), read incrementally: each piece is read once, from where the
//! last one stopped, and what it adds to the value so far comes out as
//! [`Edit`]s, which are also applied to that value.
//!
//! The value so far follows three rules, so that it is always consistent
//! with the final one:
//! - a string is there from its opening quote, and holds a prefix of its
//!   final text (an escape is added once whole);
//! - a number, `true`, `false` or `null` is there only once it ended, and a
//!   key only once its value began;
//! - open objects and arrays are there, as if closed.
//!
//! The work per piece is proportional to the piece (and the depth of the
//! path it writes at): the text before it is never read again. Text that is
//! not JSON, or nests deeper than [`MAX_DEPTH`], stops the reading; the
//! value stays as it was, and no more edits come.

use serde_json::{Map, Value};

use super::grammar::{is_ws, plain_run};

/// The deepest nesting read (as the JSON reader's own limit); deeper text
/// stops the reading.
pub(crate) const MAX_DEPTH: usize = 127;

/// One step of a path into a value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// A change to the value so far.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Edit {
    /// Sets the value at the path (the whole value for an empty path): a
    /// scalar, whole; a string, as far as it came; an empty object or array.
    /// An object's member is added (or replaced), an array's element pushed.
    Set(Vec<Step>, Value),
    /// Appends text to the string at the path.
    Append(Vec<Step>, String),
}

/// Where the reading is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum State {
    /// A value is due.
    #[default]
    Value,
    /// After `[`: a value or `]`.
    ArrayFirst,
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    Key,
    /// Inside a key.
    InKey,
    /// After a key: `:`.
    Colon,
    /// Inside a string value.
    InString,
    /// Inside a number.
    Number,
    /// Inside `true`, `false` or `null`.
    Literal,
    /// After a value: `,` or the end of its container.
    After,
    /// Not JSON (or too deep): nothing more is read.
    Failed,
}

/// Inside a string: where an escape is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Escape {
    #[default]
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and `digits` hex digits, whose value is `code`.
    Hex { digits: u8, code: u32 },
}

/// An open object (the key whose value is being read) or array (the index
/// of its next element).
#[derive(Clone, Debug, PartialEq)]
enum Open {
    Object(Option<String>),
    Array(usize),
}

/// The incremental reader and the value so far.
#[derive(Clone, Debug, Default)]
pub struct PartialJson {
    value: Option<Value>,
    open: Vec<Open>,
    /// The path of the innermost open container or string.
    path: Vec<Step>,
    state: State,
    escape: Escape,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
    /// The key, number or literal being read.
    buf: String,
    /// String text read from the current piece, not yet given out.
    run: String,
    /// The open string has not been given out yet.
    fresh: bool,
}

impl PartialJson {
    /// A reader that has read nothing.
    pub fn new() -> Self {
        PartialJson::default()
    }

    /// The value so far: `None` until one has begun.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }

    /// Whether the reading stopped: the text is not JSON, or nests too deep.
    pub fn failed(&self) -> bool {
        self.state == State::Failed
    }

    /// Reads the next piece; returns whether the value changed.
    pub fn push(&mut self, piece: &str) -> bool {
        self.read(piece, None)
    }

    /// Reads the next piece; returns whether the value changed. With
    /// `edits`, the changes are added there instead of made to the value
    /// here (the caller keeps the value: a reader is read one way only).
    pub(crate) fn read(&mut self, piece: &str, edits: Option<&mut Vec<Edit>>) -> bool {
        let mut emit = Sink {
            edits,
            changed: false,
        };
        let b = piece.as_bytes();
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            match self.state {
                State::Failed => break,
                State::InString | State::InKey => {
                    i = self.string(piece, i, &mut emit);
                    continue;
                }
                State::Number => {
                    if matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                        self.buf.push(char::from(c));
                        i += 1;
                    } else {
                        self.end_number(&mut emit);
                    }
                    continue;
                }
                State::Literal => {
                    self.literal(c, &mut emit);
                    i += 1;
                    continue;
                }
                _ => {}
            }
            i += 1;
            if is_ws(c) {
                continue;
            }
            self.structure(c, &mut emit);
        }
        if self.state == State::InString {
            self.flush(&mut emit);
        }
        emit.changed
    }

    /// Applies edits to the value so far: those [`Self::read`] gave out, or
    /// patches a provider sent instead of text (then text read later starts
    /// a new value).
    pub(crate) fn apply(&mut self, edits: Vec<Edit>) {
        for edit in edits {
            apply(&mut self.value, edit);
        }
    }

    /// A structural byte (not whitespace, not inside a string, number or
    /// literal).
    fn structure(&mut self, c: u8, emit: &mut Sink<'_>) {
        match (self.state, c) {
            (State::ArrayFirst, b']') | (State::After, b']')
                if matches!(self.open.last(), Some(Open::Array(_))) =>
            {
                self.close();
            }
            (State::ObjectFirst, b'}') | (State::After, b'}')
                if matches!(self.open.last(), Some(Open::Object(_))) =>
            {
                self.close();
            }
            (State::ObjectFirst | State::Key, b'"') => {
                self.buf.clear();
                self.state = State::InKey;
            }
            (State::Colon, b':') => self.state = State::Value,
            (State::After, b',') => match self.open.last_mut() {
                Some(Open::Object(key)) => {
                    *key = None;
                    self.state = State::Key;
                }
                Some(Open::Array(_)) => self.state = State::Value,
                None => self.state = State::Failed,
            },
            (State::Value | State::ArrayFirst, _) => self.begin(c, emit),
            _ => self.state = State::Failed,
        }
    }

    /// The first byte of a value.
    fn begin(&mut self, c: u8, emit: &mut Sink<'_>) {
        match c {
            b'{' | b'[' => {
                if self.open.len() >= MAX_DEPTH {
                    self.state = State::Failed;
                    return;
                }
                let path = self.slot();
                let (empty, open, state) = if c == b'{' {
                    (
                        Value::Object(Map::new()),
                        Open::Object(None),
                        State::ObjectFirst,
                    )
                } else {
                    (Value::Array(Vec::new()), Open::Array(0), State::ArrayFirst)
                };
                emit.edit(&mut self.value, Edit::Set(path.clone(), empty));
                self.path = path;
                self.open.push(open);
                self.state = state;
            }
            b'"' => {
                self.path = self.slot();
                self.fresh = true;
                self.state = State::InString;
            }
            b'-' | b'0'..=b'9' => {
                self.buf.clear();
                self.buf.push(char::from(c));
                self.state = State::Number;
            }
            b't' | b'f' | b'n' => {
                self.buf.clear();
                self.buf.push(char::from(c));
                self.state = State::Literal;
            }
            _ => self.state = State::Failed,
        }
    }

    /// The path of the value that begins now; an array counts it.
    fn slot(&mut self) -> Vec<Step> {
        let mut path = self.path.clone();
        match self.open.last_mut() {
            Some(Open::Object(Some(key))) => path.push(Step::Key(key.clone())),
            Some(Open::Array(next)) => {
                path.push(Step::Index(*next));
                *next += 1;
            }
            // The root (an object's key is always read before its value).
            _ => {}
        }
        path
    }

    /// Ends the innermost container.
    fn close(&mut self) {
        self.open.pop();
        self.path.pop();
        self.state = State::After;
    }

    /// A scalar ended: it is set at its path.
    fn scalar(&mut self, value: Value, emit: &mut Sink<'_>) {
        let path = self.slot();
        emit.edit(&mut self.value, Edit::Set(path, value));
        self.state = State::After;
    }

    fn end_number(&mut self, emit: &mut Sink<'_>) {
        match super::read::parse(&self.buf) {
            Ok(n @ Value::Number(_)) => self.scalar(n, emit),
            _ => self.state = State::Failed,
        }
    }

    fn literal(&mut self, c: u8, emit: &mut Sink<'_>) {
        self.buf.push(char::from(c));
        let value = match self.buf.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            b if ["true", "false", "null"].iter().any(|w| w.starts_with(b)) => return,
            _ => {
                self.state = State::Failed;
                return;
            }
        };
        self.scalar(value, emit);
    }

    /// Reads string text from `piece[i..]` (a key into `buf`, a value into
    /// `run`) up to its closing quote or the end of the piece; returns where
    /// it stopped.
    fn string(&mut self, piece: &str, mut i: usize, emit: &mut Sink<'_>) -> usize {
        let b = piece.as_bytes();
        let key = self.state == State::InKey;
        while let Some(&c) = b.get(i) {
            if self.escape != Escape::None {
                if !self.escaped(c, key) {
                    self.state = State::Failed;
                    return b.len();
                }
                i += 1;
                continue;
            }
            if self.high.is_some() && c != b'\\' {
                // A high surrogate must be followed by its low half.
                self.state = State::Failed;
                return b.len();
            }
            let n = plain_run(b.get(i..).unwrap_or_default());
            if n > 0 {
                // (The run stops before an ASCII byte or at the end: a
                // character boundary.)
                let text = piece.get(i..i + n).unwrap_or_default();
                if key {
                    self.buf.push_str(text);
                } else {
                    self.run.push_str(text);
                }
                i += n;
                continue;
            }
            match c {
                b'"' => {
                    i += 1;
                    if key {
                        let name = std::mem::take(&mut self.buf);
                        if let Some(Open::Object(k)) = self.open.last_mut() {
                            *k = Some(name);
                        }
                        self.state = State::Colon;
                    } else {
                        self.flush(emit);
                        self.path.pop();
                        self.state = State::After;
                    }
                    return i;
                }
                b'\\' => {
                    self.escape = Escape::Backslash;
                    i += 1;
                }
                _ => {
                    // A control character, which JSON strings may not hold.
                    self.state = State::Failed;
                    return b.len();
                }
            }
        }
        i
    }

    /// One byte of an escape; false if it cannot be one.
    fn escaped(&mut self, c: u8, key: bool) -> bool {
        let ch = match (self.escape, c) {
            (Escape::Backslash, b'u') => {
                self.escape = Escape::Hex { digits: 0, code: 0 };
                return true;
            }
            (Escape::Backslash, _) if self.high.is_some() => return false,
            (Escape::Backslash, b'"' | b'\\' | b'/') => char::from(c),
            (Escape::Backslash, b'b') => '\u{8}',
            (Escape::Backslash, b'f') => '\u{c}',
            (Escape::Backslash, b'n') => '\n',
            (Escape::Backslash, b'r') => '\r',
            (Escape::Backslash, b't') => '\t',
            (Escape::Hex { digits, code }, _) => {
                let Some(d) = char::from(c).to_digit(16) else {
                    return false;
                };
                let code = code * 16 + d;
                if digits < 3 {
                    self.escape = Escape::Hex {
                        digits: digits + 1,
                        code,
                    };
                    return true;
                }
                match (self.high.take(), code) {
                    (None, 0xD800..=0xDBFF) => {
                        self.high = Some(code);
                        self.escape = Escape::None;
                        return true;
                    }
                    (Some(high), 0xDC00..=0xDFFF) => {
                        match char::from_u32(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) {
                            Some(ch) => ch,
                            None => return false,
                        }
                    }
                    // A lone surrogate: JSON allows it, a Rust string
                    // cannot hold it.
                    (Some(_), _) | (None, 0xDC00..=0xDFFF) => return false,
                    (None, _) => match char::from_u32(code) {
                        Some(ch) => ch,
                        None => return false,
                    },
                }
            }
            _ => return false,
        };
        self.escape = Escape::None;
        if key {
            self.buf.push(ch);
        } else {
            self.run.push(ch);
        }
        true
    }

    /// Gives out the string text read so far.
    fn flush(&mut self, emit: &mut Sink<'_>) {
        if self.fresh {
            self.fresh = false;
            let text = std::mem::take(&mut self.run);
            emit.edit(
                &mut self.value,
                Edit::Set(self.path.clone(), Value::String(text)),
            );
        } else if !self.run.is_empty() {
            emit.append(&mut self.value, &self.path, &mut self.run);
        }
    }
}

/// Where a reading's changes go: the caller's edits, or the value.
struct Sink<'a> {
    edits: Option<&'a mut Vec<Edit>>,
    /// Whether the value changed.
    changed: bool,
}

impl Sink<'_> {
    fn edit(&mut self, value: &mut Option<Value>, edit: Edit) {
        self.changed = true;
        match self.edits.as_deref_mut() {
            Some(edits) => edits.push(edit),
            None => apply(value, edit),
        }
    }

    /// Appends `run` to the string at `path`: to the last edit when it
    /// appends to that string (no new edit, and `run` keeps its room).
    fn append(&mut self, value: &mut Option<Value>, path: &[Step], run: &mut String) {
        if let Some(Edit::Append(at, text)) = self.edits.as_deref_mut().and_then(|e| e.last_mut()) {
            if at.as_slice() == path {
                self.changed = true;
                text.push_str(run);
                run.clear();
                return;
            }
        }
        let text = std::mem::take(run);
        self.edit(value, Edit::Append(path.to_vec(), text));
    }
}

/// Applies `edit` to `value` (an edit whose path is not there does nothing).
pub(crate) fn apply(value: &mut Option<Value>, edit: Edit) {
    match edit {
        Edit::Set(path, v) => match path.split_last() {
            None => *value = Some(v),
            Some((last, parent)) => match (at(value, parent), last) {
                (Some(Value::Object(map)), Step::Key(k)) => {
                    map.insert(k.clone(), v);
                }
                (Some(Value::Array(items)), Step::Index(n)) => {
                    if let Some(slot) = items.get_mut(*n) {
                        *slot = v;
                    } else if *n == items.len() {
                        items.push(v);
                    }
                }
                _ => {}
            },
        },
        Edit::Append(path, text) => {
            if let Some(Value::String(s)) = at(value, &path) {
                s.push_str(&text);
            }
        }
    }
}

/// The value at `path`, if there is one.
fn at<'a>(value: &'a mut Option<Value>, path: &[Step]) -> Option<&'a mut Value> {
    let mut v = value.as_mut()?;
    for step in path {
        v = match (v, step) {
            (Value::Object(map), Step::Key(k)) => map.get_mut(k.as_str())?,
            (Value::Array(items), Step::Index(n)) => items.get_mut(*n)?,
            _ => return None,
        };
    }
    Some(v)
}

#[cfg(test)]
#[path = "partial_tests.rs"]
mod tests;
