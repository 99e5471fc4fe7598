//! A run's providers: the client's own, then its fallback chain
//! ([`Fallback`]), and the one being tried. The run machine asks it which
//! config encodes the attempt, and moves it on when the rule of
//! [`crate::fallback_switches`] says so.

use super::{Phase, RunMachine, Source, Step};
use crate::error::Error;
use crate::fallback::{failed_attempt, switches};
use crate::http::is_secret_header;
use crate::model::Response;
use crate::model::{FailedAttempt, Raw, Request, StreamEvent};
use crate::policy::Attempts;
use crate::providers::{ClientConfig, Provider};
use crate::retry::RetryPolicy;

/// The providers a request goes on to, in order, when the one before
/// failed in a way that says "this provider, now" before any event was
/// handed out ([`crate::fallback_switches`]); each is tried with its own
/// retries first.
///
/// ```
/// use skyl::{ClientConfig, Fallback, Provider, RetryPolicy};
///
/// let fallback = Fallback::new()
///     .then(
///         ClientConfig::new(Provider::Anthropic)
///             .with_api_key("sk-ant-...")
///             .with_model("claude-haiku-4-5"),
///         RetryPolicy::default(),
///     )
///     .on_status(401);
/// assert_eq!(fallback.chain.len(), 1);
/// ```
///
/// An entry's model is the one its requests ask for (a request's own
/// `model` is the first provider's); an entry without one sends the
/// request's. Its `providerOptions` are those keyed by its provider.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Fallback {
    /// The providers after the client's own, each with its retry policy.
    pub chain: Vec<(ClientConfig, RetryPolicy)>,
    /// Statuses that also switch, such as 400, 401, 403 or 404 (by
    /// default only 429, 5xx, overloads and transport failures do): the
    /// JS option `fallbackOn`.
    pub on: Vec<u16>,
}

impl Fallback {
    /// No fallback.
    pub fn new() -> Self {
        Fallback::default()
    }

    /// With one more provider at the end of the chain.
    #[must_use]
    pub fn then(mut self, config: ClientConfig, retry: RetryPolicy) -> Self {
        self.chain.push((config, retry));
        self
    }

    /// With one more status that switches.
    #[must_use]
    pub fn on_status(mut self, status: u16) -> Self {
        self.on.push(status);
        self
    }

    /// A run's final answer ([`crate::RunLimits::final_answer`]) sends
    /// `request` with its tools turned off (`toolChoice: "none"`) when the
    /// step limit is reached. Every provider of the chain that starts with
    /// `config` must take that, or the run is refused at its start, naming
    /// `finalAnswer` (`fallback[0].finalAnswer` for a fallback entry's
    /// provider), before anything is sent (not after its last step).
    pub(crate) fn check_final_answer(
        &self,
        config: &ClientConfig,
        request: &Request,
    ) -> Result<(), Error> {
        if request.tools.is_empty() {
            return Ok(());
        }
        let mut c = config;
        for i in 0.. {
            let adapter = c.provider.and_then(Provider::adapter);
            if let Some(why) = adapter.and_then(|a| a.no_tool_choice_none) {
                return Err(in_entry(i, Error::invalid_request("finalAnswer", why)));
            }
            match self.chain.get(i) {
                Some((next, _)) => c = next,
                None => break,
            }
        }
        Ok(())
    }
}

/// The run's providers and where it stands among them.
#[derive(Debug)]
pub(crate) struct Chain {
    /// The client's config and retries, then the fallback's.
    pub(super) entries: Vec<(ClientConfig, RetryPolicy)>,
    on: Vec<u16>,
    /// The entry being tried.
    pub(super) at: usize,
    /// The entries that failed, for the response.
    pub(crate) failed: Vec<FailedAttempt>,
    /// Warnings to hand out before the first event.
    pub(crate) notes: Vec<StreamEvent>,
    /// Whether the current entry's left-out parts were noted.
    noted: bool,
    /// The entries whose access token or AWS credentials the driver gives
    /// each attempt (ones it can renew: [`RunMachine::set_access_token`],
    /// [`RunMachine::set_credentials`]).
    pub(super) renewable: Vec<usize>,
    /// The entry whose token or credentials the provider rejected, until
    /// the driver renews them.
    pub(super) stale: Option<usize>,
    /// Whether refused credentials or a token were renewed in this run:
    /// once only, so a key without access ends in its refusal instead of
    /// a loop.
    pub(super) renewed: bool,
}

