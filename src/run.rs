//! One request from start to end, as a sans-IO state machine: [`RunMachine`].

use crate::accumulate::Progress;
use crate::error::{Error, Timeout};
use crate::http::request_id;
use crate::json::partial::Edit;
use crate::model::{Request, Response, StreamEvent};
use crate::policy::{Attempts, Interruption};
use crate::providers::{decode_error_at, decode_response, ClientConfig, Provider};
use crate::retry::RetryPolicy;
use crate::stream::StreamDecoder;

mod chain;
mod credentials;
mod types;
mod view;
#[cfg(all(feature = "web", target_arch = "wasm32"))]
pub(crate) use chain::secrets_of;
use chain::Chain;
pub use chain::Fallback;
use types::Phase;
pub use types::{Cancel, Step, Timers};

/// What is sent: a request encoded for each attempt, or a response the
/// driver was given.
#[derive(Debug)]
enum Source {
    Encode {
        chain: Box<Chain>,
        request: Box<Request>,
    },
    Given,
}

/// One request from start to end, as a sans-IO state machine.
///
/// A driver (the npm package's JS half, `skyl::web`, or a native program
/// with any HTTP client) does the I/O: it sends, reads, keeps the timers and
/// cancels. After each thing it did, it tells the machine what happened and
/// gets the next [`Step`]. The machine holds every decision of the request:
///
/// - the attempts, each with a request encoded anew, the header rules
///   included ([`crate::encode_request`]), signed with the entry's AWS
///   credentials at the driver's clock ([`RunMachine::at`]) or carrying
///   its latest access token ([`RunMachine::set_access_token`]);
/// - which timer runs during which step ([`RunMachine::timer`]) and what
///   each one ends when it fires ([`RunMachine::expired`]): the body (the
///   stream was already complete), the attempt, or the whole request;
/// - the typed error of every failure, with its request id and what had
///   been received;
/// - whether and how long to wait before the next attempt
///   ([`crate::Attempts`]);
/// - the pull loop: read until a chunk completes an event, hand the events
///   out, and only then the end or the error that came with them; an error
///   before any event fails the attempt, which may be retried.
///
/// ```
/// use skyl::{ClientConfig, Message, Provider, Request, RetryPolicy, RunMachine, Step, Timers};
///
/// let config = ClientConfig::new(Provider::OpenAi).with_api_key("sk-test");
/// let request = Request {
///     model: Some("gpt-4o-mini".into()),
///     messages: vec![Message::user("Hi")],
///     ..Request::default()
/// };
/// let mut run = RunMachine::new(config, request, true, RetryPolicy::default(), Timers::default(), 7);
/// let Step::Send(http) = run.start() else { panic!() };
/// assert!(http.url.ends_with("/chat/completions"));
/// // The server answers 200: read the body.
/// assert!(matches!(run.responded(200, Vec::new(), 0), Step::Read));
/// let mut events = Vec::new();
/// let body = b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
/// assert!(matches!(run.feed(body, &mut events), Step::Deliver));
/// // Hand `events` out, then:
/// events.clear();
/// assert!(matches!(run.delivered(), Step::Read));
/// // The body ends.
/// match run.ended(&mut events) {
///     Step::Deliver => {}
///     other => panic!("{other:?}"),
/// }
/// let Step::Done(response) = run.delivered() else { panic!() };
/// assert_eq!(response.text, "Hi");
/// ```
///
#[derive(Debug)]
pub struct RunMachine {
    provider: Option<Provider>,
    source: Source,
    stream: bool,
    attempts: Attempts,
    timers: Timers,
    random: u64,
    phase: Phase,
    /// The current attempt's URL (for a transport error's message).
    url: String,
    status: u16,
    headers: Vec<(String, String)>,
    now_ms: u64,
    /// The driver's clock at the last [`Self::at`], for signing, and how
    /// far AWS's clock is from it when it refused a signature for it.
    clock_ms: Option<u64>,
    skew_ms: i64,
    request_id: Option<String>,
    /// A body read whole (a response, or an error response).
    body: Vec<u8>,
    decoder: Option<StreamDecoder>,
    /// The progress events the request asks for.
    progress: Progress,
    /// What a timer decided about the current attempt (its body ends, or
    /// the attempt does).
    cut: Option<Interruption>,
    /// The error that ends the whole request (an abort, the total timeout).
    stop: Option<Error>,
    /// The end that comes after the events being handed out.
    pending: Option<Result<Response, Error>>,
    /// A stream's response goes out in its `finish` event alone
    /// ([`Self::response_in_finish_event`]).
    response_in_event: bool,
}

