//! What a driver decides, in one copy.
//!
//! A *driver* is the code that does the I/O around the core: it sends the
//! [`crate::HttpRequest`], feeds the body to a [`crate::StreamDecoder`],
//! keeps time and cancels. skyl has two, the npm package's JS half and the
//! Rust `web` module, and both ask this module (the JS half through the
//! wasm shell) instead of deciding for themselves:
//!
//! - whether and when to try again after a failure ([`Attempts`]: the
//!   error's [`Error::retryable`], the [`RetryPolicy`] backoff and the
//!   provider's `retry-after`, and never once an event was handed out);
//! - what a timeout means when it fires, and what a broken connection
//!   means, given whether the stream is already complete
//!   ([`Timeout::expired`], [`Interruption::of`]);
//! - keeping the API key out of errors ([`scrub`], [`Error::scrub`]).
//!
//! The errors a driver makes itself are the core's too
//! ([`Error::Connection`], [`Error::Timeout`], [`Error::Aborted`]), as are
//! the request-id headers ([`crate::request_id`]) and the `retry-after`
//! date ([`crate::retry_after_ms`], which takes the driver's clock).
//!
//! Nothing here performs I/O or reads a clock: a driver passes in what it
//! knows (the time, a random number, whether the terminal frame came).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::{Error, Timeout};
use crate::model::{
    AttemptError, FailedAttempt, IncompleteToolCall, Message, Part, Response, ToolCall, Usage,
};
use crate::retry::RetryPolicy;

/// One request's attempts: how many retries were made, whether an event
/// was handed out to the caller, and whether (and after how long) to try
/// again after a failure.
///
/// A driver makes one per request, calls [`Attempts::event_emitted`]
/// when it hands the caller an event, and asks [`Attempts::retry_delay`]
/// after each failed attempt:
///
/// ```
/// use skyl::{Attempts, Error, RetryPolicy, Timeout};
///
/// let mut attempts = Attempts::new(RetryPolicy::default());
/// let timeout = Timeout::FirstByte.error(30_000, false);
/// assert_eq!(attempts.retry_delay(&timeout, 0.0), Some(500));
/// assert_eq!(attempts.retries(), 1);
///
/// attempts.event_emitted();
/// let lost = Error::connection_lost("reset", true);
/// assert_eq!(attempts.retry_delay(&lost, 0.0), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempts {
    policy: RetryPolicy,
    retries: u32,
    events_emitted: bool,
}

impl Attempts {
    /// The attempts of a new request.
    pub fn new(policy: RetryPolicy) -> Self {
        Attempts {
            policy,
            retries: 0,
            events_emitted: false,
        }
    }

    /// The attempts of a request whose driver keeps the count itself: it
    /// has made `retries` retries, and has handed out an event or not.
    pub fn resume(policy: RetryPolicy, retries: u32, events_emitted: bool) -> Self {
        Attempts {
            policy,
            retries,
            events_emitted,
        }
    }

    /// The retries made so far.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Records that an event was handed out to the caller: from now on,
    /// nothing is retried (the caller would see events twice).
    pub fn event_emitted(&mut self) {
        self.events_emitted = true;
    }

    /// Whether an event has been handed out.
    pub fn events_emitted(&self) -> bool {
        self.events_emitted
    }

    /// After an attempt failed with `error`: the milliseconds to wait
    /// before the next one, or `None` to give up and report the error.
    /// A retry is counted when one is given. `random` is uniform in
    /// `[0, 1)`, for the backoff's jitter.
    pub fn retry_delay(&mut self, error: &Error, random: f64) -> Option<u64> {
        self.retry_delay_for(error.retryable(), error.retry_after_ms(), random)
    }

