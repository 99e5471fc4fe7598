//! The SSE decoder on arbitrary bytes: never panics, and cutting the input
//! into chunks never changes the events (or the error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skyl::sse::SseDecoder;

#[path = "common.rs"]
mod common;

fn decode(chunks: &[&[u8]]) -> (Vec<skyl::sse::SseEvent>, Result<bool, skyl::Error>) {
    let mut d = SseDecoder::with_max_event_bytes(4096);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let r = d.finish(&mut out);
    (out, r)
}

fuzz_target!(|data: &[u8]| {
    let (sizes, body) = data.split_at(data.len().min(4));
    let whole = decode(&[body]);
    let split = decode(&common::chunks(body, sizes));
    // An event-size error may surface at a different point, but whatever
    // came before it is the same and the outcome kind agrees.
    assert_eq!(whole.1.is_err(), split.1.is_err());
    if whole.1.is_ok() {
        assert_eq!(whole.0, split.0);
    }
});
