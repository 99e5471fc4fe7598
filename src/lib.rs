#![doc = include_str!("../README.md")]
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

pub mod error;
pub mod http;
pub mod providers;
pub mod retry;
pub mod sse;

mod accumulate;
mod json;
mod model;
mod stream;

pub mod shell;

pub use shell as jsapi;
#[cfg(target_arch = "wasm32")]
pub use shell::wasm;

pub use error::{ApiError, ApiErrorKind, Error};
pub use http::HttpRequest;
pub use model::types::{
    tool_error_message, tool_result_message, FinishReason, IncompleteToolCall, Message, Part, Raw,
    Request, Response, Role, StreamEvent, Tool, ToolCall, ToolChoice, ToolChoiceMode, Usage,
};
pub use model::validate::{validate_request, validate_tool, validate_tool_call, Invalid};
pub use model::{types, validate};
pub use providers::{decode_error, decode_response, encode_request, ClientConfig, Provider};
pub use shell::error_info::ErrorInfo;
pub use stream::StreamDecoder;
