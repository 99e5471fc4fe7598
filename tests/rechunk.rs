//! Chunk boundaries never change the result: every recorded stream, split
//! into two chunks, gives exactly the events and outcome of the whole body.
//!
//! - Streams up to 24 KiB (45 of 64): split at every byte offset.
//! - Larger streams: split at every place a boundary bug lives (before, inside
//!   and after line ends, including between CR and LF, and inside every
//!   multi-byte UTF-8 character, up to a budget) plus an even spread. Every
//!   offset of them all would be ~280 G byte-decodes.
//! - Every stream, one byte per chunk.
//!
//! Random multi-way splits are in `properties.rs` (proptest).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{decode_chunked as decode, Case, Outcome};
use libtest_mimic::{Arguments, Failed, Trial};

const EVERY_OFFSET_LIMIT: usize = 24 * 1024;

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for case in common::stream_cases() {
        let c = case.clone();
        trials.push(Trial::test(
            format!("two_chunks/{}", case.id()),
            move || two_chunks(&c),
        ));
        trials.push(Trial::test(
            format!("one_byte_chunks/{}", case.id()),
            move || one_byte_chunks(&case),
        ));
    }
    libtest_mimic::run(&args, trials).exit();
}

fn compare(reference: &Outcome, got: &Outcome, how: &str) -> Result<(), Failed> {
    if reference.0.len() != got.0.len() {
        return Err(format!(
            "{how}: {} events instead of {}",
            got.0.len(),
            reference.0.len()
        )
        .into());
    }
    if let Some(i) = (0..got.0.len()).find(|&i| got.0[i] != reference.0[i]) {
        return Err(format!(
            "{how}: event {i} differs:\n  whole: {:?}\n  split: {:?}",
            reference.0[i], got.0[i]
        )
        .into());
    }
    if reference.1 != got.1 {
        return Err(format!("{how}: the outcome differs").into());
    }
    Ok(())
}

/// The split points tested for a body.
fn offsets(body: &[u8]) -> Vec<usize> {
    let n = body.len();
    if n <= EVERY_OFFSET_LIMIT {
        return (1..n).collect();
    }
    let mut at = Vec::new();
    let line_ends: Vec<usize> = (0..n)
        .filter(|&i| matches!(body[i], b'\r' | b'\n'))
        .collect();
    let step = (line_ends.len() / 96).max(1);
    for &i in line_ends.iter().step_by(step) {
        at.extend([i, i + 1, i + 2]);
    }
    let multibyte: Vec<usize> = (0..n).filter(|&i| body[i] >= 0xC0).collect();
    let step = (multibyte.len() / 32).max(1);
    for &i in multibyte.iter().step_by(step) {
        at.extend([i + 1, i + 2, i + 3]);
    }
    at.extend((1..64).map(|k| k * n / 64));
    at.retain(|&k| k > 0 && k < n);
    at.sort_unstable();
    at.dedup();
    at
}

fn two_chunks(case: &Case) -> Result<(), Failed> {
    let body = case.body();
    let reference = decode(case.provider, &[&body]);
    let points = offsets(&body);
    if points.is_empty() {
        return Err("no split points".into());
    }
    for k in points {
        let (a, b) = body.split_at(k);
        compare(
            &reference,
            &decode(case.provider, &[a, b]),
            &format!("split at byte {k}"),
        )?;
    }
    Ok(())
}

fn one_byte_chunks(case: &Case) -> Result<(), Failed> {
    let body = case.body();
    let reference = decode(case.provider, &[&body]);
    let chunks: Vec<&[u8]> = body.chunks(1).collect();
    compare(
        &reference,
        &decode(case.provider, &chunks),
        "one byte per chunk",
    )
}
