//! Progress events (`Request::partial`) on every recorded stream of the
//! conformance corpus, decoded with `tools` and `output` on:
//!
//! - without the progress events, the events and the outcome are exactly
//!   those of the same body decoded without them;
//! - each call's `tool_call_start` comes once, before its first delta, with
//!   the next index; its deltas concatenate to exactly the arguments of its
//!   `tool_call`; every `partial` is consistent with the final arguments
//!   (strings prefixes, the rest equal where present), the last one equal;
//! - a call that started and has no `tool_call` is listed as incomplete,
//!   with a warning;
//! - an answer that is JSON: every `output_delta` consistent with it, the
//!   last one equal;
//! - every progress event carries its frame;
//! - streams up to 24 KiB, fed one byte at a time, give the same events.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::HashMap;

use common::consistent::consistent;
use common::joined::joined;
use common::Case;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use skyl::{PartialEvents, StreamEvent};

const ONE_BYTE_LIMIT: usize = 24 * 1024;

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for case in common::stream_cases() {
        trials.push(Trial::test(format!("partial/{}", case.id()), move || {
            check(&case)
        }));
    }
    trials.push(Trial::test(
        "partial/the-corpus-has-calls-and-answers",
        || {
            let (mut calls, mut answers) = (0, 0);
            for case in common::stream_cases() {
                let (events, _) = decode(&case, &[&case.body()], true);
                calls += events
                    .iter()
                    .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
                    .count();
                answers += usize::from(
                    events
                        .iter()
                        .any(|e| matches!(e, StreamEvent::OutputDelta { .. })),
                );
            }
            // (Guards the checks above against checking nothing.)
            if calls < 100 || answers < 3 {
                return Err(format!("{calls} call deltas, {answers} JSON answers").into());
            }
            Ok(())
        },
    ));
    libtest_mimic::run(&args, trials).exit();
}

fn decode(case: &Case, chunks: &[&[u8]], partial: bool) -> common::Outcome {
    let which = PartialEvents {
        tools: partial,
        output: partial,
        files: partial,
    };
    common::decode_with(case.provider, chunks, which)
}

fn is_progress(e: &StreamEvent) -> bool {
    matches!(
        e,
        StreamEvent::ToolCallStart { .. }
            | StreamEvent::ToolCallDelta { .. }
            | StreamEvent::OutputDelta { .. }
            | StreamEvent::FilePartial { .. }
    )
}

/// A started call: its index, where it started, its deltas' text and
/// partial values.
#[derive(Default)]
struct Seen {
    index: usize,
    text: String,
    partials: Vec<Value>,
    called: bool,
}

fn check(case: &Case) -> Result<(), Failed> {
    let body = case.body();
    let plain = decode(case, &[&body], false);
    let with = decode(case, &[&body], true);
    if plain.0.iter().any(is_progress) {
        return Err("progress events without asking".into());
    }
    let without: Vec<&StreamEvent> = with.0.iter().filter(|e| !is_progress(e)).collect();
    if without != plain.0.iter().collect::<Vec<_>>() || with.1 != plain.1 {
        return Err("the other events or the outcome changed".into());
    }
    if let Some(e) = with.0.iter().find(|e| is_progress(e) && e.raw().is_empty()) {
        return Err(format!("a progress event without its frame: {e:?}").into());
    }
    let mut calls: HashMap<String, Seen> = HashMap::new();
    let mut outputs = Vec::new();
    for (at, e) in with.0.iter().enumerate() {
        match e {
            StreamEvent::ToolCallStart { id, index, .. } => {
                if calls.contains_key(id) || *index != calls.len() {
                    return Err(format!("event {at}: start of {id} at index {index}").into());
                }
                calls.insert(
                    id.clone(),
                    Seen {
                        index: *index,
                        ..Seen::default()
                    },
                );
            }
            StreamEvent::ToolCallDelta {
                id,
                index,
                arguments_delta,
                partial,
                ..
            } => {
                let seen = calls
                    .get_mut(id)
                    .ok_or_else(|| format!("event {at}: a delta of {id} before its start"))?;
                // (An empty piece only with a patched value: Vertex AI's
                // partialArgs.)
                let empty = arguments_delta.is_empty() && partial.is_none();
                if seen.index != *index || seen.called || empty {
                    return Err(format!("event {at}: a delta of {id} out of place").into());
                }
                seen.text.push_str(arguments_delta);
                seen.partials.extend(partial.clone());
            }
            StreamEvent::ToolCall { call, .. } => {
                let seen = calls
                    .get_mut(&call.id)
                    .ok_or_else(|| format!("event {at}: tool_call {} never started", call.id))?;
                if seen.text != call.arguments {
                    return Err(format!(
                        "{}: the deltas give {:?}, the call has {:?}",
                        call.id, seen.text, call.arguments
                    )
                    .into());
                }
                let whole: Value = serde_json::from_str(&call.arguments)?;
                if let Some(p) = seen.partials.iter().find(|p| !consistent(p, &whole)) {
                    return Err(format!("{}: partial {p} vs {whole}", call.id).into());
                }
                if seen.partials.last() != Some(&whole) {
                    return Err(format!("{}: the last partial is not the call's", call.id).into());
                }
                seen.called = true;
            }
            StreamEvent::OutputDelta { partial, .. } => outputs.extend(partial.clone()),
            _ => {}
        }
    }
    let response = match &with.1 {
        Ok(r) => r.clone(),
        Err(e) => e.partial().cloned().unwrap_or_default(),
    };
    for (id, seen) in &calls {
        let listed = response
            .incomplete_tool_calls
            .iter()
            .any(|c| c.id.as_deref() == Some(id.as_str()));
        if !seen.called && !listed && with.1.is_ok() {
            return Err(format!("{id} started, was not called and is not incomplete").into());
        }
        if seen.called && listed {
            return Err(format!("{id} was called and is incomplete").into());
        }
    }
    if let (Ok(r), Some(last)) = (&with.1, outputs.last()) {
        if let Ok(whole) = serde_json::from_str::<Value>(&r.text) {
            if let Some(p) = outputs.iter().find(|p| !consistent(p, &whole)) {
                return Err(format!("output partial {p} vs {whole}").into());
            }
            if *last != whole {
                return Err("the last output partial is not the answer".into());
            }
        }
    }
    if body.len() <= ONE_BYTE_LIMIT {
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        let split = decode(case, &bytes, true);
        if joined(&split.0) != joined(&with.0) || split.1 != with.1 {
            return Err("one byte at a time, the events differ".into());
        }
    }
    Ok(())
}
