//! Request encoding: the OpenAI encoder in the compatible dialect.

use super::Dialect;
use crate::error::Error;
use crate::providers::{openai, EncodeInput, Encoded};

/// Encodes the request for an OpenAI-compatible server.
pub(crate) fn encode(input: &EncodeInput<'_>) -> Result<Encoded, Error> {
    openai::request::encode(input, Dialect::COMPAT)
}
