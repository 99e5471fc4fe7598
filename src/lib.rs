#![doc = include_str!("../README.md")]
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
// A build without every adapter (the `openai`, `anthropic` and `gemini`
// features) leaves some shared helpers unused.
#![cfg_attr(
    not(all(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code, unused_imports)
)]

#[cfg(not(any(feature = "openai", feature = "anthropic", feature = "gemini")))]
compile_error!("skyl needs at least one adapter: enable the openai, anthropic or gemini feature");

mod accumulate;
mod error;
mod http;
mod json;
mod model;
mod providers;
mod retry;
mod shell;
mod sse;
mod stream;

pub use error::{ApiError, ApiErrorKind, Error};
pub use http::HttpRequest;
pub use model::validate::{validate_request, validate_tool, validate_tool_call, Invalid};
pub use model::{
    tool_error_message, tool_result_message, FinishReason, IncompleteToolCall, Message,
    NamedToolChoice, NamedToolTag, Part, ProviderData, Raw, Request, Response, Role, StreamEvent,
    Tool, ToolCall, ToolChoice, ToolChoiceMode, Usage,
};
pub use providers::{
    decode_error, decode_response, encode_request, object_schema, ClientConfig, Provider,
};
pub use retry::RetryPolicy;
pub use sse::{SseEvent, SseParser, DEFAULT_MAX_EVENT_BYTES};
pub use stream::StreamDecoder;

/// The Anthropic Messages adapter's constants and helpers.
#[cfg(feature = "anthropic")]
pub mod anthropic {
    pub use crate::providers::anthropic::{
        server_tool_names, API_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS,
    };
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
    pub use crate::shell::{
        boundary_version, encode, expand_result, http_error, response, retry_delay, validate,
        BoundaryStream,
    };
    /// The `#[wasm_bindgen]` exports.
    #[cfg(target_arch = "wasm32")]
    pub mod wasm {
        pub use crate::shell::wasm::*;
    }
}