    /// [`Attempts::retry_delay`] for a driver that holds the error's
    /// description rather than the [`Error`] (the JS half holds an
    /// `ErrorInfo`): its `retryable` and `retryAfterMs`, which the core
    /// computed from the error.
    pub fn retry_delay_for(
        &mut self,
        retryable: bool,
        retry_after_ms: Option<u64>,
        random: f64,
    ) -> Option<u64> {
        if !retryable || self.events_emitted {
            return None;
        }
        let delay = self.policy.delay_ms(self.retries, retry_after_ms, random)?;
        self.retries = self.retries.saturating_add(1);
        Some(delay)
    }
}

/// What a driver does when the body is interrupted: a timeout fires, or
/// the connection breaks.
#[derive(Clone, Debug, PartialEq)]
#[must_use]
#[non_exhaustive]
pub enum Interruption {
    /// The stream's terminal frame had come: nothing is missing (a server
    /// or proxy kept the connection open, or closed it roughly). End the
    /// body there ([`crate::StreamDecoder::finish`]), which succeeds.
    EndBody,
    /// End this attempt with the error (cancel the fetch and the body); it
    /// may be retried ([`Attempts::retry_delay`]).
    EndAttempt(Error),
    /// End the whole request with the error: no further attempt.
    StopRun(Error),
}

impl Interruption {
    /// What `error`, a driver's interruption of the body, means:
    /// [`Interruption::EndBody`] when the stream was already complete
    /// (`stream_complete`, [`crate::StreamDecoder::is_complete`]), unless
    /// the caller aborted; else the error ends the request for an abort or
    /// the total timeout, and the attempt for anything else.
    pub fn of(error: Error, stream_complete: bool) -> Self {
        match error {
            Error::Aborted { .. } => Interruption::StopRun(error),
            _ if stream_complete => Interruption::EndBody,
            Error::Timeout { which, .. } if which.stops_run() => Interruption::StopRun(error),
            _ => Interruption::EndAttempt(error),
        }
    }

    /// The error, unless the body just ends.
    pub fn error(&self) -> Option<&Error> {
        match self {
            Interruption::EndBody => None,
            Interruption::EndAttempt(e) | Interruption::StopRun(e) => Some(e),
        }
    }
}

impl Timeout {
    /// This timeout fired after `after_ms`: what the driver does
    /// ([`Interruption::of`] its [`Timeout::error`]). `stream_complete`
    /// says whether the terminal frame had come (false before a response
    /// or for a body read whole); `events_emitted` whether an event had
    /// been handed out.
    pub fn expired(
        self,
        after_ms: u64,
        stream_complete: bool,
        events_emitted: bool,
    ) -> Interruption {
        Interruption::of(self.error(after_ms, events_emitted), stream_complete)
    }
}

/// How long before their expiration credentials that expire (STS's, from
/// a JS `credentials()` callback) are fetched again: 5 minutes, AWS SDKs'
/// margin, so that a request never leaves signed with a key about to
/// lapse.
pub const CREDENTIALS_REFRESH_MS: u64 = 5 * 60 * 1000;

/// How long a service account's token exchange may take before the JS
/// half gives it up (the exchange is shared by the requests that wait for
/// it, so no one request's timeout ends it): 30 seconds, so that a token
/// endpoint that hangs fails those requests and the next one exchanges
/// again. (`skyl::web` runs each exchange under the request that started
/// it, whose timeouts end it.)
pub const TOKEN_EXCHANGE_TIMEOUT_MS: u64 = 30 * 1000;

/// What replaces a secret in scrubbed text.
pub const REDACTED: &str = "[redacted]";

/// The fewest characters a secret must have to be scrubbed: a shorter one
/// (an empty or placeholder key) would redact ordinary text.
pub const MIN_SECRET_CHARS: usize = 4;

