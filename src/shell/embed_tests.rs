//! The embeddings boundary: what the JS half reads, for a call that
//! succeeds, one that fails with vectors kept, and one refused.

use super::*;
use crate::shell::run::{DONE, FAIL, READ, SEND, WAIT};

fn limits() -> Limits {
    Limits {
        max_retries: 0,
        total: 0.0,
        first_byte: 0.0,
        idle: 0.0,
        seed: 1.0,
    }
}

const CONFIG: &str = r#"{"provider":"openai","apiKey":"sk-secret-key","model":"gpt-chat"}"#;

#[test]
fn a_call_crosses_as_step_codes_then_lengths_and_one_float_array() {
    let mut e = BoundaryEmbed::new(
        CONFIG,
        r#"{"values":["a","b","c"],"maxBatchSize":2,"maxConcurrency":1}"#,
        &limits(),
    );
    assert_eq!(e.invalid(), "");
    assert_eq!(e.workers(), 1);
    assert_eq!(e.next(0), SEND);
    let sent = e.take_output();
    assert!(sent.contains("/embeddings"), "{sent}");
    // The client's chat model is not an embedding model: the default is.
    assert!(
        sent.contains(r#""model":"text-embedding-3-small""#),
        "{sent}"
    );
    assert_eq!(e.responded(0, 200, "[]", 0.0), READ);
    e.feed(0, br#"{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":"AABAQAAAgEA="}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#);
    assert_eq!(e.ended(0), SEND);
    e.take_output();
    assert_eq!(e.responded(0, 500, "[]", 0.0), READ);
    e.feed(
        0,
        br#"{"error":{"message":"boom sk-secret-key","type":"server_error"}}"#,
    );
    assert_eq!(e.ended(0), DONE);
    assert_eq!(e.finish(), FAIL);
    let out = e.take_output();
    assert!(out.contains(r#""lengths":[2,2,null]"#), "{out}");
    assert!(
        out.contains(r#""name":"InternalServerError""#) || out.contains("Server"),
        "{out}"
    );
    assert_eq!(e.take_vectors(), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn a_whole_call_gives_usage_model_and_batches() {
    let mut e = BoundaryEmbed::new(CONFIG, r#"{"values":["a"]}"#, &limits());
    assert_eq!(e.next(0), SEND);
    assert_eq!(e.responded(0, 200, "[]", 0.0), READ);
    e.feed(0, br#"{"data":[{"index":0,"embedding":[0.5]}],"model":"m-1","usage":{"prompt_tokens":1,"total_tokens":1}}"#);
    assert_eq!(e.ended(0), DONE);
    assert_eq!(e.finish(), DONE);
    assert_eq!(
        e.take_output(),
        r#"{"model":"m-1","batches":1,"usage":{"input":1,"total":1},"lengths":[1]}"#
    );
    assert_eq!(e.take_vectors(), [0.5]);
}

#[test]
fn an_invalid_call_names_the_field_and_sends_nothing() {
    let e = BoundaryEmbed::new(CONFIG, r#"{"values":["a",""]}"#, &limits());
    assert_eq!(e.workers(), 0);
    let out = e.invalid();
    assert!(out.contains(r#""path":"values[1]""#), "{out}");
    let e = BoundaryEmbed::new(CONFIG, r#"{"values":"a"}"#, &limits());
    assert!(
        e.invalid().contains(r#""path":"values""#),
        "{}",
        e.invalid()
    );
    let e = BoundaryEmbed::new(
        r#"{"provider":"anthropic","apiKey":"k"}"#,
        r#"{"values":["a"]}"#,
        &limits(),
    );
    assert!(e.invalid().contains("Voyage"), "{}", e.invalid());
}

/// Each worker's wait is its own: the JS half reads it after an await, by
/// which time another worker may have been told to wait longer.
#[test]
fn each_worker_reads_its_own_wait() {
    let retries = Limits {
        max_retries: 1,
        ..limits()
    };
    let mut e = BoundaryEmbed::new(
        CONFIG,
        r#"{"values":["a","b"],"maxBatchSize":1,"maxConcurrency":2}"#,
        &retries,
    );
    assert_eq!((e.next(0), e.next(1)), (SEND, SEND));
    let busy = br#"{"error":{"message":"busy","type":"server_error"}}"#;
    for (w, after) in [(0, "2000"), (1, "9000")] {
        let headers = format!(r#"[["retry-after-ms","{after}"]]"#);
        assert_eq!(e.responded(w, 503, &headers, 0.0), READ);
        e.feed(w, busy);
        assert_eq!(e.ended(w), WAIT);
    }
    assert_eq!(e.timer_ms(WAIT, 0), 2000.0);
    assert_eq!(e.timer_ms(WAIT, 1), 9000.0);
}
