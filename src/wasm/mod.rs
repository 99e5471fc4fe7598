//! The Rust half of the JavaScript shell (wasm32 only): `#[wasm_bindgen]`
//! wrappers over [`crate::jsapi`], and the panic hook. The only module that
//! names wasm-bindgen or js-sys.
//!
//! The JS half, `src/wasm/js/`, does what belongs to the JS runtime: `fetch`
//! and the `ReadableStream` reader, timers, `AbortSignal`, the async
//! iterator and the `Error` subclasses. Every protocol decision (encoding,
//! decoding, error typing, retry policy) is made here, in Rust.

use wasm_bindgen::prelude::*;

use crate::jsapi;

/// Encodes a request; see [`jsapi::encode`].
#[wasm_bindgen(js_name = encodeRequest)]
pub fn encode_request(config_json: &str, request_json: &str, stream: bool) -> String {
    jsapi::encode(config_json, request_json, stream)
}

/// Decodes a non-streaming body; see [`jsapi::response`].
#[wasm_bindgen(js_name = decodeResponse)]
pub fn decode_response(provider: &str, body: &str) -> String {
    jsapi::response(provider, body)
}

/// Decodes an HTTP error response; see [`jsapi::http_error`].
#[wasm_bindgen(js_name = decodeHttpError)]
pub fn decode_http_error(provider: &str, status: u16, headers_json: &str, body: &str) -> String {
    jsapi::http_error(provider, status, headers_json, body)
}

/// Validates a tool, tool call or request; see [`jsapi::validate`].
#[wasm_bindgen]
pub fn validate(kind: &str, json: &str) -> String {
    jsapi::validate(kind, json)
}

/// The delay before the next retry, or -1; see [`jsapi::retry_delay`].
#[wasm_bindgen(js_name = retryDelay)]
pub fn retry_delay(retries_done: u32, max_retries: u32, retry_after_ms: f64, random: f64) -> f64 {
    jsapi::retry_delay(retries_done, max_retries, retry_after_ms, random)
}

/// A stream decoder: bytes in, JSON events out.
#[wasm_bindgen]
pub struct Decoder(jsapi::JsonDecoder);

#[wasm_bindgen]
impl Decoder {
    /// A decoder for `provider`; throws the error JSON for an unknown one.
    #[wasm_bindgen(constructor)]
    pub fn new(provider: &str, max_event_bytes: Option<u32>) -> Result<Decoder, JsValue> {
        jsapi::JsonDecoder::new(provider, max_event_bytes.map(|n| n as usize))
            .map(Decoder)
            .map_err(|e| JsValue::from_str(&e))
    }

    /// Feeds a chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        self.0.feed(chunk)
    }

    /// Ends the body.
    pub fn finish(&mut self) -> String {
        self.0.finish()
    }

    /// Whether any event has been handed out.
    #[wasm_bindgen(js_name = eventsEmitted)]
    pub fn events_emitted(&self) -> bool {
        self.0.events_emitted()
    }

    /// Whether the provider's terminal frame has been decoded.
    #[wasm_bindgen(js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.0.is_complete()
    }

    /// What has been assembled so far.
    pub fn partial(&self) -> String {
        self.0.partial()
    }
}

/// Installs a panic hook that hands the panic message to `report` before
/// the instance aborts. A panic is a bug (no input should cause one); after
/// it this wasm instance is unusable and must be loaded again.
#[wasm_bindgen(js_name = setPanicHook)]
pub fn set_panic_hook(report: js_sys::Function) {
    std::panic::set_hook(Box::new(move |info| {
        let _ = report.call1(&JsValue::NULL, &JsValue::from_str(&info.to_string()));
    }));
}
