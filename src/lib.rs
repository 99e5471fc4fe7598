//! skyl: one client for LLM chat APIs with tool calling (OpenAI Chat
//! Completions, any OpenAI-compatible server, Anthropic Messages, Google
//! Gemini, the OpenAI Responses API and Open Responses servers, Amazon
//! Bedrock's Converse API), as a sans-IO core: bytes in, events out.
//!
//! The crate performs no I/O, sleeps on no timer and reads no clock. A
//! request becomes plain HTTP data ([`encode_request`] gives an
//! [`HttpRequest`]: method, URL, headers, body) that any client sends; the
//! response bytes go into a [`StreamDecoder`] as they arrive, which hands
//! out [`StreamEvent`]s and, at the end, one [`Response`]. A non-streaming
//! body goes through [`decode_response`], an HTTP error through
//! [`decode_error`]. The same crate is the protocol half of the `skyl` npm
//! package, compiled to WebAssembly.
//!
//! ```
//! use skyl::{encode_request, ClientConfig, Message, Provider, Request, StreamDecoder, StreamEvent};
//!
//! let config = ClientConfig::new(Provider::OpenAi).with_api_key("sk-...");
//! let request = Request {
//!     model: Some("gpt-5-mini".into()),
//!     messages: vec![Message::user("Hi")],
//!     ..Request::default()
//! };
//! let http = encode_request(&config, &request, true)?;
//! assert_eq!(http.url, "https://api.openai.com/v1/chat/completions");
//!
//! // ... send `http` with any client, then feed the body as it arrives:
//! let mut decoder = StreamDecoder::new(Provider::OpenAi);
//! let mut events = Vec::new();
//! decoder.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n", &mut events)?;
//! decoder.feed(b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", &mut events)?;
//! let response = decoder.finish(&mut events)?;
//! assert!(matches!(&events[0], StreamEvent::Text { text, .. } if text == "Hello"));
//! assert_eq!(response.text, "Hello");
//! # Ok::<(), skyl::Error>(())
//! ```
//!
//! What it guarantees, on every provider:
//!
//! - A tool call is handed out once ([`StreamEvent::ToolCall`]), when whole:
//!   at the provider's structural boundary, never because its arguments
//!   happen to parse. A call cut off is in
//!   [`Response::incomplete_tool_calls`], never executable.
//! - A stream without its terminal frame is [`Error::StreamEndedEarly`],
//!   which keeps what was received; an error inside a 200 is an
//!   [`Error::Api`] that says whether events had been handed out
//!   ([`Error::retryable`] is true only before).
//! - The assistant turn ([`Response::message`]) replays as it came:
//!   signatures, encrypted reasoning, provider blocks ([`Part::Provider`])
//!   and call ids survive serialisation.
//! - No input makes it panic, and the API key appears in no error and no
//!   `Debug` output.
//!
//! Whoever does the I/O around the core, a *driver*, takes its decisions
//! from here too, so that every driver behaves alike (the npm package's JS
//! half and `skyl::web` both do): whether and when to retry ([`Attempts`],
//! [`RetryPolicy`], [`retry_after_ms`] with the driver's clock), what a
//! timeout or a broken connection means ([`Timeout::expired`],
//! [`Interruption`]), the transport's errors ([`Error::Connection`],
//! [`Error::Timeout`], [`Error::Aborted`]), the request id ([`request_id`])
//! and scrubbing the key out of errors ([`Error::scrub`]). The JS half asks
//! through its WebAssembly module; only the few rules its synchronous
//! `Client` constructor needs before the module has loaded (the providers,
//! [`Provider::needs_base_url`], the defaults, the scrubbing rule) are a
//! table generated from this code and checked against it by a test.
//!
//! The tool loop, too, is decided here: a [`Runner`] says which calls
//! run and when, what goes back to the model and when the run stops, and a
//! driver runs the tools and sends the requests it hands out
//! ([`check_arguments`] checks each call against its tool's schema first).
//! So is fallback across providers: a [`RunMachine`] given a [`Fallback`]
//! goes on to the next provider only for a failure
//! [`fallback_switches`] allows, only before the first event, and its
//! [`Response`] says who answered ([`Response::provider`]) and who failed
//! before ([`Response::attempts`]).
//!
//! For Amazon Bedrock, the core reads AWS's binary event stream
//! ([`EventStreamParser`]) and signs requests with Signature Version 4
//! ([`sign_sigv4`]), both sans-IO.
//!
//! The Cargo features `openai` (Chat Completions, OpenAI-compatible
//! servers and the Responses API), `anthropic`, `gemini` and `bedrock`
//! choose the adapters; all four are on by default and at least one is
//! needed. The README, the package's front
//! page, has the JavaScript API; `ARCHITECTURE.md` in the repository maps
//! the source.

