//! The native Rust core on benchmark input (the ceiling for skyl itself):
//! `cargo run --release --example bench_native -- <provider> <chunks-file> <runs>`.
//! The chunks file is `u32 count, then (u32 length, bytes)*`, little endian,
//! written by bench/run.mjs (or bench/dump.mjs). Prints one JSON line of
//! per-run milliseconds. Each run is one call of `decode`, which a profile
//! can single out: `valgrind --tool=callgrind
//! --toggle-collect='bench_native::decode' target/release/examples/bench_native
//! <provider> <file> 1` counts the instructions of 4 runs (3 warm-ups).
//!
//! With a fourth argument `boundary`, each run goes through the JS
//! boundary's stream decoder instead (`BoundaryStream`: the events
//! written as the strings the wasm hands to JS), in `decode_boundary`:
//! all that skyl's wasm does per chunk, natively.

use std::time::Instant;

use skyl::{Error, Provider, StreamDecoder, StreamEvent};

/// One run: the chunks through a fresh decoder. The tool calls handed out.
#[inline(never)]
fn decode(provider: Provider, chunks: &[Vec<u8>]) -> Result<usize, Error> {
    let mut decoder = StreamDecoder::new(provider);
    let mut events = Vec::new();
    let mut calls = 0;
    for c in chunks {
        decoder.feed(c, &mut events)?;
        calls += events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCall { .. }))
            .count();
        events.clear();
    }
    let response = decoder.finish(&mut events)?;
    std::hint::black_box(&response);
    Ok(calls)
}

/// One run through the boundary: the bytes of output handed to JS.
#[inline(never)]
fn decode_boundary(provider: &str, chunks: &[Vec<u8>]) -> Result<usize, String> {
    let mut decoder = skyl::__shell::BoundaryStream::new(provider, None)?;
    let mut out = 0;
    for c in chunks {
        out += std::hint::black_box(decoder.feed(c)).len();
    }
    Ok(out + std::hint::black_box(decoder.finish()).len())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let provider = Provider::from_name(args.get(1).map_or("", String::as_str)).ok_or("provider")?;
    let data = std::fs::read(args.get(2).ok_or("chunks file")?)?;
    let runs: usize = args.get(3).map_or(Ok(15), |s| s.parse())?;
    let boundary = args.get(4).is_some_and(|a| a == "boundary");
    let mut chunks = Vec::new();
    let word = |at: usize| -> Result<usize, Box<dyn std::error::Error>> {
        let b: [u8; 4] = data.get(at..at + 4).ok_or("truncated")?.try_into()?;
        Ok(u32::from_le_bytes(b) as usize)
    };
    let count = word(0)?;
    let mut at = 4;
    for _ in 0..count {
        let n = word(at)?;
        chunks.push(data.get(at + 4..at + 4 + n).ok_or("truncated")?.to_vec());
        at += 4 + n;
    }
    let mut times = Vec::new();
    let mut calls = 0;
    for i in 0..runs + 3 {
        let start = Instant::now();
        if boundary {
            std::hint::black_box(decode_boundary(provider.name(), &chunks)?);
        } else {
            calls += decode(provider, &chunks)?;
        }
        if i >= 3 {
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    // (Through the boundary, calls are not counted: it hands out strings.)
    println!("{{\"wall\":{times:?},\"calls\":{}}}", calls / (runs + 3));
    Ok(())
}
