//! The JSON boundary the JavaScript shell calls: strings in, strings out.
//!
//! Every function here takes and returns JSON text, so the wasm wrappers in
//! `src/wasm/` are one line each and everything is tested natively. Results
//! are `{"ok": ...}`-style objects; failures are `{"error": ErrorInfo}`,
//! never panics or exceptions, so the JS side builds the right `SkylError`
//! subclass in one place.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::providers::{decode_error, decode_response, encode_request, ClientConfig, Provider};
use crate::retry::RetryPolicy;
use crate::stream::StreamDecoder;
use crate::types::{
    FinishReason, IncompleteToolCall, Message, Request, Response, StreamEvent, Tool, ToolCall,
    Usage,
};
use crate::validate::{validate_request, validate_tool, validate_tool_call};

/// The client options the JS shell passes to [`encode`].
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigInput {
    provider: String,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default, rename = "baseURL")]
    base_url: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    headers: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    browser: bool,
    #[serde(default)]
    include_usage: bool,
}

fn provider_named(name: &str) -> Result<Provider, Error> {
    Provider::from_name(name).ok_or_else(|| {
        Error::invalid_request(
            "provider",
            format!("unknown provider {name:?}: use openai, openaicompat, anthropic or gemini"),
        )
    })
}

fn provider_label(name: &str) -> &'static str {
    Provider::from_name(name).map_or("unknown", Provider::name)
}

fn error_json(e: &Error, provider: &'static str) -> String {
    let info = serde_json::to_string(&e.info(provider)).unwrap_or_else(|_| "{}".into());
    format!("{{\"error\":{info}}}")
}

fn ok_json(value: &impl serde::Serialize, key: &str) -> String {
    match serde_json::to_string(value) {
        Ok(v) => format!("{{\"{key}\":{v}}}"),
        Err(e) => error_json(
            &Error::invalid_response(format!("cannot serialise: {e}")),
            "unknown",
        ),
    }
}

fn parse<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> Result<T, Error> {
    serde_json::from_str(json).map_err(|e| Error::invalid_request(what, e.to_string()))
}

/// Encodes a request: `{"ok": {"url", "headers": [[k, v]], "body"}}` or
/// `{"error": ...}`.
pub fn encode(config_json: &str, request_json: &str, stream: bool) -> String {
    let mut label = "unknown";
    let result = (|| {
        let input: ConfigInput = parse(config_json, "options")?;
        label = provider_label(&input.provider);
        let provider = provider_named(&input.provider)?;
        let request: Request = parse(request_json, "request")?;
        let mut config = ClientConfig::new(provider);
        config.api_key = input.api_key.filter(|k| !k.is_empty());
        config.base_url = input.base_url;
        config.model = input.model;
        config.browser = input.browser;
        config.include_usage = input.include_usage;
        for (k, v) in input.headers.unwrap_or_default() {
            if let Value::String(v) = v {
                config.headers.push((k, v));
            }
        }
        encode_request(&config, &request, stream)
    })();
    match result {
        Ok(http) => ok_json(
            &serde_json::json!({"url": http.url, "headers": http.headers, "body": http.body}),
            "ok",
        ),
        Err(e) => error_json(&e, label),
    }
}

/// Decodes a non-streaming body: `{"response": ...}` or `{"error": ...}`.
pub fn response(provider: &str, body: &str) -> String {
    let label = provider_label(provider);
    match provider_named(provider).and_then(|p| decode_response(p, body)) {
        Ok(r) => ok_json(&r, "response"),
        Err(e) => error_json(&e, label),
    }
}

/// Decodes an HTTP error response: always `{"error": ...}`. `headers_json`
/// is `[[name, value], ...]`.
pub fn http_error(provider: &str, status: u16, headers_json: &str, body: &str) -> String {
    let label = provider_label(provider);
    let headers: Vec<(String, String)> = serde_json::from_str(headers_json).unwrap_or_default();
    let e = match provider_named(provider) {
        Ok(p) => decode_error(p, status, &headers, body),
        Err(e) => e,
    };
    error_json(&e, label)
}

/// Validates a `tool`, `toolCall` or `request`: `""` when valid, else
/// `{"error": ...}`.
pub fn validate(kind: &str, json: &str) -> String {
    let result = match kind {
        "tool" => parse::<Tool>(json, "tool").and_then(|t| validate_tool(&t)),
        "toolCall" => parse::<ToolCall>(json, "toolCall").and_then(|c| validate_tool_call(&c)),
        "request" => parse::<Request>(json, "request").and_then(|r| validate_request(&r)),
        other => Err(Error::invalid_request(
            "",
            format!("nothing to validate as {other:?}"),
        )),
    };
    match result {
        Ok(()) => String::new(),
        Err(e) => error_json(&e, "unknown"),
    }
}

/// The delay in milliseconds before the next retry, or `-1` for none.
/// `retry_after_ms` below zero (or NaN) means the provider asked for none.
pub fn retry_delay(retries_done: u32, max_retries: u32, retry_after_ms: f64, random: f64) -> f64 {
    let policy = RetryPolicy {
        max_retries,
        ..RetryPolicy::default()
    };
    let after =
        (retry_after_ms.is_finite() && retry_after_ms >= 0.0).then_some(retry_after_ms as u64);
    policy
        .delay_ms(retries_done, after, random)
        .map_or(-1.0, |ms| ms as f64)
}

