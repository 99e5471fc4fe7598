//! The event stream parser on the recorded Bedrock streams (every
//! chunking), on broken and oversized messages, on every header type, and
//! on arbitrary bytes.

use std::path::PathBuf;

use super::*;

/// Every recorded Bedrock stream body: (case, bytes).
fn recorded() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/bedrock");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eventstream"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// `bytes` fed in pieces of `size`, then finished.
fn parse(bytes: &[u8], size: usize) -> Result<(Vec<EventStreamMessage>, usize), Error> {
    let mut p = EventStreamParser::new();
    let mut out = Vec::new();
    for piece in bytes.chunks(size.max(1)) {
        p.feed(piece, &mut out)?;
    }
    Ok((out, p.finish()))
}

#[test]
fn every_recorded_stream_reads_the_same_in_any_chunking() {
    let cases = recorded();
    assert_eq!(cases.len(), 30, "the corpus's streams");
    let mut messages = 0;
    for (name, bytes) in &cases {
        let (whole, left) = parse(bytes, bytes.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(left, 0, "{name}");
        assert!(!whole.is_empty(), "{name}");
        for size in [1, 2, 3, 7, 11, 12, 13, 16, 64, 1000] {
            let (pieces, left) = parse(bytes, size).unwrap();
            assert_eq!((&pieces, left), (&whole, 0), "{name} in pieces of {size}");
        }
        for m in &whole {
            // Each message is an event or an exception, named by a header,
            // with a JSON payload.
            let kind = m.header(":message-type");
            let named = match kind {
                Some("event") => m.header(":event-type"),
                Some("exception") => m.header(":exception-type"),
                other => panic!("{name}: message type {other:?}"),
            };
            assert!(named.is_some_and(|n| !n.is_empty()), "{name}");
            assert_eq!(
                m.header(":content-type"),
                Some("application/json"),
                "{name}"
            );
            serde_json::from_slice::<serde_json::Value>(&m.payload)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        messages += whole.len();
        // Framed again with string headers in the same order: the same
        // bytes (the builder's framing, and the captured body's).
        let again: Vec<u8> = (whole.iter())
            .flat_map(|m| {
                let headers: Vec<(&str, &str)> = (m.headers.iter())
                    .map(|(k, v)| match v {
                        HeaderValue::String(s) => (k.as_str(), s.as_str()),
                        other => panic!("{name}: {other:?}"),
                    })
                    .collect();
                encode_message(&headers, &m.payload)
            })
            .collect();
        assert!(again == *bytes, "{name}: framed again, other bytes");
    }
    assert!(messages > 300, "{messages} messages");
}

#[test]
fn the_captured_body_reads_as_bedrock_sent_it() {
    let (_, bytes) = (recorded().into_iter())
        .find(|(n, _)| n.starts_with("issue-18994-live-converse-stream"))
        .unwrap();
    let (messages, _) = parse(&bytes, 5).unwrap();
    let types: Vec<&str> = (messages.iter())
        .map(|m| m.header(":event-type").unwrap())
        .collect();
    assert_eq!(types[0], "messageStart");
    assert_eq!(types[types.len() - 1], "metadata");
    // Real payloads carry the padding field `p`.
    assert!(messages
        .iter()
        .all(
            |m| serde_json::from_slice::<serde_json::Value>(&m.payload).unwrap()["p"].is_string()
        ));
}

#[test]
fn a_bad_crc_anywhere_is_a_malformed_stream_in_any_chunking() {
    let good = encode_message(
        &[(":event-type", "messageStop")],
        br#"{"stopReason":"end_turn"}"#,
    );
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        for size in [1, 5, bad.len()] {
            match parse(&bad, size) {
                Err(Error::MalformedStream { message, .. }) => {
                    assert!(message.starts_with("event stream: "), "{message}")
                }
                // A flipped length can make the message look longer: it is
                // then cut, or over the limit.
                Err(Error::EventTooLarge { .. }) => assert!(at < 4, "byte {at}"),
                Ok((messages, left)) => {
                    assert!(
                        at < 8 && messages.is_empty() && left > 0,
                        "byte {at}: {messages:?}"
                    )
                }
                Err(e) => panic!("byte {at}: {e}"),
            }
        }
    }
}

#[test]
fn a_message_over_the_limit_is_refused_at_its_prelude_before_it_is_buffered() {
    let big = encode_message(&[(":event-type", "contentBlockDelta")], &vec![b'x'; 4096]);
    let mut p = EventStreamParser::with_max_message_bytes(1024);
    assert_eq!(p.max_message_bytes(), 1024);
    let mut out = Vec::new();
    // The prelude alone says so.
    assert_eq!(
        p.feed(&big[..12], &mut out),
        Err(Error::event_too_large(1024))
    );
    // At the limit exactly, it passes.
    let mut p = EventStreamParser::with_max_message_bytes(big.len());
    p.feed(&big, &mut out).unwrap();
    assert_eq!(out.len(), 1);
}

#[test]
fn a_body_cut_inside_a_message_leaves_its_bytes_for_the_decoder_to_report() {
    let one = encode_message(
        &[(":event-type", "messageStart")],
        br#"{"role":"assistant"}"#,
    );
    let mut two = one.clone();
    two.extend_from_slice(&one[..20]);
    let (messages, left) = parse(&two, 3).unwrap();
    assert_eq!((messages.len(), left), (1, 20));
}

#[test]
fn every_header_type_is_read_and_a_bad_one_is_malformed() {
    let mut headers = Vec::new();
    let mut add = |name: &str, kind: u8, value: &[u8]| {
        headers.push(name.len() as u8);
        headers.extend_from_slice(name.as_bytes());
        headers.push(kind);
        headers.extend_from_slice(value);
    };
    add("t", 0, &[]);
    add("f", 1, &[]);
    add("b", 2, &[0xFF]);
    add("s", 3, &(-2i16).to_be_bytes());
    add("i", 4, &7i32.to_be_bytes());
    add("l", 5, &(-9i64).to_be_bytes());
    add("x", 6, &[0, 2, 0xAB, 0xCD]);
    add("u", 7, &[0, 2, b'h', b'i']);
    add("d", 8, &1_700_000_000_000i64.to_be_bytes());
    add("g", 9, &[7; 16]);
    let frame = |headers: &[u8]| {
        let total = (16 + headers.len() + 2) as u32;
        let mut m = total.to_be_bytes().to_vec();
        m.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        let c = crc32(0, &m);
        m.extend_from_slice(&c.to_be_bytes());
        m.extend_from_slice(headers);
        m.extend_from_slice(b"{}");
        let c = crc32(0, &m);
        m.extend_from_slice(&c.to_be_bytes());
        m
    };
    let (messages, _) = parse(&frame(&headers), 4).unwrap();
    let got: Vec<&HeaderValue> = messages[0].headers.iter().map(|(_, v)| v).collect();
    assert_eq!(
        got,
        [
            &HeaderValue::Bool(true),
            &HeaderValue::Bool(false),
            &HeaderValue::Byte(-1),
            &HeaderValue::Short(-2),
            &HeaderValue::Int(7),
            &HeaderValue::Long(-9),
            &HeaderValue::Bytes(vec![0xAB, 0xCD]),
            &HeaderValue::String("hi".into()),
            &HeaderValue::Timestamp(1_700_000_000_000),
            &HeaderValue::Uuid([7; 16]),
        ]
    );
    assert_eq!(messages[0].header("u"), Some("hi"));
    assert_eq!(messages[0].header("i"), None, "not a string");
    for (bad, why) in [
        (vec![1, b'n', 10], "unknown value type 10"),
        (vec![1, b'n', 7, 0, 9, b'a'], "runs past"),
        (vec![1, b'n', 7, 0, 1, 0xFF], "not UTF-8"),
        (vec![5, b'n'], "runs past"),
    ] {
        match parse(&frame(&bad), 100) {
            Err(Error::MalformedStream { message, .. }) => {
                assert!(message.contains(why), "{message}")
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn crc32_is_zlibs() {
    // zlib.crc32(b"123456789") == 0xCBF43926, the check value of CRC-32.
    assert_eq!(crc32(0, b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(crc32(0, b"1234"), b"56789"), 0xCBF4_3926);
    assert_eq!(crc32(0, b""), 0);
}

#[cfg(not(target_arch = "wasm32"))]
proptest::proptest! {
    #[test]
    fn any_bytes_are_messages_or_an_error_never_a_panic(
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
        size in 1usize..40,
    ) {
        let _ = parse(&bytes, size);
        let mut p = EventStreamParser::with_max_message_bytes(64);
        let _ = p.feed(&bytes, &mut Vec::new());
    }

    #[test]
    fn valid_messages_read_back_in_any_chunking(
        payloads in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..80), 1..6),
        size in 1usize..50,
    ) {
        let bytes: Vec<u8> = (payloads.iter())
            .flat_map(|p| encode_message(&[(":event-type", "e"), (":message-type", "event")], p))
            .collect();
        let (messages, left) = parse(&bytes, size).unwrap();
        proptest::prop_assert_eq!(left, 0);
        let got: Vec<Vec<u8>> = messages.into_iter().map(|m| m.payload).collect();
        proptest::prop_assert_eq!(got, payloads);
    }
}
