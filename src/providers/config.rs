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
    /// That this config may send its credentials from a browser page,
    /// where every visitor can read them (the npm package's
    /// `dangerouslyAllowBrowser`): `skyl::web` in a page refuses a config
    /// with a credential unless it is set. For Anthropic it also sends
    /// `anthropic-dangerous-direct-browser-access`, which a browser needs to
    /// call the API directly with a key.
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

    /// In a browser page, whether this config may go: one with a
    /// credential of its own (an API key, an access token, AWS
    /// credentials, or `service_account`: the driver's) is refused unless
    /// it says [`browser`](Self::browser), as the npm package decides. The
    /// error names `at` (`browser`, `fallback[0].browser`). A header is
    /// not counted: a page may send its user's own session to a server of
    /// its (`base_url`), which adds the key.
    #[cfg(any(test, all(target_arch = "wasm32", feature = "web")))]
    pub(crate) fn in_page(&self, service_account: bool, at: &str) -> Result<(), crate::Error> {
        let keyed = service_account
            || self.api_key.is_some()
            || self.access_token.is_some()
            || self.aws.is_some();
        if !keyed || self.browser {
            return Ok(());
        }
        Err(crate::Error::invalid_request(
            at,
            "a key in a browser page is visible to every user of the page: call the \
             provider from a server (point base_url at it), or set browser: true if you \
             accept that",
        ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_a_page_a_config_with_a_credential_must_say_browser() {
        let path = |c: &ClientConfig, account: bool| match c.in_page(account, "fallback[0].browser")
        {
            Ok(()) => None,
            Err(crate::Error::InvalidRequest { path, message }) => {
                assert!(message.contains("visible to every user"), "{message}");
                Some(path)
            }
            Err(other) => panic!("{other:?}"),
        };
        let plain = ClientConfig::new(Provider::OpenAi).with_base_url("/api");
        assert_eq!(path(&plain, false), None);
        let refused = "fallback[0].browser".to_string();
        for keyed in [
            plain.clone().with_api_key("sk-1"),
            plain.clone().with_access_token("ya29.t"),
            plain
                .clone()
                .with_aws_credentials(AwsCredentials::new("AKIA", "secret")),
        ] {
            assert_eq!(path(&keyed, false), Some(refused.clone()), "{keyed:?}");
            assert_eq!(path(&keyed.with_browser(true), false), None);
        }
        // A service account is the driver's: the config says nothing of it.
        assert_eq!(path(&plain, true), Some(refused));
        // A header is not counted: the page's own session, to a server
        // of its that adds the key.
        let session = plain.with_header("Authorization", "Bearer session-1");
        assert_eq!(path(&session, false), None);
    }
}