/// `text` with every occurrence of `secret` replaced by [`REDACTED`]; as
/// it is (borrowed) when the secret is shorter than [`MIN_SECRET_CHARS`]
/// or absent. Occurrences are found left to right and do not overlap.
///
/// The core never puts the API key into an error, but a server may echo it
/// back (in a message, a body, a frame): a driver scrubs what it reports
/// with the key it sent. The JS half applies the same rule to JS values.
pub fn scrub<'a>(text: &'a str, secret: &str) -> Cow<'a, str> {
    if secret.chars().count() < MIN_SECRET_CHARS {
        return Cow::Borrowed(text);
    }
    // A match of valid UTF-8 starts and ends on character boundaries, and
    // `get` cannot panic.
    let (t, s) = (text.as_bytes(), secret.as_bytes());
    let mut out: Option<String> = None;
    let mut kept = 0;
    while let Some(i) = find(t, s, kept) {
        let o = out.get_or_insert_with(String::new);
        o.push_str(text.get(kept..i).unwrap_or_default());
        o.push_str(REDACTED);
        kept = i + s.len();
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(text.get(kept..).unwrap_or_default());
            Cow::Owned(o)
        }
    }
}

/// Where `needle` (not empty) first occurs in `hay` at or after `from`.
/// By hand rather than `str::find`: its two-way searcher and the slicing's
/// panic messages were 5 KB of the wasm, for texts of a few hundred bytes
/// (an error's message; a frame holding a file's base64, once).
pub(crate) fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let mut at = from;
    while let Some(i) = hay.get(at..).and_then(|rest| memchr::memchr(first, rest)) {
        let start = at + i;
        if hay.get(start..start + needle.len()) == Some(needle) {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

/// Scrubs a string in place (no copy when the secret is not in it).
pub(crate) fn scrub_in(text: &mut String, secret: &str) {
    if let Cow::Owned(clean) = scrub(text, secret) {
        *text = clean;
    }
}

/// Scrubs every string of a JSON value (keys too).
fn scrub_value(value: &mut Value, secret: &str) {
    match value {
        Value::String(s) => scrub_in(s, secret),
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_value(v, secret)),
        Value::Object(map) => scrub_map(map, secret),
        _ => {}
    }
}

/// Scrubs every key and value of a JSON object (provider data too).
fn scrub_map(map: &mut Map<String, Value>, secret: &str) {
    let entries = std::mem::take(map);
    for (k, mut v) in entries {
        scrub_value(&mut v, secret);
        map.insert(scrub(&k, secret).into_owned(), v);
    }
}

/// Scrubs each string.
fn scrub_all<'a>(texts: impl IntoIterator<Item = &'a mut String>, secret: &str) {
    texts.into_iter().for_each(|s| scrub_in(s, secret));
}

/// Scrubs the strings that are present.
fn scrub_some<'a>(texts: impl IntoIterator<Item = &'a mut Option<String>>, secret: &str) {
    texts
        .into_iter()
        .flatten()
        .for_each(|s| scrub_in(s, secret));
}

/// Scrubs every string of a response in place: its fields, each part's
/// text, data and provider data, the calls, the usage's raw counts and the
/// failed attempts. The patterns name every field and every part, so a
/// field added to these types does not compile until it is scrubbed here.
/// (It went through the response's JSON form before: serde's derived
/// `Deserialize` of every response type, about 19 KB of a Rust app's wasm.)
fn scrub_response(response: &mut Response, secret: &str) {
    let Response {
        id,
        model,
        message: Message { role: _, parts },
        text,
        reasoning,
        tool_calls,
        incomplete_tool_calls,
        refusal,
        usage,
        finish_reason: _,
        raw_finish_reason,
        provider,
        attempts,
    } = response;
    scrub_some([id, model, refusal, raw_finish_reason, provider], secret);
    scrub_all([text, reasoning], secret);
    parts.iter_mut().for_each(|p| scrub_part(p, secret));
    for ToolCall {
        id,
        name,
        arguments,
    } in tool_calls
    {
        scrub_all([id, name, arguments], secret);
    }
    for IncompleteToolCall {
        id,
        name,
        arguments,
        reason,
    } in incomplete_tool_calls
    {
        scrub_some([id, name], secret);
        scrub_all([arguments, reason], secret);
    }
    let Usage {
        input: _,
        output: _,
        total: _,
        cache_read: _,
        cache_write: _,
        reasoning: _,
        raw,
    } = usage;
    raw.iter_mut().for_each(|v| scrub_value(v, secret));
    for FailedAttempt {
        provider,
        model,
        error:
            AttemptError {
                code,
                status: _,
                message,
            },
    } in attempts
    {
        scrub_some([model], secret);
        scrub_all([provider, code, message], secret);
    }
}

