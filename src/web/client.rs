//! [`Client`]: a [`ClientConfig`] with retries, timeouts and a fetch
//! function, and [`decode_stream`] for a body the app already has.

use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::events::{scrub_all, EventStream};
use super::google_token::Tokens;
use super::run::{Run, Source};
use super::{js, timer};
use crate::embed::{EmbedFailure, EmbedMachine};
use crate::error::{Error, Timeout};
use crate::model::{EmbedRequest, Embeddings};
use crate::model::{Request, Response};
use crate::providers::{ClientConfig, Provider};
use crate::retry::RetryPolicy;
use crate::run::{secrets_of, Fallback, RunMachine, Timers};
use crate::ServiceAccount;

/// A request's timeouts. Each ends with an [`Error::Timeout`]; a timeout
/// that fires after the stream's terminal frame ends the body cleanly
/// instead (the server kept the connection open). `None` is no limit; a
/// limit under 1 ms is an [`Error::InvalidRequest`] naming it
/// (`timeout.idle`), and nothing is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole request, retries and their waits included; ends it for
    /// good. 10 minutes by default ([`Timeout::DEFAULT_TOTAL_MS`]).
    pub total: Option<Duration>,
    /// From sending a request to its response's status and headers; ends
    /// the attempt, which is retried if no event was handed out. None by
    /// default.
    pub first_byte: Option<Duration>,
    /// Between two chunks of the body; ends the attempt, which is retried
    /// if no event was handed out. None by default.
    pub idle: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            total: Some(Duration::from_millis(Timeout::DEFAULT_TOTAL_MS)),
            first_byte: None,
            idle: None,
        }
    }
}

impl Timeouts {
    fn timers(&self) -> Timers {
        let ms = |d: Option<Duration>| d.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Timers::new(ms(self.total), ms(self.first_byte), ms(self.idle))
    }
}

/// A client for one provider, driving `fetch` from Rust: for Rust apps
/// compiled to wasm32 (workers-rs, Leptos, Dioxus, Yew), in browsers, Node
/// and Cloudflare Workers.
///
/// ```no_run
/// use std::time::Duration;
/// use skyl::web::{Client, Timeouts};
/// use skyl::{ClientConfig, Message, Provider, Request, StreamEvent};
///
/// # async fn run() -> Result<(), skyl::Error> {
/// let mut config = ClientConfig::new(Provider::Anthropic);
/// config.api_key = Some("sk-ant-...".into());
/// config.model = Some("claude-sonnet-4-5".into());
/// let client = Client::new(config).with_timeouts(Timeouts {
///     idle: Some(Duration::from_secs(30)),
///     ..Timeouts::default()
/// });
///
/// let request = Request {
///     messages: vec![Message::user("Hi")],
///     ..Request::default()
/// };
/// let mut stream = client.stream(&request);
/// while let Some(event) = stream.next().await {
///     if let StreamEvent::Text { text, .. } = event? {
///         print!("{text}");
///     }
/// }
/// let response = stream.response().await?;
/// # let _ = response;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    config: ClientConfig,
    retry: RetryPolicy,
    timeouts: Timeouts,
    fetch: Option<Function>,
    fallback: Fallback,
    /// Vertex AI's tokens from a service account, shared by the clones.
    tokens: Option<Rc<Tokens>>,
}

impl Client {
    /// A client with the default retries ([`RetryPolicy::default`]: 2) and
    /// timeouts ([`Timeouts::default`]), sending with the global `fetch`.
    pub fn new(config: ClientConfig) -> Self {
        Client {
            config,
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
            fetch: None,
            fallback: Fallback::new(),
            tokens: None,
        }
    }

