//! One stream's frame decoder: the adapter's stream state behind one type,
//! why a frame fails, and the switch tests use to turn the fast paths off.

use super::{not_built, Provider};
use crate::accumulate::{Accumulator, Delta};
use crate::error::Error;
use crate::model::Response;
use crate::sse::SseEvent;

#[cfg(feature = "anthropic")]
use super::anthropic;
#[cfg(feature = "gemini")]
use super::gemini;
#[cfg(feature = "openai")]
use super::openai;
use crate::error::ApiError;

#[cfg(test)]
thread_local! {
    /// Tests turn the fast paths off to compare them with the general path.
    pub(crate) static GENERAL_PATH_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Decodes `body` with and without the fast paths: `Err` shows both
/// outcomes if they differ.
#[cfg(test)]
pub(crate) fn fast_equals_general(provider: Provider, body: &[u8]) -> Result<(), String> {
    let fast = crate::StreamDecoder::decode_all(provider, body);
    GENERAL_PATH_ONLY.with(|g| g.set(true));
    let general = crate::StreamDecoder::decode_all(provider, body);
    GENERAL_PATH_ONLY.with(|g| g.set(false));
    if fast == general {
        Ok(())
    } else {
        Err(format!("fast {fast:?}\ngeneral {general:?}"))
    }
}

/// Whether frame decoders may take their fast paths (always, outside tests).
#[inline]
pub(crate) fn fast_paths() -> bool {
    #[cfg(test)]
    {
        !GENERAL_PATH_ONLY.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// Why a frame (or a non-streaming body) stops decoding.
#[derive(Debug)]
pub(crate) enum FrameFailure {
    /// The provider reported an error in-band.
    Api(Box<ApiError>),
    /// The frame breaks the protocol.
    Malformed(String),
    /// The prompt or output was blocked.
    ContentFilter { reason: String, message: String },
}

impl FrameFailure {
    /// The core error, with what had been assembled.
    pub(crate) fn into_error(self, status: Option<u16>, emitted: bool, partial: Response) -> Error {
        match self {
            FrameFailure::Api(mut e) => {
                e.in_band = true;
                e.status = e.status.or(status);
                e.events_emitted = emitted;
                Error::Api(e)
            }
            FrameFailure::Malformed(message) => Error::MalformedStream {
                message,
                events_emitted: emitted,
                partial: Box::new(partial),
            },
            FrameFailure::ContentFilter { reason, message } => Error::ContentFilter {
                reason,
                message,
                partial: Box::new(partial),
            },
        }
    }
}

/// The per-provider frame decoders behind one type.
#[derive(Debug)]
pub(crate) enum FrameDecoder {
    #[cfg(feature = "openai")]
    OpenAi(openai::stream::Decoder),
    #[cfg(feature = "anthropic")]
    Anthropic(anthropic::stream::Decoder),
    #[cfg(feature = "gemini")]
    Gemini(gemini::stream::Decoder),
    /// A provider whose adapter this build leaves out: every frame fails.
    NotBuilt(Provider),
}

impl FrameDecoder {
    pub(crate) fn new(provider: Provider) -> Self {
        match provider {
            #[cfg(feature = "openai")]
            Provider::OpenAi => {
                FrameDecoder::OpenAi(openai::stream::Decoder::new(openai::Dialect::OPENAI))
            }
            #[cfg(feature = "openai")]
            Provider::OpenAiCompat => {
                FrameDecoder::OpenAi(openai::stream::Decoder::new(openai::Dialect::COMPAT))
            }
            #[cfg(feature = "anthropic")]
            Provider::Anthropic => FrameDecoder::Anthropic(anthropic::stream::Decoder::default()),
            #[cfg(feature = "gemini")]
            Provider::Gemini => FrameDecoder::Gemini(gemini::stream::Decoder::default()),
            #[allow(unreachable_patterns)]
            other => FrameDecoder::NotBuilt(other),
        }
    }

    /// Decodes one SSE event into deltas; `acc` is what has been assembled
    /// from the earlier ones.
    pub(crate) fn frame(
        &mut self,
        ev: &SseEvent,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure> {
        let _ = &acc; // (only the OpenAI decoder reads it)
        match self {
            #[cfg(feature = "openai")]
            FrameDecoder::OpenAi(d) => d.frame(ev, acc, out),
            #[cfg(feature = "anthropic")]
            FrameDecoder::Anthropic(d) => d.frame(ev, out),
            #[cfg(feature = "gemini")]
            FrameDecoder::Gemini(d) => d.frame(ev, out),
            FrameDecoder::NotBuilt(p) => Err(FrameFailure::Malformed(not_built(*p).to_string())),
        }
    }
}
