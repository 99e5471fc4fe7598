//! Progress events as a decoder makes them from reads cut anywhere: the
//! `tool_call_delta`s of one read are joined (`Tracker::begin_batch` in
//! src/accumulate/progress.rs). Shared by `tests/partial_events.rs` and
//! the web driver's tests, which compare events read in other pieces.

use skyl::StreamEvent;

/// `events` with each run of consecutive `tool_call_delta`s of one call
/// made one, as the decoder makes the pieces of one read: their texts
/// joined, the last value, their frames one per line. Reads cut anywhere
/// give the same events in this form.
pub fn joined(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::new();
    for e in events {
        if let (
            Some(StreamEvent::ToolCallDelta {
                index,
                arguments_delta,
                partial,
                raw,
                ..
            }),
            StreamEvent::ToolCallDelta {
                index: next,
                arguments_delta: more,
                partial: value,
                raw: frame,
                ..
            },
        ) = (out.last_mut(), e)
        {
            if index == next {
                arguments_delta.push_str(more);
                if value.is_some() {
                    partial.clone_from(value);
                }
                *raw = format!("{raw}\n{frame}").into();
                continue;
            }
        }
        out.push(e.clone());
    }
    out
}
