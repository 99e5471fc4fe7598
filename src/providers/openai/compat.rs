//! OpenAI-compatible servers: the OpenAI adapter with [`Dialect::COMPAT`],
//! and the [`Dialect`] switch itself.
//!
//! Known deviations handled (sources in `docs/wire.md`):
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

/// Which flavour of the Chat Completions format is spoken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// An OpenAI-compatible server rather than OpenAI itself: `max_tokens`
    /// instead of `max_completion_tokens`, reasoning replayed as
    /// `reasoning_content`/`reasoning`, `stream_options` only when asked, and
    /// the base URL is required.
    pub compat: bool,
}

impl Dialect {
    /// OpenAI itself.
    pub(crate) const OPENAI: Dialect = Dialect { compat: false };
    /// An OpenAI-compatible server.
    pub(crate) const COMPAT: Dialect = Dialect { compat: true };

    /// The key of this dialect's [`crate::model::ProviderData`].
    pub(crate) fn key(self) -> &'static str {
        if self.compat {
            "openaicompat"
        } else {
            "openai"
        }
    }
}
