//! The Rust half of the JavaScript shell (wasm32, feature `npm`, which
//! scripts/build turns on): `#[wasm_bindgen]` wrappers over
//! [`crate::shell`], and the panic hook. A Rust app on wasm32 (`skyl::web`)
//! builds without the feature, so none of these exports, nor what only
//! they reach, is linked into its wasm. The only module of
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

/// Validates a tool, tool call or request; see [`jsapi::validate`].
#[wasm_bindgen]
pub fn validate(kind: &str, json: &str) -> String {
    jsapi::validate(kind, json)
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

    /// Starts the request; `start(true)`, before a first token exchange,
    /// only checks it: `FAIL` (the error in `takeOutput`) for a request
    /// that will not be sent, else `TAKE`. (One export for both.)
    pub fn start(&mut self, check: Option<bool>) -> u32 {
        self.inner.start(check == Some(true))
    }

    /// An input (`INPUT` in `policy.js`): the body ended, the events were
    /// delivered, the wait is over; the request could not be sent or its
    /// body read, for `cause`; what the attempt needs could not be loaded
    /// (`cause`: the error's message if the core marked it retryable).
    pub fn input(&mut self, what: u32, cause: Option<String>) -> u32 {
        self.inner.input(what, cause.as_deref().unwrap_or_default())
    }

    /// The driver's clock, before `start` and `waited`.
    pub fn at(&mut self, now_ms: f64) {
        self.inner.at(now_ms);
    }

    /// Fresh AWS credentials for entry `entry` of the chain, before
    /// `start` and `waited`. Only in a build with Bedrock (scripts/build
    /// ships an entry's JS for AWS credentials only where it is).
    #[cfg(feature = "bedrock")]
    pub fn credentials(&mut self, entry: u32, json: &str) -> bool {
        self.inner.credentials(entry, json)
    }

    /// A fresh access token for entry `entry` of the chain (Vertex AI),
    /// before `start` and `waited`.
    #[cfg(any(feature = "gemini", feature = "anthropic"))]
    #[wasm_bindgen(js_name = accessToken)]
    pub fn access_token(&mut self, entry: u32, token: &str) {
        self.inner.access_token(entry, token);
    }

    /// The entry of the chain the next attempt goes to: the one whose
    /// credentials or token to load before `start` and `waited`; `-1 -
    /// entry` when the provider refused its token or credentials, to
    /// renew.
    #[cfg(any(feature = "gemini", feature = "anthropic", feature = "bedrock"))]
    #[wasm_bindgen(getter)]
    pub fn entry(&self) -> i32 {
        self.inner.entry()
    }

    /// The response's status and headers came.
    pub fn responded(&mut self, status: u16, headers_json: &str, now_ms: f64) -> u32 {
        self.inner.responded(status, headers_json, now_ms)
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

    /// A timer fired: what to cancel.
    pub fn expired(&mut self, total: bool) -> u32 {
        self.inner.expired(total)
    }

    /// The caller aborted: what to cancel.
    pub fn abort(&mut self, reason: &str) -> u32 {
        self.inner.abort(reason)
    }

    /// The current step's timer in milliseconds (0: none; a `WAIT`'s is
    /// its wait), or (`total`) the total timeout's: one export for both.
    #[wasm_bindgen(js_name = timerMs)]
    pub fn timer_ms(&self, total: bool) -> f64 {
        self.inner.timer_ms(total)
    }

    /// The error that stopped the request, or `""`.
    pub fn stopped(&self) -> String {
        self.inner.stopped()
    }

    /// The JWT to sign for a service account's key file at `now_s`
    /// (`jsapi::google_auth`): Vertex AI's tokens. Static methods of `Run`
    /// rather than functions of the module, so that an entry built without
    /// them is no missing export to a bundler: `Run.serviceAccountJwt` is
    /// then undefined.
    #[cfg(any(feature = "gemini", feature = "anthropic"))]
    #[wasm_bindgen(js_name = serviceAccountJwt)]
    pub fn service_account_jwt(key_file: &str, now_s: f64) -> String {
        jsapi::google_auth::service_account_jwt(key_file, now_s)
    }

    /// The token endpoint's answer, read (`jsapi::google_auth`).
    #[cfg(any(feature = "gemini", feature = "anthropic"))]
    #[wasm_bindgen(js_name = tokenAnswer)]
    pub fn token_answer(status: u16, body: &str, now_ms: f64) -> String {
        jsapi::google_auth::token_answer(status, body, now_ms)
    }

    /// The last step's text.
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> String {
        self.inner.take_output()
    }

    /// The next string the last events' result kept apart, as a JS string
    /// made straight from wasm memory (not copied there first).
    #[wasm_bindgen(js_name = takeApart)]
    pub fn take_apart(&mut self) -> JsValue {
        (self.inner.take_apart_with(JsValue::from_str)).unwrap_or(JsValue::UNDEFINED)
    }
}

/// One `client.run` ([`jsapi::BoundaryLoop`]): each method returns what
/// to do next (`LOOP` in `policy.js`); `takeOutput()` holds the jobs or the
/// error, `request()` the next step's run machine.
#[wasm_bindgen]
pub struct Loop {
    inner: jsapi::BoundaryLoop,
}

#[wasm_bindgen]
impl Loop {
    /// A run; see [`jsapi::BoundaryLoop::new`].
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str, request_json: &str, options_json: &str) -> Loop {
        Loop {
            inner: jsapi::BoundaryLoop::new(config_json, request_json, options_json),
        }
    }

    /// The first thing to do.
    pub fn start(&mut self) -> u32 {
        self.inner.start()
    }

    /// The next step's request, as a run machine.
    pub fn request(
        &mut self,
        max_retries: u32,
        total: f64,
        first_byte: f64,
        idle: f64,
        seed: f64,
    ) -> Run {
        let limits = jsapi::run::Limits {
            max_retries,
            total,
            first_byte,
            idle,
            seed,
        };
        Run {
            inner: self.inner.request(&limits),
        }
    }

    /// A call of the streaming turn came whole: whether it starts now.
    #[wasm_bindgen(js_name = callWhole)]
    pub fn call_whole(&mut self, id: &str, name: &str, arguments: &str, asks: bool) -> bool {
        self.inner.call_whole(id, name, arguments, asks)
    }

    /// The step's run is done; `asks_json`: its calls that need approval.
    #[wasm_bindgen(js_name = finishStep)]
    pub fn finish_step(&mut self, run: &mut Run, asks_json: &str) -> u32 {
        self.inner.finish_step(&mut run.inner, asks_json)
    }

    /// A decision on a call.
    pub fn decide(&mut self, call_id: &str, approved: bool, reason: &str) -> u32 {
        self.inner.decide(call_id, approved, reason)
    }

    /// No one to ask: the run stops for approval.
    #[wasm_bindgen(js_name = pauseForApproval)]
    pub fn pause_for_approval(&mut self) -> u32 {
        self.inner.pause_for_approval()
    }

    /// A call ended.
    #[wasm_bindgen(js_name = toolDone)]
    pub fn tool_done(&mut self, call_id: &str, failed: bool, text: &str) -> u32 {
        self.inner.tool_done(call_id, failed, text)
    }

    /// The run was aborted, or a step failed: its `AbortError`.
    pub fn abort(&mut self, reason: &str) -> String {
        self.inner.abort(reason)
    }

    /// The run's result.
    pub fn result(&self) -> String {
        self.inner.result()
    }

    /// The last step's text.
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> String {
        self.inner.take_output()
    }
}