    /// With providers to go on to when this one fails before its first
    /// event ([`Fallback`]): a 429, a 5xx, an overload, a connection
    /// error or a first-byte or idle timeout, once its own retries are
    /// used up (never after an event was handed out, an abort or the total
    /// timeout, which covers the whole chain). Each entry is tried with
    /// its own config and retries; the [`Response`] names who answered
    /// (`provider`) and who failed before (`attempts`; after a failure,
    /// [`EventStream::failed_attempts`]), and a stream
    /// hands out a `fallback` warning before the first event of a
    /// provider that took over. [`Client::stream`], [`Client::complete`]
    /// and [`Client::run`] (each step) go through the chain; embeddings go
    /// to this client's own provider.
    ///
    /// ```no_run
    /// use skyl::{web, ClientConfig, Fallback, Provider, RetryPolicy};
    ///
    /// let client = web::Client::new(
    ///     ClientConfig::new(Provider::OpenAi).with_api_key("sk-...").with_model("gpt-5-mini"),
    /// )
    /// .with_fallback(Fallback::new().then(
    ///     ClientConfig::new(Provider::Anthropic)
    ///         .with_api_key("sk-ant-...")
    ///         .with_model("claude-haiku-4-5"),
    ///     RetryPolicy::default(),
    /// ));
    /// # let _ = client;
    /// ```
    pub fn with_fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = fallback;
        self
    }

    /// Every secret this client sends (its key, its fallback's), scrubbed
    /// out of every error it reports.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let configs =
            std::iter::once(&self.config).chain(self.fallback.chain.iter().map(|(c, _)| c));
        let mut secrets: Vec<String> = secrets_of(configs).into_iter().map(String::from).collect();
        secrets.extend(self.tokens.as_ref().and_then(|t| t.current()));
        secrets
    }

    /// Authenticates to Vertex AI ([`ClientConfig::vertex`]) with a
    /// service account's key: its JWT is signed with WebCrypto and
    /// exchanged at its `token_uri` with this client's fetch; the token is
    /// kept until [`crate::CREDENTIALS_REFRESH_MS`] before it expires, by
    /// this client and its clones, one exchange at a time, and renewed
    /// once after a 401. For this client's own provider (a fallback entry
    /// takes a fixed [`ClientConfig::access_token`]).
    ///
    /// ```no_run
    /// use skyl::{web, ClientConfig, Provider, ServiceAccount, Vertex};
    ///
    /// # fn key_file() -> String { String::new() }
    /// # fn run() -> Result<(), skyl::Error> {
    /// let config = ClientConfig::new(Provider::Anthropic)
    ///     .with_vertex(Vertex::new("my-project", "us-east5"))
    ///     .with_model("claude-sonnet-4-5@20250929");
    /// let client = web::Client::new(config)
    ///     .with_service_account(ServiceAccount::from_json(&key_file())?);
    /// # let _ = client;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_service_account(mut self, account: ServiceAccount) -> Self {
        self.tokens = Some(Tokens::new(account));
        self
    }

    /// The retry policy (`max_retries: 0` for none).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sends with `fetch` instead of the global `fetch`: a function with
    /// fetch's signature, called with one `Request` (which carries the
    /// abort signal) and returning a `Response` or a promise of one. For a
    /// Workers service binding (`env.SERVICE.fetch.bind(env.SERVICE)`), a
    /// proxy or a test. Its `Response` may be of another realm or a
    /// polyfill: it is read by its properties, not by `instanceof`.
    pub fn with_fetch(mut self, fetch: Function) -> Self {
        self.fetch = Some(fetch);
        self
    }

    /// The config requests are encoded with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// A run of the core's machine for `request`: each attempt is encoded
    /// by it, so a request that cannot be encoded fails at the start,
    /// before anything is sent.
    fn machine(&self, request: &Request, stream: bool) -> Run {
        // The backoff's jitter: 53 random bits.
        let seed = (timer::random() * 9_007_199_254_740_992.0) as u64;
        let machine = RunMachine::new(
            self.config.clone(),
            request.clone(),
            stream,
            self.retry,
            self.timeouts.timers(),
            seed,
        )
        .with_fallback(self.fallback.clone());
        Run::new(machine, Source::Send(self.fetch.clone()))
            .with_tokens(self.tokens.clone(), &self.config)
            .refusing(self.exposed())
    }

    /// With a final answer, whether every provider of the chain can take
    /// its request ([`Fallback`]'s check, as the npm package's run does).
    pub(crate) fn check_final_answer(
        &self,
        request: &Request,
        limits: crate::RunLimits,
    ) -> Result<(), Error> {
        if !limits.final_answer {
            return Ok(());
        }
        self.fallback.check_final_answer(&self.config, request)
    }

    /// In a browser page, the error of the first config of this client's
    /// that would show a credential to every visitor
    /// ([`ClientConfig::browser`]); nothing is sent then.
    pub(crate) fn exposed(&self) -> Option<Error> {
        if !js::in_page() {
            return None;
        }
        let own = self.config.in_page(self.tokens.is_some(), "browser");
        let fallback = (self.fallback.chain.iter().enumerate())
            .map(|(i, (c, _))| c.in_page(false, &format!("fallback[{i}].browser")));
        std::iter::once(own).chain(fallback).find_map(Result::err)
    }

    /// Streams the response to `request`. Nothing is sent until the stream
    /// is first polled; a request that cannot be encoded is its first
    /// (and only) item.
    pub fn stream(&self, request: &Request) -> EventStream {
        EventStream::new(self.machine(request, true), self.secrets())
    }

    /// Embeds `request`'s values, as the core's [`EmbedMachine`] says: in
    /// batches sized for the provider, at most `max_concurrency` requests
    /// at once, each retried by this client's policy, one too large
    /// halved; the vectors in the values' order. A failure keeps every
    /// vector that came ([`EmbedFailure`]). Dropping the future aborts
    /// every request in flight, and no further one is sent.
    ///
    /// ```no_run
    /// use skyl::{web, ClientConfig, EmbedRequest, Provider};
    ///
    /// # async fn run() -> Result<(), skyl::EmbedFailure> {
    /// let client = web::Client::new(ClientConfig::new(Provider::OpenAi).with_api_key("sk-..."));
    /// let result = client.embed(&EmbedRequest::new(["a question", "a passage"])).await?;
    /// assert_eq!(result.vectors.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn embed(&self, request: &EmbedRequest) -> Result<Embeddings, EmbedFailure> {
        if let Some(error) = self.exposed() {
            return Err(EmbedFailure::nothing_sent(error, request.values.len()));
        }
        let seed = (timer::random() * 9_007_199_254_740_992.0) as u64;
        let config = self.config.clone();
        let made = EmbedMachine::new(
            config,
            request.clone(),
            self.retry,
            self.timeouts.timers(),
            seed,
        );
        let result = match made {
            Ok(machine) => super::embed::embed(machine, self.fetch.clone()).await,
            Err(error) => Err(EmbedFailure::nothing_sent(error, request.values.len())),
        };
        result.map_err(|mut f| {
            scrub_all(&mut f.error, &self.secrets());
            f
        })
    }

    /// The whole response to `request` (not streamed). Dropping the future
    /// aborts the fetch. With a fallback chain that fails for good, the
    /// error is the last provider's; who failed before it is
    /// [`EventStream::failed_attempts`] of [`Client::stream`].
    pub async fn complete(&self, request: &Request) -> Result<Response, Error> {
        let result = self.machine(request, false).complete().await;
        result.map_err(|mut e| {
            scrub_all(&mut e, &self.secrets());
            e
        })
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.config)
            .field("retry", &self.retry)
            .field("timeouts", &self.timeouts)
            .field("fallback", &self.fallback)
            .field("service_account", &self.tokens.is_some())
            .field(
                "fetch",
                &if self.fetch.is_some() {
                    "custom"
                } else {
                    "global"
                },
            )
            .finish()
    }
}

/// Decodes a streamed body the app already has: a `web_sys::ReadableStream`
/// or a `web_sys::Response` (`&response` converts), of any realm. A
/// response that is not a success is decoded as the provider's error;
/// anything else is an [`Error::InvalidRequest`] naming `body`. There is
/// no request, so no retry and no timeout.
///
/// ```no_run
/// use skyl::{web, Provider};
///
/// # async fn run(response: web_sys::Response) -> Result<(), skyl::Error> {
/// let mut stream = web::decode_stream(Provider::OpenAi, &response);
/// while let Some(event) = stream.next().await {
///     println!("{:?}", event?);
/// }
/// # Ok(())
/// # }
/// ```
pub fn decode_stream(provider: Provider, body: &JsValue) -> EventStream {
    let machine = RunMachine::given(provider, Timers::default());
    EventStream::new(Run::new(machine, Source::Given(body.clone())), Vec::new())
}
