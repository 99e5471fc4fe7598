//! `skyl::web` as a Rust app on wasm32 drives it, for the benchmark:
//! stream one turn, collect its text and tool calls in Rust, and hand the
//! result to JS once at the end, where the harness checks it.
//!
//! - [`stream`]: `web::Client` with a custom fetch (the bench's fake
//!   `fetch`, whose `Response` body streams the input's chunks), the
//!   request encoded and sent as an app sends it, no retries;
//! - [`decode`]: `web::decode_stream` on a `Response` the caller already
//!   has, no request: the same decoding without the client.

use skyl::web::{self, Client, EventStream};
use skyl::{ClientConfig, Message, Provider, Request, RetryPolicy, StreamEvent, Tool};
use wasm_bindgen::prelude::*;

/// The tools the bench's requests declare (bench/libs.mjs: TOOL_NAMES).
const TOOL_NAMES: [&str; 4] = ["search_rows", "fetch_page", "summarize", "json"];

fn provider(name: &str) -> Result<Provider, JsError> {
    Provider::from_name(name).ok_or_else(|| JsError::new(&format!("unknown provider {name:?}")))
}

/// Streams one turn from `wire` through `web::Client`, sending with
/// `fetch`; resolves to `{ text, calls: [{ name, args }] }`.
#[wasm_bindgen]
pub async fn stream(
    wire: String,
    model: String,
    fetch: js_sys::Function,
) -> Result<JsValue, JsError> {
    let mut config = ClientConfig::new(provider(&wire)?);
    config.api_key = Some("bench".into());
    config.model = Some(model);
    let client = Client::new(config)
        .with_retry(RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        })
        .with_fetch(fetch);
    let request = Request {
        messages: vec![Message::user("hi")],
        tools: TOOL_NAMES
            .iter()
            .map(|name| Tool {
                name: (*name).into(),
                parameters: Some(serde_json::json!({ "type": "object" })),
                ..Tool::default()
            })
            .collect(),
        ..Request::default()
    };
    collect(client.stream(&request)).await
}

/// Decodes `response` (a `Response` whose body is the stream) with
/// `web::decode_stream`; resolves as [`stream`] does.
#[wasm_bindgen]
pub async fn decode(wire: String, response: JsValue) -> Result<JsValue, JsError> {
    collect(web::decode_stream(provider(&wire)?, &response)).await
}

/// The text and calls of a stream, as a Rust app collects them.
async fn collect(mut events: EventStream) -> Result<JsValue, JsError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    while let Some(event) = events.next().await {
        match event.map_err(|e| JsError::new(&e.to_string()))? {
            StreamEvent::Text { text: t, .. } => text.push_str(&t),
            StreamEvent::ToolCall { call, .. } => calls.push(call),
            _ => {}
        }
    }
    let calls: Vec<_> = calls
        .iter()
        .map(|c| serde_json::json!({ "name": c.name, "args": c.arguments }))
        .collect();
    let result = serde_json::json!({ "text": text, "calls": calls });
    js_sys::JSON::parse(&result.to_string()).map_err(|e| JsError::new(&format!("{e:?}")))
}
