//! Fallback across providers: which failures hand a request to the next
//! provider of a chain ([`switches`]), and how a provider that failed is
//! reported ([`failed_attempt`]). The chain itself, and the switch, are the
//! run machine's (`run/chain.rs`); the rule is here, in one copy, beside
//! the retry policy it follows: a provider's own retries come first, and
//! nothing switches once an event was handed out.

use crate::error::{Error, Timeout};
use crate::model::{AttemptError, FailedAttempt};
use crate::policy::scrub_in;

/// Whether a request that failed with `error`, its retries used up, goes
/// on to the next provider of a chain. Only a failure that says "this
/// provider, now" does, and only while no event was handed out:
///
/// - a rate limit (429), an overload (529, or in-band) or a server error
///   (5xx, or in-band);
/// - a connection that could not be made or broke, a body that ended
///   before its first event, and a first-byte or idle timeout;
/// - an error the provider sent with one of the statuses of `also` (the
///   caller's `fallbackOn`: 400, 401, 403, 404, ...).
///
/// Never an abort, the total timeout (it covers the whole chain), a bad
/// request, a content filter or a malformed stream.
///
/// ```
/// use skyl::{fallback_switches, Error, Timeout};
///
/// assert!(fallback_switches(&Timeout::FirstByte.error(5_000, false), &[]));
/// assert!(!fallback_switches(&Timeout::Total.error(60_000, false), &[]));
/// assert!(!fallback_switches(&Error::aborted(None, false), &[]));
/// ```
pub fn switches(error: &Error, also: &[u16]) -> bool {
    if error.events_emitted() {
        return false;
    }
    match error {
        Error::Api(e) => {
            use crate::error::ApiErrorKind::*;
            matches!(e.kind, RateLimit | Overloaded | Server)
                || e.status.is_some_and(|s| also.contains(&s))
        }
        Error::Connection { .. } | Error::StreamEndedEarly { .. } => true,
        Error::Timeout { which, .. } => matches!(which, Timeout::FirstByte | Timeout::Idle),
        _ => false,
    }
}

/// What a [`FailedAttempt`] says of `error`, the failure of `provider`
/// (asked for `model`): its code, status and message, with every one of
/// `secrets` (the keys of the whole chain) scrubbed out of the message.
pub(crate) fn failed_attempt(
    provider: &str,
    model: Option<&str>,
    error: &Error,
    secrets: &[&str],
) -> FailedAttempt {
    let mut message = error.to_string();
    for secret in secrets {
        scrub_in(&mut message, secret);
    }
    let status = match error {
        Error::Api(e) => e.status,
        _ => None,
    };
    FailedAttempt {
        provider: provider.to_owned(),
        model: model.map(str::to_owned),
        error: AttemptError {
            code: error.code().to_owned(),
            status,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, ApiErrorKind};

    fn api(status: u16, events_emitted: bool) -> Error {
        Error::Api(Box::new(ApiError {
            kind: ApiErrorKind::from_status(status),
            status: Some(status),
            provider_type: None,
            code: None,
            param: None,
            message: "m".into(),
            request_id: None,
            retry_after_ms: None,
            in_band: events_emitted,
            events_emitted,
            body: None,
            partial: None,
        }))
    }

    /// Every kind of failure, and whether it switches: the rule both
    /// drivers follow through the run machine.
    #[test]
    fn which_failures_switch_to_the_next_provider() {
        let ended = |events_emitted| Error::StreamEndedEarly {
            events_emitted,
            partial: Box::default(),
        };
        for (name, error, switches_by_default) in [
            ("429", api(429, false), true),
            ("500", api(500, false), true),
            ("503", api(503, false), true),
            ("529", api(529, false), true),
            ("in-band overloaded after events", api(529, true), false),
            ("400", api(400, false), false),
            ("401", api(401, false), false),
            ("403", api(403, false), false),
            ("404", api(404, false), false),
            ("409", api(409, false), false),
            (
                "unreachable",
                Error::unreachable("http://h", "refused"),
                true,
            ),
            (
                "lost before events",
                Error::connection_lost("x", false),
                true,
            ),
            (
                "lost after events",
                Error::connection_lost("x", true),
                false,
            ),
            ("ended before events", ended(false), true),
            ("ended after events", ended(true), false),
            ("first byte", Timeout::FirstByte.error(1, false), true),
            ("idle before events", Timeout::Idle.error(1, false), true),
            ("idle after events", Timeout::Idle.error(1, true), false),
            ("total", Timeout::Total.error(1, false), false),
            ("aborted", Error::aborted(None, false), false),
            ("invalid request", Error::invalid_request("p", "m"), false),
            ("invalid response", Error::invalid_response("m"), false),
            ("too large", Error::event_too_large(1), false),
        ] {
            assert_eq!(switches(&error, &[]), switches_by_default, "{name}");
        }
        // `fallbackOn` adds statuses the provider sent, never after events.
        let also = [400, 401, 403, 404];
        for status in also {
            assert!(switches(&api(status, false), &also), "{status}");
            assert!(!switches(&api(status, false), &[401]) || status == 401);
        }
        assert!(!switches(&api(409, false), &also));
        assert!(!switches(&api(400, true), &also));
        assert!(!switches(&Error::aborted(None, false), &also));
    }

    #[test]
    fn a_failed_attempt_names_the_error_without_any_key_of_the_chain() {
        let mut e = api(529, false);
        if let Error::Api(a) = &mut e {
            a.message = "overloaded; key sk-first-1234 and sk-second-5678".into();
        }
        let a = failed_attempt(
            "anthropic",
            Some("claude"),
            &e,
            &["sk-first-1234", "sk-second-5678", "ab"],
        );
        assert_eq!(a.provider, "anthropic");
        assert_eq!(a.model.as_deref(), Some("claude"));
        assert_eq!(a.error.code, "overloaded");
        assert_eq!(a.error.status, Some(529));
        assert!(!a.error.message.contains("sk-"), "{}", a.error.message);
        assert!(a.error.message.contains("[redacted] and [redacted]"));
        let t = failed_attempt("openai", None, &Timeout::FirstByte.error(9, false), &[]);
        assert_eq!((t.error.code.as_str(), t.error.status), ("timeout", None));
        assert_eq!(t.model, None);
    }
}
