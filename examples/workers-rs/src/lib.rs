//! A Cloudflare Worker written in Rust with workers-rs that streams a
//! tool-calling chat through `skyl::web` and re-emits its events to the
//! caller as server-sent events.
//!
//! `POST /chat` with a request in skyl's JSON shape (`{"messages": [...]}`,
//! as the npm package writes it). The Worker adds its tool (`get_weather`),
//! streams the model's turn, runs each tool call once it is whole, sends
//! the results back, and streams the next turn, until the model answers
//! without calling a tool. The caller gets:
//!
//! - every skyl event as `data: <event JSON>` (`text`, `reasoning`,
//!   `tool_call`, `usage`, `warning`, `finish`: one `finish` per turn);
//! - each tool's result as `data: {"type":"tool_result", ...}`;
//! - a failure as `data: {"type":"error", "code", "message"}`, the last
//!   frame.
//!
//! A caller that disconnects cancels the response body; that drops the
//! turn's `EventStream`, which aborts the fetch to the provider.
//!
//! Configuration (wrangler.toml `[vars]`, or `--var`): `PROVIDER` (a skyl
//! provider name), `MODEL`, `BASE_URL`, and for `bedrock` `AWS_REGION`; the
//! secret `API_KEY` (`wrangler secret put API_KEY`; none for the mock
//! provider; for `bedrock` a Bedrock API key), or for `bedrock` the secrets
//! `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`),
//! with which skyl signs each attempt.

use std::collections::VecDeque;

use futures_util::stream;
use skyl::web::{self, Client, EventStream};
use skyl::{
    tool_error_message, tool_result_message, AwsCredentials, ClientConfig, Provider, Request,
    StreamEvent, Tool, ToolCall,
};
use worker::{event, Context, Env, Method, Response, ResponseBuilder};

/// Model turns per chat at most: a model that keeps calling tools is
/// stopped there.
const MAX_TURNS: usize = 4;

#[event(fetch)]
async fn fetch(mut req: worker::Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    if req.path() != "/chat" {
        return Response::error("not found: POST /chat", 404);
    }
    if req.method() != Method::Post {
        return Response::error("POST only", 405);
    }
    let mut request: Request = match req.json().await {
        Ok(request) => request,
        Err(e) => return Response::error(format!("not a chat request: {e}"), 400),
    };
    let config = match config(&env) {
        Ok(config) => config,
        Err(message) => return Response::error(message, 500),
    };
    request.tools.push(weather_tool());
    let chat = Chat {
        client: Client::new(config),
        request,
        turn: None,
        turns: 0,
        queued: VecDeque::new(),
        over: false,
    };
    // One SSE frame per item; the body is pulled as the caller reads it,
    // and dropped (with the turn in flight) when the caller goes away.
    let body = stream::unfold(chat, |mut chat| async move {
        let frame = chat.next_frame().await?;
        Some((Ok::<_, worker::Error>(frame.into_bytes()), chat))
    });
    ResponseBuilder::new()
        .with_header("content-type", "text/event-stream")?
        .with_header("cache-control", "no-cache")?
        .from_stream(body)
}

/// The client's config from the Worker's variables and secret.
fn config(env: &Env) -> Result<ClientConfig, String> {
    let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
    let name = var("PROVIDER").unwrap_or_else(|| "anthropic".into());
    let provider = Provider::from_name(&name).ok_or(format!("unknown PROVIDER {name:?}"))?;
    let mut config = ClientConfig::new(provider);
    config.model = var("MODEL");
    config.base_url = var("BASE_URL").filter(|url| !url.is_empty());
    config.api_key = env.secret("API_KEY").ok().map(|s| s.to_string());
    config.region = var("AWS_REGION").filter(|region| !region.is_empty());
    let secret = |name: &str| env.secret(name).ok().map(|s| s.to_string());
    if let (Some(id), Some(key)) = (secret("AWS_ACCESS_KEY_ID"), secret("AWS_SECRET_ACCESS_KEY")) {
        let mut credentials = AwsCredentials::new(id, key);
        if let Some(token) = secret("AWS_SESSION_TOKEN") {
            credentials = credentials.with_session_token(token);
        }
        config.aws = Some(credentials);
    }
    Ok(config)
}

/// The tool this Worker offers the model.
fn weather_tool() -> Tool {
    Tool {
        name: "get_weather".into(),
        description: Some("Current weather for a city.".into()),
        parameters: Some(serde_json::json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })),
        ..Tool::default()
    }
}

/// Runs one whole tool call: its result text, or why it failed.
fn run_tool(call: &ToolCall) -> Result<String, String> {
    let args: serde_json::Value =
        serde_json::from_str(&call.arguments).map_err(|e| format!("bad arguments: {e}"))?;
    match call.name.as_str() {
        "get_weather" => {
            let city = args["city"].as_str().ok_or("no city")?;
            // A stand-in for a real weather service.
            Ok(
                serde_json::json!({"city": city, "temperature_c": 21, "conditions": "sunny"})
                    .to_string(),
            )
        }
        other => Err(format!("no tool named {other}")),
    }
}

/// A chat in progress: the request so far, the turn being streamed, and
/// the frames queued to send before reading on.
struct Chat {
    client: Client,
    request: Request,
    turn: Option<EventStream>,
    turns: usize,
    queued: VecDeque<String>,
    over: bool,
}

impl Chat {
    /// The next SSE frame, or `None` when the chat is over.
    async fn next_frame(&mut self) -> Option<String> {
        loop {
            if let Some(frame) = self.queued.pop_front() {
                return Some(frame);
            }
            if self.over {
                return None;
            }
            let Some(turn) = &mut self.turn else {
                self.turns += 1;
                self.turn = Some(self.client.stream(&self.request));
                continue;
            };
            match turn.next().await {
                Some(Ok(event)) => {
                    if let StreamEvent::Finish { response, .. } = &event {
                        self.turn = None;
                        self.answer(response);
                    }
                    return Some(web::sse_frame(&event));
                }
                Some(Err(e)) => {
                    self.over = true;
                    let error = serde_json::json!({
                        "type": "error",
                        "code": e.code(),
                        "message": e.to_string(),
                    });
                    return Some(format!("data: {error}\n\n"));
                }
                // A stream ends with `finish` or an error; should it end
                // otherwise, the chat is over.
                None => self.over = true,
            }
        }
    }

    /// After a turn: runs its tool calls and queues their results, or ends
    /// the chat when there are none (or too many turns were taken).
    fn answer(&mut self, response: &skyl::Response) {
        if response.tool_calls.is_empty() || self.turns >= MAX_TURNS {
            self.over = true;
            return;
        }
        self.request.messages.push(response.message.clone());
        for call in &response.tool_calls {
            let (message, content, is_error) = match run_tool(call) {
                Ok(result) => (tool_result_message(&call.id, &result), result, false),
                Err(error) => (tool_error_message(&call.id, &error), error, true),
            };
            self.request.messages.push(message);
            let frame = serde_json::json!({
                "type": "tool_result",
                "callId": call.id,
                "name": call.name,
                "content": content,
                "isError": is_error,
            });
            self.queued.push_back(format!("data: {frame}\n\n"));
        }
    }
}
