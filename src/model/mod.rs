//! The provider-neutral model: its types, JSON to model and back, and
//! validation. It knows nothing of the providers or of I/O.

mod embed;
pub(crate) mod from_json;
pub(crate) mod provider_data;
pub(crate) mod response;
pub(crate) mod schema;
pub(crate) mod to_json;
pub(crate) mod types;
pub(crate) mod validate;

#[cfg(any(feature = "openai", feature = "gemini"))]
pub(crate) use embed::embed_request;
pub use embed::{EmbedEncoding, EmbedRequest, Embeddings};
pub use response::*;
pub use types::*;