/// A `finish` event without the response fields JS derives from
/// `message.parts` (`text`, `reasoning`, `toolCalls`): they would repeat
/// every argument and all text, already sent in earlier events.
#[derive(Serialize)]
struct CompactFinish<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    response: CompactResponse<'a>,
    raw: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompactResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: &'a Option<String>,
    message: &'a Message,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    incomplete_tool_calls: &'a [IncompleteToolCall],
    #[serde(skip_serializing_if = "Option::is_none")]
    refusal: &'a Option<String>,
    usage: &'a Usage,
    finish_reason: FinishReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw_finish_reason: &'a Option<String>,
}

impl<'a> CompactResponse<'a> {
    fn of(r: &'a Response) -> Self {
        CompactResponse {
            id: &r.id,
            model: &r.model,
            message: &r.message,
            incomplete_tool_calls: &r.incomplete_tool_calls,
            refusal: &r.refusal,
            usage: &r.usage,
            finish_reason: r.finish_reason,
            raw_finish_reason: &r.raw_finish_reason,
        }
    }
}

/// An event as JSON; a `finish` event in its compact form.
fn event_json(ev: &StreamEvent) -> serde_json::Result<String> {
    match ev {
        StreamEvent::Finish { response, .. } => serde_json::to_string(&CompactFinish {
            kind: "finish",
            response: CompactResponse::of(response),
            raw: "",
        }),
        other => serde_json::to_string(other),
    }
}

/// A stream decoder whose results are JSON.
#[derive(Debug)]
pub struct JsonDecoder {
    inner: StreamDecoder,
    provider: &'static str,
    events: Vec<StreamEvent>,
}

impl JsonDecoder {
    /// A decoder for the named provider.
    pub fn new(provider: &str, max_event_bytes: Option<usize>) -> Result<Self, String> {
        let p = provider_named(provider).map_err(|e| error_json(&e, "unknown"))?;
        let inner = match max_event_bytes {
            Some(limit) => StreamDecoder::with_max_event_bytes(p, limit),
            None => StreamDecoder::new(p),
        };
        Ok(JsonDecoder {
            inner,
            provider: p.name(),
            events: Vec::new(),
        })
    }

    /// `{"events":[...]` with each event's `raw` left empty; the frames go
    /// to `raws` and their UTF-16 lengths to `"rawLens"` (see [`Self::feed`]).
    fn events_json(&mut self, out: &mut String, raws: &mut String) {
        out.push_str("{\"events\":[");
        let mut lens = String::new();
        for (i, mut ev) in self.events.drain(..).enumerate() {
            if i > 0 {
                out.push(',');
                lens.push(',');
            }
            let raw = ev.take_raw();
            raws.push_str(&raw);
            lens.push_str(&raw.encode_utf16().count().to_string());
            match event_json(&ev) {
                Ok(s) => out.push_str(&s),
                Err(_) => out.push_str("null"),
            }
        }
        out.push_str("],\"rawLens\":[");
        out.push_str(&lens);
        out.push(']');
    }

    /// Closes the JSON object and appends the frames after a NUL (which
    /// JSON text never contains unescaped).
    fn seal(mut out: String, raws: &str) -> String {
        out.push('}');
        if !raws.is_empty() {
            out.push('\0');
            out.push_str(raws);
        }
        out
    }

