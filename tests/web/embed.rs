//! `skyl::web::Client::embed` against the mock: the vectors in the values'
//! order, a 413 halved, a batch that fails for good with the others kept,
//! and a drop that sends no further batch.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use skyl::{EmbedRequest, Error, Provider};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::*;

fn request(values: &[&str], edit: impl FnOnce(&mut EmbedRequest)) -> EmbedRequest {
    let mut r = EmbedRequest::new(values.iter().copied());
    r.model = Some("emb".into());
    r.dimensions = Some(16);
    edit(&mut r);
    r
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[wasm_bindgen_test]
async fn embed_gives_the_vectors_in_the_values_order() {
    for provider in [Provider::OpenAi, Provider::Gemini] {
        let (name, client) = counted("embed-order", provider, &[]);
        let values = ["my order is late", "reset my password", "my order is late"];
        let r = request(&values, |r| r.max_batch_size = Some(2));
        let out = client.embed(&r).await.unwrap();
        assert_eq!(out.vectors.len(), 3);
        assert!(out.vectors.iter().all(|v| v.len() == 16));
        assert!(
            (norm(&out.vectors[1]) - 1.0).abs() < 1e-4,
            "the mock's vectors are unit length"
        );
        // The same text, the same vector; another text, another.
        assert_eq!(out.vectors[0], out.vectors[2], "{provider}");
        assert_ne!(out.vectors[0], out.vectors[1], "{provider}");
        assert_eq!(out.batches, 2);
        assert_eq!(received(&name).await.len(), 2);
    }
}

#[wasm_bindgen_test]
async fn a_batch_too_large_is_halved() {
    let (name, client) = counted("embed-413", Provider::OpenAiCompat, &[("embed_max", "2")]);
    let values = ["a one", "b two", "c three", "d four"];
    let out = client.embed(&request(&values, |_| {})).await.unwrap();
    assert_eq!(out.vectors.len(), 4);
    assert_eq!(out.batches, 2);
    // The batch of 4 was refused, then its halves sent.
    assert_eq!(received(&name).await.len(), 3);
}

#[wasm_bindgen_test]
async fn a_batch_that_fails_for_good_keeps_the_others() {
    let (_, client) = counted("embed-fail", Provider::OpenAi, &[]);
    let values = ["a one", "b two", "fail three", "d four", "e five"];
    let r = request(&values, |r| {
        r.max_batch_size = Some(2);
        r.max_concurrency = Some(1);
    });
    let failure = client.embed(&r).await.unwrap_err();
    assert!(
        matches!(failure.error, Error::Api(_)),
        "{:?}",
        failure.error
    );
    assert_eq!(failure.failed, [2, 3]);
    assert!([0, 1, 4].iter().all(|&i| failure.vectors[i].is_some()));
}

/// A URL the fetch refuses is the request's typed error at once: not a
/// connection failure retried with backoff.
#[wasm_bindgen_test]
async fn a_bad_base_url_is_a_typed_error_and_not_retried() {
    let mut config = config(Provider::OpenAiCompat, &[]);
    config.base_url = Some("http://bad host:99999/v1".into());
    let client = skyl::web::Client::new(config).with_retry(quick_retries(3));
    let failure = client
        .embed(&request(&["a", "b"], |_| {}))
        .await
        .unwrap_err();
    assert!(
        matches!(&failure.error, Error::InvalidRequest { path, .. } if path == "baseURL"),
        "{:?}",
        failure.error
    );
    assert_eq!(failure.failed, [0, 1]);
}

/// Polls `a` until `ms` have passed, then drops it.
struct Until<F> {
    a: Pin<Box<F>>,
    timer: Pin<Box<dyn Future<Output = ()>>>,
}

impl<F: Future> Future for Until<F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(out) = self.a.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        self.timer.as_mut().poll(cx).map(|()| None)
    }
}

#[wasm_bindgen_test]
async fn dropping_the_call_sends_no_further_batch() {
    let (name, client) = counted("embed-drop", Provider::OpenAi, &[("embed_delay", "300")]);
    let values: Vec<String> = (0..10).map(|i| format!("value {i}")).collect();
    let mut r = EmbedRequest::new(values);
    r.max_batch_size = Some(2);
    r.max_concurrency = Some(2);
    let call = client.embed(&r);
    let out = Until {
        a: Box::pin(call),
        timer: Box::pin(sleep(50)),
    }
    .await;
    assert!(out.is_none(), "the call was still running");
    sleep(500).await;
    assert_eq!(
        received(&name).await.len(),
        2,
        "only the two batches in flight were sent"
    );
}