/// Scrubs every string of a part.
fn scrub_part(part: &mut Part, secret: &str) {
    let data = match part {
        Part::Text {
            text,
            provider_data,
        } => {
            scrub_in(text, secret);
            provider_data
        }
        Part::Image {
            url,
            data,
            media_type,
            provider_data,
        } => {
            scrub_some([url, data, media_type], secret);
            provider_data
        }
        Part::File {
            url,
            data,
            media_type,
            filename,
            provider_data,
        } => {
            scrub_some([url, data, filename], secret);
            scrub_in(media_type, secret);
            provider_data
        }
        Part::ToolCall {
            id,
            name,
            arguments,
            provider_data,
        } => {
            scrub_all([id, name, arguments], secret);
            provider_data
        }
        Part::ToolResult {
            call_id,
            content,
            is_error: _,
            provider_data,
        } => {
            scrub_all([call_id, content], secret);
            provider_data
        }
        Part::Reasoning {
            text,
            signature,
            redacted,
            provider_data,
        } => {
            scrub_in(text, secret);
            scrub_some([signature, redacted], secret);
            provider_data
        }
        Part::Provider { provider, data } => {
            scrub_in(provider, secret);
            scrub_value(data, secret);
            return;
        }
        Part::Cache { ttl } => {
            scrub_some([ttl], secret);
            return;
        }
    };
    data.iter_mut().for_each(|m| scrub_map(m, secret));
}

