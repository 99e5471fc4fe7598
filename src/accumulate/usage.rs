//! Usage that comes as text (`Delta::UsageText`), for an adapter whose
//! provider repeats its whole usage object in every frame, with the output
//! count changing each time (Gemini does). Reading each one into a [`Usage`] (a JSON tree for
//! `raw`, compared with the last one, cloned, dropped) was most of the cost
//! of such a stream; kept as text, it is read once the response is needed.
//!
//! The rules stay those of `Delta::Usage`: the usage is
//! the last value given, and a frame whose usage differs in value from the
//! one before becomes the usage's frame. Whether two texts differ in value
//! is told from the texts ([`values_differ`]), or else by reading both.

use serde_json::Value;

use crate::json::canonical::values_differ;
use crate::model::Usage;

/// How an adapter reads its usage object. (Two are equal when they are the
/// same function, for the tests' `==` on deltas.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadUsage(pub(crate) fn(&Value) -> Usage);

impl PartialEq for ReadUsage {
    fn eq(&self, other: &Self) -> bool {
        self.0 as usize == other.0 as usize
    }
}

/// The text of the current usage, when it came as text.
#[derive(Debug, Default)]
pub(super) struct UsageText(Option<Text>);

#[derive(Debug)]
struct Text {
    /// Canonical, compact JSON text of an object (json/canonical.rs).
    json: String,
    read: ReadUsage,
    /// The usage has not been read from it yet.
    stale: bool,
}

impl Text {
    fn usage(&self) -> Usage {
        crate::json::read::parse(&self.json)
            .map(|v| (self.read.0)(&v))
            .unwrap_or_default()
    }
}

impl UsageText {
    /// Makes `json` the usage (`usage` holds the last one read); true if
    /// its value differs from the one before.
    pub(super) fn set(&mut self, json: String, read: ReadUsage, usage: &mut Usage) -> bool {
        let next = Text {
            json,
            read,
            stale: true,
        };
        match self
            .0
            .as_ref()
            .and_then(|now| values_differ(&now.json, &next.json))
        {
            Some(false) => false,
            Some(true) => {
                self.0 = Some(next);
                true
            }
            None => {
                // Not told by the texts: read both.
                self.read(usage);
                let new = next.usage();
                let changed = new != *usage;
                *usage = new;
                self.0 = Some(Text {
                    stale: false,
                    ..next
                });
                changed
            }
        }
    }

    /// Reads the usage into `usage` if it has not been.
    pub(super) fn read(&mut self, usage: &mut Usage) {
        if let Some(text) = self.0.as_mut().filter(|t| t.stale) {
            *usage = text.usage();
            text.stale = false;
        }
    }

    /// `usage` as it is now (for a snapshot).
    pub(super) fn current(&self, usage: &mut Usage) {
        if let Some(text) = self.0.as_ref().filter(|t| t.stale) {
            *usage = text.usage();
        }
    }

    /// The usage was set from a value, not from this text.
    pub(super) fn clear(&mut self) {
        self.0 = None;
    }
}

// (proptest is a native dev-dependency.)
#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::super::{Accumulator, Delta};
    use crate::model::{Raw, Usage};

    fn read(v: &Value) -> Usage {
        Usage {
            input: v.get("in").and_then(Value::as_u64),
            raw: Some(v.clone()),
            ..Usage::default()
        }
    }

    /// Each frame's usage, applied as values (each frame's own raw), and
    /// then with those `text` says as canonical text: the same events,
    /// response and snapshots.
    fn alike(frames: &[(Value, bool)]) -> Result<(), TestCaseError> {
        let run = |as_text: bool| {
            let mut acc = Accumulator::new();
            let mut out = Vec::new();
            let mut partials = Vec::new();
            for (i, (v, text)) in frames.iter().enumerate() {
                let raw = Raw::from(format!("frame {i}"));
                let delta = if as_text && *text {
                    Delta::UsageText {
                        json: crate::json::json_text(v),
                        read: super::ReadUsage(read),
                    }
                } else {
                    Delta::Usage(read(v))
                };
                acc.apply(delta, &raw, &mut out);
                partials.push(acc.snapshot("").usage);
            }
            acc.apply(Delta::Terminal, &Raw::from("end"), &mut out);
            let res = acc.finish(&Raw::from("end"), &mut out);
            (out, res, partials)
        };
        prop_assert_eq!(run(false), run(true));
        Ok(())
    }

    fn usage_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(serde_json::json!({"in": 1, "out": 2})),
            Just(serde_json::json!({"in": 1, "out": 3})),
            Just(serde_json::json!({"out": 3, "in": 1})),
            Just(serde_json::json!({"in": 1, "out": 2, "d": [{"m": "TEXT", "n": 1}]})),
            Just(serde_json::json!({"in": 1, "r": 0.0})),
            Just(serde_json::json!({"in": 1, "r": -0.0})),
            Just(serde_json::json!({"in": 2})),
            Just(serde_json::json!({})),
        ]
    }

    proptest! {
        /// Usage as text follows the rules of usage as values: the last
        /// one wins, the frame that last changed its value is its frame,
        /// and a snapshot sees it at once; also when the two kinds mix.
        #[test]
        fn text_usage_is_value_usage(
            frames in prop::collection::vec((usage_value(), prop::bool::weighted(0.8)), 0..8),
        ) {
            alike(&frames)?;
        }
    }
}
