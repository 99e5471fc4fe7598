//! Helpers of `tests/web.rs`: the mock provider, clients against it, and
//! JS values made from Rust (fetch functions, streams, timers).

use std::time::Duration;

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use serde_json::Value;
use skyl::web::{Client, EventStream, Timeouts};
use skyl::{
    ClientConfig, Error, Message, Provider, Request, Response, RetryPolicy, StreamEvent, Timeout,
};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The mock provider (`tests/js/mock-server.mjs`), started by
/// `scripts/test`, which passes its URL at compile time.
pub const MOCK: &str = match option_env!("SKYL_MOCK_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:47811",
};

/// The base URL a client of `provider` uses against the mock.
pub fn base_url(provider: Provider) -> String {
    match provider {
        Provider::Anthropic | Provider::Gemini => MOCK.to_string(),
        _ => format!("{MOCK}/v1"),
    }
}

/// A config against the mock, with `x-mock-*` headers for the options.
/// No key by default: a browser's CORS preflight does not let `*` cover
/// `authorization`.
pub fn config(provider: Provider, options: &[(&str, &str)]) -> ClientConfig {
    let mut config = ClientConfig::new(provider);
    config.base_url = Some(base_url(provider));
    config.model = Some("mock-model".into());
    config.headers = options
        .iter()
        .map(|(k, v)| (format!("x-mock-{}", k.replace('_', "-")), v.to_string()))
        .collect();
    config
}

/// Retries quickly, so that tests of retries stay short.
pub fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_delay_ms: 10,
        max_delay_ms: 20,
        ..RetryPolicy::default()
    }
}

/// A client against the mock.
pub fn client(provider: Provider, options: &[(&str, &str)]) -> Client {
    Client::new(config(provider, options)).with_retry(quick_retries(2))
}

/// A client with timeouts in milliseconds (`None`: no limit).
pub fn timed(
    client: Client,
    total: Option<u64>,
    first_byte: Option<u64>,
    idle: Option<u64>,
) -> Client {
    let d = |ms: Option<u64>| ms.map(Duration::from_millis);
    client.with_timeouts(Timeouts {
        total: d(total),
        first_byte: d(first_byte),
        idle: d(idle),
    })
}

pub fn ask(text: &str) -> Request {
    Request {
        messages: vec![Message::user(text)],
        ..Request::default()
    }
}

/// Every event of a stream, and its outcome.
pub async fn collect(mut stream: EventStream) -> (Vec<StreamEvent>, Result<Response, Error>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(e) => {
                assert!(stream.next().await.is_none(), "an error is the last item");
                let outcome = stream.response().await;
                assert_eq!(
                    outcome.as_ref().err(),
                    Some(&e),
                    "response() gives the error"
                );
                return (events, Err(e));
            }
        }
    }
    (events, stream.response().await)
}

/// Waits `ms` (the test's own timer).
pub async fn sleep(ms: u32) {
    let global: JsValue = js_sys::global().into();
    let set: Function = Reflect::get(&global, &"setTimeout".into())
        .unwrap()
        .unchecked_into();
    let promise = Promise::new(&mut |resolve, _| {
        set.call2(&global, &resolve, &JsValue::from(ms)).unwrap();
    });
    JsFuture::from(promise).await.unwrap();
}

/// The milliseconds since the epoch.
pub fn now() -> f64 {
    js_sys::Date::now()
}

/// Sends a plain request through the global fetch: the response.
pub async fn plain_fetch(url: &str, options: &[(&str, &str)], body: &str) -> web_sys::Response {
    let mut request = gloo_net::http::Request::post(url);
    for (k, v) in options {
        request = request.header(&format!("x-mock-{}", k.replace('_', "-")), v);
    }
    let response = request
        .body(body.to_string())
        .unwrap()
        .send()
        .await
        .unwrap();
    response.into()
}

/// The bytes the mock replays for a conformance case, fetched plainly.
pub async fn fixture_bytes(case: &str) -> Vec<u8> {
    let url = format!("{MOCK}/v1/chat/completions");
    let response = plain_fetch(&url, &[("fixture", case)], "{}").await;
    gloo_net::http::Response::from(response)
        .binary()
        .await
        .unwrap()
}

