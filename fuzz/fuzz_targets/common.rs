// Shared by the fuzz targets: provider selection and chunk splitting from
// the input's first bytes, so one corpus entry covers an adapter and a way
// of cutting its body.
#![allow(dead_code)]

use skyl::Provider;

/// The provider named by `byte`.
pub fn provider(byte: u8) -> Provider {
    Provider::ALL[usize::from(byte) % Provider::ALL.len()]
}

/// `body` cut into chunks whose sizes cycle through `sizes` (1..=64 bytes).
pub fn chunks<'a>(body: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes
            .get(i % sizes.len().max(1))
            .map_or(rest.len(), |&s| usize::from(s % 64) + 1);
        let (a, b) = rest.split_at(n.min(rest.len()));
        out.push(a);
        rest = b;
        i += 1;
    }
    out
}
