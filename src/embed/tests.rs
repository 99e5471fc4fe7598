//! The embed machine, stepped input by input: batching, halving, retries,
//! failures that keep what arrived, abort; and the golden request bodies.

use std::path::Path;

use serde_json::{json, Value};

use super::*;
use crate::model::EmbedEncoding;

fn config(provider: Provider) -> ClientConfig {
    let c = ClientConfig::new(provider).with_api_key("test-key");
    if provider.needs_base_url() {
        c.with_base_url("http://127.0.0.1:1/v1")
    } else {
        c
    }
}

fn values(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("value {i}")).collect()
}

fn machine(provider: Provider, n: usize, edit: impl FnOnce(&mut EmbedRequest)) -> EmbedMachine {
    let mut r = EmbedRequest::new(values(n));
    r.model = Some("m".into());
    edit(&mut r);
    let retry = RetryPolicy {
        max_retries: 1,
        ..RetryPolicy::default()
    };
    EmbedMachine::new(config(provider), r, retry, Timers::default(), 1).unwrap()
}

/// The vector the tests' server gives value `i`: `[i, i + 0.5]`.
fn vector_of(i: usize) -> [f32; 2] {
    [i as f32, i as f32 + 0.5]
}

fn base64_of(xs: &[f32]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c.iter().enumerate()).fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            s.push(if i <= c.len() {
                char::from(A[(n >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    s
}

/// An OpenAI answer for the values `range`, items in reverse order (the
/// machine places them by `index`), odd ones as floats, even as base64.
fn openai_answer(range: Range<usize>) -> String {
    let data: Vec<Value> = (range.clone())
        .enumerate()
        .rev()
        .map(|(k, i)| {
            let v = vector_of(i);
            let embedding = if i % 2 == 1 {
                json!(v)
            } else {
                json!(base64_of(&v))
            };
            json!({"object": "embedding", "index": k, "embedding": embedding})
        })
        .collect();
    let n = range.len();
    json!({"object": "list", "data": data, "model": "m-answered",
        "usage": {"prompt_tokens": n, "total_tokens": n}})
    .to_string()
}

/// The values a request body carries.
fn sent(http: &HttpRequest) -> Vec<String> {
    let body: Value = serde_json::from_str(&http.body).unwrap();
    if let Some(input) = body.get("input") {
        return serde_json::from_value(input.clone()).unwrap();
    }
    let text = |c: &Value| {
        c["content"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    match body.get("requests") {
        Some(Value::Array(rs)) => rs.iter().map(text).collect(),
        _ => vec![text(&body)],
    }
}

fn range_of(http: &HttpRequest) -> Range<usize> {
    let v = sent(http);
    let first: usize = v[0].strip_prefix("value ").unwrap().parse().unwrap();
    first..first + v.len()
}

fn send(step: EmbedStep) -> HttpRequest {
    match step {
        EmbedStep::Send(http) => http,
        other => panic!("expected a send, got {other:?}"),
    }
}

/// Answers worker `w`'s request with `status` and `body`.
fn answer(m: &mut EmbedMachine, w: usize, status: u16, body: &str) -> EmbedStep {
    assert!(matches!(
        m.responded(w, status, Vec::new(), 0),
        EmbedStep::Read
    ));
    m.feed(w, body.as_bytes());
    m.ended(w)
}

#[test]
fn five_thousand_values_split_by_each_providers_limit() {
    let cases = [
        (Provider::OpenAi, None, vec![2048, 2048, 904]),
        (Provider::Responses, None, vec![2048, 2048, 904]),
        (Provider::OpenAiCompat, Some(32), vec![32; 157]),
        (Provider::Gemini, None, vec![100; 50]),
    ];
    for (provider, max, mut sizes) in cases {
        if max == Some(32) {
            sizes[156] = 5000 - 156 * 32;
        }
        let m = machine(provider, 5000, |r| r.max_batch_size = max);
        let got: Vec<usize> = m.batches().iter().map(Range::len).collect();
        assert_eq!(got, sizes, "{provider}");
        assert_eq!(
            m.workers(),
            sizes.len().min(DEFAULT_EMBED_CONCURRENCY as usize)
        );
    }
}

#[test]
fn answers_in_any_order_and_either_form_keep_the_values_order() {
    let mut m = machine(Provider::OpenAi, 10, |r| r.max_batch_size = Some(3));
    assert_eq!(m.workers(), 4);
    let mut in_flight: Vec<(usize, Range<usize>)> =
        (0..4).map(|w| (w, range_of(&send(m.next(w))))).collect();
    // Answer the last first; each worker then takes the next batch.
    while let Some((w, range)) = in_flight.pop() {
        match answer(&mut m, w, 200, &openai_answer(range)) {
            EmbedStep::Send(http) => in_flight.insert(0, (w, range_of(&http))),
            EmbedStep::Idle => {}
            other => panic!("{other:?}"),
        }
    }
    let result = m.finish().unwrap();
    let want: Vec<Vec<f32>> = (0..10).map(|i| vector_of(i).to_vec()).collect();
    assert_eq!(result.vectors, want);
    assert_eq!(result.batches, 4);
    assert_eq!(result.model.as_deref(), Some("m-answered"));
    let usage = result.usage.unwrap();
    assert_eq!((usage.input, usage.total), (Some(10), Some(10)));
}

#[test]
fn a_malformed_base64_vector_is_an_error_naming_the_item() {
    let mut m = machine(Provider::OpenAi, 2, |_| {});
    send(m.next(0));
    let body = json!({"object": "list", "data": [
        {"object": "embedding", "index": 0, "embedding": base64_of(&[1.0])},
        {"object": "embedding", "index": 1, "embedding": "AAAAAAA="},
    ], "model": "m"})
    .to_string();
    assert!(matches!(answer(&mut m, 0, 200, &body), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    let message = failure.error.to_string();
    assert!(message.contains("data[1].embedding"), "{message}");
    assert!(message.contains("4-byte"), "{message}");
    assert_eq!(failure.failed, [0, 1]);
}

#[test]
fn a_batch_too_large_is_halved_and_both_halves_are_sent() {
    let mut m = machine(Provider::OpenAiCompat, 4, |r| r.max_concurrency = Some(1));
    assert_eq!(range_of(&send(m.next(0))), 0..4);
    let too_large =
        r#"{"error":"batch size 4 > maximum allowed batch size 2","error_type":"Validation"}"#;
    let half = send(answer(&mut m, 0, 413, too_large));
    assert_eq!(range_of(&half), 0..2);
    let second = send(answer(&mut m, 0, 200, &openai_answer(0..2)));
    assert_eq!(range_of(&second), 2..4);
    assert!(matches!(
        answer(&mut m, 0, 200, &openai_answer(2..4)),
        EmbedStep::Idle
    ));
    let result = m.finish().unwrap();
    assert_eq!(result.vectors.len(), 4);
    assert_eq!(result.batches, 2);
    // A 400 that says so is halved too; one that says something else is not.
    let mut m = machine(Provider::OpenAi, 4, |_| {});
    send(m.next(0));
    let said = r#"{"error":{"message":"'$.input' is too long. Maximum length is 2048.","type":"invalid_request_error"}}"#;
    assert_eq!(range_of(&send(answer(&mut m, 0, 400, said))), 0..2);
    let other = r#"{"error":{"message":"invalid model ID","type":"invalid_request_error"}}"#;
    assert!(matches!(answer(&mut m, 0, 400, other), EmbedStep::Idle));
    assert!(m.finish().is_err());
}

#[test]
fn a_batch_that_fails_for_good_keeps_the_others() {
    let mut m = machine(Provider::OpenAi, 6, |r| {
        r.max_batch_size = Some(2);
        r.max_concurrency = Some(1);
    });
    assert_eq!(range_of(&send(m.next(0))), 0..2);
    let next = send(answer(&mut m, 0, 200, &openai_answer(0..2)));
    assert_eq!(range_of(&next), 2..4);
    // A 500, retried once, then given up: the next batch still goes.
    let server = r#"{"error":{"message":"boom","type":"server_error"}}"#;
    assert!(matches!(answer(&mut m, 0, 500, server), EmbedStep::Wait(_)));
    assert_eq!(range_of(&send(m.waited(0))), 2..4);
    let last = send(answer(&mut m, 0, 500, server));
    assert_eq!(range_of(&last), 4..6);
    assert!(matches!(
        answer(&mut m, 0, 200, &openai_answer(4..6)),
        EmbedStep::Idle
    ));
    let failure = m.finish().unwrap_err();
    assert_eq!(failure.failed, [2, 3]);
    assert_eq!(failure.vectors[0].as_deref(), Some(&vector_of(0)[..]));
    assert_eq!(failure.vectors[5].as_deref(), Some(&vector_of(5)[..]));
    assert!(matches!(failure.error, Error::Api(_)));
}

#[test]
fn a_failure_every_batch_would_share_sends_nothing_more() {
    let mut m = machine(Provider::OpenAi, 6, |r| {
        r.max_batch_size = Some(2);
        r.max_concurrency = Some(2);
    });
    send(m.next(0));
    send(m.next(1));
    let auth = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    assert!(matches!(answer(&mut m, 0, 401, auth), EmbedStep::Idle));
    // The batch in flight is kept; no third batch is sent.
    assert!(matches!(
        answer(&mut m, 1, 200, &openai_answer(2..4)),
        EmbedStep::Idle
    ));
    let failure = m.finish().unwrap_err();
    assert_eq!(failure.failed, [0, 1, 4, 5]);
    assert!(failure.vectors[2].is_some());
}

/// A batch waiting to be tried again when another's failure stops every
/// batch is not sent again, nor is one that fails after it.
#[test]
fn a_shared_failure_ends_the_retries_of_the_other_batches() {
    let mut m = machine(Provider::OpenAi, 6, |r| {
        r.max_batch_size = Some(2);
        r.max_concurrency = Some(3);
    });
    send(m.next(0));
    send(m.next(1));
    send(m.next(2));
    let busy = r#"{"error":{"message":"The server had an error","type":"server_error"}}"#;
    assert!(matches!(answer(&mut m, 0, 500, busy), EmbedStep::Wait(_)));
    let missing = r#"{"error":{"message":"The model `m` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
    assert!(matches!(answer(&mut m, 1, 404, missing), EmbedStep::Idle));
    assert!(matches!(m.waited(0), EmbedStep::Idle));
    assert!(matches!(answer(&mut m, 2, 500, busy), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    assert_eq!(failure.failed, [0, 1, 2, 3, 4, 5]);
    assert!(
        matches!(&failure.error, Error::Api(api) if api.status == Some(404)),
        "{:?}",
        failure.error
    );
}

#[test]
fn an_abort_sends_no_further_batch_and_keeps_what_came() {
    let mut m = machine(Provider::Gemini, 300, |r| r.max_concurrency = Some(2));
    let first = send(m.next(0));
    assert!(first.url.ends_with(":batchEmbedContents"), "{}", first.url);
    send(m.next(1));
    let vectors: Vec<Value> = (0..100).map(|i| json!({"values": vector_of(i)})).collect();
    let body = json!({ "embeddings": vectors }).to_string();
    // Worker 0's batch arrives; then the caller aborts.
    assert!(matches!(
        m.responded(0, 200, Vec::new(), 0),
        EmbedStep::Read
    ));
    m.feed(0, body.as_bytes());
    assert_eq!(m.abort(Some("user")), Cancel::Run);
    assert!(matches!(m.ended(0), EmbedStep::Idle));
    assert!(matches!(m.unreachable(1, "aborted"), EmbedStep::Idle));
    assert!(matches!(m.next(0), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    assert!(matches!(failure.error, Error::Aborted { .. }));
    assert_eq!(failure.failed, (0..300).collect::<Vec<_>>());
}

#[test]
fn a_timer_ends_the_attempt_and_the_total_one_the_call() {
    let mut r = EmbedRequest::new(values(2));
    r.model = Some("m".into());
    let timers = Timers::new(Some(10_000), Some(100), None);
    let mut m = EmbedMachine::new(
        config(Provider::OpenAi),
        r,
        RetryPolicy::default(),
        timers,
        3,
    )
    .unwrap();
    let step = m.next(0);
    assert_eq!(m.timer(&step), Some((Timeout::FirstByte, 100)));
    assert_eq!(m.expired(0, Timeout::FirstByte), Cancel::Attempt);
    // The driver's fetch ends (cancelled): the timeout is retried.
    assert!(matches!(m.unreachable(0, "aborted"), EmbedStep::Wait(_)));
    send(m.waited(0));
    assert_eq!(m.expired(0, Timeout::Total), Cancel::Run);
    assert!(matches!(m.unreachable(0, "aborted"), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    assert!(matches!(
        failure.error,
        Error::Timeout {
            which: Timeout::Total,
            ..
        }
    ));
}

#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    let make = |provider: Provider, edit: &dyn Fn(&mut EmbedRequest)| {
        let mut r = EmbedRequest::new(["a", "b"]);
        edit(&mut r);
        EmbedMachine::new(
            config(provider),
            r,
            RetryPolicy::default(),
            Timers::default(),
            0,
        )
        .unwrap_err()
    };
    let path = |e: Error| match e {
        Error::InvalidRequest { path, message } => (path, message),
        other => panic!("{other:?}"),
    };
    let (p, m) = path(make(Provider::Anthropic, &|_| {}));
    assert_eq!(p, "provider");
    assert!(m.contains("Voyage") && m.contains("openaicompat"), "{m}");
    let (p, _) = path(make(Provider::OpenAi, &|r| {
        r.task_type = Some("RETRIEVAL_QUERY".into())
    }));
    assert_eq!(p, "taskType");
    let (p, _) = path(make(Provider::OpenAi, &|r| r.values[1].clear()));
    assert_eq!(p, "values[1]");
    let (p, _) = path(make(Provider::OpenAiCompat, &|_| {}));
    assert_eq!(p, "model");
    let (p, _) = path(make(Provider::Gemini, &|r| r.dimensions = Some(0)));
    assert_eq!(p, "dimensions");
    let (p, _) = path(make(Provider::Gemini, &|r| r.max_concurrency = Some(0)));
    assert_eq!(p, "maxConcurrency");
    // A timer of 0 ms would cut every attempt at once.
    let mut r = EmbedRequest::new(["a"]);
    r.model = Some("m".into());
    let timers = Timers::new(None, None, Some(0));
    let e = EmbedMachine::new(
        config(Provider::OpenAi),
        r,
        RetryPolicy::default(),
        timers,
        0,
    );
    assert_eq!(path(e.unwrap_err()).0, "timeout.idle");
}

#[test]
fn no_values_are_no_requests() {
    let mut m = machine(Provider::OpenAi, 0, |_| {});
    assert_eq!(m.workers(), 0);
    let result = m.finish().unwrap();
    assert!(result.vectors.is_empty());
    assert_eq!(result.batches, 0);
}

#[test]
fn a_gemini_single_value_uses_embed_content() {
    let mut m = machine(Provider::Gemini, 1, |r| {
        r.task_type = Some("RETRIEVAL_QUERY".into())
    });
    let http = send(m.next(0));
    assert!(
        http.url.ends_with("/v1beta/models/m:embedContent"),
        "{}",
        http.url
    );
    let body = r#"{"embedding": {"values": [0.25, -1.5e-3, 3]}}"#;
    assert!(matches!(answer(&mut m, 0, 200, body), EmbedStep::Idle));
    assert_eq!(m.finish().unwrap().vectors, vec![vec![0.25, -1.5e-3, 3.0]]);
}

/// The encoded request of each provider, as a JSON document.
fn golden_case(provider: Provider) -> Value {
    let mut r = EmbedRequest::new(["The food was delicious.", "Ein Satz."]);
    r.model = Some(match provider {
        Provider::Gemini => "gemini-embedding-001".into(),
        _ => "text-embedding-3-small".into(),
    });
    r.dimensions = Some(256);
    if provider == Provider::Gemini {
        r.task_type = Some("RETRIEVAL_DOCUMENT".into());
    }
    if provider == Provider::OpenAiCompat {
        r.encoding = EmbedEncoding::Float;
    }
    let mut m = EmbedMachine::new(
        config(provider),
        r,
        RetryPolicy::default(),
        Timers::default(),
        0,
    )
    .unwrap();
    let http = send(m.next(0));
    json!({
        "method": http.method,
        "url": http.url,
        "headers": http.headers,
        "body": serde_json::from_str::<Value>(&http.body).unwrap(),
    })
}

#[test]
fn golden_request_bodies_per_provider() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/embed");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("openai.schema.json")).unwrap())
            .unwrap();
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiCompat,
        Provider::Gemini,
        Provider::Responses,
    ] {
        let got = golden_case(provider);
        let file = dir.join(format!("{provider}.json"));
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(&file, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        }
        let want: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            got, want,
            "{provider}: BLESS=1 rewrites tests/golden/embed/"
        );
        if provider != Provider::Gemini {
            // OpenAI's published OpenAPI schema of the request body.
            crate::model::schema::check_arguments(&schema["request"], &got["body"])
                .unwrap_or_else(|e| panic!("{provider}: {e:?}"));
        }
    }
    // The schema is not a formality: a body it refuses is refused.
    let bad = json!({"model": "m", "input": [], "encoding_format": "hex"});
    assert!(crate::model::schema::check_arguments(&schema["request"], &bad).is_err());
}

#[test]
fn an_error_inside_a_200_is_typed_as_the_providers_error() {
    let mut m = machine(Provider::OpenAi, 1, |r| r.max_batch_size = Some(1));
    send(m.next(0));
    let body =
        r#"{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    assert!(matches!(answer(&mut m, 0, 200, body), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    let Error::Api(api) = &failure.error else {
        panic!("{:?}", failure.error)
    };
    assert_eq!(api.message, "quota");
}

#[test]
fn a_value_too_long_alone_fails_only_itself() {
    let mut m = machine(Provider::OpenAi, 4, |r| r.max_concurrency = Some(1));
    assert_eq!(range_of(&send(m.next(0))), 0..4);
    let long = r#"{"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 9000 tokens","type":"invalid_request_error"}}"#;
    // 0..4 halves to 0..2, which halves to 0..1: value 0 is the long one.
    assert_eq!(range_of(&send(answer(&mut m, 0, 400, long))), 0..2);
    assert_eq!(range_of(&send(answer(&mut m, 0, 400, long))), 0..1);
    assert_eq!(range_of(&send(answer(&mut m, 0, 400, long))), 1..2);
    assert_eq!(
        range_of(&send(answer(&mut m, 0, 200, &openai_answer(1..2)))),
        2..4
    );
    assert!(matches!(
        answer(&mut m, 0, 200, &openai_answer(2..4)),
        EmbedStep::Idle
    ));
    let failure = m.finish().unwrap_err();
    assert_eq!(failure.failed, [0]);
    assert!(matches!(failure.error, Error::Api(_)));
}

/// A request the driver's transport refuses before sending (a URL its
/// fetch cannot make a `Request` of) is the driver's typed error, not a
/// connection failure: not retried, and no other batch is sent.
#[test]
fn a_request_the_transport_refuses_is_not_retried() {
    let mut m = machine(Provider::OpenAi, 4, |r| {
        r.max_batch_size = Some(1);
        r.max_concurrency = Some(2);
    });
    send(m.next(0));
    send(m.next(1));
    let refused = Error::invalid_request("baseURL", "fetch refuses the URL");
    assert!(matches!(m.refused(0, refused.clone()), EmbedStep::Idle));
    // Worker 1's batch was already on its way: it ends, and no batch follows.
    assert!(matches!(
        answer(&mut m, 1, 200, &openai_answer(1..2)),
        EmbedStep::Idle
    ));
    // A worker not sending has nothing to refuse.
    assert!(matches!(m.refused(1, refused.clone()), EmbedStep::Idle));
    let failure = m.finish().unwrap_err();
    assert_eq!(failure.error, refused);
    assert_eq!(failure.failed, [0, 2, 3]);
    assert!(failure.vectors[1].is_some());
}