impl Chain {
    pub(crate) fn new(config: ClientConfig, retry: RetryPolicy) -> Self {
        Chain {
            entries: vec![(config, retry)],
            on: Vec::new(),
            at: 0,
            failed: Vec::new(),
            notes: Vec::new(),
            noted: false,
            renewable: Vec::new(),
            stale: None,
            renewed: false,
        }
    }

    pub(crate) fn extend(&mut self, fallback: Fallback) {
        self.entries.extend(fallback.chain);
        self.on = fallback.on;
    }

    /// The provider being tried.
    pub(crate) fn provider(&self) -> Option<Provider> {
        self.provider_of(self.at)
    }

    /// Entry `i`'s provider.
    fn provider_of(&self, i: usize) -> Option<Provider> {
        self.entries.get(i).and_then(|(c, _)| c.provider)
    }

    /// The limit for one streamed event: the client's own config's, for
    /// the whole chain.
    pub(crate) fn max_event_bytes(&self) -> Option<usize> {
        self.entries.first()?.0.max_event_bytes
    }

    /// Whether there are providers after the first.
    pub(crate) fn has_fallback(&self) -> bool {
        self.entries.len() > 1
    }

    /// Entry `i`'s model for `request`: the request's own for the first
    /// entry (else the config's), the config's own for a fallback entry
    /// (else the request's).
    fn model<'a>(&'a self, i: usize, request: &'a Request) -> Option<&'a str> {
        let own = self.entries.get(i)?.0.model.as_deref();
        if i == 0 {
            request.model.as_deref().or(own)
        } else {
            own.or(request.model.as_deref())
        }
    }

    /// Encodes `request` with entry `i` (its own model, see
    /// [`Self::model`]).
    pub(crate) fn encode(
        &self,
        i: usize,
        request: &mut Request,
        stream: bool,
    ) -> Result<crate::HttpRequest, Error> {
        let Some((config, _)) = self.entries.get(i) else {
            return Err(Error::invalid_request("fallback", "no such entry"));
        };
        let own = i > 0 && config.model.is_some();
        let asked = if own { request.model.take() } else { None };
        let http = crate::providers::encode_request(config, request, stream);
        if own {
            request.model = asked;
        }
        http
    }

    /// The attempt's request: encoded by the entry being tried, and signed
    /// with its AWS credentials (if any) at `now_ms`, the driver's clock
    /// (`None`: none was given, an error for a config that signs).
    pub(crate) fn signed(
        &self,
        request: &mut Request,
        stream: bool,
        now_ms: Option<u64>,
    ) -> Result<crate::HttpRequest, Error> {
        let mut http = self.encode(self.at, request, stream)?;
        let Some((config, _)) = self.entries.get(self.at).filter(|(c, _)| c.aws.is_some()) else {
            return Ok(http);
        };
        // (Only the adapters that sign link the signing code.)
        let adapter = config.provider.and_then(crate::Provider::adapter);
        let Some(sign) = adapter.and_then(|a| a.sign) else {
            let name = config
                .provider
                .map_or("this provider", crate::Provider::name);
            return Err(Error::invalid_request(
                "credentials",
                format!("{name} takes no AWS credentials (a bedrock option)"),
            ));
        };
        let now_ms = now_ms.ok_or_else(|| {
            Error::invalid_request(
                "aws",
                "signing with AWS credentials needs the driver's clock (RunMachine::at)",
            )
        })?;
        sign(config, &mut http, now_ms);
        Ok(http)
    }

    /// Every fallback entry can take `request`, before anything is sent:
    /// the first error of one that cannot, naming it. Flat
    /// `providerOptions` (one provider's body fields) are refused in a
    /// chain of more than one provider: they would reach them all. (The
    /// first provider is checked by the first attempt's encoding, made
    /// just before: its errors are the request's own.)
    pub(crate) fn check(&self, request: &mut Request, stream: bool) -> Result<(), Error> {
        let first = self.provider_of(0);
        let mixed = (0..self.entries.len()).any(|i| self.provider_of(i) != first);
        if let Some(path) = crate::providers::first_flat(request).filter(|_| mixed) {
            return Err(Error::invalid_request(
                path,
                "with a fallback to another provider, key the options by provider \
                 ({\"openai\": {...}, \"anthropic\": {...}}): flat options would be sent to \
                 every provider of the chain",
            ));
        }
        for i in 1..self.entries.len() {
            self.encode(i, request, stream)
                .map_err(|e| in_entry(i, e))?;
        }
        Ok(())
    }