impl RunMachine {
    /// A request sent by the driver: encoded (for `config.provider`) at
    /// each attempt, retried by `retry`, timed by `timers`. `seed` seeds
    /// the backoff's jitter (any value; a random one spreads clients out).
    pub fn new(
        config: ClientConfig,
        request: Request,
        stream: bool,
        retry: RetryPolicy,
        timers: Timers,
        seed: u64,
    ) -> Self {
        let provider = config.provider;
        let which = request.partial;
        let source = Source::Encode {
            chain: Box::new(Chain::new(config, retry)),
            request: Box::new(request),
        };
        let mut run = Self::with(provider, source, stream, retry, timers, seed);
        run.progress.which = which;
        run
    }

    /// Leaves the progress events' `partial` out and keeps their edits, for
    /// [`Self::take_edits`] (the JS boundary rebuilds the value from them).
    pub(crate) fn keep_edits(&mut self) {
        self.progress.edits = true;
    }

    /// Hands a stream's response out once, in its `finish` event, without
    /// the `text` and `reasoning` its parts make (the JS boundary derives
    /// them), so that a large text or file is not copied at the end;
    /// [`Step::Done`] then carries an empty response for a stream.
    pub(crate) fn response_in_finish_event(&mut self) {
        self.response_in_event = true;
    }

    /// The edits of the progress events handed out since the last call.
    pub(crate) fn take_edits(&mut self) -> Vec<Vec<Edit>> {
        self.decoder
            .as_mut()
            .map(StreamDecoder::take_edits)
            .unwrap_or_default()
    }

    /// A streamed body the driver already has (its own fetch, a cache), for
    /// `provider`: decoded once, never retried.
    pub fn given(provider: Provider, timers: Timers) -> Self {
        let retry = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        Self::with(Some(provider), Source::Given, true, retry, timers, 0)
    }

    fn with(
        provider: Option<Provider>,
        source: Source,
        stream: bool,
        retry: RetryPolicy,
        timers: Timers,
        seed: u64,
    ) -> Self {
        RunMachine {
            provider,
            source,
            stream,
            attempts: Attempts::new(retry),
            timers,
            random: seed,
            phase: Phase::Ready,
            url: String::new(),
            status: 0,
            headers: Vec::new(),
            now_ms: 0,
            clock_ms: None,
            skew_ms: 0,
            request_id: None,
            body: Vec::new(),
            decoder: None,
            progress: Progress::default(),
            cut: None,
            stop: None,
            pending: None,
            response_in_event: false,
        }
    }

    /// The driver's clock (ms since the Unix epoch), given before
    /// [`Self::start`] and [`Self::waited`]: an attempt with AWS
    /// credentials is signed at it ([`crate::sign_request`]), or fails.
    /// When AWS refuses a signature and its answer's `Date` is more than
    /// 5 minutes away, the later attempts are signed by AWS's time.
    pub fn at(&mut self, now_ms: u64) {
        self.clock_ms = Some(now_ms);
    }

