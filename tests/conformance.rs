//! One test per recorded case of `tests/fixtures/conformance` (226, counted
//! per provider in [`CASES`]): the body goes through the adapter exactly as
//! it would arrive (stream, response or HTTP error body) and the result is
//! checked against `<case>.expected.json`: text, reasoning, tool calls (wire
//! id, name, parsed arguments, argument text), raw finish reason, usage,
//! server tools, compaction and error.
//!
//! A one-adapter build (`--no-default-features --features gemini`) runs the
//! cases of the providers it has, and says which it leaves out.
//!
//! Run one case: `cargo test --test conformance -- anthropic/anthropic-text`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
#[path = "conformance/responses.rs"]
mod responses;

use common::Case;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
#[cfg(feature = "anthropic")]
use skyl::anthropic::server_tool_names;
use skyl::{
    decode_error, decode_response, Error, Part, Provider, Response, StreamDecoder, StreamEvent,
};

/// The recorded cases of each provider: a recording added or removed changes
/// this table, and the counts the docs give (README.md, docs/wire.md).
const CASES: [(&str, usize); 6] = [
    ("openai", 4),
    ("openaicompat", 45),
    ("anthropic", 62),
    ("gemini", 15),
    ("responses", 100),
    ("bedrock", 110),
];

fn main() {
    let args = Arguments::from_args();
    let (cases, left_out): (Vec<Case>, Vec<Case>) = common::cases()
        .into_iter()
        .partition(|case| built(case.provider));
    let count =
        |cases: &[Case], name: &str| cases.iter().filter(|c| c.provider.name() == name).count();
    let mut trials = vec![];
    for (name, want) in CASES {
        let (run, left) = (count(&cases, name), count(&left_out, name));
        trials.push(Trial::test(
            format!("{name}/the-recorded-cases"),
            move || {
                if run + left != want {
                    return Err(format!(
                        "{} recorded cases of {name}, CASES says {want}: update it and the docs",
                        run + left
                    )
                    .into());
                }
                Ok(())
            },
        ));
        if left > 0 {
            println!(
                "conformance: {left} cases of {name} left out: its adapter is not in this build"
            );
        }
    }
    let providers: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
    let listed: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        providers, listed,
        "CASES lists every provider, in the order of Provider::ALL"
    );
    assert!(!cases.is_empty(), "no conformance case in this build");
    trials.extend(
        cases
            .into_iter()
            .map(|case| Trial::test(case.id(), move || check(&case))),
    );
    libtest_mimic::run(&args, trials).exit();
}

/// Whether this build has the provider's adapter: the package's Cargo
/// features are its tests' features too.
fn built(provider: Provider) -> bool {
    match provider.feature() {
        "openai" => cfg!(feature = "openai"),
        "anthropic" => cfg!(feature = "anthropic"),
        "gemini" => cfg!(feature = "gemini"),
        "bedrock" => cfg!(feature = "bedrock"),
        other => panic!("the feature {other} is new: add it to built()"),
    }
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(Failed::from(format!($($msg)+)));
        }
    };
}

fn check(case: &Case) -> Result<(), Failed> {
    let body = case.body();
    let exp = &case.expected;
    let (response, error) = match case.kind.as_str() {
        "stream" => {
            let mut decoder = StreamDecoder::new(case.provider);
            let mut events = Vec::new();
            let result = decoder
                .feed(&body, &mut events)
                .and_then(|()| decoder.finish(&mut events));
            check_events(&events, &result)?;
            // An in-band error keeps no response: what the stream had
            // assembled is the decoder's (a driver's `partial`).
            let assembled =
                (result.is_err() && decoder.events_emitted()).then(|| decoder.partial());
            let (response, error) = split(result);
            (response.or(assembled.filter(|_| {
                error.as_ref().is_some_and(|e| e.partial().is_none())
            })), error)
        }
        "response" => split(decode_response(case.provider, std::str::from_utf8(&body)?)),
        "error" => {
            let status = exp["http_status"].as_u64().ok_or("no http_status")? as u16;
            let err = decode_error(case.provider, status, &[], std::str::from_utf8(&body)?);
            (None, Some(err))
        }
        other => return Err(format!("unknown kind {other}").into()),
    };
    check_error(exp, error.as_ref())?;
    let Some(r) = response.or_else(|| error.as_ref().and_then(|e| e.partial().cloned())) else {
        // Error bodies (and in-band errors, which keep no response):
        // nothing assembled, and nothing expected.
        ensure!(
            exp["text"].is_null() || exp["text"] == "",
            "expected text but got only {error:?}"
        );
        ensure!(
            exp["tool_calls"].as_array().is_some_and(Vec::is_empty),
            "expected tool calls"
        );
        return Ok(());
    };
    check_response(case, exp, &r)
}

fn split(result: Result<Response, Error>) -> (Option<Response>, Option<Error>) {
    match result {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    }
}