impl Error {
    /// Removes every occurrence of `secret` (the API key) from the error's
    /// text, fields and partial response ([`scrub`]). Before an error made
    /// from what a server sent is shown or logged, a driver scrubs it with
    /// the key it sent.
    pub fn scrub(&mut self, secret: &str) {
        if secret.chars().count() < MIN_SECRET_CHARS {
            return;
        }
        match self {
            Error::InvalidRequest { path, message } => {
                scrub_in(path, secret);
                scrub_in(message, secret);
            }
            Error::Api(e) => {
                let e = &mut **e;
                let fields = [
                    &mut e.provider_type,
                    &mut e.code,
                    &mut e.param,
                    &mut e.request_id,
                    &mut e.body,
                ];
                scrub_some(fields, secret);
                scrub_in(&mut e.message, secret);
                e.partial.iter_mut().for_each(|p| scrub_response(p, secret));
            }
            Error::ContentFilter {
                reason,
                message,
                partial,
                ..
            } => {
                scrub_in(reason, secret);
                scrub_in(message, secret);
                scrub_response(partial, secret);
            }
            Error::StreamEndedEarly { partial, .. } => scrub_response(partial, secret),
            Error::MalformedStream {
                message, partial, ..
            } => {
                scrub_in(message, secret);
                scrub_response(partial, secret);
            }
            Error::InvalidResponse { message } => scrub_in(message, secret),
            Error::Connection {
                message, partial, ..
            } => {
                scrub_in(message, secret);
                partial.iter_mut().for_each(|p| scrub_response(p, secret));
            }
            Error::Timeout { partial, .. } => {
                partial.iter_mut().for_each(|p| scrub_response(p, secret));
            }
            Error::Aborted {
                reason, partial, ..
            } => {
                reason.iter_mut().for_each(|r| scrub_in(r, secret));
                partial.iter_mut().for_each(|p| scrub_response(p, secret));
            }
            Error::EventTooLarge { partial, .. } => scrub_response(partial, secret),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, ApiErrorKind};

    fn api(kind: ApiErrorKind, retry_after_ms: Option<u64>, events_emitted: bool) -> Error {
        Error::Api(Box::new(ApiError {
            kind,
            status: Some(200),
            provider_type: None,
            code: None,
            param: None,
            message: "m".into(),
            request_id: None,
            retry_after_ms,
            in_band: events_emitted,
            events_emitted,
            body: None,
            partial: None,
        }))
    }

    fn partial(text: &str) -> Box<Response> {
        Box::new(Response {
            text: text.into(),
            ..Response::default()
        })
    }

    /// Every kind of failure, and whether (and after how long) the first
    /// retry comes: the policy both drivers ask.
    #[test]
    fn which_errors_are_retried_and_after_how_long() {
        let ended = |events_emitted| Error::StreamEndedEarly {
            events_emitted,
            partial: partial(""),
        };
        for (name, error, delay) in [
            (
                "429 retry-after",
                api(ApiErrorKind::RateLimit, Some(1_234), false),
                Some(1_234),
            ),
            (
                "retry-after 0",
                api(ApiErrorKind::RateLimit, Some(0), false),
                Some(0),
            ),
            (
                "retry-after > 60 s",
                api(ApiErrorKind::RateLimit, Some(61_000), false),
                Some(500),
            ),
            ("500", api(ApiErrorKind::Server, None, false), Some(500)),
            ("529", api(ApiErrorKind::Overloaded, None, false), Some(500)),
            (
                "408",
                api(ApiErrorKind::RequestTimeout, None, false),
                Some(500),
            ),
            ("409", api(ApiErrorKind::Conflict, None, false), Some(500)),
            ("400", api(ApiErrorKind::BadRequest, Some(10), false), None),
            ("401", api(ApiErrorKind::Authentication, None, false), None),
            (
                "in-band before events",
                api(ApiErrorKind::Overloaded, None, false),
                Some(500),
            ),
            (
                "in-band after events",
                api(ApiErrorKind::Overloaded, None, true),
                None,
            ),
            ("ended early before events", ended(false), Some(500)),
            ("ended early after events", ended(true), None),
            (
                "unreachable",
                Error::unreachable("http://h/v1", "refused"),
                Some(500),
            ),
            (
                "connection lost before events",
                Error::connection_lost("x", false),
                Some(500),
            ),
            (
                "connection lost after events",
                Error::connection_lost("x", true),
                None,
            ),
            ("first byte", Timeout::FirstByte.error(10, false), Some(500)),
            (
                "idle before events",
                Timeout::Idle.error(10, false),
                Some(500),
            ),
            ("idle after events", Timeout::Idle.error(10, true), None),
            ("total", Timeout::Total.error(10, false), None),
            ("aborted", Error::aborted(None, false), None),
            ("too large", Error::event_too_large(1), None),
            ("invalid request", Error::invalid_request("p", "m"), None),
            ("invalid response", Error::invalid_response("m"), None),
        ] {
            let mut attempts = Attempts::new(RetryPolicy::default());
            assert_eq!(attempts.retry_delay(&error, 0.0), delay, "{name}");
            assert_eq!(attempts.retries(), u32::from(delay.is_some()), "{name}");
            // Once an event was handed out, nothing is retried.
            let mut after = Attempts::resume(RetryPolicy::default(), 0, true);
            assert!(after.events_emitted());
            assert_eq!(
                after.retry_delay(&error, 0.0),
                None,
                "{name}, after an event"
            );
        }
    }

    #[test]
    fn retries_back_off_until_none_is_left() {
        let mut attempts = Attempts::new(RetryPolicy {
            max_retries: 3,
            ..RetryPolicy::default()
        });
        let e = api(ApiErrorKind::Server, None, false);
        let delays: Vec<_> = (0..4).map(|_| attempts.retry_delay(&e, 0.0)).collect();
        assert_eq!(delays, [Some(500), Some(1_000), Some(2_000), None]);
        assert_eq!(attempts.retries(), 3);
        // A driver that keeps the count (the JS half) gets the same answers.
        for (done, want) in [(0, Some(500)), (2, Some(2_000)), (3, None)] {
            let mut resumed = Attempts::resume(attempts.policy, done, false);
            assert_eq!(resumed.retry_delay_for(true, None, 0.0), want, "{done}");
        }
        let mut none = Attempts::new(RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        });
        assert_eq!(none.retry_delay(&e, 0.0), None);
        let mut handed = Attempts::new(RetryPolicy::default());
        handed.event_emitted();
        assert_eq!(handed.retry_delay_for(true, Some(5), 0.0), None);
    }

