//! OpenAI-compatible servers: the OpenAI adapter with [`Dialect::COMPAT`].
//!
//! Known deviations handled (see `WIRE.md` in the design docs for sources):
//!
//! | server | deviation | handling |
//! |---|---|---|
//! | Ollama | `index` missing or `0` for every parallel call | match by id, split glued calls |
//! | Ollama, Mistral | calls and content in the `finish_reason` chunk | deltas applied before the finish |
//! | Gemini's endpoint | first tool delta lacks `index`; `extra_content` | adopted by the next indexed delta; replayed |
//! | vLLM | `id` missing; `arguments` null or whole | ids generated; any argument shape |
//! | OpenRouter, llama.cpp | comment keep-alives, `data: : ...` | ignored; skipped with a warning |
//! | DeepSeek, xAI, Qwen | `reasoning_content` | read and replayed on the assistant turn |
//! | others | `reasoning` | read and replayed under the same name |
//! | Groq | usage in `x_groq.usage` | read |
//! | Mistral | typed content chunks (`thinking`, `text`) | read |
//! | some servers | reject `stream_options` | sent only with [`crate::ClientConfig::include_usage`] |
//!
//! API references: <https://api-docs.deepseek.com/>,
//! <https://console.groq.com/docs/api-reference>,
//! <https://docs.mistral.ai/api/>, <https://github.com/ollama/ollama/blob/main/docs/openai.md>.

pub use super::openai::Dialect;

pub mod error;
pub mod request;
pub mod response;
pub mod stream;
