//! What a client needs to build requests: provider, credentials, endpoint.

use std::fmt;

use super::Provider;
use crate::sigv4::AwsCredentials;

/// What a client needs to build requests: provider, credentials, endpoint.
///
/// Built with [`ClientConfig::new`] and the `with_*` methods; its fields
/// can be read and set, and new ones come in minor releases (so it has no
/// struct literal outside this crate).
///
/// ```
/// use skyl::{ClientConfig, Provider};
///
/// let config = ClientConfig::new(Provider::OpenAiCompat)
///     .with_base_url("http://127.0.0.1:11434/v1")
///     .with_model("llama3.2")
///     .with_api_key("ollama")
///     .with_header("x-trace", "t-1");
/// assert_eq!(config.model.as_deref(), Some("llama3.2"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    /// `bedrock` only: the AWS region (`us-east-1`), which names the
    /// endpoint and the SigV4 scope.
    pub region: Option<String>,
    /// `bedrock` only: the AWS credentials each attempt is signed with
    /// (SigV4), at the time the driver gives ([`crate::RunMachine::at`],
    /// [`crate::sign_request`]). Without them, a Bedrock API key
    /// ([`api_key`](Self::api_key)) is sent as a bearer token. Never shown
    /// by `Debug` but for the key id.
    pub aws: Option<AwsCredentials>,
    /// `gemini` and `anthropic`: the request goes to Google Vertex AI, to
    /// this project and location, with an [`access_token`](Self::access_token)
    /// (or, Gemini's express mode, an [`api_key`](Self::api_key)).
    pub vertex: Option<Vertex>,
    /// An OAuth access token, sent as a bearer token (Vertex AI). Tokens
    /// that expire are given to each attempt by the driver instead
    /// ([`crate::RunMachine::set_access_token`]). Never shown by `Debug`.
    pub access_token: Option<String>,
    /// The most one streamed event (an SSE event, an AWS event-stream
    /// message) may hold; a larger one is [`crate::Error::EventTooLarge`].
    /// `None`: [`crate::DEFAULT_MAX_EVENT_BYTES`] (32 MiB, a 4K image's
    /// base64). The client's own config sets it for its whole fallback
    /// chain.
    pub max_event_bytes: Option<usize>,
}

impl ClientConfig {
    /// A config for `provider` with everything else default.
    pub fn new(provider: Provider) -> Self {
        ClientConfig {
            provider: Some(provider),
            ..ClientConfig::default()
        }
    }

    /// With the API key (never shown by `Debug`).
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// With a base URL in place of the provider's default.
    #[must_use]
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// With the model used when a request names none.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// With one more header sent with every request (it replaces a header
    /// skyl sets of the same name).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// With [`browser`](Self::browser) set.
    #[must_use]
    pub fn with_browser(mut self, browser: bool) -> Self {
        self.browser = browser;
        self
    }

    /// With the AWS region ([`region`](Self::region), `bedrock` only).
    #[must_use]
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// With AWS credentials to sign each request with ([`aws`](Self::aws),
    /// `bedrock` only).
    #[must_use]
    pub fn with_aws_credentials(mut self, credentials: AwsCredentials) -> Self {
        self.aws = Some(credentials);
        self
    }

    /// To Google Vertex AI ([`vertex`](Self::vertex), `gemini` and
    /// `anthropic`).
    #[must_use]
    pub fn with_vertex(mut self, vertex: Vertex) -> Self {
        self.vertex = Some(vertex);
        self
    }

    /// With an OAuth access token ([`access_token`](Self::access_token);
    /// never shown by `Debug`).
    #[must_use]
    pub fn with_access_token(mut self, token: impl Into<String>) -> Self {
        self.access_token = Some(token.into());
        self
    }

    /// With a limit for one streamed event
    /// ([`max_event_bytes`](Self::max_event_bytes)).
    #[must_use]
    pub fn with_max_event_bytes(mut self, limit: usize) -> Self {
        self.max_event_bytes = Some(limit);
        self
    }

    /// With [`include_usage`](Self::include_usage) set.
    #[must_use]
    pub fn with_include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
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
            .field("region", &self.region)
            .field("aws", &self.aws)
            .field("vertex", &self.vertex)
            .field(
                "access_token",
                &self.access_token.as_ref().map(|_| "<redacted>"),
            )
            .field("max_event_bytes", &self.max_event_bytes)
            .finish()
    }
}

/// Where on Vertex AI a request goes: the project and its location.
///
/// ```
/// use skyl::{ClientConfig, Provider, Vertex};
///
/// let config = ClientConfig::new(Provider::Anthropic)
///     .with_vertex(Vertex::new("my-project", "us-east5"))
///     .with_access_token("ya29....");
/// assert_eq!(config.vertex.unwrap().location.as_deref(), Some("us-east5"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Vertex {
    /// The Google Cloud project id; `None` in express mode (Gemini with an
    /// API key, no project).
    pub project: Option<String>,
    /// A region (`us-central1`), `global`, or a multi-region (`eu`, `us`):
    /// it names the host, and the data's residency.
    pub location: Option<String>,
}

impl Vertex {
    /// A project and its location.
    pub fn new(project: impl Into<String>, location: impl Into<String>) -> Self {
        Vertex {
            project: Some(project.into()),
            location: Some(location.into()),
        }
    }

    /// Express mode: no project, an API key (Gemini only).
    pub fn express() -> Self {
        Vertex::default()
    }
}

impl fmt::Debug for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vertex")
            .field("project", &self.project)
            .field("location", &self.location)
            .finish()
    }
}
