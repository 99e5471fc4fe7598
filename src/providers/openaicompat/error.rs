//! Error bodies: OpenAI's shape; `{"error": "text"}` and `{"message": ...}`
//! from other servers are read by the same decoder.

pub(crate) use crate::providers::openai::error::decode;
