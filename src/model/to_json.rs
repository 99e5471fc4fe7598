//! The model written as JSON by hand, for the JS boundary (`src/jsapi.rs`):
//! exactly what the types' serde `Serialize` gives (the tests below compare
//! the two on every recorded response and error), without linking serde's
//! serializer and the derived code into the wasm.
//!
//! Each function writes the fields of a value into an object already open,
//! so that callers can add their own fields around them.

use crate::error::ErrorInfo;
use crate::json::write::{Obj, Out};
use crate::model::{
    FinishReason, IncompleteToolCall, Message, Part, ProviderData, Response, Role, ToolCall, Usage,
};

/// How much of a [`Response`] to write.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Fields {
    /// Every field, as `Serialize` writes them.
    All,
    /// Without `text`, `reasoning` and `toolCalls`, which the JS shell
    /// derives from `message.parts` (see `JsonDecoder::feed`).
    Compact,
}

pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

pub(crate) fn finish_reason_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Refusal => "refusal",
        FinishReason::Pause => "pause",
        FinishReason::Error => "error",
        FinishReason::Other => "other",
    }
}

fn provider_data(o: &mut Obj, data: &Option<ProviderData>) {
    if let Some(d) = data {
        let mut m = o.object("providerData");
        for (k, v) in d {
            m.value(k, v);
        }
    }
}

/// `{"type": ..., ...}` of a [`Part`].
pub(crate) fn part(o: &mut Obj, p: &Part) {
    match p {
        Part::Text {
            text,
            provider_data: d,
        } => {
            o.str("type", "text").str("text", text);
            provider_data(o, d);
        }
        Part::Image {
            url,
            data,
            media_type,
            provider_data: d,
        } => {
            o.str("type", "image")
                .opt_str("url", url.as_deref())
                .opt_str("data", data.as_deref())
                .opt_str("mediaType", media_type.as_deref());
            provider_data(o, d);
        }
        Part::ToolCall {
            id,
            name,
            arguments,
            provider_data: d,
        } => {
            o.str("type", "tool_call")
                .str("id", id)
                .str("name", name)
                .str("arguments", arguments);
            provider_data(o, d);
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
            provider_data: d,
        } => {
            o.str("type", "tool_result")
                .str("callId", call_id)
                .str("content", content);
            if *is_error {
                o.bool("isError", true);
            }
            provider_data(o, d);
        }
        Part::Reasoning {
            text,
            signature,
            redacted,
            provider_data: d,
        } => {
            o.str("type", "reasoning")
                .str("text", text)
                .opt_str("signature", signature.as_deref())
                .opt_str("redacted", redacted.as_deref());
            provider_data(o, d);
        }
        Part::Provider { provider, data } => {
            o.str("type", "provider")
                .str("provider", provider)
                .value("data", data);
        }
    }
}

/// The fields of a [`Message`].
pub(crate) fn message(o: &mut Obj, m: &Message) {
    o.str("role", role_name(m.role));
    let mut parts = o.array("parts");
    for p in &m.parts {
        part(&mut parts.object(), p);
    }
}

/// The fields of a [`ToolCall`].
pub(crate) fn tool_call(o: &mut Obj, c: &ToolCall) {
    o.str("id", &c.id)
        .str("name", &c.name)
        .str("arguments", &c.arguments);
}

fn incomplete_call(o: &mut Obj, c: &IncompleteToolCall) {
    o.opt_str("id", c.id.as_deref())
        .opt_str("name", c.name.as_deref())
        .str("arguments", &c.arguments)
        .str("reason", &c.reason);
}

/// The fields of a [`Usage`].
pub(crate) fn usage(o: &mut Obj, u: &Usage) {
    for (key, n) in [
        ("input", u.input),
        ("output", u.output),
        ("cacheRead", u.cache_read),
        ("cacheWrite", u.cache_write),
        ("reasoning", u.reasoning),
    ] {
        if let Some(n) = n {
            o.uint(key, n);
        }
    }
    if let Some(raw) = &u.raw {
        o.value("raw", raw);
    }
}