#![warn(unreachable_pub)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

#[cfg(not(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
)))]
compile_error!(
    "skyl needs at least one adapter: enable the openai, anthropic, gemini or bedrock feature"
);

// The README's Rust examples run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod accumulate;
mod base64;
mod embed;
mod error;
mod eventstream;
mod fallback;
mod framing;
mod google_auth;
mod http;
mod json;
mod model;
mod policy;
mod providers;
mod retry;
mod run;
mod runner;
mod sha256;
mod shell;
mod sigv4;
mod sse;
mod stream;
#[cfg(all(feature = "web", target_arch = "wasm32"))]
pub mod web;

pub use embed::{EmbedFailure, EmbedMachine, EmbedStep, DEFAULT_EMBED_CONCURRENCY};
pub use error::{ApiError, ApiErrorKind, Error, Timeout};
pub use eventstream::{
    encode_message as encode_event_stream_message, EventStreamMessage, EventStreamParser,
    HeaderValue,
};
pub use fallback::switches as fallback_switches;
pub use google_auth::{
    token_from_response, AccessToken, ServiceAccount, CLOUD_PLATFORM_SCOPE, TOKEN_LIFETIME_S,
};
pub use http::{request_id, retry_after_ms, HttpRequest, REQUEST_ID_HEADERS};
pub use json::partial::PartialJson;
pub use model::schema::{check_arguments, SchemaError};
pub use model::validate::{validate_request, validate_tool, validate_tool_call, Invalid};
pub use model::{
    tool_error_message, tool_result_message, AttemptError, EmbedEncoding, EmbedRequest, Embeddings,
    FailedAttempt, FinishReason, IncompleteToolCall, Message, NamedToolChoice, NamedToolTag, Part,
    PartialEvents, ProviderData, Raw, Request, Response, ResponseFormat, Role, StreamEvent, Tool,
    ToolCall, ToolChoice, ToolChoiceMode, Usage,
};
pub use policy::{
    scrub, Attempts, Interruption, CREDENTIALS_REFRESH_MS, MIN_SECRET_CHARS, REDACTED,
    TOKEN_EXCHANGE_TIMEOUT_MS,
};
pub use providers::{
    decode_error, decode_error_at, decode_response, default_embed_model, encode_request,
    object_schema, sign_request, ClientConfig, Provider, Vertex,
};
pub use retry::RetryPolicy;
pub use run::{Cancel, Fallback, RunMachine, Step, Timers};
pub use runner::{Job, Next, Outcome, RunLimits, Runner, StopReason, ToolSpec};
pub use sigv4::{sign as sign_sigv4, AwsCredentials, SigningScope};
pub use sse::{SseEvent, SseParser, DEFAULT_MAX_EVENT_BYTES};
pub use stream::StreamDecoder;

/// The Anthropic Messages adapter's constants and helpers.
#[cfg(feature = "anthropic")]
pub mod anthropic {
    pub use crate::providers::anthropic::{
        server_tool_names, API_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS,
    };
}

/// Amazon Bedrock's adapter: its endpoints.
#[cfg(feature = "bedrock")]
pub mod bedrock {
    pub use crate::providers::bedrock::endpoint;
}

/// The Google Gemini adapter's constants.
#[cfg(feature = "gemini")]
pub mod gemini {
    pub use crate::providers::gemini::{API_VERSION, DEFAULT_BASE_URL, SKIP_SIGNATURE};
}

/// The OpenAI Chat Completions adapter's constants.
#[cfg(feature = "openai")]
pub mod openai {
    pub use crate::providers::openai::DEFAULT_BASE_URL;
}

/// Not part of the API: the JSON-string boundary the JS half calls, public
/// only so that skyl's own tests reach it natively and in wasm
/// (`tests/wasm.rs`). It may change in any release.
#[doc(hidden)]
pub mod __shell {
    /// Service-account tokens for the JS half (Vertex AI).
    #[cfg(any(feature = "gemini", feature = "anthropic"))]
    pub use crate::shell::google_auth::{service_account_jwt, token_answer};
    pub use crate::shell::{
        boundary_version, encode, expand_result, http_error, response, validate, BoundaryLoop,
        BoundaryRun, BoundaryStream, Expansion,
    };
    /// The `#[wasm_bindgen]` exports (the feature `npm`).
    #[cfg(all(target_arch = "wasm32", feature = "npm"))]
    pub mod wasm {
        pub use crate::shell::wasm::*;
    }
}
