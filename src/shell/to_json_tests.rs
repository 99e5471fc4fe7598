//! The model's hand-written JSON forms against serde's, on every recorded
//! response and error. Here, in the top layer, because the recordings are
//! decoded through the adapters first.

use super::error_info::error_info;
use crate::error::Error;
use crate::json::write::object_text;
use crate::model::to_json::{finish_reason_name, message, response, Fields};
use crate::model::*;
use crate::providers::{decode_error, decode_response, Provider};
use crate::stream::StreamDecoder;

fn fixtures() -> Vec<(Provider, std::path::PathBuf)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    let mut out = Vec::new();
    for (dir, p) in [
        ("openai", Provider::OpenAi),
        ("anthropic", Provider::Anthropic),
        ("gemini", Provider::Gemini),
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            out.push((p, e.unwrap().path()));
        }
    }
    out
}

/// Every recorded response (streamed and not) and error, written by
/// hand and by serde: the same text.
#[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
#[test]
fn responses_and_errors_are_written_as_serde_writes_them() {
    let mut checked = 0;
    for (p, path) in fixtures() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Ok(body) = std::fs::read_to_string(&path) else {
            continue;
        };
        let result = if name.ends_with(".stream.sse") {
            StreamDecoder::decode_all(p, body.as_bytes()).1
        } else if name.ends_with(".json") && !name.contains("expected") {
            decode_response(p, &body)
        } else {
            continue;
        };
        let e = match result {
            Ok(r) => {
                let hand = object_text(|o| response(o, &r, Fields::All));
                assert_eq!(hand, serde_json::to_string(&r).unwrap(), "{name}");
                checked += 1;
                Error::invalid_response("x")
            }
            Err(e) => e,
        };
        let info = crate::shell::error_info::info(&e, p.name());
        let hand = object_text(|o| error_info(o, &info));
        assert_eq!(hand, serde_json::to_string(&info).unwrap(), "{name}");
        let api = crate::shell::error_info::info(
            &decode_error(p, 429, &[("retry-after".into(), "2".into())], &body),
            p.name(),
        );
        let hand = object_text(|o| error_info(o, &api));
        assert_eq!(hand, serde_json::to_string(&api).unwrap(), "{name}");
    }
    assert!(checked >= 70, "only {checked} responses checked");
}

#[test]
fn every_part_and_field_is_written_as_serde_writes_it() {
    let m: Message = serde_json::from_value(serde_json::json!({"role": "tool", "parts": [
        {"type": "text", "text": "a\"\n", "providerData": {"gemini": {"thoughtSignature": "s", "n": 1.5}}},
        {"type": "image", "url": "https://x", "mediaType": "image/png"},
        {"type": "image", "data": "QUJD", "mediaType": "image/png", "providerData": {}},
        {"type": "file", "data": "QUJD", "mediaType": "application/pdf", "filename": "a.pdf"},
        {"type": "file", "url": "https://x/a.pdf", "mediaType": "application/pdf", "providerData": {"x": 1}},
        {"type": "tool_call", "id": "c", "name": "f", "arguments": "{}"},
        {"type": "tool_result", "callId": "c", "content": "1", "isError": true},
        {"type": "tool_result", "callId": "c", "content": "1"},
        {"type": "reasoning", "text": "", "signature": "sig", "redacted": "r"},
        {"type": "provider", "provider": "anthropic", "data": {"type": "x", "v": [1, -2, null]}},
        {"type": "provider", "provider": "anthropic", "data": null},
        {"type": "cache"},
        {"type": "cache", "ttl": "1h"}]}))
    .unwrap();
    let r = Response {
        id: Some("id".into()),
        model: None,
        message: m.clone(),
        text: "t".into(),
        reasoning: "why".into(),
        tool_calls: vec![ToolCall {
            id: "c".into(),
            name: "f".into(),
            arguments: "{}".into(),
        }],
        incomplete_tool_calls: vec![IncompleteToolCall {
            id: None,
            name: Some("g".into()),
            arguments: "{".into(),
            reason: "cut".into(),
        }],
        refusal: Some("no".into()),
        usage: Usage {
            input: Some(1),
            output: Some(u64::MAX),
            total: Some(u64::MAX),
            cache_read: None,
            cache_write: Some(0),
            reasoning: Some(3),
            raw: Some(serde_json::json!({"k": [1.25]})),
        },
        finish_reason: FinishReason::ContentFilter,
        raw_finish_reason: Some("SAFETY".into()),
        provider: Some("gemini".into()),
        attempts: vec![
            crate::model::FailedAttempt {
                provider: "anthropic".into(),
                model: Some("claude".into()),
                error: crate::model::AttemptError {
                    code: "overloaded".into(),
                    status: Some(529),
                    message: "busy".into(),
                },
            },
            crate::model::FailedAttempt {
                provider: "openai".into(),
                model: None,
                error: crate::model::AttemptError {
                    code: "timeout".into(),
                    status: None,
                    message: "slow".into(),
                },
            },
        ],
    };
    for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        let m = Message { role, ..m.clone() };
        assert_eq!(
            object_text(|o| message(o, &m)),
            serde_json::to_string(&m).unwrap()
        );
    }
    // As serde writes it, with the message's files again after the calls
    // (`files`: JS reads them there; Rust has `Response::files`).
    let files: Vec<String> = (r.files())
        .map(|f| serde_json::to_string(f).unwrap())
        .collect();
    assert_eq!(files.len(), 2);
    let with_files = |serde: String| {
        let at = serde.find(",\"incompleteToolCalls\"").unwrap();
        format!(
            "{},\"files\":[{}]{}",
            &serde[..at],
            files.join(","),
            &serde[at..]
        )
    };
    assert_eq!(
        object_text(|o| response(o, &r, Fields::All)),
        with_files(serde_json::to_string(&r).unwrap())
    );
    for reason in [
        FinishReason::Stop,
        FinishReason::Length,
        FinishReason::ToolCalls,
        FinishReason::ContentFilter,
        FinishReason::Refusal,
        FinishReason::Pause,
        FinishReason::Error,
        FinishReason::Other,
    ] {
        assert_eq!(
            serde_json::to_value(reason).unwrap(),
            finish_reason_name(reason)
        );
    }
    let mut info =
        crate::shell::error_info::info(&Error::invalid_request("messages[0]", "bad"), "openai");
    info.attempts = r.attempts.clone();
    info.partial = Some(r);
    info.retry_after_ms = Some(5);
    info.status = Some(400);
    assert_eq!(
        object_text(|o| error_info(o, &info)),
        with_files(serde_json::to_string(&info).unwrap())
    );
}
