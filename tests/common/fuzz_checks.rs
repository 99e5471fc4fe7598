//! The invariants the fuzz targets check, shared with
//! `tests/fuzz_regressions.rs`, which replays saved inputs through them.
//! Each function takes raw fuzz input and panics if an invariant breaks.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use skyl::{ClientConfig, Provider, Request, StreamDecoder, StreamEvent};
use skyl::{EventStreamParser, PartialEvents, PartialJson, SseParser};

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

fn sse_decode(chunks: &[&[u8]]) -> (Vec<skyl::SseEvent>, Result<bool, skyl::Error>) {
    let mut d = SseParser::with_max_event_bytes(4096);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let r = d.finish(&mut out);
    (out, r)
}

/// The SSE decoder: never panics; chunking never changes the events.
pub fn sse(data: &[u8]) {
    let (sizes, body) = data.split_at(data.len().min(4));
    let whole = sse_decode(&[body]);
    let split = sse_decode(&chunks(body, sizes));
    assert_eq!(whole.1.is_err(), split.1.is_err());
    if whole.1.is_ok() {
        assert_eq!(whole.0, split.0);
    }
}

type Messages = (Vec<skyl::EventStreamMessage>, Result<usize, skyl::Error>);

fn eventstream_decode(chunks: &[&[u8]]) -> Messages {
    let mut p = EventStreamParser::with_max_message_bytes(1 << 16);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = p.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let left = p.finish();
    (out, Ok(left))
}

/// AWS's event stream parser (Bedrock): never panics; chunking changes
/// neither the messages nor the error; what a body leaves unread is less
/// than a message.
pub fn eventstream(data: &[u8]) {
    let (sizes, body) = data.split_at(data.len().min(4));
    let whole = eventstream_decode(&[body]);
    let split = eventstream_decode(&chunks(body, sizes));
    assert_eq!(whole, split, "chunking changed the result");
    if let Ok(left) = whole.1 {
        assert!(left <= body.len());
    }
}

/// Whether `text` is one JSON object, as `JSON.parse` takes it: at any
/// depth, a lone surrogate's escape included. serde_json checks it, skipping
/// the value without building it: that is iterative, with no nesting limit
/// and no surrogate check (building a `Value` stops at 128 levels, where
/// valid arguments may go deeper).
fn whole_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

type Outcome = (Vec<StreamEvent>, Result<skyl::Response, skyl::Error>);

fn stream_decode(p: Provider, chunks: &[&[u8]]) -> Outcome {
    stream_decode_with(p, chunks, PartialEvents::default())
}

fn stream_decode_with(p: Provider, chunks: &[&[u8]], which: PartialEvents) -> Outcome {
    let mut d = StreamDecoder::with_max_event_bytes(p, 1 << 16).with_partial_events(which);
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

/// Every adapter's stream path: never panics; chunking changes nothing; a
/// tool_call event is a whole JSON object with an id and a name; the final
/// response lists exactly the emitted calls.
pub fn stream(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let (sizes, body) = rest.split_at(rest.len().min(3));
    let p = provider(which);
    let whole = stream_decode(p, &[body]);
    let split = stream_decode(p, &chunks(body, sizes));
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
        assert!(whole_object(&c.arguments), "whole JSON: {}", c.arguments);
        assert!(!c.id.is_empty() && !c.name.is_empty());
    }
    if let Ok(r) = &whole.1 {
        assert_eq!(r.tool_calls, calls);
    }
    progress(p, body, &whole);
}

