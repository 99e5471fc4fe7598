//! The Rust half of the JavaScript shell (wasm32 only): `#[wasm_bindgen]`
//! wrappers over [`crate::shell`], and the panic hook. The only module of
//! the shell that names wasm-bindgen or js-sys; beside it, the JS half loads
//! the glue wasm-bindgen generates from these wrappers, and `web/` (the Rust
//! driver, feature `web`) names the wasm crates too.
//!
//! The JS half, `src/shell/js/`, does what belongs to the JS runtime: `fetch`
//! and the `ReadableStream` reader, timers, `AbortSignal`, the async
//! iterator and the `Error` subclasses. Every protocol decision (encoding,
//! decoding, error typing) and every driver decision (retries, timeouts,
//! transport errors; `crate::policy`) is made here, in Rust.

use wasm_bindgen::prelude::*;

use crate::shell as jsapi;

/// The boundary format's version; see [`jsapi::boundary_version`].
#[wasm_bindgen(js_name = boundaryVersion)]
pub fn boundary_version() -> u32 {
    jsapi::boundary_version()
}

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
pub fn decode_http_error(
    provider: &str,
    status: u16,
    headers_json: &str,
    body: &str,
    now_ms: f64,
) -> String {
    jsapi::http_error(provider, status, headers_json, body, now_ms)
}

/// Validates a tool, tool call or request; see [`jsapi::validate`].
#[wasm_bindgen]
pub fn validate(kind: &str, json: &str) -> String {
    jsapi::validate(kind, json)
}

/// The delay before the next retry, or -1; see [`jsapi::retry_delay`].
#[wasm_bindgen(js_name = retryDelay)]
pub fn retry_delay(
    retries_done: u32,
    max_retries: u32,
    retryable: bool,
    events_emitted: bool,
    retry_after_ms: f64,
    random: f64,
) -> f64 {
    jsapi::retry_delay(
        retries_done,
        max_retries,
        retryable,
        events_emitted,
        retry_after_ms,
        random,
    )
}

/// What interrupted the driver (a timer, the connection, an abort); see
/// [`jsapi::interrupt`].
#[wasm_bindgen]
pub fn interrupt(provider: &str, json: &str) -> String {
    jsapi::interrupt(provider, json)
}

/// A response's request id; see [`jsapi::request_id`].
#[wasm_bindgen(js_name = requestId)]
pub fn request_id(headers_json: &str) -> String {
    jsapi::request_id(headers_json)
}

/// A stream decoder: bytes in, JSON events out.
///
/// Chunks go in through [`feed`](Self::feed), or, without an allocation
/// per chunk, by copying them into the module's memory at
/// [`input_buffer`](Self::input_buffer) and calling
/// [`feed_input`](Self::feed_input).
#[wasm_bindgen]
pub struct Decoder {
    inner: jsapi::BoundaryStream,
    input: Vec<u8>,
    output: String,
}

#[wasm_bindgen]
impl Decoder {
    /// A decoder for `provider`; throws the error JSON for an unknown one.
    #[wasm_bindgen(constructor)]
    pub fn new(provider: &str, max_event_bytes: Option<u32>) -> Result<Decoder, JsValue> {
        jsapi::BoundaryStream::new(provider, max_event_bytes.map(|n| n as usize))
            .map(|inner| Decoder {
                inner,
                input: Vec::new(),
                output: String::new(),
            })
            .map_err(|e| JsValue::from_str(&e))
    }

    /// Feeds a chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        self.inner.feed(chunk)
    }

    /// The address, in the module's memory, of a buffer of at least `len`
    /// bytes for the next chunk. It stays put until a larger one is asked
    /// for.
    #[wasm_bindgen(js_name = inputBuffer)]
    pub fn input_buffer(&mut self, len: usize) -> usize {
        if self.input.len() < len {
            self.input.resize(len, 0);
        }
        self.input.as_mut_ptr() as usize
    }

    /// Feeds the first `len` bytes of the input buffer: the length of the
    /// result, `0` if the chunk completed no event (see
    /// [`jsapi::BoundaryStream::feed`]); read it with
    /// [`take_output`](Self::take_output).
    #[wasm_bindgen(js_name = feedInput)]
    pub fn feed_input(&mut self, len: usize) -> usize {
        let chunk = self.input.get(..len).unwrap_or(&self.input);
        self.output = self.inner.feed(chunk);
        self.output.len()
    }

    /// The result of the last [`feed_input`](Self::feed_input).
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }

    /// Ends the body.
    pub fn finish(&mut self) -> String {
        self.inner.finish()
    }

    /// Whether the provider's terminal frame has been decoded.
    #[wasm_bindgen(js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.inner.is_complete()
    }

    /// What has been assembled so far.
    pub fn partial(&self) -> String {
        self.inner.partial()
    }
}