    /// What each timeout means when it fires, before and after the
    /// terminal frame and the first event.
    #[test]
    fn what_a_timeout_means_when_it_fires() {
        #[derive(Debug, PartialEq)]
        enum Want {
            EndBody,
            EndAttempt { retryable: bool },
            StopRun,
        }
        use Timeout::*;
        for (which, complete, events, want) in [
            (
                FirstByte,
                false,
                false,
                Want::EndAttempt { retryable: true },
            ),
            (Idle, false, false, Want::EndAttempt { retryable: true }),
            (Idle, false, true, Want::EndAttempt { retryable: false }),
            (Idle, true, true, Want::EndBody),
            (Idle, true, false, Want::EndBody),
            (Total, false, false, Want::StopRun),
            (Total, false, true, Want::StopRun),
            (Total, true, true, Want::EndBody),
        ] {
            let got = match which.expired(300, complete, events) {
                Interruption::EndBody => Want::EndBody,
                Interruption::EndAttempt(e) => {
                    assert_eq!(e, which.error(300, events));
                    Want::EndAttempt {
                        retryable: e.retryable(),
                    }
                }
                Interruption::StopRun(e) => {
                    assert!(!e.retryable());
                    assert_eq!(e.events_emitted(), events);
                    Want::StopRun
                }
            };
            assert_eq!(got, want, "{which:?} complete={complete} events={events}");
        }
    }

    #[test]
    fn a_broken_connection_or_an_abort_interrupts_the_body() {
        let lost = Error::connection_lost("reset", true);
        assert_eq!(Interruption::of(lost.clone(), true), Interruption::EndBody);
        assert_eq!(
            Interruption::of(lost.clone(), false),
            Interruption::EndAttempt(lost.clone())
        );
        assert_eq!(Interruption::of(lost.clone(), false).error(), Some(&lost));
        // An abort stops the request even after the terminal frame.
        let abort = Error::aborted(Some("bye"), true);
        for complete in [false, true] {
            assert_eq!(
                Interruption::of(abort.clone(), complete),
                Interruption::StopRun(abort.clone())
            );
        }
        assert_eq!(Interruption::EndBody.error(), None);
    }

    /// The errors a driver makes: their codes, messages and flags, as both
    /// drivers report them (their JS classes: `shell/error_info.rs`).
    #[test]
    fn transport_errors_are_classified_once() {
        for (error, code, retryable, events, message) in [
            (
                Error::unreachable("https://user@api.test:8443/v1/x?k", "fetch failed"),
                "network",
                true,
                false,
                "could not reach api.test:8443: fetch failed",
            ),
            (
                Error::connection_lost("reset", false),
                "network",
                true,
                false,
                "the connection broke while reading the response: reset",
            ),
            (
                Error::connection_lost("reset", true),
                "network",
                false,
                true,
                "the connection broke while reading the response: reset",
            ),
            (
                Timeout::FirstByte.error(50, false),
                "timeout",
                true,
                false,
                "first byte timeout: no response within 50 ms",
            ),
            (
                Timeout::Idle.error(100, true),
                "timeout",
                false,
                true,
                "idle timeout: no data between chunks within 100 ms",
            ),
            (
                Timeout::Total.error(600_000, false),
                "timeout",
                false,
                false,
                "total timeout: no complete response within 600000 ms",
            ),
            (
                Error::aborted(Some("user left"), true),
                "abort",
                false,
                true,
                "request aborted: user left",
            ),
            (
                Error::aborted(Some(""), false),
                "abort",
                false,
                false,
                "request aborted",
            ),
        ] {
            assert_eq!(error.code(), code, "{message}");
            assert_eq!(error.retryable(), retryable, "{message}");
            assert_eq!(error.events_emitted(), events, "{message}");
            assert_eq!(error.to_string(), message);
            assert_eq!(error.partial(), None);
            // A driver keeps what was assembled, once.
            let kept = error.with_partial(*partial("so far"));
            assert_eq!(kept.partial().map(|r| r.text.as_str()), Some("so far"));
            let again = kept.clone().with_partial(*partial("other"));
            assert_eq!(again, kept);
        }
        // Errors with a partial of their own keep it.
        let ended = Error::StreamEndedEarly {
            events_emitted: true,
            partial: partial("mine"),
        };
        assert_eq!(ended.clone().with_partial(*partial("x")), ended);
        for t in Timeout::ALL {
            assert_eq!(Timeout::from_name(t.name()), Some(t));
        }
        assert_eq!(Timeout::from_name("first byte"), None);
    }