/// With every progress event asked for: the other events and the outcome
/// are unchanged, and each call's deltas concatenate to its arguments.
fn progress(p: Provider, body: &[u8], plain: &Outcome) {
    let all = PartialEvents {
        tools: true,
        output: true,
        files: true,
    };
    let with = stream_decode_with(p, &[body], all);
    let progress = |e: &StreamEvent| {
        matches!(
            e,
            StreamEvent::ToolCallStart { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::OutputDelta { .. }
                | StreamEvent::FilePartial { .. }
        )
    };
    let rest: Vec<StreamEvent> = with.0.iter().filter(|e| !progress(e)).cloned().collect();
    if let Some(i) = (0..rest.len().max(plain.0.len())).find(|&i| rest.get(i) != plain.0.get(i)) {
        panic!(
            "progress changed event {i}: {:?}\n vs {:?}",
            rest.get(i),
            plain.0.get(i)
        );
    }
    // (An error may say events were handed out where, without progress,
    // none was: that is the progress events, and right.)
    assert_eq!(
        with.1.as_ref().ok(),
        plain.1.as_ref().ok(),
        "progress changed the response"
    );
    let error = |o: &Outcome| {
        o.1.as_ref()
            .err()
            .map(|e| (e.to_string(), e.partial().cloned()))
    };
    assert_eq!(error(&with), error(plain), "progress changed the error");
    // By index: a provider may give two calls one id. (id, text, called)
    let mut calls: Vec<(&str, String, bool)> = Vec::new();
    for e in &with.0 {
        match e {
            StreamEvent::ToolCallStart { id, index, .. } => {
                assert_eq!(*index, calls.len(), "indices in order");
                calls.push((id, String::new(), false));
            }
            StreamEvent::ToolCallDelta {
                id,
                index,
                arguments_delta,
                ..
            } => {
                let call = calls.get_mut(*index).expect("a delta after its start");
                assert!(
                    call.0 == id && !call.2,
                    "a delta of its own call, before it"
                );
                call.1.push_str(arguments_delta);
            }
            StreamEvent::ToolCall { call, .. } => {
                // (With one id for two calls, one cut off, either may be
                // this one: the one whose deltas are its arguments.)
                let seen = calls
                    .iter_mut()
                    .find(|c| c.0 == call.id && !c.2 && c.1 == call.arguments)
                    .expect("a started call whose deltas are its arguments");
                seen.2 = true;
            }
            _ => {}
        }
    }
}

/// The incremental JSON reader: never panics, whatever the text and its
/// pieces; on JSON, it reaches the final value. (Each value so far is
/// consistent with the final one only without duplicate keys, whose
/// earlier value the last one replaces: the property tests check that,
/// on generated JSON.)
pub fn partial(data: &[u8]) {
    let (sizes, body) = data.split_at(data.len().min(4));
    let text = String::from_utf8_lossy(body);
    let whole: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let mut reader = PartialJson::new();
    let mut at = 0;
    for piece in chunks(text.as_bytes(), sizes) {
        // (Cut at character boundaries: a piece is text.)
        let end = (at + piece.len()..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        reader.push(&text[at..end]);
        at = end;
        if at == text.len() {
            break;
        }
    }
    if let Some(whole) = &whole {
        reader.push(" ");
        // (serde_json's nesting limit is 128, the reader's 127.)
        if !reader.failed() {
            assert_eq!(reader.value(), Some(whole));
        }
    }
}

/// Non-streaming and error decoders: never panic; calls are whole objects.
pub fn response(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let p = provider(which);
    let body = String::from_utf8_lossy(rest);
    if let Ok(r) = skyl::decode_response(p, &body) {
        for c in &r.tool_calls {
            assert!(whole_object(&c.arguments), "whole JSON: {}", c.arguments);
        }
    }
    let status = 400 + u16::from(which % 200);
    let headers = [(
        "retry-after".to_string(),
        body.chars().take(12).collect::<String>(),
    )];
    let _ = skyl::decode_error(p, status, &headers, &body);
}

/// Request encoding from arbitrary JSON: never panics; bodies are JSON.
pub fn request(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<Request>(data) else {
        return;
    };
    for p in Provider::ALL {
        let mut config = ClientConfig::new(p);
        config.base_url = Some("http://127.0.0.1:1".into());
        config.model = Some("m".into());
        for stream in [false, true] {
            if let Ok(http) = skyl::encode_request(&config, &request, stream) {
                serde_json::from_str::<serde_json::Value>(&http.body).expect("a JSON body");
            }
        }
    }
}