    /// Feeds a chunk: `{"events": [...], "rawLens": [...]}`, plus `"error"`
    /// if the stream failed (events before the failure are still listed).
    /// Each event's `raw` is empty in the JSON: the frames follow the JSON
    /// after a NUL, concatenated, `rawLens` giving each one's length in
    /// UTF-16 units, so they are neither escaped here nor parsed in JS.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        let result = self.inner.feed(chunk, &mut self.events);
        let mut out = String::new();
        let mut raws = String::new();
        self.events_json(&mut out, &mut raws);
        if let Err(e) = result {
            out.push_str(",\"error\":");
            out.push_str(
                &serde_json::to_string(&e.info(self.provider)).unwrap_or_else(|_| "{}".into()),
            );
        }
        Self::seal(out, &raws)
    }

    /// Ends the body: as [`Self::feed`], with `"done": true` (the response
    /// is in the final `finish` event) or `"error"`.
    pub fn finish(&mut self) -> String {
        let result = self.inner.finish(&mut self.events);
        let mut out = String::new();
        let mut raws = String::new();
        self.events_json(&mut out, &mut raws);
        match result {
            Ok(_) => out.push_str(",\"done\":true"),
            Err(e) => {
                out.push_str(",\"error\":");
                out.push_str(
                    &serde_json::to_string(&e.info(self.provider)).unwrap_or_else(|_| "{}".into()),
                );
            }
        }
        Self::seal(out, &raws)
    }

    /// Whether any event has been handed out.
    pub fn events_emitted(&self) -> bool {
        self.inner.events_emitted()
    }

    /// Whether the provider's terminal frame has been decoded.
    pub fn is_complete(&self) -> bool {
        self.inner.is_complete()
    }

    /// What has been assembled so far.
    pub fn partial(&self) -> String {
        serde_json::to_string(&self.inner.partial()).unwrap_or_else(|_| "null".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn encode_returns_the_http_request_or_a_typed_error() {
        let out = v(&encode(
            r#"{"provider":"gemini","apiKey":"k","model":"gemini-2.5-flash","headers":{"x-a":"1"}}"#,
            r#"{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}"#,
            true,
        ));
        let ok = &out["ok"];
        assert!(ok["url"]
            .as_str()
            .unwrap()
            .ends_with(":streamGenerateContent?alt=sse"));
        assert!(ok["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "x-a"));
        assert!(ok["body"].as_str().unwrap().contains("\"contents\""));

        let err = v(&encode(r#"{"provider":"nope"}"#, "{}", false));
        assert_eq!(err["error"]["name"], "InvalidRequestError");
        assert_eq!(err["error"]["path"], "provider");

        let err = v(&encode(
            r#"{"provider":"openai","model":"m"}"#,
            r#"{"messages":[{"role":"robot"}]}"#,
            false,
        ));
        assert_eq!(err["error"]["path"], "request");
        assert_eq!(err["error"]["provider"], "openai");
    }

    /// The JSON part and the frames of a decoder result.
    fn split(s: &str) -> (Value, Vec<String>) {
        let (json, raws) = s.split_once('\0').unwrap_or((s, ""));
        let out = v(json);
        let units: Vec<u16> = raws.encode_utf16().collect();
        let mut at = 0;
        let mut frames = Vec::new();
        for n in out["rawLens"].as_array().unwrap() {
            let n = n.as_u64().unwrap() as usize;
            frames.push(String::from_utf16(&units[at..at + n]).unwrap());
            at += n;
        }
        assert_eq!(at, units.len());
        (out, frames)
    }

    #[test]
    fn the_decoder_reports_events_with_their_frames_then_the_end() {
        let mut d = JsonDecoder::new("openai", None).unwrap();
        let frame = "{\"choices\":[{\"delta\":{\"content\":\"Hé 🌍\"}}]}";
        let (out, frames) = split(&d.feed(format!("data: {frame}\n\n").as_bytes()));
        assert_eq!(out["events"][0]["type"], "text");
        assert_eq!(
            out["events"][0]["raw"], "",
            "the frame is not inside the JSON"
        );
        assert_eq!(frames, [frame]);
        assert!(d.events_emitted());
        let (out, frames) = split(&d.feed(
            b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        ));
        assert!(out["events"].as_array().unwrap().is_empty() && frames.is_empty());
        let (out, frames) = split(&d.finish());
        assert_eq!(out["done"], true);
        assert_eq!(out["events"][0]["type"], "finish");
        // Compact: text, reasoning and toolCalls are derived from the message in JS.
        assert!(out["events"][0]["response"].get("text").is_none());
        assert!(out["events"][0]["response"].get("toolCalls").is_none());
        assert_eq!(
            out["events"][0]["response"]["message"]["parts"][0]["text"],
            "Hé 🌍"
        );
        assert_eq!(out["events"][0]["response"]["finishReason"], "stop");
        assert_eq!(frames, ["[DONE]"]);
    }

    #[test]
    fn a_decoder_that_ends_early_reports_the_partial_response() {
        let mut d = JsonDecoder::new("openai", None).unwrap();
        d.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n");
        let (out, _) = split(&d.finish());
        assert_eq!(out["error"]["name"], "StreamEndedEarlyError");
        assert_eq!(out["error"]["partial"]["text"], "Hi");
        assert_eq!(out["error"]["retryable"], false);
        assert!(JsonDecoder::new("nope", None).is_err());
    }

    #[test]
    fn http_errors_and_validation_are_json() {
        let out = v(&http_error(
            "anthropic",
            529,
            r#"[["retry-after","2"],["request-id","req_9"]]"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ));
        assert_eq!(out["error"]["name"], "OverloadedError");
        assert_eq!(out["error"]["retryAfterMs"], 2000);
        assert_eq!(out["error"]["requestId"], "req_9");
        assert_eq!(validate("tool", r#"{"name":"f"}"#), "");
        assert_eq!(
            v(&validate("tool", r#"{"name":""}"#))["error"]["path"],
            "tool.name"
        );
        assert!(
            validate("toolCall", r#"{"id":"","name":"f","arguments":"{}"}"#)
                .contains("toolCall.id")
        );
        assert!(!validate("nonsense", "{}").is_empty());
    }

    #[test]
    fn retry_delay_is_minus_one_when_none_is_left() {
        assert_eq!(retry_delay(0, 2, -1.0, 0.0), 500.0);
        assert_eq!(retry_delay(0, 2, 250.0, 0.0), 250.0);
        assert_eq!(retry_delay(2, 2, -1.0, 0.0), -1.0);
        assert_eq!(retry_delay(0, 2, f64::NAN, 0.0), 500.0);
    }
}