/// The fields of a [`Response`].
pub(crate) fn response(o: &mut Obj, r: &Response, fields: Fields) {
    o.opt_str("id", r.id.as_deref())
        .opt_str("model", r.model.as_deref());
    message(&mut o.object("message"), &r.message);
    if fields == Fields::All {
        o.str("text", &r.text);
        if !r.reasoning.is_empty() {
            o.str("reasoning", &r.reasoning);
        }
        let mut calls = o.array("toolCalls");
        for c in &r.tool_calls {
            tool_call(&mut calls.object(), c);
        }
    }
    if !r.incomplete_tool_calls.is_empty() {
        let mut calls = o.array("incompleteToolCalls");
        for c in &r.incomplete_tool_calls {
            incomplete_call(&mut calls.object(), c);
        }
    }
    o.opt_str("refusal", r.refusal.as_deref());
    usage(&mut o.object("usage"), &r.usage);
    o.str("finishReason", finish_reason_name(r.finish_reason))
        .opt_str("rawFinishReason", r.raw_finish_reason.as_deref());
}

/// The fields of an [`ErrorInfo`].
pub(crate) fn error_info(o: &mut Obj, e: &ErrorInfo) {
    o.str("name", e.name)
        .str("code", e.code)
        .str("message", &e.message)
        .str("provider", e.provider);
    if let Some(s) = e.status {
        o.uint("status", s.into());
    }
    o.opt_str("providerType", e.provider_type.as_deref())
        .opt_str("providerCode", e.provider_code.as_deref())
        .opt_str("param", e.param.as_deref())
        .opt_str("requestId", e.request_id.as_deref());
    if let Some(ms) = e.retry_after_ms {
        o.uint("retryAfterMs", ms);
    }
    o.bool("retryable", e.retryable)
        .bool("inBand", e.in_band)
        .bool("eventsEmitted", e.events_emitted)
        .opt_str("path", e.path.as_deref());
    if let Some(p) = &e.partial {
        response(&mut o.object("partial"), p, Fields::All);
    }
    o.opt_str("body", e.body.as_deref());
}

/// `{"<key>": <object written by write>}` as a string.
pub(crate) fn wrapped(key: &str, write: impl FnOnce(&mut Obj)) -> String {
    let mut out = Out::default();
    write(&mut out.object().object(key));
    out.finish().unwrap_or_default()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::json::write::object_text;
    use crate::providers::{decode_error, decode_response, Provider};
    use crate::stream::StreamDecoder;

    fn fixtures() -> Vec<(Provider, std::path::PathBuf)> {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
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
            let info = e.info(p.name());
            let hand = object_text(|o| error_info(o, &info));
            assert_eq!(hand, serde_json::to_string(&info).unwrap(), "{name}");
            let api =
                decode_error(p, 429, &[("retry-after".into(), "2".into())], &body).info(p.name());
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
            {"type": "tool_call", "id": "c", "name": "f", "arguments": "{}"},
            {"type": "tool_result", "callId": "c", "content": "1", "isError": true},
            {"type": "tool_result", "callId": "c", "content": "1"},
            {"type": "reasoning", "text": "", "signature": "sig", "redacted": "r"},
            {"type": "provider", "provider": "anthropic", "data": {"type": "x", "v": [1, -2, null]}},
            {"type": "provider", "provider": "anthropic", "data": null}]}))
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
                cache_read: None,
                cache_write: Some(0),
                reasoning: Some(3),
                raw: Some(serde_json::json!({"k": [1.25]})),
            },
            finish_reason: FinishReason::ContentFilter,
            raw_finish_reason: Some("SAFETY".into()),
        };
        for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            let m = Message { role, ..m.clone() };
            assert_eq!(
                object_text(|o| message(o, &m)),
                serde_json::to_string(&m).unwrap()
            );
        }
        assert_eq!(
            object_text(|o| response(o, &r, Fields::All)),
            serde_json::to_string(&r).unwrap()
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
        let mut info = Error::invalid_request("messages[0]", "bad").info("openai");
        info.partial = Some(r);
        info.retry_after_ms = Some(5);
        info.status = Some(400);
        assert_eq!(
            object_text(|o| error_info(o, &info)),
            serde_json::to_string(&info).unwrap()
        );
    }
}
