//! The driver policy ([`crate::policy`]) as the JS half calls it: whether
//! to retry, what a timeout, a broken connection or an abort means, and a
//! response's request id. Strings in, strings out, like the rest of the
//! boundary. Each is called on a failure path or once per request, never
//! per chunk.

use serde_json::Value;

use super::{error_info, provider_label};
use crate::error::{Error, Timeout};
use crate::json::read::parse;
use crate::json::write::object_text;
use crate::model::from_json::string_pairs;
use crate::policy::{Attempts, Interruption};
use crate::retry::RetryPolicy;

/// The milliseconds to wait before the next attempt, or `-1` to give up
/// ([`Attempts::retry_delay_for`]), after an attempt failed with an error
/// whose `retryable` and `retryAfterMs` the core computed (`retry_after_ms`
/// below zero or NaN: none), with `retries_done` retries made of
/// `max_retries`, and `events_emitted` saying whether an event was handed out.
pub fn retry_delay(
    retries_done: u32,
    max_retries: u32,
    retryable: bool,
    events_emitted: bool,
    retry_after_ms: f64,
    random: f64,
) -> f64 {
    let policy = RetryPolicy {
        max_retries,
        ..RetryPolicy::default()
    };
    let after =
        (retry_after_ms.is_finite() && retry_after_ms >= 0.0).then_some(retry_after_ms as u64);
    Attempts::resume(policy, retries_done, events_emitted)
        .retry_delay_for(retryable, after, random)
        .map_or(-1.0, |ms| ms as f64)
}

/// An [`Interruption`] as JSON: `""` when the body just ends, else
/// `{"error": ErrorInfo, "stop": bool}`, `stop` when the whole request
/// ends rather than the attempt.
fn interruption(cut: Interruption, provider: &str) -> String {
    let (error, stop) = match cut {
        Interruption::EndBody => return String::new(),
        Interruption::EndAttempt(e) => (e, false),
        Interruption::StopRun(e) => (e, true),
    };
    let info = error_info::info(&error, provider_label(provider));
    object_text(|o| {
        error_info::error_info(&mut o.object("error"), &info);
        o.bool("stop", stop);
    })
}

/// What interrupted the driver, described as JSON, and the core's answer
/// ([`Interruption::of`]): `""` when the body just ends, else
/// `{"error": ErrorInfo, "stop": bool}`. The description is one of
///
/// - `{"timeout": "firstByte" | "idle" | "total", "afterMs": n}`, a timer
///   that fired ([`Timeout::expired`]; an unknown name counts as `total`);
/// - `{"unreachable": url, "cause": text}`, a request that could not be
///   sent ([`Error::unreachable`]);
/// - `{"lost": cause}`, a connection that broke while the body was read
///   ([`Error::connection_lost`]);
/// - `{"abort": reason}`, the caller's abort ([`Error::aborted`]);
///
/// with `"complete": true` when the stream's terminal frame had come and
/// `"eventsEmitted": true` when an event had been handed out. (One export
/// for all four: each wasm export costs its own glue.)
pub fn interrupt(provider: &str, json: &str) -> String {
    let v = parse(json).unwrap_or(Value::Null);
    let text = |k| v.get(k).and_then(Value::as_str);
    let flag = |k| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (emitted, complete) = (flag("eventsEmitted"), flag("complete"));
    let cut = if let Some(which) = text("timeout") {
        let after = v.get("afterMs").and_then(Value::as_f64).unwrap_or(0.0);
        let which = Timeout::from_name(which).unwrap_or(Timeout::Total);
        which.expired(after as u64, complete, emitted)
    } else if let Some(url) = text("unreachable") {
        // Nothing was received: there is no body to end.
        let cause = text("cause").unwrap_or_default();
        Interruption::of(Error::unreachable(url, cause), false)
    } else if let Some(cause) = text("lost") {
        Interruption::of(Error::connection_lost(cause, emitted), complete)
    } else {
        Interruption::of(Error::aborted(text("abort"), emitted), complete)
    };
    interruption(cut, provider)
}

