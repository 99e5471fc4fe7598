//! The Responses group's own expected fields (the corpus README, "In
//! `responses/` every expected file has the keys below"): incomplete calls,
//! client actions, server tool calls, the raw finish, usage with cached
//! tokens, encrypted reasoning, message phases, the refusal.

use libtest_mimic::Failed;
use serde_json::Value;
use skyl::{Error, Part, Response};

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(Failed::from(format!($($msg)+)));
        }
    };
}

/// Items a client must carry out (the README's `client_actions`), as the
/// expected files read them from the item.
fn is_client_action(item: &Value) -> bool {
    match item["type"].as_str() {
        Some(
            "local_shell_call" | "apply_patch_call" | "computer_call" | "mcp_approval_request",
        ) => true,
        Some("shell_call") => matches!(item["environment"]["type"].as_str(), None | Some("local")),
        Some("tool_search_call") => item["execution"] == "client",
        _ => false,
    }
}

/// Result items the server adds, which `server_tool_calls` does not list.
const RESULTS: &[&str] = &[
    "shell_call_output",
    "tool_search_output",
    "program_output",
    "compaction",
];

pub fn check(exp: &Value, r: &Response) -> Result<(), Failed> {
    // The server's items, in output order: provider parts, and the items
    // of the images it made (`file` parts, their item in providerData).
    let items: Vec<&Value> = (r.message.parts.iter())
        .filter_map(|p| match p {
            Part::Provider { provider, data } if provider == "responses" => Some(data),
            Part::File {
                provider_data: Some(d),
                ..
            } => d.get("responses"),
            _ => None,
        })
        .collect();
    // Each finished image generation is a file, its image whole, never a
    // provider part that holds it.
    for p in &r.message.parts {
        if let Part::File {
            data, media_type, ..
        } = p
        {
            ensure!(
                media_type.starts_with("image/") && data.as_ref().is_some_and(|d| !d.is_empty()),
                "a generated file without its image: {media_type}"
            );
        }
    }
    ensure!(
        !items
            .iter()
            .any(|i| i["type"] == "image_generation_call" && i["result"].is_string()),
        "an image kept in a provider part"
    );

    // Calls cut off: never executable, with what arrived.
    let want = exp["incomplete_tool_calls"]
        .as_array()
        .ok_or("incomplete_tool_calls")?;
    ensure!(
        r.incomplete_tool_calls.len() == want.len(),
        "{} incomplete calls, expected {}: {:?}",
        r.incomplete_tool_calls.len(),
        want.len(),
        r.incomplete_tool_calls
    );
    for (ours, want) in r.incomplete_tool_calls.iter().zip(want) {
        ensure!(
            ours.name.as_deref() == want["name"].as_str(),
            "incomplete call {:?}, expected {}",
            ours.name,
            want["name"]
        );
        if let Some(raw) = want["arguments_raw"].as_str() {
            ensure!(
                ours.arguments == raw,
                "incomplete call arguments {:?}, expected {raw:?}",
                ours.arguments
            );
        }
    }

    // Client actions: kept whole, in order, with their ids.
    let want = exp["client_actions"].as_array().ok_or("client_actions")?;
    let ours: Vec<&&Value> = items.iter().filter(|i| is_client_action(i)).collect();
    ensure!(
        ours.len() == want.len(),
        "{} client actions, expected {}: {ours:?}",
        ours.len(),
        want.len()
    );
    for (ours, want) in ours.iter().zip(want) {
        ensure!(
            ours["type"] == want["type"],
            "client action {} vs {}",
            ours["type"],
            want["type"]
        );
        let id = if ours["type"] == "mcp_approval_request" {
            &ours["id"]
        } else {
            &ours["call_id"]
        };
        ensure!(
            *id == want["id"],
            "client action id {id}, expected {}",
            want["id"]
        );
    }

    // Server tool calls: the items the provider ran, in output order.
    let want: Vec<&str> = (exp["server_tool_calls"]
        .as_array()
        .ok_or("server_tool_calls")?)
    .iter()
    .filter_map(Value::as_str)
    .collect();
    let ours: Vec<String> = (items.iter())
        .filter(|i| !is_client_action(i))
        .filter_map(|i| {
            let kind = i["type"].as_str()?;
            if RESULTS.contains(&kind) {
                return None;
            }
            Some(match kind {
                "custom_tool_call" => format!("custom_tool_call:{}", i["name"].as_str()?),
                other => other.to_string(),
            })
        })
        .collect();
    ensure!(
        ours == want,
        "server tool calls {ours:?}, expected {want:?}"
    );

    // The raw finish: completed or incomplete:<reason>; a failed response is
    // an error, whose partial response has none.
    match exp["finish_reason"].as_str() {
        Some("failed") | None => ensure!(
            r.raw_finish_reason.is_none(),
            "unexpected finish {:?}",
            r.raw_finish_reason
        ),
        Some(f) => ensure!(
            r.raw_finish_reason.as_deref() == Some(f),
            "finish {:?}, expected {f:?}",
            r.raw_finish_reason
        ),
    }
    if let Some(usage) = exp["usage"].as_object() {
        for (key, ours) in [
            ("input", r.usage.input),
            ("output", r.usage.output),
            ("cached", r.usage.cache_read),
            ("reasoning", r.usage.reasoning),
        ] {
            if let Some(want) = usage.get(key).filter(|v| !v.is_null()) {
                ensure!(
                    ours == want.as_u64(),
                    "usage {key} {ours:?}, expected {want}"
                );
            }
        }
    }
    ensure!(
        r.refusal.as_deref() == exp["refusal"].as_str(),
        "refusal {:?}, expected {}",
        r.refusal,
        exp["refusal"]
    );

    // Encrypted reasoning is kept on its part, to replay.
    let encrypted = r.message.parts.iter().any(|p| {
        matches!(p, Part::Reasoning { provider_data: Some(d), .. }
            if d["responses"].get("encrypted_content").is_some_and(|e| !e.is_null()))
    });
    ensure!(
        encrypted == (exp["encrypted_reasoning"] == true),
        "encrypted reasoning kept: {encrypted}, expected {}",
        exp["encrypted_reasoning"]
    );

    // Message phases, which must be replayed with their message.
    if let Some(messages) = exp.get("messages").and_then(Value::as_array) {
        let want: Vec<&Value> = (messages.iter())
            .map(|m| &m["phase"])
            .filter(|p| !p.is_null())
            .collect();
        let ours: Vec<&Value> = (r.message.parts.iter())
            .filter_map(|p| match p {
                Part::Text {
                    provider_data: Some(d),
                    ..
                } => d["responses"].get("phase"),
                _ => None,
            })
            .collect();
        ensure!(ours == want, "phases {ours:?}, expected {want:?}");
    }
    Ok(())
}

/// The errors the client itself reports (`source: client`): a stream
/// without a terminal event is ended early; `invalid_json` (an event that
/// does not parse) is read here as the corpus's `parallel-tool-call-wrapper`
/// needs: skyl skips such an event with a warning, and as the one lost was
/// the terminal event, the stream ended early. The expected file reports the
/// first problem seen, the invalid event; skyl reports the one that decides
/// the outcome. Both are errors that keep what was received. `None` for the
/// provider's own errors, checked as the other groups'.
pub fn check_client_error(want: &Value, e: &Error) -> Option<Result<(), Failed>> {
    match want["type"].as_str() {
        Some("ended_early" | "invalid_json") => {
            Some(if matches!(e, Error::StreamEndedEarly { .. }) {
                Ok(())
            } else {
                Err(format!("expected the stream to end early, got {e:?}").into())
            })
        }
        _ => None,
    }
}
