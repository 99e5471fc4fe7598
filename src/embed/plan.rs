//! How an embeddings call's values are split into batches.

use std::ops::Range;

/// The values in order, cut into consecutive batches of at most `max`
/// values and, when `max_bytes` is given, at most that many UTF-8 bytes
/// (a value longer than that alone is a batch of its own).
pub(crate) fn batches(values: &[String], max: u32, max_bytes: Option<usize>) -> Vec<Range<usize>> {
    let max = (max as usize).max(1);
    let limit = max_bytes.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0usize;
    for (i, v) in values.iter().enumerate() {
        let full = i - start == max || (i > start && bytes.saturating_add(v.len()) > limit);
        if full {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes = bytes.saturating_add(v.len());
    }
    if start < values.len() {
        out.push(start..values.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(lens: &[usize]) -> Vec<String> {
        lens.iter().map(|&n| "x".repeat(n)).collect()
    }

    #[test]
    fn batches_are_consecutive_and_cover_every_value_once() {
        let v = values(&[1; 5000]);
        for (max, bytes) in [(2048, Some(300_000)), (100, None), (32, None), (1, None)] {
            let b = batches(&v, max, bytes);
            assert_eq!(b.first().map(|r| r.start), Some(0));
            assert_eq!(b.last().map(|r| r.end), Some(5000));
            assert!(b.windows(2).all(|w| w[0].end == w[1].start));
            assert!(b.iter().all(|r| !r.is_empty() && r.len() <= max as usize));
            assert_eq!(b.len(), 5000usize.div_ceil(max as usize), "max {max}");
        }
    }

    #[test]
    fn the_byte_bound_is_never_passed_but_by_a_lone_value() {
        let v = values(&[120_000, 120_000, 120_000, 400_000, 10, 299_990, 10]);
        let b = batches(&v, 2048, Some(300_000));
        assert_eq!(b, vec![0..2, 2..3, 3..4, 4..6, 6..7]);
        for r in &b {
            let sum: usize = v[r.clone()].iter().map(String::len).sum();
            assert!(sum <= 300_000 || r.len() == 1, "{r:?}: {sum}");
        }
    }

    #[test]
    fn no_values_are_no_batches() {
        assert!(batches(&[], 10, None).is_empty());
    }
}