/// One request, as the run machine says ([`jsapi::BoundaryRun`]): each
/// method takes what the JS half observed and returns the next step's
/// code (`STEP` in `policy.js`); `takeOutput()` is the step's text.
#[wasm_bindgen]
pub struct Run {
    inner: jsapi::BoundaryRun,
}

#[wasm_bindgen]
impl Run {
    /// A request to send; see [`jsapi::BoundaryRun::new`].
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config_json: &str,
        request_json: &str,
        stream: bool,
        max_retries: u32,
        total: f64,
        first_byte: f64,
        idle: f64,
        seed: f64,
    ) -> Run {
        Run {
            inner: jsapi::BoundaryRun::new(
                config_json,
                request_json,
                stream,
                max_retries,
                total,
                first_byte,
                idle,
                seed,
            ),
        }
    }

    /// A streamed body the caller has; see [`jsapi::BoundaryRun::given`].
    pub fn given(provider: &str, total: f64, idle: f64) -> Run {
        Run {
            inner: jsapi::BoundaryRun::given(provider, total, idle),
        }
    }

    /// Starts the request.
    pub fn start(&mut self) -> u32 {
        self.inner.start()
    }

    /// The response's status and headers came.
    pub fn responded(&mut self, status: u16, headers_json: &str, now_ms: f64) -> u32 {
        self.inner.responded(status, headers_json, now_ms)
    }

    /// The request could not be sent.
    pub fn unreachable(&mut self, cause: &str) -> u32 {
        self.inner.unreachable(cause)
    }

    /// The address of the input buffer, at least `len` bytes.
    #[wasm_bindgen(js_name = inputBuffer)]
    pub fn input_buffer(&mut self, len: usize) -> usize {
        self.inner.input_buffer(len)
    }

    /// Feeds the first `len` bytes of the input buffer.
    #[wasm_bindgen(js_name = feedInput)]
    pub fn feed_input(&mut self, len: usize) -> u32 {
        self.inner.feed_input(len)
    }

    /// The body ended.
    pub fn ended(&mut self) -> u32 {
        self.inner.ended()
    }

    /// Reading the body failed.
    pub fn lost(&mut self, cause: &str) -> u32 {
        self.inner.lost(cause)
    }

    /// The events were handed out.
    pub fn delivered(&mut self) -> u32 {
        self.inner.delivered()
    }

    /// The retry wait is over.
    pub fn waited(&mut self) -> u32 {
        self.inner.waited()
    }

    /// A timer fired: what to cancel.
    pub fn expired(&mut self, total: bool) -> u32 {
        self.inner.expired(total)
    }

    /// The caller aborted: what to cancel.
    pub fn abort(&mut self, reason: &str) -> u32 {
        self.inner.abort(reason)
    }

    /// The current step's timer in milliseconds (0: none).
    #[wasm_bindgen(js_name = timerMs)]
    pub fn timer_ms(&self) -> f64 {
        self.inner.timer_ms()
    }

    /// The total timeout in milliseconds (0: none).
    #[wasm_bindgen(js_name = totalMs)]
    pub fn total_ms(&self) -> f64 {
        self.inner.total_ms()
    }

    /// The retry wait in milliseconds.
    pub fn delay(&self) -> f64 {
        self.inner.delay()
    }

    /// The error that stopped the request, or `""`.
    pub fn stopped(&self) -> String {
        self.inner.stopped()
    }

    /// The last step's text.
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> String {
        self.inner.take_output()
    }
}

/// The module's `WebAssembly.Memory` (JS copies chunks into it).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
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
