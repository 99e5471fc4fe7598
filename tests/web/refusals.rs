//! `skyl::web` refusing what it cannot send, and never showing a key:
//! timeouts and base URLs it refuses before sending, a custom fetch or
//! body that misbehaves, and the key in no error.

use std::time::Duration;

use js_sys::Promise;
use skyl::web::{Client, Timeouts};
use skyl::{ApiErrorKind, EmbedRequest, Error, Provider};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use super::support::*;

/// A limit under 1 ms would cut every attempt at once: a typed error
/// naming it, and nothing sent (embeddings too).
#[wasm_bindgen_test]
async fn a_timeout_under_a_millisecond_is_refused_before_sending() {
    let (name, client) = counted("zero-timeout", Provider::OpenAi, &[]);
    let client = client.with_timeouts(Timeouts {
        idle: Some(Duration::from_micros(500)),
        ..Timeouts::default()
    });
    let e = client.stream(&ask("Hi")).response().await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path == "timeout.idle"),
        "{e:?}"
    );
    let mut request = EmbedRequest::new(["a"]);
    request.model = Some("emb".into());
    let failure = client.embed(&request).await.unwrap_err();
    assert!(
        matches!(&failure.error, Error::InvalidRequest { path, .. } if path == "timeout.idle"),
        "{:?}",
        failure.error
    );
    assert_eq!(received(&name).await.len(), 0);
}

#[wasm_bindgen_test]
async fn a_bad_base_url_is_a_typed_error() {
    for url in ["http://bad host:99999/v1", "http://[::1/v1"] {
        let mut config = config(Provider::OpenAiCompat, &[]);
        config.base_url = Some(url.into());
        let e = Client::new(config)
            .stream(&ask("Hi"))
            .response()
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidRequest { path, .. } if path == "baseURL"),
            "{url}: {e:?}"
        );
    }
    // A URL that parses but where nothing listens.
    let mut config = config(Provider::OpenAiCompat, &[]);
    config.base_url = Some("http://127.0.0.1:9/v1".into());
    let client = Client::new(config).with_retry(quick_retries(0));
    let e = client.complete(&ask("Hi")).await.unwrap_err();
    assert!(matches!(e, Error::Connection { .. }), "{e:?}");
    assert!(e.retryable());
}

/// A body whose chunk is not bytes (a custom fetch's stream) breaks as a
/// connection does: the error keeps what came, as the JS driver's does.
#[wasm_bindgen_test]
async fn a_chunk_that_is_not_bytes_breaks_the_body_and_keeps_what_came() {
    let make = js_sys::Function::new_no_args(
        "return new ReadableStream({ start(c) { \
           c.enqueue(new TextEncoder().encode('data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\\n\\n')); \
           c.enqueue(42); } })",
    );
    let fetch = function(move |_| {
        let body = make.call0(&JsValue::NULL).unwrap();
        Promise::resolve(&duck_response(&body, 200)).into()
    });
    let client = client(Provider::OpenAi, &[])
        .with_retry(quick_retries(1))
        .with_fetch(fetch);
    let (events, outcome) = collect(client.stream(&ask("Hi"))).await;
    let e = outcome.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Connection {
                events_emitted: true,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!events.is_empty());
    assert_eq!(e.partial().map(|p| p.text.as_str()), Some("Hi"));
    assert!(e.to_string().contains("a body chunk must be bytes"), "{e}");
}

#[wasm_bindgen_test]
async fn a_custom_fetch_that_misbehaves_is_a_typed_error() {
    let answers: [fn() -> JsValue; 4] = [
        || JsValue::from(42),
        || JsValue::NULL,
        || Promise::resolve(&JsValue::from_str("not a response")).into(),
        || Promise::reject(&js_sys::Error::new("no network")).into(),
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let client = client(Provider::OpenAi, &[])
            .with_retry(quick_retries(0))
            .with_fetch(function(move |_| answer()));
        let e = client.stream(&ask("Hi")).response().await.unwrap_err();
        match i {
            3 => assert!(matches!(e, Error::Connection { .. }), "{e:?}"),
            _ => assert!(matches!(e, Error::InvalidResponse { .. }), "{i}: {e:?}"),
        }
    }
}

#[wasm_bindgen_test]
async fn a_body_that_is_not_sse_is_a_typed_error() {
    for body in [
        &b"<html>Bad gateway</html>"[..],
        b"",
        b"\xff\xfe\x00garbage",
        b"{\"half\":",
    ] {
        let fetch = function(move |_| response_of(&stream_of(&[body], true), 200).into());
        let client = client(Provider::Anthropic, &[]).with_fetch(fetch);
        let e = client.stream(&ask("Hi")).response().await.unwrap_err();
        assert!(
            matches!(
                e,
                Error::StreamEndedEarly { .. } | Error::MalformedStream { .. }
            ),
            "{body:?}: {e:?}"
        );
    }
}

