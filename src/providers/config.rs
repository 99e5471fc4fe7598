//! What a client needs to build requests: provider, credentials, endpoint.

use std::fmt;

use super::Provider;

/// What a client needs to build requests: provider, credentials, endpoint.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientConfig {
    /// The wire format; `None` is an error at encode time.
    pub provider: Option<Provider>,
    /// The API key. Never shown by `Debug`.
    pub api_key: Option<String>,
    /// The base URL; defaults per provider (`openaicompat` requires one).
    pub base_url: Option<String>,
    /// The default model, used when a request names none.
    pub model: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Anthropic only: send `anthropic-dangerous-direct-browser-access`, which
    /// a browser needs to call the API directly with a key.
    pub browser: bool,
    /// `openaicompat` only: ask for usage in streams with
    /// `stream_options.include_usage` (some servers reject the field, so it is
    /// sent only when asked). The `openai` adapter always asks.
    pub include_usage: bool,
}

impl ClientConfig {
    /// A config for `provider` with everything else default.
    pub fn new(provider: Provider) -> Self {
        ClientConfig {
            provider: Some(provider),
            ..ClientConfig::default()
        }
    }
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("provider", &self.provider)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("headers", &crate::http::redacted(&self.headers))
            .field("browser", &self.browser)
            .field("include_usage", &self.include_usage)
            .finish()
    }
}
