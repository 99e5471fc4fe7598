//! SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for request
//! signing (AWS Signature Version 4) in the sans-IO core: small, with no
//! dependency, and checked against the published test vectors.

/// The first 32 bits of the fractional parts of the cube roots of the
/// first 64 primes.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The first 32 bits of the fractional parts of the square roots of the
/// first 8 primes.
const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// A SHA-256 computation fed in pieces.
#[derive(Clone)]
pub(crate) struct Sha256 {
    state: [u32; 8],
    block: [u8; 64],
    /// Bytes in `block`.
    filled: usize,
    /// Bytes fed in all.
    len: u64,
}

impl Sha256 {
    pub(crate) fn new() -> Self {
        Sha256 {
            state: H0,
            block: [0; 64],
            filled: 0,
            len: 0,
        }
    }

    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len() as u64);
        while !bytes.is_empty() {
            let room = 64 - self.filled;
            let (head, tail) = bytes.split_at(room.min(bytes.len()));
            if let Some(dst) = self.block.get_mut(self.filled..self.filled + head.len()) {
                dst.copy_from_slice(head);
            }
            self.filled += head.len();
            bytes = tail;
            if self.filled == 64 {
                compress(&mut self.state, &self.block);
                self.filled = 0;
            }
        }
    }

    pub(crate) fn finish(mut self) -> [u8; 32] {
        let bits = self.len.wrapping_mul(8);
        self.update(&[0x80]);
        while self.filled != 56 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        let mut out = [0u8; 32];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

/// One 64-byte block into the state.
fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes(bytes.try_into().unwrap_or_default());
    }
    // (Reads through `get`: the indices are in range by construction, and
    // nothing in the core may panic.)
    let at = |w: &[u32; 64], i: usize| w.get(i).copied().unwrap_or(0);
    for i in 16..64 {
        let (w15, w2) = (at(&w, i - 15), at(&w, i - 2));
        let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        let next = (at(&w, i - 16))
            .wrapping_add(s0)
            .wrapping_add(at(&w, i - 7))
            .wrapping_add(s1);
        if let Some(slot) = w.get_mut(i) {
            *slot = next;
        }
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (k, w) in K.iter().zip(w) {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(*k)
            .wrapping_add(w);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(bytes);
    h.finish()
}

/// HMAC-SHA-256 of `message` under `key`.
pub(crate) fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    let hashed;
    let key = if key.len() > 64 {
        hashed = sha256(key);
        hashed.as_slice()
    } else {
        key
    };
    if let Some(dst) = k.get_mut(..key.len()) {
        dst.copy_from_slice(key);
    }
    let pad = |byte: u8| k.map(|b| b ^ byte);
    let mut inner = Sha256::new();
    inner.update(&pad(0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(&pad(0x5c));
    outer.update(&inner.finish());
    outer.finish()
}

/// Lowercase hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    let digit = |n: u8| char::from(DIGITS.get(usize::from(n)).copied().unwrap_or(b'0'));
    for b in bytes {
        out.push(digit(b >> 4));
        out.push(digit(b & 15));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-4's examples (NIST's "SHA-256 example" pages) and the
    /// million-`a` vector.
    #[test]
    fn sha256_gives_the_published_digests() {
        for (input, want) in [
            (
                &b""[..],
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                b"abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
        ] {
            assert_eq!(hex(&sha256(input)), want);
        }
        let mut h = Sha256::new();
        for _ in 0..1000 {
            h.update(&[b'a'; 1000]);
        }
        assert_eq!(
            hex(&h.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        // Any split gives the same digest.
        let text = b"The quick brown fox jumps over the lazy dog, and again, and again.";
        for cut in 0..text.len() {
            let mut h = Sha256::new();
            h.update(&text[..cut]);
            h.update(&text[cut..]);
            assert_eq!(h.finish(), sha256(text), "cut at {cut}");
        }
    }

    /// RFC 4231's test cases 1, 2, 4, 6 and 7 (6 and 7: a key longer
    /// than a block).
    #[test]
    fn hmac_gives_rfc_4231s_values() {
        let cases: [(Vec<u8>, &[u8], &str); 5] = [
            (
                vec![0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                (1..=25).collect(),
                &[0xcd; 50],
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
            (
                vec![0xaa; 131],
                b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            ),
        ];
        for (key, data, want) in cases {
            assert_eq!(hex(&hmac(&key, data)), want);
        }
    }
}
