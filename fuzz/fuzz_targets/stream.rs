//! Every adapter's stream path (SSE -> frame decoder -> accumulator) on
//! arbitrary bodies: never panics; chunking never changes the events or
//! outcome; a tool_call event is always a whole JSON object with an id and a
//! name, and the final response lists exactly the calls that were emitted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skyl::{StreamDecoder, StreamEvent};

#[path = "common.rs"]
mod common;

fn decode(
    p: skyl::Provider,
    chunks: &[&[u8]],
) -> (Vec<StreamEvent>, Result<skyl::Response, skyl::Error>) {
    let mut d = StreamDecoder::with_max_event_bytes(p, 1 << 16);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let r = d.finish(&mut out);
    let _ = d.partial();
    (out, r)
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let (sizes, body) = rest.split_at(rest.len().min(3));
    let p = common::provider(which);
    let whole = decode(p, &[body]);
    let split = decode(p, &common::chunks(body, sizes));
    assert_eq!(whole, split, "chunking changed the result");
    let calls: Vec<_> = whole
        .0
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall { call, .. } => Some(call.clone()),
            _ => None,
        })
        .collect();
    for c in &calls {
        let v: serde_json::Value = serde_json::from_str(&c.arguments).expect("whole JSON");
        assert!(v.is_object());
        assert!(!c.id.is_empty() && !c.name.is_empty());
    }
    if let Ok(r) = &whole.1 {
        assert_eq!(r.tool_calls, calls);
    }
});