#[wasm_bindgen_test]
async fn the_key_is_in_no_error() {
    const KEY: &str = "sk-ant-test-SECRET-0042";
    let check = |e: &Error| {
        for shown in [e.to_string(), format!("{e:?}")] {
            assert!(!shown.contains(KEY), "{shown}");
        }
    };
    // A server that echoes the key it got (x-api-key passes CORS).
    let name = scenario("key");
    let mut config = config(
        Provider::Anthropic,
        &[("scenario", &name), ("fail", "401,401"), ("echo_key", "1")],
    );
    config.api_key = Some(KEY.into());
    // (In Chromium's page too: on purpose.)
    config.browser = true;
    let client = Client::new(config.clone());
    let e = client.stream(&ask("Hi")).response().await.unwrap_err();
    assert!(matches!(&e, Error::Api(api) if api.kind == ApiErrorKind::Authentication));
    assert!(e.to_string().contains("[redacted]"), "{e}");
    check(&e);
    check(&client.complete(&ask("Hi")).await.unwrap_err());
    // A fetch that throws with the key in its message.
    let fetch =
        function(|_| Promise::reject(&js_sys::Error::new(&format!("bad key {KEY}"))).into());
    let client = Client::new(config.clone())
        .with_retry(quick_retries(0))
        .with_fetch(fetch);
    check(&client.stream(&ask("Hi")).response().await.unwrap_err());
    // A key that fetch would refuse as a header value: refused by the
    // core's header rule before anything is sent, naming the option.
    config.api_key = Some(format!("{KEY}\n€"));
    let e = Client::new(config)
        .stream(&ask("Hi"))
        .response()
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path == "apiKey"),
        "{e:?}"
    );
    check(&e);
}

/// A fallback whose URL the fetch refuses, once the first provider has
/// failed: the request fails naming that entry's option, not the
/// client's, and goes to no other provider.
#[wasm_bindgen_test]
async fn a_fallback_url_the_fetch_refuses_is_named_by_its_entry() {
    let name = scenario("fallback-bad-url");
    let mut next = config(Provider::Anthropic, &[]);
    next.base_url = Some("http://[::1/v1".into());
    let first = config(Provider::OpenAi, &[("scenario", &name), ("fail", "500")]);
    let client = Client::new(first)
        .with_retry(quick_retries(0))
        .with_fallback(skyl::Fallback::new().then(next, quick_retries(0)));
    let e = client.complete(&ask("Hi")).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path == "fallback[0].baseURL"),
        "{e:?}"
    );
    assert_eq!(received(&name).await.len(), 1);
}

/// In a browser page, a config with a credential of its own is refused
/// (every visitor could read it) unless it says `browser`, as the npm
/// package refuses one without `dangerouslyAllowBrowser`: nothing is sent,
/// and the error names the config. Outside a page (Node) it goes.
#[wasm_bindgen_test]
async fn a_key_in_a_browser_page_needs_the_config_to_say_so() {
    let in_page = js_sys::Reflect::has(&js_sys::global(), &"document".into()).unwrap_or(false);
    let name = scenario("browser-key");
    let keyed = || {
        let mut c = config(Provider::OpenAi, &[("scenario", &name)]);
        c.api_key = Some("sk-test-browser-0001".into());
        c
    };
    let plain = config(Provider::Anthropic, &[("scenario", &name)]);
    let own = Client::new(keyed()).complete(&ask("Hi")).await;
    let behind = Client::new(plain.clone())
        .with_retry(quick_retries(0))
        .with_fallback(skyl::Fallback::new().then(keyed(), quick_retries(0)))
        .complete(&ask("Hi"))
        .await;
    let mut embed = EmbedRequest::new(["a"]);
    embed.model = Some("emb".into());
    let embedded = Client::new(keyed()).embed(&embed).await;
    if in_page {
        let path = |e: &Error| match e {
            Error::InvalidRequest { path, .. } => path.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(path(&own.unwrap_err()), "browser");
        assert_eq!(path(&behind.unwrap_err()), "fallback[0].browser");
        assert_eq!(path(&embedded.unwrap_err().error), "browser");
        assert!(received(&name).await.is_empty(), "nothing sent");
    } else {
        own.unwrap();
        behind.unwrap();
        embedded.unwrap();
    }
    // Said so: sent from the page as well.
    let allowed = Client::new(keyed().with_browser(true));
    assert!(allowed.complete(&ask("Hi")).await.is_ok());
    // A config without a credential of its own (a server of yours adds it).
    assert!(Client::new(plain).complete(&ask("Hi")).await.is_ok());
}
