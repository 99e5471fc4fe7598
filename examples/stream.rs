//! The main job, natively: stream a recorded tool-calling response of each
//! wire format through skyl in small chunks, print every event as it is
//! decoded, then answer the tool calls and print the next request.
//!
//! `cargo run --example stream` (every provider), or name them:
//! `cargo run --example stream -- anthropic gemini`.

use std::path::Path;

use skyl::{
    encode_request, tool_result_message, ClientConfig, Message, Provider, Request, StreamDecoder,
    StreamEvent, Tool,
};

/// One recorded stream per adapter (real provider recordings; see
/// `tests/fixtures/conformance/README.md`).
const STREAMS: [(Provider, &str, &str); 5] = [
    (
        Provider::OpenAi,
        "openaicompat/alibaba-tool-call.stream.sse",
        "Chat Completions format (recorded from Qwen)",
    ),
    (
        Provider::OpenAiCompat,
        "openaicompat/deepseek-tool-call.stream.sse",
        "DeepSeek, with reasoning_content",
    ),
    (
        Provider::Anthropic,
        "anthropic/anthropic-json-other-tool.1.stream.sse",
        "Claude Messages",
    ),
    (
        Provider::Gemini,
        "gemini/google-stream-tool-call-arguments.stream.sse",
        "Vertex AI, arguments streamed as partialArgs",
    ),
    (
        Provider::Responses,
        "responses/openai-reasoning-encrypted-content.1.stream.sse",
        "the Responses API, encrypted reasoning replayed in place",
    ),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    for (provider, file, what) in STREAMS {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == provider.name()) {
            continue;
        }
        println!("━━ {provider}: {what}");
        let body = std::fs::read(root.join(file))?;
        let mut decoder = StreamDecoder::new(provider);
        let mut events = Vec::new();
        let mut line = Line::default();
        // As the network would deliver it: small chunks, split anywhere.
        for chunk in body.chunks(97) {
            decoder.feed(chunk, &mut events)?;
            for ev in events.drain(..) {
                line.print(&ev);
            }
        }
        let response = decoder.finish(&mut events)?;
        for ev in events.drain(..) {
            line.print(&ev);
        }

        // The tool loop: replay the assistant turn, answer each call.
        let mut messages = vec![Message::user("(the user's question)")];
        messages.push(response.message.clone());
        for call in &response.tool_calls {
            messages.push(tool_result_message(&call.id, r#"{"ok":true}"#));
        }
        let next = Request {
            model: response.model.clone().or(Some("model".into())),
            messages,
            tools: tools_called(&response.tool_calls),
            ..Request::default()
        };
        let mut config = ClientConfig::new(provider);
        config.base_url = Some(match provider {
            Provider::OpenAi | Provider::OpenAiCompat | Provider::Responses => {
                "http://127.0.0.1:8787/v1".into()
            }
            _ => "http://127.0.0.1:8787".into(),
        });
        let http = encode_request(&config, &next, true)?;
        println!(
            "   next turn: {} {} ({} bytes, {} tool result(s))\n",
            http.method,
            http.url,
            http.body.len(),
            response.tool_calls.len()
        );
    }
    Ok(())
}

/// One declaration per tool name that was called.
fn tools_called(calls: &[skyl::ToolCall]) -> Vec<Tool> {
    let mut tools: Vec<Tool> = Vec::new();
    for c in calls {
        if !tools.iter().any(|t| t.name == c.name) {
            tools.push(Tool {
                name: c.name.clone(),
                ..Tool::default()
            });
        }
    }
    tools
}

/// Prints events; consecutive text (or reasoning) deltas share a line, so
/// the pieces show as they arrived.
#[derive(Default)]
struct Line {
    open: Option<&'static str>,
}

impl Line {
    fn delta(&mut self, kind: &'static str, text: &str) {
        if self.open != Some(kind) {
            self.end();
            print!("   {kind:<10}");
            self.open = Some(kind);
        }
        print!(" {}", clip(text));
    }

    fn end(&mut self) {
        if self.open.take().is_some() {
            println!();
        }
    }

    fn print(&mut self, ev: &StreamEvent) {
        match ev {
            StreamEvent::Text { text, .. } => return self.delta("text", text),
            StreamEvent::Reasoning { text, .. } => return self.delta("reasoning", text),
            _ => self.end(),
        }
        match ev {
            StreamEvent::ToolCall { call, .. } => {
                println!("   tool_call  {} {} {}", call.id, call.name, call.arguments);
            }
            StreamEvent::Usage { usage, .. } => println!(
                "   usage      input {} output {}",
                usage.input.unwrap_or_default(),
                usage.output.unwrap_or_default()
            ),
            StreamEvent::Warning { code, message, .. } => {
                println!("   warning    {code}: {message}");
            }
            StreamEvent::Finish { response, .. } => println!(
                "   finish     {:?} (raw {:?}), {} tool call(s)",
                response.finish_reason,
                response.raw_finish_reason.as_deref().unwrap_or(""),
                response.tool_calls.len()
            ),
            // (StreamEvent is non_exhaustive: events added later are skipped.)
            _ => {}
        }
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{:?}…", s.chars().take(60).collect::<String>())
    } else {
        format!("{s:?}")
    }
}
