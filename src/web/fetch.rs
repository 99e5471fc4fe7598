//! Sending a request: gloo-net's request builder makes the `Request` (with
//! the attempt's abort signal), and the global `fetch` or the caller's own
//! function sends it. The answer is read as a `Response` of this realm
//! (through gloo-net) or, from a custom fetch, by duck typing: a `Response`
//! of another realm or a polyfill fails `instanceof`.
//!
//! gloo-net's own `send` is not used: it panics when `fetch` resolves to
//! anything but a `Response` of this realm, and a custom or patched fetch
//! may. Here that is an [`Error::InvalidResponse`]. Its builder is given
//! only input it cannot fail on in a way that panics (see [`build`]).

use gloo_net::http::{Headers, Method, RequestBuilder};
use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::abort::{Cut, Gate};
use super::js;
use crate::error::Error;
use crate::http::HttpRequest;

/// What a fetch answered: a response, read the same whatever its realm.
pub(crate) struct Answer {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The headers, names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    /// The body (a `ReadableStream` or a stream-like object), if it has one.
    pub(crate) body: Option<JsValue>,
    /// The response object itself (its `text()` reads a body that is not a
    /// stream).
    pub(crate) response: JsValue,
}

impl Answer {
    /// Whether the status is a success (2xx).
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Reads `value` as a response: one of this realm through gloo-net, or
    /// any object with a numeric `status` and a `body` or `text()`.
    pub(crate) fn read(value: JsValue) -> Result<Answer, Error> {
        if let Ok(native) = value.clone().dyn_into::<web_sys::Response>() {
            let response = gloo_net::http::Response::from(native);
            return Ok(Answer {
                status: response.status(),
                headers: js::header_pairs(&response.headers().into_raw()),
                body: response.body().map(JsValue::from),
                response: value,
            });
        }
        let status = js::get(&value, "status").as_f64();
        let body = Some(js::get(&value, "body")).filter(|b| b.is_object());
        let readable = body.is_some() || js::method(&value, "text").is_some();
        match status {
            Some(s) if s.fract() == 0.0 && (0.0..1000.0).contains(&s) && readable => Ok(Answer {
                status: s as u16,
                headers: js::header_pairs(&js::get(&value, "headers")),
                body,
                response: value,
            }),
            _ => Err(Error::InvalidResponse {
                message: format!(
                    "the fetch function returned {}, not a Response",
                    js::describe(&value)
                ),
            }),
        }
    }
}

/// The `Request` for `http`, with the attempt's `signal`. A URL or header
/// that fetch refuses is an [`Error::InvalidRequest`]; no header value is
/// quoted (it may be the key).
pub(crate) fn build(
    http: &HttpRequest,
    signal: Option<&AbortSignal>,
) -> Result<web_sys::Request, Error> {
    let headers = web_sys::Headers::new().map_err(|e| Error::InvalidRequest {
        path: "headers".into(),
        message: format!("cannot make Headers: {}", js::message(&e)),
    })?;
    for (name, value) in &http.headers {
        if headers.set(name, value).is_err() {
            return Err(Error::InvalidRequest {
                path: format!("headers.{name}"),
                message: "fetch refuses this header's name or value".into(),
            });
        }
    }
    // gloo-net's builder panics on an exception that is not an `Error` of
    // this realm: the URL is tried first with the same constructor it
    // calls, which resolves a relative URL against the page as fetch does.
    if let Err(e) = web_sys::Request::new_with_str(&http.url) {
        return Err(Error::InvalidRequest {
            path: "baseURL".into(),
            message: format!("fetch refuses the URL {}: {}", http.url, js::message(&e)),
        });
    }
    RequestBuilder::new(&http.url)
        .method(Method::POST)
        .headers(Headers::from_raw(headers))
        .abort_signal(signal)
        .body(http.body.as_str())
        .map(web_sys::Request::from)
        .map_err(|e| Error::InvalidRequest {
            path: "baseURL".into(),
            message: format!("fetch refuses the URL {}: {e}", http.url),
        })
}

/// Sends `request` with `fetch` (the global one when `None`) and waits,
/// through `gate`, for its response: the response, a cut, or the error
/// the fetch threw or rejected with.
pub(crate) async fn send(
    fetch: Option<&Function>,
    request: &web_sys::Request,
    gate: &Gate,
) -> Result<Result<JsValue, JsValue>, Cut> {
    let called = match fetch {
        Some(f) => f.call1(&JsValue::UNDEFINED, request),
        None => {
            let global: JsValue = js_sys::global().into();
            match js::method(&global, "fetch") {
                Some(f) => f.call1(&global, request),
                None => Err(JsValue::from_str("this runtime has no global fetch")),
            }
        }
    };
    let value = match called {
        Ok(value) => value,
        Err(thrown) => return Ok(Err(thrown)),
    };
    if !js::is_thenable(&value) {
        return Ok(Ok(value));
    }
    gate.guard(JsFuture::from(Promise::resolve(&value))).await
}