fn check_error(exp: &Value, error: Option<&Error>) -> Result<(), Failed> {
    let want = &exp["error"];
    match (want.is_null(), error) {
        (true, None) => Ok(()),
        (true, Some(e)) => Err(format!("unexpected error: {e:?}").into()),
        (false, None) => Err(format!("expected error {want}, got success").into()),
        (false, Some(e)) => {
            if exp["provider"] == "responses" || exp["provider"] == "bedrock" {
                if let Some(checked) = responses::check_client_error(want, e) {
                    return checked;
                }
            }
            let (kind, message) = match e {
                Error::Api(api) => (
                    api.provider_type.clone().unwrap_or_default(),
                    api.message.clone(),
                ),
                Error::MalformedStream { message, .. } => {
                    ("invalid_response".to_string(), message.clone())
                }
                other => (other.code().to_string(), other.to_string()),
            };
            ensure!(
                kind == want["type"],
                "error type {kind:?}, expected {}",
                want["type"]
            );
            // (A null message: the body has none, and the error says so.)
            ensure!(
                message == want["message"] || want["message"].is_null(),
                "error message {message:?}, expected {}",
                want["message"]
            );
            if let (Error::Api(api), Some(code)) = (e, want.get("code").filter(|c| !c.is_null())) {
                let code = match code {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                ensure!(
                    api.code.as_deref() == Some(code.as_str()),
                    "code {:?}, expected {code}",
                    api.code
                );
            }
            if let (Error::Api(api), Some(param)) = (e, want.get("param").and_then(Value::as_str)) {
                ensure!(api.param.as_deref() == Some(param), "param {:?}", api.param);
            }
            if let (Error::Api(api), Some(status)) = (e, exp["http_status"].as_u64()) {
                ensure!(api.status == Some(status as u16), "status {:?}", api.status);
            }
            Ok(())
        }
    }
}

fn check_response(case: &Case, exp: &Value, r: &Response) -> Result<(), Failed> {
    if let Some(text) = exp["text"].as_str() {
        ensure!(
            r.text == text,
            "text differs:\n ours: {:?}\n want: {:?}",
            r.text,
            text
        );
        ensure!(
            r.message.joined_text() == text,
            "message text differs from response text"
        );
    }
    match exp["reasoning"].as_str() {
        Some(reasoning) => ensure!(
            r.reasoning == reasoning,
            "reasoning differs:\n ours: {:?}\n want: {:?}",
            r.reasoning,
            reasoning
        ),
        None => ensure!(
            r.reasoning.is_empty(),
            "unexpected reasoning {:?}",
            r.reasoning
        ),
    }

    let want_calls = exp["tool_calls"].as_array().ok_or("tool_calls")?;
    ensure!(
        r.tool_calls.len() == want_calls.len(),
        "{} tool calls, expected {}: {:?}",
        r.tool_calls.len(),
        want_calls.len(),
        r.tool_calls
    );
    ensure!(
        r.message.tool_calls() == r.tool_calls,
        "message tool calls differ from response tool calls"
    );
    for (i, (ours, want)) in r.tool_calls.iter().zip(want_calls).enumerate() {
        ensure!(
            ours.name == want["name"],
            "call {i}: name {:?}, expected {}",
            ours.name,
            want["name"]
        );
        if let Some(id) = want["id"].as_str() {
            ensure!(ours.id == id, "call {i}: id {:?}, expected {id:?}", ours.id);
        } else {
            ensure!(!ours.id.is_empty(), "call {i}: no id");
        }
        if want["type"] == "custom_tool_call" {
            // Free-form input, handed out as {"input": ...} (see the adapter).
            let parsed: Value = serde_json::from_str(&ours.arguments)?;
            ensure!(
                parsed["input"] == want["arguments"],
                "call {i}: custom input {parsed}, expected {}",
                want["arguments"]
            );
            continue;
        }
        let parsed: Value = serde_json::from_str(&ours.arguments).map_err(|e| {
            format!(
                "call {i}: arguments are not JSON: {e}: {:?}",
                ours.arguments
            )
        })?;
        ensure!(
            parsed == want["arguments"],
            "call {i}: arguments {parsed}, expected {}",
            want["arguments"]
        );
        if let Some(raw) = want["arguments_raw"].as_str() {
            let raw = if raw.trim().is_empty() { "{}" } else { raw };
            ensure!(
                ours.arguments == raw,
                "call {i}: argument text {:?}, expected {raw:?}",
                ours.arguments
            );
        }
    }
    // Unique ids within the turn (Gemini parallel same-name calls).
    let mut ids: Vec<&str> = r.tool_calls.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ensure!(
        ids.len() == r.tool_calls.len(),
        "tool-call ids are not unique: {:?}",
        r.tool_calls
    );
    if case.provider == Provider::Responses {
        return responses::check(exp, r);
    }
    if case.provider == Provider::Bedrock {
        // Its cases list the calls that must never run.
        let want = exp["incomplete_tool_calls"]
            .as_array()
            .ok_or("incomplete_tool_calls")?;
        let ours: Vec<(Option<&str>, Option<&str>, &str)> = (r.incomplete_tool_calls.iter())
            .map(|c| (c.id.as_deref(), c.name.as_deref(), c.arguments.as_str()))
            .collect();
        let want: Vec<(Option<&str>, Option<&str>, &str)> = (want.iter())
            .map(|c| {
                let s = |k: &str| c[k].as_str();
                (s("id"), s("name"), s("arguments_raw").unwrap_or_default())
            })
            .collect();
        ensure!(ours == want, "incomplete calls {ours:?}, expected {want:?}");
    } else {
        ensure!(
            r.incomplete_tool_calls.is_empty() || !exp["error"].is_null(),
            "incomplete calls {:?}",
            r.incomplete_tool_calls
        );
    }

    match exp["finish_reason"].as_str() {
        Some(f) => ensure!(
            r.raw_finish_reason.as_deref() == Some(f),
            "finish {:?}, expected {f:?}",
            r.raw_finish_reason
        ),
        None => ensure!(
            r.raw_finish_reason.is_none(),
            "unexpected finish {:?}",
            r.raw_finish_reason
        ),
    }
    if let Some(usage) = exp["usage"].as_object() {
        // The expected counts are the provider's own; skyl's are normalised
        // (input with cache reads and writes, output with reasoning), so
        // what the provider reports apart, read from its own usage object,
        // is added to the expected figure.
        let raw = r.usage.raw.clone().unwrap_or_default();
        let apart = |keys: &[&str]| -> u64 { keys.iter().filter_map(|k| raw[*k].as_u64()).sum() };
        let (input_apart, output_apart) = match case.provider {
            Provider::Anthropic => (
                apart(&["cache_read_input_tokens", "cache_creation_input_tokens"]),
                0,
            ),
            Provider::Bedrock => (apart(&["cacheReadInputTokens", "cacheWriteInputTokens"]), 0),
            Provider::Gemini => (0, apart(&["thoughtsTokenCount"])),
            _ => (0, 0),
        };
        for (key, ours, add) in [
            ("input", r.usage.input, input_apart),
            ("output", r.usage.output, output_apart),
            ("reasoning", r.usage.reasoning, 0),
        ] {
            if let Some(want) = usage.get(key) {
                let want = want.as_u64().map(|w| w + add);
                ensure!(ours == want, "usage {key} {ours:?}, expected {want:?}");
            }
        }
        if let (Some(i), Some(o)) = (r.usage.input, r.usage.output) {
            ensure!(
                r.usage.total == Some(i + o),
                "usage total {:?}",
                r.usage.total
            );
        }
    }
    // (Only Anthropic's cases list server tools; the Responses cases are
    // checked above.)
    #[cfg(feature = "anthropic")]
    if let Some(servers) = exp.get("server_tool_calls").and_then(Value::as_array) {
        let ours = server_tool_names(&r.message);
        let want: Vec<&str> = servers.iter().filter_map(Value::as_str).collect();
        ensure!(ours == want, "server tools {ours:?}, expected {want:?}");
    }
    if let Some(summary) = exp.get("compaction").and_then(Value::as_str) {
        let ours = r.message.parts.iter().find_map(|p| match p {
            Part::Provider { data, .. } if data["type"] == "compaction" => data["content"].as_str(),
            _ => None,
        });
        ensure!(
            ours == Some(summary),
            "compaction summary missing or different: {ours:?}"
        );
    }
    // Replayable: the assistant turn survives a JSON round trip unchanged.
    let json = serde_json::to_string(&r.message)?;
    let back: skyl::Message = serde_json::from_str(&json)?;
    ensure!(
        back == r.message,
        "the message does not round-trip through JSON"
    );
    let _ = case;
    Ok(())
}

/// Stream-only checks: events agree with the final response, a tool call is
/// emitted once, and `finish` is last.
fn check_events(events: &[StreamEvent], result: &Result<Response, Error>) -> Result<(), Failed> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut finishes = 0;
    for ev in events {
        match ev {
            StreamEvent::Text { text: t, .. } => text.push_str(t),
            StreamEvent::ToolCall { call, .. } => calls.push(call.clone()),
            StreamEvent::Finish { .. } => finishes += 1,
            _ => {}
        }
    }
    let assembled = match result {
        Ok(r) => {
            ensure!(finishes == 1, "{finishes} finish events");
            let Some(StreamEvent::Finish { response, .. }) = events.last() else {
                return Err("finish is not the last event".into());
            };
            ensure!(
                **response == *r,
                "the finish event's response differs from the result"
            );
            r.clone()
        }
        Err(e) => {
            ensure!(finishes == 0, "finish event before an error");
            match e.partial() {
                Some(p) => p.clone(),
                None => return Ok(()),
            }
        }
    };
    ensure!(
        text == assembled.text,
        "text events do not add up to the response text"
    );
    ensure!(
        calls == assembled.tool_calls,
        "tool_call events differ from the response's calls"
    );
    let _ = Provider::ALL;
    Ok(())
}