    /// The warning for the parts of `request` the current provider cannot
    /// read, once per provider.
    pub(crate) fn note_left_out(&mut self, request: &Request) {
        if self.noted {
            return;
        }
        self.noted = true;
        if let Some(message) = self
            .provider()
            .and_then(|p| crate::providers::left_out(p, request))
        {
            self.notes.push(warning("provider_parts_dropped", message));
        }
    }

    /// After the current entry failed with `error`, its retries used up:
    /// moves on to the next one if the rule says so, returning its retry
    /// policy. The failure is kept for the response and announced by a
    /// `fallback` warning before the next provider's first event.
    pub(crate) fn switch(&mut self, error: &Error, request: &Request) -> Option<RetryPolicy> {
        let next = self.entries.get(self.at + 1)?;
        if !switches(error, &self.on) {
            return None;
        }
        let (to, retry) = (next.0.provider, next.1);
        let secrets = self.secrets();
        let from = self.provider().map_or("unknown", Provider::name);
        let attempt = failed_attempt(from, self.model(self.at, request), error, &secrets);
        let to_name = to.map_or("unknown", Provider::name);
        let to_model = self
            .model(self.at + 1, request)
            .unwrap_or("its default model");
        let message = format!(
            "{from} failed ({}: {}); {to_name} ({to_model}) answers instead",
            attempt.error.code, attempt.error.message
        );
        self.failed.push(attempt);
        self.at += 1;
        self.noted = false;
        // The warnings of a provider that did not answer are left out.
        self.notes.clear();
        self.notes.push(warning("fallback", message));
        Some(retry)
    }

    /// Every secret of the chain: its API keys and credential headers.
    pub(crate) fn secrets(&self) -> Vec<&str> {
        secrets_of(self.entries.iter().map(|(c, _)| c))
    }
}

/// The secrets `configs` send: their API keys, and the values of their
/// credential headers (a bearer token also without its scheme, as a
/// server echoes it); the longest first, so that a key that begins another
/// does not leave the other's end when scrubbed before it.
pub(crate) fn secrets_of<'a>(configs: impl Iterator<Item = &'a ClientConfig>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    let mut add = |s: &'a str| {
        // (By insertion: a sort would link a sort routine into the wasm.)
        let at = out
            .iter()
            .position(|o| o.len() < s.len())
            .unwrap_or(out.len());
        out.insert(at, s);
    };
    for config in configs {
        if let Some(key) = config.api_key.as_deref() {
            add(key);
        }
        if let Some(token) = config.access_token.as_deref() {
            add(token);
        }
        if let Some(aws) = &config.aws {
            add(&aws.secret_access_key);
            if let Some(token) = aws.session_token.as_deref() {
                add(token);
            }
        }
        for (_, value) in config.headers.iter().filter(|(k, _)| is_secret_header(k)) {
            add(value.as_str());
            if let Some(token) = value.strip_prefix("Bearer ") {
                add(token);
            }
        }
    }
    out
}

/// `e`, an option's error, named in the terms of entry `i` of the chain
/// (`fallback[0].model`); the client's own entry (0) keeps its path.
pub(super) fn in_entry(i: usize, e: Error) -> Error {
    match e {
        Error::InvalidRequest { path, message } if i > 0 => Error::InvalidRequest {
            path: if path.is_empty() {
                format!("fallback[{}]", i - 1)
            } else {
                format!("fallback[{}].{path}", i - 1)
            },
            message,
        },
        other => other,
    }
}

fn warning(code: &str, message: String) -> StreamEvent {
    StreamEvent::Warning {
        code: code.to_owned(),
        message,
        raw: Raw::from(""),
    }
}

