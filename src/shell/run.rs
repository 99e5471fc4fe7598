//! [`RunMachine`] as the JS half drives it: strings and numbers in, a step
//! code out, and the step's text through [`BoundaryRun::take_output`]. The
//! body's chunks go in through a buffer in the module's memory, as for the
//! stream decoder (`shell/wasm.rs`), so the pull loop costs one call per
//! chunk, as decoding alone does.

use super::boundary::Writer;
use super::response_text;
use super::Options;
use super::{config_and_request, error_json_with, http_text, provider_named};
use crate::error::{Error, Timeout};
use crate::json::read::parse;
use crate::model::from_json::string_pairs;
use crate::model::{Request, Response, StreamEvent};
use crate::providers::Provider;
use crate::retry::RetryPolicy;
use crate::run::{Cancel, RunMachine, Step, Timers};

/// Step codes ([`Step`]): the JS half's `STEP` table (`shell/js/run.js`)
/// holds the same numbers.
pub(crate) const READ: u32 = 0;
pub(crate) const SEND: u32 = 1;
pub(crate) const TAKE: u32 = 2;
pub(crate) const WAIT: u32 = 3;
pub(crate) const DELIVER: u32 = 4;
pub(crate) const DONE: u32 = 5;
pub(crate) const FAIL: u32 = 6;

/// What to cancel ([`Cancel`]): the JS half's `CANCEL` table holds the
/// same numbers.
pub(crate) const CANCEL_NOTHING: u32 = 0;
pub(crate) const CANCEL_BODY: u32 = 1;
pub(crate) const CANCEL_ATTEMPT: u32 = 2;
pub(crate) const CANCEL_RUN: u32 = 3;

/// What a driver tells a machine through its one `input` export, beside a
/// cause for the last three: the JS half's `INPUT` table holds the same
/// numbers. (One export for six: each costs its wrapper in the wasm and
/// its glue in JS.)
pub(crate) const IN_ENDED: u32 = 0;
pub(crate) const IN_DELIVERED: u32 = 1;
pub(crate) const IN_WAITED: u32 = 2;
// (Embeddings' alone: a build without them has no use for it.)
#[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
pub(crate) const IN_NEXT: u32 = 3;
pub(crate) const IN_UNREACHABLE: u32 = 4;
pub(crate) const IN_LOST: u32 = 5;
// (Only a build with an adapter that loads credentials or tokens uses it.)
#[cfg_attr(
    not(any(feature = "gemini", feature = "anthropic", feature = "bedrock")),
    allow(dead_code)
)]
pub(crate) const IN_UNSIGNED: u32 = 6;

/// The error of an input code no machine takes.
pub(crate) fn no_such_input(what: u32) -> Error {
    Error::invalid_request("driver", format!("no input {what}"))
}

/// A request's retries and timers as the JS half gives them: milliseconds
/// (0: none), and the seed of the backoff's jitter.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_retries: u32,
    pub total: f64,
    pub first_byte: f64,
    pub idle: f64,
    pub seed: f64,
}

/// One request for the JS half.
#[derive(Debug)]
pub struct BoundaryRun {
    /// `Err`: the options or the request could not be read; `start` fails
    /// with it, before anything is sent.
    machine: Result<RunMachine, Option<Error>>,
    label: &'static str,
    stream: bool,
    writer: Option<Writer>,
    out: Vec<StreamEvent>,
    input: Vec<u8>,
    output: String,
    delay: u64,
    /// The timer of the step being carried out.
    timer: Option<Timeout>,
    /// A stream's response, once done, for a tool loop to take.
    response: Option<Response>,
}

impl Limits {
    /// The timers these limits set.
    pub(crate) fn timers(&self) -> Timers {
        Timers::new(limit(self.total), limit(self.first_byte), limit(self.idle))
    }

    /// The retry policy with these retries.
    pub(crate) fn retry(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            ..RetryPolicy::default()
        }
    }
}

/// A response's headers and the driver's clock as JS gives them:
/// `[[name, value], ...]` (none when unreadable) and milliseconds since the
/// epoch (0 when not a positive number).
pub(crate) fn answered(headers_json: &str, now_ms: f64) -> (Vec<(String, String)>, u64) {
    let headers = parse(headers_json).map_or_else(|_| Vec::new(), string_pairs);
    let now = if now_ms.is_finite() && now_ms > 0.0 {
        now_ms as u64
    } else {
        0
    };
    (headers, now)
}

/// A limit in milliseconds from JS: a positive number, else none.
pub(crate) fn limit(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms >= 1.0).then_some(ms as u64)
}