    #[test]
    fn scrubbing_replaces_every_occurrence_of_a_long_enough_secret() {
        for (text, secret, want) in [
            ("key sk-1234 echoed", "sk-1234", "key [redacted] echoed"),
            ("sk-1sk-1sk-1", "sk-1", "[redacted][redacted][redacted]"),
            ("aaaaa", "aaaa", "[redacted]a"),
            ("no key here", "sk-1234", "no key here"),
            ("abc abc", "abc", "abc abc"),
            ("", "", ""),
            ("ÿÿÿÿ", "ÿÿÿÿ", "[redacted]"),
        ] {
            assert_eq!(scrub(text, secret), want, "{text:?} {secret:?}");
        }
        assert!(matches!(scrub("no key", "sk-1234"), Cow::Borrowed(_)));
    }

    // The scan does what `str::replace` does, on any text: keys made of
    // few characters (of 1 to 4 bytes), so that they occur, overlap and
    // abut.
    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn scrubbing_is_replacing_every_occurrence(
            text in "[ab\u{e9}\u{1F600}-]{0,40}",
            secret in "[ab\u{e9}\u{1F600}]{4,6}",
        ) {
            proptest::prop_assert_eq!(scrub(&text, &secret), text.replace(&secret, REDACTED));
        }
    }

    /// After `Error::scrub`, the key is in neither `Display` nor `Debug`,
    /// whichever field the server echoed it into.
    #[test]
    fn a_scrubbed_error_shows_the_key_nowhere() {
        const KEY: &str = "sk-live-SECRET";
        let echoed = format!("bad key {KEY}");
        let mut response = *partial(&echoed);
        response.message.parts.push(crate::model::Part::Text {
            text: echoed.clone(),
            provider_data: None,
        });
        response.raw_finish_reason = Some(KEY.into());
        let mut with_key = ApiError {
            kind: ApiErrorKind::Authentication,
            status: Some(401),
            provider_type: Some(echoed.clone()),
            code: Some(echoed.clone()),
            param: Some(echoed.clone()),
            message: echoed.clone(),
            request_id: Some(echoed.clone()),
            retry_after_ms: None,
            in_band: true,
            events_emitted: true,
            body: Some(format!("{{\"error\":\"{KEY}\"}}")),
            partial: Some(Box::new(response.clone())),
        };
        let errors = [
            Error::Api(Box::new(with_key.clone())),
            Error::invalid_request(echoed.clone(), echoed.clone()),
            Error::ContentFilter {
                reason: echoed.clone(),
                message: echoed.clone(),
                events_emitted: true,
                partial: Box::new(response.clone()),
            },
            Error::StreamEndedEarly {
                events_emitted: true,
                partial: Box::new(response.clone()),
            },
            Error::MalformedStream {
                message: echoed.clone(),
                events_emitted: true,
                partial: Box::new(response.clone()),
            },
            Error::invalid_response(echoed.clone()),
            Error::unreachable(&format!("https://h/{KEY}"), &echoed),
            Error::connection_lost(&echoed, true).with_partial(response.clone()),
            Timeout::Idle.error(1, true).with_partial(response.clone()),
            Error::aborted(Some(&echoed), true).with_partial(response.clone()),
        ];
        for mut e in errors {
            let before = format!("{e} {e:?}");
            assert!(before.contains(KEY), "the case shows the key: {before}");
            e.scrub(KEY);
            let after = format!("{e} {e:?}");
            assert!(!after.contains(KEY), "{after}");
            assert!(after.contains(REDACTED), "{after}");
            if let Some(p) = e.partial() {
                assert_eq!(p.text, format!("bad key {REDACTED}"));
            }
        }
        // Too short a secret changes nothing.
        with_key.message = "abc".into();
        let mut short = Error::Api(Box::new(with_key));
        let copy = short.clone();
        short.scrub("abc");
        assert_eq!(short, copy);
    }

    /// Every string a response can hold is scrubbed in place, as its JSON
    /// form would be: each part kind, provider data (keys too), the calls,
    /// the usage's raw counts and the failed attempts.
    #[test]
    fn a_response_is_scrubbed_in_every_field() {
        use crate::model::Part;
        const KEY: &str = "sk-live-SECRET";
        let k = |s: &str| format!("{s} {KEY}");
        let data = || {
            let mut m = serde_json::Map::new();
            m.insert(k("key"), serde_json::json!({ "v": [k("deep")] }));
            Some(m)
        };
        let response: Response = serde_json::from_value(serde_json::json!({
            "id": k("id"), "model": k("model"), "text": k("text"), "reasoning": k("r"),
            "refusal": k("refusal"), "rawFinishReason": k("raw"), "provider": k("p"),
            "finishReason": "stop",
            "message": { "role": "assistant", "parts": [] },
            "toolCalls": [{ "id": k("c"), "name": k("n"), "arguments": k("a") }],
            "incompleteToolCalls": [{ "id": k("c"), "name": k("n"), "arguments": k("a"), "reason": k("why") }],
            "usage": { "input": 1, "raw": { "note": k("u") } },
            "attempts": [{ "provider": k("p"), "model": k("m"),
                "error": { "code": k("code"), "status": 500, "message": k("msg") } }],
        }))
        .unwrap();
        let mut response = response;
        response.message.parts = vec![
            Part::Text {
                text: k("t"),
                provider_data: data(),
            },
            Part::Image {
                url: Some(k("u")),
                data: Some(k("d")),
                media_type: Some(k("m")),
                provider_data: data(),
            },
            Part::File {
                url: Some(k("u")),
                data: Some(k("d")),
                media_type: k("m"),
                filename: Some(k("f")),
                provider_data: data(),
            },
            Part::ToolCall {
                id: k("i"),
                name: k("n"),
                arguments: k("a"),
                provider_data: data(),
            },
            Part::ToolResult {
                call_id: k("i"),
                content: k("c"),
                is_error: true,
                provider_data: data(),
            },
            Part::Reasoning {
                text: k("t"),
                signature: Some(k("s")),
                redacted: Some(k("r")),
                provider_data: data(),
            },
            Part::Provider {
                provider: k("p"),
                data: serde_json::json!({ k("x"): [k("y"), 1] }),
            },
            Part::Cache {
                ttl: Some(k("ttl")),
            },
        ];
        let before = serde_json::to_value(&response).unwrap();
        let strings = before.to_string().matches(KEY).count();
        assert!(strings > 40, "{before}");
        // The oracle: every string of the JSON form scrubbed.
        let mut want = before.clone();
        scrub_value(&mut want, KEY);
        scrub_response(&mut response, KEY);
        let got = serde_json::to_value(&response).unwrap();
        assert_eq!(got, want);
        assert!(!got.to_string().contains(KEY));
        assert_eq!(got.to_string().matches(REDACTED).count(), strings);
    }
}