/// The run machine's side of a chain.
impl RunMachine {
    /// With providers to go on to when this one fails before its first
    /// event ([`Fallback`]): each is tried with its own retries, in
    /// order; the response names who answered (`provider`) and who failed
    /// before (`attempts`), and a stream hands out a `fallback` warning
    /// before the first event of a provider that took over. The total
    /// timeout covers the whole chain. Before anything is sent, every
    /// entry must be able to encode the request (an error names the
    /// entry: `fallback[0].model`).
    #[must_use]
    pub fn with_fallback(mut self, fallback: Fallback) -> Self {
        if let Source::Encode { chain, .. } = &mut self.source {
            chain.extend(fallback);
        }
        self
    }

    /// The provider being tried (the one that answered, once done).
    pub fn provider(&self) -> Option<Provider> {
        self.provider
    }

    /// The providers of the fallback chain that failed so far, in order:
    /// a response carries them (`attempts`) when another answered; when
    /// none did, a driver reports them with the last one's error (the JS
    /// half's `error.attempts`).
    pub fn failed_attempts(&self) -> &[FailedAttempt] {
        match &self.source {
            Source::Encode { chain, .. } => &chain.failed,
            Source::Given => &[],
        }
    }

    /// Every secret the request's providers are sent with (API keys and
    /// credential headers, the fallback's included): what a driver scrubs
    /// out of what it reports ([`Error::scrub`]).
    pub fn secrets(&self) -> Vec<&str> {
        match &self.source {
            Source::Encode { chain, .. } => chain.secrets(),
            Source::Given => Vec::new(),
        }
    }

    /// Every fallback entry can take the request (before anything is
    /// sent).
    pub(super) fn check_chain(&mut self) -> Result<(), Error> {
        match &mut self.source {
            Source::Encode { chain, request } if chain.has_fallback() => {
                chain.check(request, self.stream)
            }
            _ => Ok(()),
        }
    }

    /// Before `out` is handed out: the chain's warnings go first, and the
    /// `finish` event's response says who answered.
    pub(super) fn noted(&mut self, out: &mut Vec<StreamEvent>) {
        if let Source::Encode { chain, .. } = &mut self.source {
            if !chain.notes.is_empty() {
                let mut first = std::mem::take(&mut chain.notes);
                first.append(out);
                *out = first;
            }
        }
        if let Some(StreamEvent::Finish { response, .. }) = out.last_mut() {
            **response = self.stamped(std::mem::take(&mut **response));
        }
    }

    /// The attempt failed for good with `e`: the next provider of the
    /// chain is tried if the rule says so, after a wait of 0 ms in which
    /// the driver closes the last connection and loads that entry's
    /// credentials or token ([`Self::entry`]); else the request fails.
    pub(super) fn next_provider(&mut self, e: Error) -> Step {
        let Source::Encode { chain, request } = &mut self.source else {
            return self.fail(e);
        };
        match chain.switch(&e, request) {
            Some(retry) => {
                self.provider = chain.provider();
                self.attempts = Attempts::new(retry);
                self.phase = Phase::Waiting;
                Step::Wait(0)
            }
            None => self.fail(e),
        }
    }

    /// The driver could not make the attempt's request (`e`: its fetch
    /// refuses the URL or a header): the request fails with `e`, its path
    /// naming the entry being tried (`fallback[0].baseURL`). Not retried,
    /// and not a reason to go on to the next provider: it is an option's
    /// error, as a request the entry cannot encode is.
    pub fn refused(&mut self, e: Error) -> Step {
        if self.phase != Phase::Sending {
            return self.misuse("refused");
        }
        let e = in_entry(self.entry(), e);
        self.fail(e)
    }

    /// The entry of the chain the next attempt goes to (0: the client's
    /// own, then each fallback's): the only one whose credentials or token
    /// a driver loads before [`Self::start`] and [`Self::waited`]
    /// ([`Self::set_credentials`], [`Self::set_access_token`]), so that a
    /// fallback's source is not asked while its entry is not tried.
    pub fn entry(&self) -> usize {
        match &self.source {
            Source::Encode { chain, .. } => chain.at,
            Source::Given => 0,
        }
    }

    /// `response` with who answered, and who failed before.
    pub(super) fn stamped(&self, mut response: Response) -> Response {
        response.provider = self.provider.map(|p| p.name().to_owned());
        if let Source::Encode { chain, .. } = &self.source {
            response.attempts.clone_from(&chain.failed);
        }
        response
    }
}