    /// Starts the request: its first attempt.
    pub fn start(&mut self) -> Step {
        if self.phase != Phase::Ready {
            return self.misuse("start");
        }
        if let Err(e) = self.timers.check() {
            return self.fail(e);
        }
        // The first attempt's encoding checks the first provider (its
        // errors are the request's own); then the fallback entries.
        let step = self.attempt();
        if matches!(step, Step::Send(_)) {
            if let Err(e) = self.check_chain() {
                return self.fail(e);
            }
        }
        step
    }

    /// The attempt's response came, with its status and headers, at
    /// `now_ms` (the driver's clock, for a `retry-after` date; 0 if it has
    /// none, and a date is then not read).
    pub fn responded(&mut self, status: u16, headers: Vec<(String, String)>, now_ms: u64) -> Step {
        if self.phase != Phase::Sending {
            return self.misuse("responded");
        }
        if let Some(step) = self.cut_step() {
            return step;
        }
        self.request_id = request_id(&headers);
        self.body.clear();
        if (200..300).contains(&status) {
            self.phase = Phase::Reading;
            if self.stream {
                let (progress, limit) = (self.progress, self.max_event_bytes());
                self.decoder = (self.provider)
                    .map(|p| StreamDecoder::with_max_event_bytes(p, limit).with_progress(progress))
                    .map(|d| match self.response_in_event {
                        true => d.finished_in_event(),
                        false => d.finished_once(),
                    });
            }
        } else {
            self.phase = Phase::ReadingError;
            self.status = status;
            self.headers = headers;
            self.now_ms = now_ms;
        }
        Step::Read
    }

    /// The request could not be sent (the transport's `cause`), or the
    /// driver's cancelling of it ended the send.
    pub fn unreachable(&mut self, cause: &str) -> Step {
        if self.phase != Phase::Sending {
            return self.misuse("unreachable");
        }
        if let Some(step) = self.cut_step() {
            return step;
        }
        self.fail_attempt(Error::unreachable(&self.url, cause))
    }

