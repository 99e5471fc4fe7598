//! The model written as JSON by hand, for the JS boundary (`src/shell/`):
//! exactly what the types' serde `Serialize` gives (`shell/to_json_tests.rs`
//! compares the two on every recorded response and error), without linking serde's
//! serializer and the derived code into the wasm.
//!
//! Each function writes the fields of a value into an object already open,
//! so that callers can add their own fields around them.

use crate::json::write::{Obj, Out};
use crate::model::{
    FailedAttempt, FinishReason, IncompleteToolCall, Message, Part, ProviderData, Response, Role,
    ToolCall, Usage,
};

/// How much of a [`Response`] to write.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Fields {
    /// Every field, as `Serialize` writes them.
    All,
    /// Without `text`, `reasoning` and `toolCalls`, which the JS shell
    /// derives from `message.parts` (see `BoundaryStream::feed`).
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
        Part::File {
            url,
            data,
            media_type,
            filename,
            provider_data: d,
        } => {
            o.str("type", "file")
                .opt_str("url", url.as_deref())
                .opt_str("data", data.as_deref())
                .str("mediaType", media_type)
                .opt_str("filename", filename.as_deref());
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
        Part::Cache { ttl } => {
            o.str("type", "cache").opt_str("ttl", ttl.as_deref());
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
        ("total", u.total),
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
        drop(calls);
        // The files the model made: its message's `file` parts again (as
        // JS derives them from a stream's `finish`).
        if r.files().next().is_some() {
            let mut files = o.array("files");
            for f in r.files() {
                part(&mut files.object(), f);
            }
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
        .opt_str("rawFinishReason", r.raw_finish_reason.as_deref())
        .opt_str("provider", r.provider.as_deref());
    attempts(o, &r.attempts);
}

/// `"attempts": [...]`, the providers of a fallback chain that failed,
/// unless there are none.
pub(crate) fn attempts(o: &mut Obj, list: &[FailedAttempt]) {
    if list.is_empty() {
        return;
    }
    let mut attempts = o.array("attempts");
    for a in list {
        let mut o = attempts.object();
        o.str("provider", &a.provider)
            .opt_str("model", a.model.as_deref());
        let mut e = o.object("error");
        e.str("code", &a.error.code);
        if let Some(status) = a.error.status {
            e.uint("status", u64::from(status));
        }
        e.str("message", &a.error.message);
    }
}

/// `{"<key>": <object written by write>}` as a string.
pub(crate) fn wrapped(key: &str, write: impl FnOnce(&mut Obj)) -> String {
    let mut out = Out::default();
    write(&mut out.object().object(key));
    out.finish().unwrap_or_default()
}
