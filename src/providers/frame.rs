//! What every adapter's frame decoding shares: why a frame fails, and the
//! switch tests use to turn the fast paths off.

use crate::error::{ApiError, Error};
use crate::model::Response;

#[cfg(test)]
thread_local! {
    /// Tests turn the fast paths off to compare them with the general path.
    pub(crate) static GENERAL_PATH_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether frame decoders may take their fast paths (always, outside tests).
#[inline]
#[allow(dead_code)] // (bedrock alone has no fast path)
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
    #[allow(dead_code)] // (a one-adapter build may leave it unused)
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
                // What came before is the caller's once it was handed out.
                e.partial = emitted.then(|| Box::new(partial));
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
                events_emitted: emitted,
                partial: Box::new(partial),
            },
        }
    }
}