impl BoundaryRun {
    /// A request to send: `config_json` and `request_json` as for
    /// [`super::encode`]; `total`, `first_byte`, `idle` in milliseconds
    /// (0: none); `seed` for the backoff's jitter.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config_json: &str,
        request_json: &str,
        stream: bool,
        max_retries: u32,
        total: f64,
        first_byte: f64,
        idle: f64,
        seed: f64,
    ) -> Self {
        let (label, input) = config_and_request(config_json, request_json);
        let limits = Limits {
            max_retries,
            total,
            first_byte,
            idle,
            seed,
        };
        Self::of(input, label, stream, &limits).response_in_finish_event()
    }

    /// A request already read (a tool loop's step), or why it could not be.
    pub(crate) fn of(
        input: Result<(Options, Request), Error>,
        label: &'static str,
        stream: bool,
        limits: &Limits,
    ) -> Self {
        let (timers, retry) = (limits.timers(), limits.retry());
        let provider = input.as_ref().ok().and_then(|(o, _)| o.config.provider);
        let machine = input.map_err(Some).map(|(o, request)| {
            let seed = limits.seed as u64;
            let mut m = RunMachine::new(o.config, request, stream, retry, timers, seed)
                .with_fallback(o.fallback);
            // JS rebuilds each progress event's `partial` from its edits.
            m.keep_edits();
            m
        });
        Self::with(machine, label, stream, provider)
    }

    /// A streamed body the caller has, for `provider`.
    pub fn given(provider: &str, total: f64, idle: f64) -> Self {
        let timers = Timers::new(limit(total), None, limit(idle));
        let p = provider_named(provider);
        let provider = p.as_ref().ok().copied();
        let machine = p.map(|p| RunMachine::given(p, timers)).map_err(Some);
        let label = provider.map_or("unknown", Provider::name);
        Self::with(machine, label, true, provider).response_in_finish_event()
    }

    /// A stream's response goes out in its `finish` event alone (JS derives
    /// its `text` and `reasoning`): not for a tool loop's step, whose
    /// response the loop takes ([`Self::take_response`]).
    fn response_in_finish_event(mut self) -> Self {
        if let Ok(m) = &mut self.machine {
            m.response_in_finish_event();
        }
        self
    }

    fn with(
        machine: Result<RunMachine, Option<Error>>,
        label: &'static str,
        stream: bool,
        provider: Option<Provider>,
    ) -> Self {
        BoundaryRun {
            machine,
            label,
            stream,
            writer: provider.map(|p| Writer::new(p).keeping_apart()),
            out: Vec::new(),
            input: Vec::new(),
            output: String::new(),
            delay: 0,
            timer: None,
            response: None,
        }
    }

    /// Runs `f` on the machine and turns its step into a code; before a
    /// machine could be made, every call fails with why.
    fn on(&mut self, f: impl FnOnce(&mut RunMachine, &mut Vec<StreamEvent>) -> Step) -> u32 {
        self.out.clear();
        let step = match &mut self.machine {
            Ok(m) => f(m, &mut self.out),
            Err(e) => Step::Fail(e.take().unwrap_or_else(|| {
                Error::invalid_request("driver", "the request has already failed")
            })),
        };
        self.code(step)
    }

    fn code(&mut self, step: Step) -> u32 {
        self.delay = 0;
        self.timer = match &self.machine {
            Ok(m) => m.timer(&step).map(|(which, _)| which),
            Err(_) => None,
        };
        // A fallback chain's errors are named for the provider being tried.
        if let (Ok(m), Some(w)) = (&self.machine, &mut self.writer) {
            if let Some(p) = m.provider() {
                self.label = p.name();
                w.provider = p.name();
            }
        }
        match step {
            Step::Read => READ,
            Step::Send(http) => {
                self.output = http_text(&http);
                SEND
            }
            Step::Take => TAKE,
            Step::Wait(ms) => {
                self.delay = ms;
                WAIT
            }
            Step::Deliver => {
                let (Ok(m), Some(w)) = (&mut self.machine, &mut self.writer) else {
                    return FAIL;
                };
                std::mem::swap(&mut w.events, &mut self.out);
                w.edits = m.take_edits();
                self.output = w.result(m.ending(), m.events_emitted());
                DELIVER
            }
            Step::Done(response) => {
                // A stream's response went out with its `finish` event.
                if self.stream {
                    self.response = Some(*response);
                } else {
                    self.output = response_text(&response);
                }
                DONE
            }
            Step::Fail(e) => {
                // (Only for an error that keeps none of its own: a copy less.)
                let partial = (self.machine.as_ref().ok())
                    .filter(|_| e.partial().is_none())
                    .and_then(RunMachine::partial);
                let failed = self
                    .machine
                    .as_ref()
                    .map_or(&[][..], |m| m.failed_attempts());
                self.output = error_json_with(&e, self.label, partial, failed);
                FAIL
            }
        }
    }

    /// [`RunMachine::start`]; with `check`, [`RunMachine::check_for_token`]
    /// instead, before the first callback or token exchange: `FAIL` (its
    /// error in `takeOutput`: nothing is to be sent, nothing asked), else
    /// `TAKE` (go on). (The entries' options were checked when the client
    /// was made. Only a build with Vertex's adapters or Bedrock has the
    /// check; the JS asks for it only there, with credentials to load.)
    pub fn start(&mut self, check: bool) -> u32 {
        self.on(|m, _| match check {
            #[cfg(any(feature = "gemini", feature = "anthropic", feature = "bedrock"))]
            true => m.check_for_token().map_or_else(Step::Fail, |()| Step::Take),
            _ => m.start(),
        })
    }

    /// [`RunMachine::set_credentials`]: entry `entry`'s fresh AWS
    /// credentials, `{accessKeyId, secretAccessKey, sessionToken?}`.
    /// Whether they were read (the JS half checks them first; a build
    /// without bedrock reads none).
    pub fn credentials(&mut self, entry: u32, json: &str) -> bool {
        #[cfg(feature = "bedrock")]
        {
            let at = crate::model::from_json::At::Root("credentials");
            let read = parse(json)
                .ok()
                .and_then(|v| super::aws_credentials(v, &at).ok());
            if let (Some(Some(c)), Ok(m)) = (read, &mut self.machine) {
                m.set_credentials(entry as usize, c);
                return true;
            }
        }
        let _ = (entry, json);
        false
    }

    /// [`RunMachine::set_access_token`]: entry `entry`'s fresh OAuth
    /// access token (Vertex AI), before `start` and `waited`.
    #[cfg(any(feature = "gemini", feature = "anthropic"))]
    pub fn access_token(&mut self, entry: u32, token: &str) {
        if let Ok(m) = &mut self.machine {
            m.set_access_token(entry as usize, token.to_string());
        }
    }

    /// [`RunMachine::entry`]: the entry of the chain whose credentials or
    /// token to load before `start` and `waited`; `-1 - entry` when the
    /// provider refused its token or credentials
    /// ([`RunMachine::stale_token`]): renew them. (One export for both.)
    #[cfg(any(feature = "gemini", feature = "anthropic", feature = "bedrock"))]
    pub fn entry(&self) -> i32 {
        self.machine.as_ref().map_or(0, |m| {
            let at = m.entry() as i32;
            if m.stale_token() == Some(m.entry()) {
                -1 - at
            } else {
                at
            }
        })
    }

    /// [`RunMachine::at`]: the driver's clock, before `start` and
    /// `waited` (an attempt signed with AWS credentials is signed at it).
    pub fn at(&mut self, now_ms: f64) {
        if let Ok(m) = &mut self.machine {
            m.at(now_ms as u64);
        }
    }

    /// [`RunMachine::responded`]: `headers_json` is `[[name, value], ...]`,
    /// `now_ms` the driver's clock.
    pub fn responded(&mut self, status: u16, headers_json: &str, now_ms: f64) -> u32 {
        let (headers, now) = answered(headers_json, now_ms);
        self.on(|m, _| m.responded(status, headers, now))
    }

    /// [`RunMachine::unsigned`]: what the entry being tried needs could
    /// not be loaded, with `cause` the error's message when it is one the
    /// core marked retryable (the token endpoint unreachable, its 429 or
    /// 5xx: retried, then the next provider, as a connection error), else
    /// empty (a callback's error, a refused key: the JS half reports that
    /// error itself, with the attempts of a `FAIL`; the machine decides
    /// only whether the request goes on).
    #[cfg(any(feature = "gemini", feature = "anthropic", feature = "bedrock"))]
    fn unsigned(&mut self, cause: &str) -> u32 {
        let e = match cause {
            "" => Error::invalid_request("credentials", "could not be loaded"),
            _ => Error::Connection {
                message: cause.to_string(),
                events_emitted: false,
                partial: None,
            },
        };
        self.on(|m, _| m.unsigned(e))
    }

    /// [`RunMachine::unreachable`].
    pub fn unreachable(&mut self, cause: &str) -> u32 {
        self.on(|m, _| m.unreachable(cause))
    }

    /// The address of a buffer of at least `len` bytes in the module's
    /// memory, for the next chunk; it stays put until a larger one is
    /// asked for.
    pub fn input_buffer(&mut self, len: usize) -> usize {
        if self.input.len() < len {
            self.input.resize(len, 0);
        }
        self.input.as_mut_ptr() as usize
    }

    /// [`RunMachine::feed`] with the first `len` bytes of the input buffer.
    pub fn feed_input(&mut self, len: usize) -> u32 {
        let input = std::mem::take(&mut self.input);
        let chunk = input.get(..len).unwrap_or(&input);
        let code = self.on(|m, out| m.feed(chunk, out));
        self.input = input;
        code
    }

    /// [`Self::feed_input`] with `chunk` (native tests: no copy into the
    /// module's memory to make).
    #[cfg(all(test, feature = "openai"))]
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> u32 {
        self.input.clear();
        self.input.extend_from_slice(chunk);
        self.feed_input(chunk.len())
    }

    /// An input (`IN_*`): the body ended, the events were delivered, the
    /// wait is over, the request could not be sent (`cause`), reading the
    /// body failed (`cause`).
    pub fn input(&mut self, what: u32, cause: &str) -> u32 {
        match what {
            IN_ENDED => self.ended(),
            IN_DELIVERED => self.delivered(),
            IN_WAITED => self.waited(),
            IN_UNREACHABLE => self.unreachable(cause),
            IN_LOST => self.lost(cause),
            #[cfg(any(feature = "gemini", feature = "anthropic", feature = "bedrock"))]
            IN_UNSIGNED => self.unsigned(cause),
            _ => self.on(|_, _| Step::Fail(no_such_input(what))),
        }
    }

    /// [`RunMachine::ended`].
    pub fn ended(&mut self) -> u32 {
        self.on(RunMachine::ended)
    }

    /// [`RunMachine::lost`].
    pub fn lost(&mut self, cause: &str) -> u32 {
        self.on(|m, out| m.lost(cause, out))
    }

    /// [`RunMachine::delivered`].
    pub fn delivered(&mut self) -> u32 {
        self.on(|m, _| m.delivered())
    }

    /// [`RunMachine::waited`].
    pub fn waited(&mut self) -> u32 {
        self.on(|m, _| m.waited())
    }

    /// A timer fired: the total one (`total`), else the one of the step
    /// being carried out. What to cancel: nothing, the body's reader (the
    /// body ends there), the attempt, or everything ([`Self::stopped`]).
    pub fn expired(&mut self, total: bool) -> u32 {
        let which = if total {
            Some(Timeout::Total)
        } else {
            self.timer
        };
        match (&mut self.machine, which) {
            (Ok(m), Some(which)) => cancel_code(m.expired(which)),
            _ => CANCEL_NOTHING,
        }
    }

    /// The caller aborted for `reason` (empty: none); what to cancel, as
    /// for [`Self::expired`].
    pub fn abort(&mut self, reason: &str) -> u32 {
        match &mut self.machine {
            Ok(m) => cancel_code(m.abort(Some(reason))),
            Err(_) => CANCEL_NOTHING,
        }
    }

    /// The timer of the step being carried out, in milliseconds (0: none):
    /// for a [`WAIT`], the wait; with `total`, the total timeout's.
    pub fn timer_ms(&self, total: bool) -> f64 {
        match (&self.machine, self.timer) {
            (Ok(m), _) if total => m.timers().total_ms.unwrap_or(0) as f64,
            (Ok(m), Some(which)) => m.timers().get(which).unwrap_or(0) as f64,
            _ => self.delay as f64,
        }
    }

    /// The error that stopped the request (`{"error": ...}`), or `""`.
    pub fn stopped(&self) -> String {
        match &self.machine {
            Ok(m) => m.stopped().map_or_else(String::new, |e| {
                error_json_with(&e, self.label, None, m.failed_attempts())
            }),
            Err(_) => String::new(),
        }
    }

    /// A streamed request's response, once it is done (a tool loop's step).
    pub(crate) fn take_response(&mut self) -> Option<Response> {
        self.response.take()
    }

    /// The text of the last step: the request to send, the events to hand
    /// out, the response, or the error.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }

    /// The next string the last events' result kept apart (its length
    /// written `-1`: one over 64 KiB), given to `f`, in order; `None` when
    /// there is none left.
    pub fn take_apart_with<R>(&mut self, f: impl FnOnce(&str) -> R) -> Option<R> {
        let big = self.writer.as_mut()?.take_apart()?;
        Some(f(big.as_str()))
    }
}

pub(crate) fn cancel_code(c: Cancel) -> u32 {
    match c {
        Cancel::Nothing => CANCEL_NOTHING,
        Cancel::Body => CANCEL_BODY,
        Cancel::Attempt => CANCEL_ATTEMPT,
        Cancel::Run => CANCEL_RUN,
    }
}