/// The name alone, in a build without an embedder (`skyl/anthropic`):
/// the JS half imports the class by name (a bundler checks that it is
/// there) and answers `client.embed` from `policy.js` without making one.
#[cfg(not(any(feature = "openai", feature = "gemini")))]
#[wasm_bindgen]
pub struct Embed {
    _none: u8,
}

#[cfg(any(feature = "openai", feature = "gemini"))]
/// One embeddings call, as the embed machine says
/// (`BoundaryEmbed`, `shell/embed.rs`): each worker's inputs return its next
/// step's code (`STEP` in `policy.js`; `DONE` means idle).
#[wasm_bindgen]
pub struct Embed {
    inner: jsapi::embed::BoundaryEmbed,
}

#[cfg(any(feature = "openai", feature = "gemini"))]
#[wasm_bindgen]
impl Embed {
    /// A call to make (`BoundaryEmbed::new`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_json: &str,
        request_json: &str,
        max_retries: u32,
        total: f64,
        first_byte: f64,
        idle: f64,
        seed: f64,
    ) -> Embed {
        let limits = jsapi::run::Limits {
            max_retries,
            total,
            first_byte,
            idle,
            seed,
        };
        Embed {
            inner: jsapi::embed::BoundaryEmbed::new(config_json, request_json, &limits),
        }
    }

    /// `""`, or the error of an invalid call.
    pub fn invalid(&self) -> String {
        self.inner.invalid()
    }

    /// How many workers to run.
    pub fn workers(&self) -> u32 {
        self.inner.workers()
    }

    /// Worker `w`'s input (`INPUT`): its next batch, its body ended, its
    /// wait is over; its request could not be sent or its body read, for
    /// `cause`.
    pub fn input(&mut self, w: u32, what: u32, cause: Option<String>) -> u32 {
        self.inner
            .input(w, what, cause.as_deref().unwrap_or_default())
    }

    /// Worker `w`'s response came.
    pub fn responded(&mut self, w: u32, status: u16, headers_json: &str, now_ms: f64) -> u32 {
        self.inner.responded(w, status, headers_json, now_ms)
    }

    /// Where to write worker `w`'s next `len` body bytes (0: nowhere).
    #[wasm_bindgen(js_name = chunkBuffer)]
    pub fn chunk_buffer(&mut self, w: u32, len: usize) -> usize {
        self.inner.chunk_buffer(w, len)
    }

    /// A timer fired: what to cancel.
    pub fn expired(&mut self, w: u32, total: bool, step: u32) -> u32 {
        self.inner.expired(w, total, step)
    }

    /// The caller aborted: what to cancel.
    pub fn abort(&mut self, reason: &str) -> u32 {
        self.inner.abort(reason)
    }

    /// The timer of worker `w`'s step, in milliseconds: a `SEND`'s
    /// first-byte timer, a `READ`'s idle one, a `WAIT`'s wait, and for
    /// `DONE` the total timeout, which runs until all is done.
    #[wasm_bindgen(js_name = timerMs)]
    pub fn timer_ms(&self, step: u32, w: u32) -> f64 {
        self.inner.timer_ms(step, w)
    }

    /// The result's code; its text in `takeOutput`.
    pub fn finish(&mut self) -> u32 {
        self.inner.finish()
    }

    /// Where each vector is in the module's memory (0: none came).
    #[wasm_bindgen(js_name = vectorAddresses)]
    pub fn vector_addresses(&self) -> Vec<u32> {
        self.inner.vector_addresses()
    }

    /// The text of the last step.
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
