//! JSON text: the hand reader, the writer and the canonical-text check.
//!
//! The bottom layer: it knows nothing of the model or the providers.

#[cfg(feature = "gemini")]
pub(crate) mod canonical;
pub(crate) mod grammar;
pub(crate) mod merge;
pub(crate) mod read;
pub(crate) mod write;
