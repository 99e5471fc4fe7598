//! The credentials and tokens a driver gives the chain's entries (AWS
//! credentials from a callback, Vertex AI's access tokens): each set
//! before the attempt it signs, checked before the first is loaded, and
//! renewed once when the provider refuses them.

use super::{Phase, RunMachine, Source, Step};
use crate::error::{ApiErrorKind, Error};
use crate::providers::ClientConfig;

impl RunMachine {
    /// Fresh AWS credentials for entry `entry` of the chain (0: the
    /// client's own, then each fallback's), for credentials that expire
    /// (STS): given before [`Self::start`] and [`Self::waited`], they sign
    /// the next attempt, and are scrubbed from errors like every key. When
    /// AWS refuses them (an authentication error: `ExpiredTokenException`,
    /// `UnrecognizedClientException`, `InvalidSignatureException`), the
    /// request is tried once more, after the driver renews them
    /// ([`Self::stale_token`]).
    pub fn set_credentials(&mut self, entry: usize, credentials: crate::AwsCredentials) {
        self.renewable(entry, |config| config.aws = Some(credentials));
    }

    /// A fresh OAuth access token for entry `entry` of the chain (Vertex
    /// AI), from a source the driver renews (a service-account key, a
    /// callback): given before [`Self::start`] and [`Self::waited`], it
    /// authorizes the next attempt, and is scrubbed from errors. A 401 to
    /// it is retried once, after the driver renews it
    /// ([`Self::stale_token`]).
    pub fn set_access_token(&mut self, entry: usize, token: String) {
        self.renewable(entry, |config| config.access_token = Some(token));
    }

    /// Sets what the driver gives entry `entry` (`set`), which it can
    /// renew when the provider refuses it.
    fn renewable(&mut self, entry: usize, set: impl FnOnce(&mut ClientConfig)) {
        if let Source::Encode { chain, .. } = &mut self.source {
            if let Some((config, _)) = chain.entries.get_mut(entry) {
                set(config);
                if !chain.renewable.contains(&entry) {
                    chain.renewable.push(entry);
                }
                if chain.stale == Some(entry) {
                    chain.stale = None;
                }
            }
        }
    }

    /// Before a driver's first token exchange (a service account's key, a
    /// token callback) or credentials callback: the checks [`Self::start`]
    /// makes (the timers, the request encoded, the chain). When this
    /// fails, nothing is sent, not even the exchange, and no callback is
    /// asked.
    pub fn check_for_token(&mut self) -> Result<(), Error> {
        self.timers.check()?;
        let Source::Encode { chain, request } = &mut self.source else {
            return Ok(());
        };
        chain.encode(0, request, self.stream)?;
        self.check_chain()
    }

    /// The driver could not load what the entry being tried needs before
    /// [`Self::start`] or [`Self::waited`] (`e`): its credentials callback
    /// or token callback failed, or the token exchange did. Decided as the
    /// attempt's own failure: an error the retry policy retries (the
    /// exchange's network failure, a 429 or 5xx from the token endpoint) is
    /// tried again after the backoff, then goes on to the next provider of
    /// the chain; any other fails the request, reported with the providers
    /// that failed before ([`Self::failed_attempts`]).
    pub fn unsigned(&mut self, e: Error) -> Step {
        if !matches!(self.phase, Phase::Ready | Phase::Waiting) {
            return self.misuse("unsigned");
        }
        // (A refusal waiting for its renewal is over: this load was it.)
        if let Source::Encode { chain, .. } = &mut self.source {
            chain.stale = None;
        }
        match self.stop.clone() {
            Some(stop) => self.fail(stop),
            // Only what is retried goes on: a refused key or a callback's
            // error ends the request (whatever `fallbackOn` says of the
            // provider's own statuses).
            None if e.retryable() => self.fail_attempt(e),
            None => self.fail(e),
        }
    }

    /// The entry whose access token or AWS credentials the provider
    /// rejected (a 401, an authentication error), while the machine waits
    /// for the driver to renew them before [`Self::waited`]
    /// ([`Self::set_access_token`], [`Self::set_credentials`]): the driver
    /// drops what it cached for it.
    pub fn stale_token(&self) -> Option<usize> {
        match &self.source {
            Source::Encode { chain, .. } => chain.stale,
            Source::Given => None,
        }
    }

    /// Whether `e`, the attempt's failure, is AWS refusing a signature
    /// made at a clock more than 5 minutes from its own (a SigV4 signature
    /// is valid for 5 minutes either side), by the `Date` of its answer,
    /// the first time in this run: then every later attempt is signed by
    /// AWS's clock, and the next goes at once, whatever the retries (as
    /// AWS's SDKs correct a skewed clock).
    pub(super) fn clock_skewed(&mut self, e: &Error) -> bool {
        let (Source::Encode { chain, .. }, Some(clock)) = (&self.source, self.clock_ms) else {
            return false;
        };
        let signed = chain
            .entries
            .get(chain.at)
            .is_some_and(|(c, _)| c.aws.is_some());
        let refused = matches!(e, Error::Api(api) if api.kind == ApiErrorKind::Authentication);
        let date = crate::http::header(&self.headers, "date").and_then(crate::http::http_date_ms);
        let Some(skew) = date.map(|d| d as i64 - clock as i64) else {
            return false;
        };
        if !signed || !refused || self.skew_ms != 0 || skew.abs() <= 300_000 {
            return false;
        }
        self.skew_ms = skew;
        true
    }

    /// Whether `e`, the attempt's failure, is a 401 or an authentication
    /// error (AWS's are 403s) to a token or credentials the driver renews,
    /// the first in this run: then the machine waits for new ones and
    /// tries again, whatever its retries.
    pub(super) fn token_rejected(&mut self, e: &Error) -> bool {
        let Source::Encode { chain, .. } = &mut self.source else {
            return false;
        };
        let unauthorized = matches!(e, Error::Api(api)
            if api.status == Some(401) || api.kind == ApiErrorKind::Authentication);
        if !unauthorized || chain.renewed || !chain.renewable.contains(&chain.at) {
            return false;
        }
        chain.renewed = true;
        chain.stale = Some(chain.at);
        true
    }
}