/// The request id of a response, from its headers as `[[name, value],
/// ...]` ([`crate::request_id`]): `""` when there is none.
pub fn request_id(headers_json: &str) -> String {
    let headers = parse(headers_json).map_or_else(|_| Vec::new(), string_pairs);
    crate::http::request_id(&headers).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn retry_delay_is_minus_one_when_none_is_left_or_allowed() {
        for (done, retryable, events_emitted, after, want) in [
            (0, true, false, -1.0, 500.0),
            (0, true, false, 250.0, 250.0),
            (0, true, false, f64::NAN, 500.0),
            (1, true, false, -1.0, 1_000.0),
            (2, true, false, -1.0, -1.0),
            (0, false, false, 250.0, -1.0),
            (0, true, true, 250.0, -1.0),
        ] {
            assert_eq!(
                retry_delay(done, 2, retryable, events_emitted, after, 0.0),
                want,
                "{done} {retryable} {events_emitted} {after}"
            );
        }
    }

    #[test]
    fn timeouts_connections_and_aborts_are_the_cores_errors() {
        let at = |provider, json| interrupt(provider, json);
        let idle_done = r#"{"timeout":"idle","afterMs":100,"complete":true,"eventsEmitted":true}"#;
        assert_eq!(at("openai", idle_done), "");
        let idle = v(&at(
            "openai",
            r#"{"timeout":"idle","afterMs":100,"eventsEmitted":true}"#,
        ));
        assert_eq!(idle["stop"], false);
        let e = &idle["error"];
        assert_eq!(e["name"], "TimeoutError");
        assert_eq!(e["code"], "timeout");
        assert_eq!(e["provider"], "openai");
        assert_eq!(e["retryable"], false);
        assert_eq!(e["eventsEmitted"], true);
        assert_eq!(
            e["message"],
            "idle timeout: no data between chunks within 100 ms"
        );
        let first = v(&at("gemini", r#"{"timeout":"firstByte","afterMs":50}"#));
        assert_eq!(first["error"]["retryable"], true);
        assert_eq!(first["stop"], false);
        let total = v(&at("gemini", r#"{"timeout":"total","afterMs":700}"#));
        assert_eq!(total["stop"], true);
        assert_eq!(total["error"]["retryable"], false);
        assert_eq!(v(&at("gemini", r#"{"timeout":"nonsense"}"#))["stop"], true);

        let sent = v(&at(
            "anthropic",
            r#"{"unreachable":"http://127.0.0.1:9/v1/x","cause":"refused","complete":true}"#,
        ));
        assert_eq!(sent["error"]["name"], "ConnectionError");
        assert_eq!(sent["error"]["code"], "network");
        assert_eq!(sent["error"]["retryable"], true);
        assert_eq!(
            sent["error"]["message"],
            "could not reach 127.0.0.1:9: refused"
        );
        let lost_done = r#"{"lost":"reset","complete":true,"eventsEmitted":true}"#;
        assert_eq!(at("anthropic", lost_done), "");
        let lost = v(&at("anthropic", r#"{"lost":"reset","eventsEmitted":true}"#));
        assert_eq!(lost["error"]["retryable"], false);
        assert_eq!(lost["error"]["eventsEmitted"], true);

        let abort = v(&at("openai", r#"{"abort":"user left","complete":true}"#));
        assert_eq!(abort["stop"], true);
        assert_eq!(abort["error"]["name"], "AbortError");
        assert_eq!(abort["error"]["code"], "abort");
        assert_eq!(abort["error"]["message"], "request aborted: user left");
        for nothing in [r#"{"abort":""}"#, "{}", "not json"] {
            let abort = v(&at("openai", nothing));
            assert_eq!(abort["error"]["message"], "request aborted", "{nothing}");
        }
    }

    #[test]
    fn the_request_id_comes_from_the_cores_header_list() {
        assert_eq!(request_id(r#"[["cf-ray","r"],["request-id","a"]]"#), "a");
        assert_eq!(request_id(r#"[["x-goog-request-id","g"]]"#), "g");
        assert_eq!(request_id("[]"), "");
        assert_eq!(request_id("not json"), "");
    }
}
