//! Stream frames: the OpenAI frame decoder in the compatible dialect.

use super::Dialect;
use crate::providers::openai::stream::Decoder;

/// A frame decoder for OpenAI-compatible streams.
pub(crate) fn decoder() -> Decoder {
    Decoder::new(Dialect::COMPAT)
}