/// What the mock received, for requests that sent `x-mock-scenario:
/// <scenario>`.
pub async fn received(scenario: &str) -> Vec<Value> {
    let text = gloo_net::http::Request::get(&format!("{MOCK}/_requests"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["headers"]["x-mock-scenario"] == scenario)
        .cloned()
        .collect()
}

/// A unique scenario name, so that attempts are counted per test.
pub fn scenario(name: &str) -> String {
    format!("{name}-{}", js_sys::Math::random().to_bits())
}

/// A client whose requests the mock counts under a new scenario named
/// after `name` ([`received`]): the scenario, and the client.
pub fn counted(name: &str, provider: Provider, options: &[(&str, &str)]) -> (String, Client) {
    let name = scenario(name);
    let mut all = vec![("scenario", name.as_str())];
    all.extend_from_slice(options);
    let client = client(provider, &all);
    (name, client)
}

/// A JS function of one argument, from Rust.
pub fn function(f: impl FnMut(JsValue) -> JsValue + 'static) -> Function {
    Closure::<dyn FnMut(JsValue) -> JsValue>::new(f)
        .into_js_value()
        .unchecked_into()
}

/// The global fetch, as a function value.
pub fn global_fetch() -> Function {
    Reflect::get(&js_sys::global(), &"fetch".into())
        .unwrap()
        .unchecked_into()
}

/// A `ReadableStream` that gives `chunks` and then closes, or stays open
/// (`close: false`) until cancelled.
pub fn stream_of(chunks: &[&[u8]], close: bool) -> web_sys::ReadableStream {
    let chunks: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
    let start = Closure::<dyn FnMut(JsValue)>::new(move |controller: JsValue| {
        let enqueue: Function = Reflect::get(&controller, &"enqueue".into())
            .unwrap()
            .unchecked_into();
        for chunk in &chunks {
            enqueue
                .call1(&controller, &Uint8Array::from(chunk.as_slice()))
                .unwrap();
        }
        if close {
            let close: Function = Reflect::get(&controller, &"close".into())
                .unwrap()
                .unchecked_into();
            close.call0(&controller).unwrap();
        }
    });
    let source = Object::new();
    Reflect::set(&source, &"start".into(), &start.into_js_value()).unwrap();
    web_sys::ReadableStream::new_with_underlying_source(&source).unwrap()
}

/// A `Response` of this realm with `body` and `status`.
pub fn response_of(body: &web_sys::ReadableStream, status: u16) -> web_sys::Response {
    let init = web_sys::ResponseInit::new();
    init.set_status(status);
    web_sys::Response::new_with_opt_readable_stream_and_init(Some(body), &init).unwrap()
}

/// A plain object that looks like a `Response` (as one of another realm
/// or a polyfill does) but is not one.
pub fn duck_response(body: &JsValue, status: u16) -> JsValue {
    let object = Object::new();
    Reflect::set(&object, &"status".into(), &JsValue::from(status)).unwrap();
    let headers = Array::of1(&Array::of2(&"x-request-id".into(), &"req_duck".into()));
    Reflect::set(&object, &"headers".into(), &headers).unwrap();
    Reflect::set(&object, &"body".into(), body).unwrap();
    object.into()
}

/// A value as the JSON text `JSON.stringify` writes.
pub fn stringify(value: &JsValue) -> String {
    js_sys::JSON::stringify(value).unwrap().as_string().unwrap()
}

/// JSON text as JS reads it (`JSON.parse`), written back out: the npm
/// package's shape of that text.
pub fn as_js_reads(text: &str) -> String {
    stringify(&js_sys::JSON::parse(text).unwrap())
}

/// Counts the runtime's unhandled promise rejections from now on (Node's
/// `unhandledRejection`, a page's `unhandledrejection`): an object whose
/// `count` goes up with each.
pub fn count_unhandled_rejections() -> Object {
    let register = Function::new_no_args(
        "const seen = { count: 0 };
         const on = (e) => { seen.count++; if (e && e.preventDefault) e.preventDefault(); };
         if (typeof process === 'object' && process && typeof process.on === 'function')
             process.on('unhandledRejection', on);
         else globalThis.addEventListener('unhandledrejection', on);
         return seen;",
    );
    register
        .call0(&JsValue::UNDEFINED)
        .unwrap()
        .unchecked_into()
}

/// Polls `stream` once with a waker that does nothing: true if it is
/// waiting (its next read is out). (The feature `web` needs Rust 1.82
/// already; its tests use `Waker::noop`, 1.85.)
#[clippy::msrv = "1.85"]
pub fn futures_poll_once(stream: &mut EventStream) -> bool {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let mut cx = Context::from_waker(Waker::noop());
    let next = std::pin::pin!(stream.next());
    matches!(next.poll(&mut cx), Poll::Pending)
}

/// Whether `e` is the timeout `which`.
pub fn is_timeout(e: &Error, which: Timeout) -> bool {
    matches!(e, Error::Timeout { which: w, .. } if *w == which)
}
