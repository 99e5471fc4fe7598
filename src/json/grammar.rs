//! The JSON grammar checks shared by the reader and the canonical check:
//! plain string runs, numbers, and the arguments' whole-object test.

/// JSON's whitespace.
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// How many bytes at the start of `b` may stand in a JSON string as they
/// are: up to the first quote, backslash or control character. Eight bytes
/// at a time (strings are most of a frame).
pub(crate) fn plain_run(b: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `v` is zero (exact for the lowest such byte).
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut words = b.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        let stop = (x.wrapping_sub(ONES * 0x20) & !x & HIGH)
            | zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')));
        if stop != 0 {
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + words
        .remainder()
        .iter()
        .take_while(|&&c| !matches!(c, b'"' | b'\\' | 0x00..=0x1f))
        .count()
}

/// The length of the JSON number at the start of `b` (`None` if there is
/// none: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) and whether it
/// has a fraction or exponent.
pub(crate) fn number(b: &[u8]) -> Option<(usize, bool)> {
    let digits = |from: usize| {
        from + b
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut at = usize::from(b.first() == Some(&b'-'));
    match b.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at = digits(at),
        _ => return None,
    }
    let mut float = false;
    if b.get(at) == Some(&b'.') {
        float = true;
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        float = true;
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some((at, float))
}

/// Whether `text` is one JSON object, with only whitespace around it, by
/// JSON's grammar alone (RFC 8259): any `\u` escape, lone surrogates
/// included, and numbers of any size, as `JSON.parse` takes them (and as
/// serde_json does when it skips a value without building it). Iterative,
/// with no nesting limit: a call's arguments are checked, never built.
pub(crate) fn is_object(text: &str) -> bool {
    let b = text.as_bytes();
    let ws = |mut at: usize| {
        while b.get(at).copied().is_some_and(is_ws) {
            at += 1;
        }
        at
    };
    // After a string's opening quote: the index after its closing one.
    let string = |mut at: usize| -> Option<usize> {
        loop {
            at += plain_run(b.get(at..)?);
            match b.get(at)? {
                b'"' => return Some(at + 1),
                b'\\' => {}
                _ => return None, // a control character
            }
            at += 1;
            match b.get(at)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 1,
                b'u' => {
                    let hex = b.get(at + 1..at + 5)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    at += 5;
                }
                _ => return None,
            }
        }
    };
    // The open containers, innermost last: true for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut at = ws(0);
    if b.get(at) != Some(&b'{') {
        return false;
    }
    // Whether a value is expected next (else a key, after `{` or `,`).
    let mut want_value = true;
    loop {
        at = ws(at);
        if want_value {
            // A value: a scalar, or an opened container.
            let Some(&c) = b.get(at) else { return false };
            at += 1;
            match c {
                b'{' | b'[' => {
                    at = ws(at);
                    let close = if c == b'{' { b'}' } else { b']' };
                    if b.get(at) != Some(&close) {
                        open.push(c == b'{');
                        want_value = c == b'[';
                        continue;
                    }
                    at += 1;
                }
                b'"' => match string(at) {
                    Some(end) => at = end,
                    None => return false,
                },
                b't' | b'f' | b'n' => {
                    let word: &[u8] = match c {
                        b't' => b"rue",
                        b'f' => b"alse",
                        _ => b"ull",
                    };
                    if !b.get(at..).is_some_and(|rest| rest.starts_with(word)) {
                        return false;
                    }
                    at += word.len();
                }
                _ => match number(b.get(at - 1..).unwrap_or_default()) {
                    Some((len, _)) => at += len - 1,
                    None => return false,
                },
            }
        } else {
            // A key and its colon.
            if b.get(at) != Some(&b'"') {
                return false;
            }
            match string(at + 1) {
                Some(end) => at = ws(end),
                None => return false,
            }
            if b.get(at) != Some(&b':') {
                return false;
            }
            at += 1;
            want_value = true;
            continue;
        }
        // After a value: a comma, or the innermost container's close.
        loop {
            at = ws(at);
            let Some(&object) = open.last() else {
                return at == b.len();
            };
            match b.get(at) {
                Some(b',') => {
                    at += 1;
                    want_value = !object;
                    break;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return false,
            }
            at += 1;
            open.pop();
        }
    }
}
