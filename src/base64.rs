//! Base64 (RFC 4648, the standard alphabet) straight into little-endian
//! `f32`s: how OpenAI and compatible servers send an embedding when asked
//! for `encoding_format: "base64"`. No intermediate byte buffer. And the
//! two plain forms a service-account token needs: a PEM body to bytes, and
//! bytes to base64url (a JWT's parts).

/// Why a text is not a vector of `f32`s in base64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadBase64 {
    /// A character outside the alphabet (or padding in the middle), at a
    /// byte offset.
    Character(usize),
    /// The text's length is not a whole number of base64 quanta.
    Length(usize),
    /// The bytes are not a whole number of 4-byte floats.
    Bytes(usize),
}

impl BadBase64 {
    /// What is wrong, for an error message.
    pub(crate) fn message(&self) -> String {
        match self {
            BadBase64::Character(at) => format!("is not base64 (a bad character at offset {at})"),
            BadBase64::Length(n) => format!("is not base64 ({n} characters)"),
            BadBase64::Bytes(n) => {
                format!("is {n} bytes of base64, not a whole number of 4-byte floats")
            }
        }
    }
}

/// The 6-bit value of a base64 character, or 0xFF. (Evaluated at compile
/// time: an index out of bounds would fail the build, not panic.)
#[allow(clippy::indexing_slicing)]
const fn table() -> [u8; 256] {
    let mut t = [0xFFu8; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
}

static DECODE: [u8; 256] = table();

/// Decodes `text` (padded or not) into `out`, 4 bytes to an `f32`; on an
/// error, `out` is as it was.
pub(crate) fn f32s(text: &str, out: &mut Vec<f32>) -> Result<(), BadBase64> {
    let start = out.len();
    let result = decode(text, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn decode(text: &str, out: &mut Vec<f32>) -> Result<(), BadBase64> {
    let b = text.as_bytes();
    let body = b
        .strip_suffix(b"==")
        .or_else(|| b.strip_suffix(b"="))
        .unwrap_or(b);
    if body.len() % 4 == 1 || (body.len() != b.len() && b.len() % 4 != 0) {
        return Err(BadBase64::Length(b.len()));
    }
    let bytes = body.len() / 4 * 3 + (body.len() % 4).saturating_sub(1);
    if bytes % 4 != 0 {
        return Err(BadBase64::Bytes(bytes));
    }
    out.reserve(bytes / 4);
    // 16 characters are 12 bytes, 3 floats: written in place, the bad
    // characters found afterwards (a bad one has the lookup's high bit).
    let start = out.len();
    let mut chunks = body.chunks_exact(16);
    out.resize(start + body.len() / 16 * 3, 0.0);
    let mut bad = 0u8;
    for (chunk, dst) in chunks
        .by_ref()
        .zip(out.get_mut(start..).unwrap_or_default().chunks_exact_mut(3))
    {
        let mut n = [0u32; 4];
        for (q, n) in chunk.chunks_exact(4).zip(n.iter_mut()) {
            *n = quad(q, &mut bad);
        }
        // The 12 bytes of the four 24-bit groups, 4 to a float.
        let [a, b, c, d] = n;
        if let [x, y, z] = dst {
            *x =
                f32::from_bits(a >> 16 | (a >> 8 & 0xFF) << 8 | (a & 0xFF) << 16 | (b >> 16) << 24);
            *y = f32::from_bits(
                (b >> 8 & 0xFF) | (b & 0xFF) << 8 | (c >> 16) << 16 | (c >> 8 & 0xFF) << 24,
            );
            *z = f32::from_bits(
                (c & 0xFF) | (d >> 16) << 8 | (d >> 8 & 0xFF) << 16 | (d & 0xFF) << 24,
            );
        }
    }
    if bad & 0x80 != 0 {
        out.truncate(start);
        let at = body.iter().position(|&c| lookup(c) == 0xFF).unwrap_or(0);
        return Err(BadBase64::Character(at));
    }
    let mut at = body.len() / 16 * 16;
    // The rest: fewer than 16 characters, the last quantum maybe short.
    let mut rest = Vec::with_capacity(12);
    for quad in chunks.remainder().chunks(4) {
        let mut padded = [b'A'; 4];
        for (p, &c) in padded.iter_mut().zip(quad) {
            *p = c;
        }
        let bytes = sextets(&padded, at)?.to_be_bytes();
        let take = quad.len().saturating_sub(1);
        // Bits past the last whole byte must be zero (canonical base64).
        if bytes.iter().skip(1 + take).any(|&x| x != 0) {
            return Err(BadBase64::Character(at + take));
        }
        rest.extend(bytes.iter().skip(1).take(take));
        at += 4;
    }
    push_f32s(&rest, out);
    Ok(())
}

/// `bytes`, 4 at a time, as little-endian `f32`s.
#[inline(always)]
fn push_f32s(bytes: &[u8], out: &mut Vec<f32>) {
    for f in bytes.chunks_exact(4) {
        if let Ok(f) = <[u8; 4]>::try_from(f) {
            out.push(f32::from_le_bytes(f));
        }
    }
}

/// A character's 6 bits, or 0xFF.
#[inline(always)]
fn lookup(c: u8) -> u8 {
    DECODE.get(usize::from(c)).copied().unwrap_or(0xFF)
}

/// Four characters as 24 bits; a bad one sets `bad`'s high bit.
#[inline(always)]
fn quad(q: &[u8], bad: &mut u8) -> u32 {
    let mut n = 0u32;
    for &c in q {
        let v = lookup(c);
        *bad |= v;
        n = n << 6 | u32::from(v & 63);
    }
    n
}

/// Four characters as 24 bits.
#[inline(always)]
fn sextets(quad: &[u8], at: usize) -> Result<u32, BadBase64> {
    let mut n = 0u32;
    for (i, &c) in quad.iter().enumerate() {
        let v = lookup(c);
        if v == 0xFF {
            return Err(BadBase64::Character(at + i));
        }
        n = n << 6 | u32::from(v);
    }
    Ok(n)
}

/// The bytes of standard base64 text (padding optional, only at the end),
/// with `spaced` its ASCII whitespace skipped (a PEM's line breaks); `None`
/// for any other character, whitespace included otherwise.
pub(crate) fn bytes(text: &str, spaced: bool) -> Option<Vec<u8>> {
    let body = text.trim_end_matches(|c: char| c == '=' || (spaced && c.is_ascii_whitespace()));
    let mut out = Vec::with_capacity(body.len() / 4 * 3);
    let (mut bits, mut n) = (0u32, 0u32);
    for c in body
        .bytes()
        .filter(|c| !(spaced && c.is_ascii_whitespace()))
    {
        let v = lookup(c);
        if v == 0xFF {
            return None;
        }
        bits = bits << 6 | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    Some(out)
}

/// `bytes` in base64url without padding (RFC 4648 section 5).
pub(crate) fn url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = b(0) << 16 | b(1) << 8 | b(2);
        for i in 0..=chunk.len() {
            let six = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(
                ALPHABET.get(six as usize).copied().unwrap_or(b'A'),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference encoder, for the tests (standard alphabet, padded).
    fn encode(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in bytes.chunks(3) {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..4 {
                if i <= c.len() {
                    s.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
                } else {
                    s.push('=');
                }
            }
        }
        s
    }

    fn floats(xs: &[f32]) -> String {
        encode(&xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
    }

    #[test]
    fn every_length_decodes_to_the_floats_it_encodes() {
        for n in 0..40 {
            let xs: Vec<f32> = (0..n).map(|i| (i as f32 - 7.5) / 3.0).collect();
            let text = floats(&xs);
            let mut out = Vec::new();
            f32s(&text, &mut out).unwrap();
            assert_eq!(out, xs, "{n} floats");
            // Unpadded too.
            out.clear();
            f32s(text.trim_end_matches('='), &mut out).unwrap();
            assert_eq!(out, xs, "{n} floats, unpadded");
        }
    }

    #[test]
    fn special_values_keep_their_bits() {
        let xs = [f32::MIN_POSITIVE, -0.0, f32::INFINITY, f32::MAX, 1e-45];
        let mut out = Vec::new();
        f32s(&floats(&xs), &mut out).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&out), bits(&xs));
    }

    #[test]
    fn a_length_that_is_not_whole_floats_is_refused() {
        // 1 to 3 and 5 bytes: not a whole number of floats.
        for n in [1, 2, 3, 5, 6, 7] {
            let text = encode(&vec![7u8; n]);
            let e = f32s(&text, &mut Vec::new()).unwrap_err();
            assert_eq!(e, BadBase64::Bytes(n), "{n} bytes");
            assert!(e.message().contains("4-byte"), "{}", e.message());
        }
    }

    #[test]
    fn bad_characters_and_lengths_are_refused_with_where() {
        let good = floats(&[1.0, 2.0, 3.0]);
        let mut bad = good.clone().into_bytes();
        bad[5] = b'*';
        let e = f32s(std::str::from_utf8(&bad).unwrap(), &mut Vec::new()).unwrap_err();
        assert_eq!(e, BadBase64::Character(5));
        // A JSON float array's text is not base64.
        assert!(f32s("[0.1, 0.2]", &mut Vec::new()).is_err());
        // Padding in the middle.
        assert!(f32s("AAAA=AAA", &mut Vec::new()).is_err());
        // One character over a quantum.
        assert_eq!(f32s("AAAAA", &mut Vec::new()), Err(BadBase64::Length(5)));
        // Non-zero bits after the last byte.
        assert_eq!(
            f32s("AAAAAAAAAAB", &mut Vec::new()),
            Err(BadBase64::Character(10))
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn any_bytes_round_trip_and_any_text_is_an_answer(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            text in "[A-Za-z0-9+/=*\\[\\] -]{0,120}",
            good in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            bad in "[*=\\[ ]{1,2}",
        ) {
            let whole = &bytes[..bytes.len() / 4 * 4];
            let want: Vec<u32> = whole
                .chunks_exact(4)
                .map(|f| u32::from_le_bytes([f[0], f[1], f[2], f[3]]))
                .collect();
            for encoded in [encode(whole), encode(whole).trim_end_matches('=').to_string()] {
                let mut out = Vec::new();
                f32s(&encoded, &mut out).unwrap();
                let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                proptest::prop_assert_eq!(&got, &want);
            }
            // Any text: floats or an error, never a panic, and nothing
            // left behind on an error.
            for t in [text, format!("{}{bad}", encode(&good[..good.len() / 4 * 4]))] {
                let mut out = vec![1.0];
                if f32s(&t, &mut out).is_err() {
                    proptest::prop_assert_eq!(out, vec![1.0]);
                }
            }
        }
    }
}
