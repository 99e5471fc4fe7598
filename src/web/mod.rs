//! A Rust driver for Rust apps compiled to wasm32 (workers-rs, Leptos,
//! Dioxus, Yew): `fetch`, the body's `ReadableStream`, timeouts, retries and
//! abort, from Rust, in browsers, Node and Cloudflare Workers. The Cargo
//! feature `web`, on wasm32 only.
//!
//! - [`Client`] sends requests: [`Client::stream`] gives an
//!   [`EventStream`] (a `futures_core::Stream` of events, then
//!   [`EventStream::response`]), [`Client::complete`] the whole
//!   [`Response`](crate::Response).
//! - [`Client::run`] runs the tool loop: a [`ToolRun`] of [`RunEvent`]s,
//!   then its [`RunOutcome`]; the core's [`Runner`](crate::Runner) decides.
//! - [`decode_stream`] decodes a body the app already has (a Workers
//!   service binding's response, a proxy's).
//! - [`to_js`] and [`from_js`] convert the model to and from `JsValue`, in
//!   the shapes of the npm package, for an app that hands values to JS or
//!   takes them from it.
//!
//! It sends with the global `fetch` (gloo-net's request builder; the
//! answer read through gloo-net, or by its properties when a custom fetch
//! returns a `Response` of another realm), reads the body with a web-sys
//! `ReadableStreamDefaultReader`, keeps time with the global `setTimeout`
//! and cancels with an `AbortController`. What to do is the core's policy,
//! the same the npm package's JS driver follows: which failures are retried
//! and after how long ([`Attempts`](crate::Attempts)), what a timeout means
//! ([`Interruption`](crate::Interruption)), the error of every failure, the
//! request id, and keeping the API key out of errors
//! ([`Error::scrub`](crate::Error::scrub)).
//!
//! A handler that streams a reply on as SSE (a Worker answering a page):
//!
//! ```no_run
//! use skyl::web::{self, Client};
//! use skyl::Request;
//!
//! # async fn run(client: Client, request: Request, mut send: impl FnMut(String)) -> Result<(), skyl::Error> {
//! let mut events = client.stream(&request);
//! while let Some(event) = events.next().await {
//!     send(web::sse_frame(&event?));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! [`EventStream`] is also a `futures_core::Stream`, for
//! `StreamExt::map` into a streamed body (workers-rs
//! `ResponseBuilder::from_stream`).

mod abort;
mod body;
mod client;
mod convert;
mod embed;
mod events;
mod fetch;
mod google_token;
mod js;
mod run;
mod settle;
mod timer;
mod tool_run;
mod tools;

pub use client::{decode_stream, Client, Timeouts};
pub use convert::{from_js, to_js, JsModel};
pub use events::EventStream;
pub use tool_run::ToolRun;
pub use tools::{
    Decision, Handler, RunEvent, RunFailure, RunOptions, RunOutcome, ToolContext, ToolFuture,
};

use crate::model::StreamEvent;

/// An event as one SSE frame, `data: <event JSON>` and a blank line: the
/// event in the npm package's JSON shape, for an app that streams events
/// on (a Worker answering a browser).
///
/// ```
/// use skyl::StreamEvent;
///
/// let event = StreamEvent::Text { text: "Hi".into(), raw: "{}".into() };
/// assert_eq!(
///     skyl::web::sse_frame(&event),
///     "data: {\"type\":\"text\",\"text\":\"Hi\",\"raw\":\"{}\"}\n\n"
/// );
/// ```
pub fn sse_frame(event: &StreamEvent) -> String {
    let json = serde_json::to_string(event).unwrap_or_default();
    format!("data: {json}\n\n")
}