    /// A chunk of the body came. A stream's events go to `out`: on
    /// [`Step::Deliver`], hand them out.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Step {
        if !matches!(self.phase, Phase::Reading | Phase::ReadingError) {
            return self.misuse("feed");
        }
        if let Some(step) = self.cut_step() {
            return step;
        }
        let Some(decoder) = self
            .decoder
            .as_mut()
            .filter(|_| self.phase == Phase::Reading)
        else {
            self.body.extend_from_slice(chunk);
            return Step::Read;
        };
        match decoder.feed(chunk, out) {
            Ok(()) if out.is_empty() => Step::Read,
            Ok(()) => self.deliver(None, out),
            Err(e) => self.outcome(Err(e), out),
        }
    }

    /// The body ended. A stream's last events go to `out`.
    pub fn ended(&mut self, out: &mut Vec<StreamEvent>) -> Step {
        match self.phase {
            Phase::Reading | Phase::ReadingError => {}
            _ => return self.misuse("ended"),
        }
        if let Some(step) = self.cut_step() {
            return step;
        }
        self.cut = None;
        if self.phase == Phase::ReadingError {
            let provider = self.provider.unwrap_or(Provider::OpenAi);
            let text = crate::sse::utf8(&self.body);
            let e = decode_error_at(provider, self.status, &self.headers, &text, self.now_ms);
            return self.fail_attempt(e);
        }
        if let Some(decoder) = &mut self.decoder {
            let end = decoder.finish(out);
            return self.outcome(end, out);
        }
        let Some(provider) = self.provider else {
            return self.misuse("ended");
        };
        match decode_response(provider, &crate::sse::utf8(&self.body)) {
            Ok(response) => self.done(response),
            Err(e) => {
                let e = self.with_request_id(e);
                self.fail_attempt(e)
            }
        }
    }

    /// Reading the body failed (the transport's `cause`), or the driver's
    /// cancelling of the reader ended it.
    pub fn lost(&mut self, cause: &str, out: &mut Vec<StreamEvent>) -> Step {
        match self.phase {
            // An error response's body is read as far as it can be.
            Phase::ReadingError if self.stop.is_none() && self.cut.is_none() => {
                return self.ended(out)
            }
            Phase::Reading | Phase::ReadingError => {}
            _ => return self.misuse("lost"),
        }
        if let Some(step) = self.cut_step() {
            return step;
        }
        let complete = self
            .decoder
            .as_ref()
            .is_some_and(StreamDecoder::is_complete);
        let lost = Error::connection_lost(cause, self.events_emitted());
        match Interruption::of(lost, complete) {
            Interruption::EndBody => self.ended(out),
            Interruption::EndAttempt(e) | Interruption::StopRun(e) => self.fail_attempt(e),
        }
    }

    /// The events of [`Step::Deliver`] have been handed out.
    pub fn delivered(&mut self) -> Step {
        if self.phase != Phase::Delivering {
            return self.misuse("delivered");
        }
        match self.pending.take() {
            Some(Ok(response)) => self.done(response),
            Some(Err(e)) => self.fail(e),
            None => match self.stop.clone() {
                Some(e) => self.fail(e),
                None => {
                    self.phase = Phase::Reading;
                    Step::Read
                }
            },
        }
    }

    /// The wait of [`Step::Wait`] is over (or was cancelled).
    pub fn waited(&mut self) -> Step {
        if self.phase != Phase::Waiting {
            return self.misuse("waited");
        }
        match self.stop.clone() {
            Some(e) => self.fail(e),
            None => self.attempt(),
        }
    }

    /// The timer `which` fired: what to cancel now. A timer that no longer
    /// runs (it fired as its step ended) cancels nothing.
    pub fn expired(&mut self, which: Timeout) -> Cancel {
        let live = match which {
            Timeout::Total => self.phase != Phase::Ended,
            Timeout::FirstByte => self.phase == Phase::Sending,
            Timeout::Idle => matches!(self.phase, Phase::Reading | Phase::ReadingError),
        };
        let Some(ms) = self
            .timers
            .get(which)
            .filter(|_| live && self.stop.is_none())
        else {
            return Cancel::Nothing;
        };
        let complete = self.phase != Phase::ReadingError
            && self
                .decoder
                .as_ref()
                .is_some_and(StreamDecoder::is_complete);
        match which.expired(ms, complete, self.events_emitted()) {
            Interruption::StopRun(e) => {
                self.stop = Some(e);
                Cancel::Run
            }
            cut => {
                let body = matches!(cut, Interruption::EndBody);
                self.cut.get_or_insert(cut);
                if body {
                    Cancel::Body
                } else {
                    Cancel::Attempt
                }
            }
        }
    }

    /// The caller aborted, for `reason`: the whole request ends (unless it
    /// is already over).
    pub fn abort(&mut self, reason: Option<&str>) -> Cancel {
        if self.phase == Phase::Ended || self.stop.is_some() {
            return Cancel::Nothing;
        }
        self.stop = Some(Error::aborted(reason, self.events_emitted()));
        Cancel::Run
    }

    // ------------------------------------------------------------ inside

    /// A new attempt: the request encoded anew.
    fn attempt(&mut self) -> Step {
        if let Some(e) = self.stop.clone() {
            return self.fail(e);
        }
        self.cut = None;
        self.decoder = None;
        self.request_id = None;
        self.pending = None;
        self.phase = Phase::Sending;
        match &mut self.source {
            Source::Given => Step::Take,
            Source::Encode { chain, request } => {
                let clock = (self.clock_ms).map(|ms| ms.saturating_add_signed(self.skew_ms));
                let at = chain.at;
                match chain.signed(request, self.stream, clock) {
                    Ok(http) => {
                        chain.note_left_out(request);
                        self.url.clone_from(&http.url);
                        Step::Send(http)
                    }
                    // (A fallback's credentials, checked when given.)
                    Err(e) => self.fail(chain::in_entry(at, e)),
                }
            }
        }
    }

    /// The step after a cut that came while the driver awaited: the
    /// request's stop, or the attempt's end. (A body that ends is not a
    /// failure: `None`, and the read goes on to its end.)
    fn cut_step(&mut self) -> Option<Step> {
        if let Some(e) = self.stop.clone() {
            return Some(self.fail(e));
        }
        match self.cut.take()? {
            Interruption::EndAttempt(e) | Interruption::StopRun(e) => Some(self.fail_attempt(e)),
            Interruption::EndBody => {
                self.cut = Some(Interruption::EndBody);
                None
            }
        }
    }

    /// A stream's end or error, after the events of the same chunk.
    fn outcome(&mut self, end: Result<Response, Error>, out: &mut Vec<StreamEvent>) -> Step {
        let end = end.map_err(|e| self.with_request_id(e));
        match end {
            _ if !out.is_empty() => self.deliver(Some(end), out),
            Ok(response) => self.done(response),
            Err(e) => self.fail_attempt(e),
        }
    }

    /// Hands out `out`: the chain's warnings go first, before the first
    /// event.
    fn deliver(
        &mut self,
        pending: Option<Result<Response, Error>>,
        out: &mut Vec<StreamEvent>,
    ) -> Step {
        self.noted(out);
        self.attempts.event_emitted();
        self.pending = pending;
        self.phase = Phase::Delivering;
        Step::Deliver
    }

    /// An in-band error without a request id of its own gets the
    /// response's.
    fn with_request_id(&self, mut e: Error) -> Error {
        if let Error::Api(api) = &mut e {
            if api.request_id.is_none() {
                api.request_id.clone_from(&self.request_id);
            }
        }
        e
    }

    /// The attempt failed with `e`: wait and try again, go on to the next
    /// provider of the chain, or fail.
    fn fail_attempt(&mut self, e: Error) -> Step {
        // (Tried again at once only while nothing was handed out: a
        // refusal inside a stream that began is the stream's end.)
        let fresh = self.stop.is_none() && !self.events_emitted();
        if fresh && (self.clock_skewed(&e) || self.token_rejected(&e)) {
            self.phase = Phase::Waiting;
            return Step::Wait(0);
        }
        let random = self.next_random();
        match self.attempts.retry_delay(&e, random) {
            Some(ms) if self.stop.is_none() => {
                self.phase = Phase::Waiting;
                Step::Wait(ms)
            }
            _ if self.stop.is_none() && !self.events_emitted() => self.next_provider(e),
            _ => self.fail(e),
        }
    }

    /// The request failed with `e`, which keeps what the stream had
    /// assembled.
    fn fail(&mut self, e: Error) -> Step {
        self.phase = Phase::Ended;
        Step::Fail(self.with_partial(e))
    }

    /// `e` with what the stream had assembled (once a response began).
    fn with_partial(&self, e: Error) -> Error {
        match &self.decoder {
            Some(decoder) => e.with_partial(decoder.partial()),
            None => e,
        }
    }

    fn done(&mut self, response: Response) -> Step {
        self.phase = Phase::Ended;
        Step::Done(Box::new(self.stamped(response)))
    }

    /// A driver called `what` out of turn: a bug in the driver, reported
    /// as an error rather than a panic.
    fn misuse(&mut self, what: &str) -> Step {
        let e = Error::invalid_request(
            "driver",
            format!("`{what}` is not expected at this step of the request"),
        );
        self.fail(e)
    }

    /// Uniform in `[0, 1)`, for the backoff's jitter.
    fn next_random(&mut self) -> f64 {
        crate::retry::next_random(&mut self.random)
    }
}

#[cfg(test)]
#[path = "run/scenarios.rs"]
mod scenarios;

#[cfg(test)]
#[path = "run/fallback_tests.rs"]
mod fallback_tests;

#[cfg(all(test, feature = "gemini"))]
#[path = "run/token_tests.rs"]
mod token_tests;
