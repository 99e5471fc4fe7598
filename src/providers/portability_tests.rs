//! A history built on one provider, sent to another: the bodies carry none
//! of the first provider's own fields (signatures, encrypted reasoning,
//! server-tool blocks), only what the second can read (issue 32).

use serde_json::Value;

use super::*;
use crate::model::{Message, Request, Role};
use crate::StreamDecoder;

/// The assistant turn of a recorded stream, decoded.
fn turn(provider: Provider, case: &str) -> Message {
    let path = format!(
        "{}/tests/fixtures/conformance/{}/{case}.stream.sse",
        env!("CARGO_MANIFEST_DIR"),
        provider.name()
    );
    let body = std::fs::read(path).unwrap();
    let (_, res) = StreamDecoder::decode_all(provider, &body);
    let message = res.unwrap().message;
    assert_eq!(message.role, Role::Assistant);
    message
}

/// Every key of a JSON value, at any depth, and every string `type`.
fn names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                if k == "type" {
                    if let Some(t) = v.as_str() {
                        out.push(t.to_string());
                    }
                }
                names(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| names(v, out)),
        _ => {}
    }
}

/// Two recorded Anthropic turns (a thinking turn with its signature, a
/// code-execution turn with its server-tool blocks) between user messages.
pub(super) fn anthropic_history() -> Request {
    Request {
        model: Some("m".into()),
        messages: vec![
            Message::user("Think about it."),
            turn(Provider::Anthropic, "anthropic-clear-thinking.1"),
            Message::user("Now search."),
            turn(Provider::Anthropic, "anthropic-code-execution-20250825.1"),
            Message::user("Thanks."),
        ],
        ..Request::default()
    }
}

#[test]
fn an_anthropic_history_carries_no_anthropic_field_to_another_provider() {
    let history = anthropic_history();
    let anthropic_only = [
        "signature",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "web_search_tool_result",
        "cache_control",
        "citations",
    ];
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiCompat,
        Provider::Gemini,
        Provider::Responses,
    ] {
        if provider.adapter().is_none() {
            continue; // (a one-adapter build)
        }
        let mut config = ClientConfig::new(provider).with_api_key("k");
        if provider.needs_base_url() {
            config.base_url = Some("http://127.0.0.1:1/v1".into());
        }
        let http = encode_request(&config, &history, true).unwrap();
        let body: Value = serde_json::from_str(&http.body).unwrap();
        let mut seen = Vec::new();
        names(&body, &mut seen);
        let leaked: Vec<&&str> = (anthropic_only.iter())
            .filter(|n| seen.iter().any(|s| s == **n))
            .collect();
        assert!(leaked.is_empty(), "{provider}: {leaked:?} in {body}");
        // What every provider reads: the turns' text.
        assert!(http.body.contains("Thanks."), "{provider}");
    }
    // Replayed to Anthropic itself, the same history keeps them all: the
    // signatures and the server-tool blocks go back as they came.
    let config = ClientConfig::new(Provider::Anthropic).with_api_key("k");
    let http = encode_request(&config, &history, true).unwrap();
    let body: Value = serde_json::from_str(&http.body).unwrap();
    let mut seen = Vec::new();
    names(&body, &mut seen);
    for kept in ["signature", "thinking", "server_tool_use"] {
        assert!(
            seen.iter().any(|s| s == kept),
            "{kept} replayed to Anthropic"
        );
    }
}
