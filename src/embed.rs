//! One embeddings call from start to end, as a sans-IO state machine:
//! [`EmbedMachine`]. Both drivers execute it, as they do the
//! [`crate::RunMachine`] of a chat request.

use std::collections::VecDeque;
use std::ops::Range;

use crate::error::{ApiErrorKind, Error, Timeout};
use crate::model::{EmbedRequest, Embeddings, Usage};
use crate::policy::Attempts;
use crate::providers::embed::{check_embed, encode_embed, too_large, Embedder};
use crate::providers::{decode_error_at, ClientConfig, Provider};
use crate::retry::{next_random, RetryPolicy};
use crate::run::{Cancel, Timers};
use crate::HttpRequest;

mod plan;

/// At most this many requests in flight when the request sets no
/// `max_concurrency`.
pub const DEFAULT_EMBED_CONCURRENCY: u32 = 4;

/// What a worker of an [`EmbedMachine`] does next.
#[derive(Debug)]
#[non_exhaustive]
pub enum EmbedStep {
    /// Send this request (one batch's attempt), the first-byte timer
    /// running; then [`EmbedMachine::responded`], `unreachable` or `refused`.
    Send(HttpRequest),
    /// Read the body, chunk by chunk ([`EmbedMachine::feed`]), to its end
    /// ([`EmbedMachine::ended`]) or a failure ([`EmbedMachine::lost`]).
    Read,
    /// Close the failed attempt's connection, wait this many
    /// milliseconds, then [`EmbedMachine::waited`].
    Wait(u64),
    /// Nothing more for this worker: once every worker is idle, take the
    /// result with [`EmbedMachine::finish`].
    Idle,
}

/// An embeddings call that failed: the error, and every vector that
/// arrived before (no batch is lost).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EmbedFailure {
    /// Why: the first batch that failed for good, an abort, the total
    /// timeout, or an invalid request (then nothing was sent).
    pub error: Error,
    /// Each value's vector, by index: `None` where none arrived.
    pub vectors: Vec<Option<Vec<f32>>>,
    /// The indices of the values without a vector, in order.
    pub failed: Vec<usize>,
}

impl EmbedFailure {
    /// The failure of a call that sent nothing (`error`: why), for `n`
    /// values.
    pub fn nothing_sent(error: Error, n: usize) -> Self {
        EmbedFailure {
            error,
            vectors: vec![None; n],
            failed: (0..n).collect(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Sending,
    Reading,
    ReadingError,
    Waiting,
}

/// One request in flight at a time: a batch and its attempts.
#[derive(Debug)]
struct Worker {
    batch: Option<Range<usize>>,
    attempts: Attempts,
    phase: Phase,
    url: String,
    status: u16,
    headers: Vec<(String, String)>,
    now_ms: u64,
    body: Vec<u8>,
    /// The error of a timer that ended the attempt while the driver was
    /// awaiting it.
    cut: Option<Error>,
}

/// One embeddings call from start to end, as a sans-IO state machine.
///
/// The values are split into batches ([`EmbedMachine::batches`]: by the
/// provider's count limit or `max_batch_size`, and by a bound on tokens);
/// a driver runs [`EmbedMachine::workers`] workers at once, each carrying
/// out its worker's steps, and the machine decides everything else:
///
/// - each batch's attempts, encoded anew, retried by the policy
///   (`retry-after` honoured);
/// - a batch the provider says is too large (a 413, or a 400 that says
///   so) is halved, and both halves are sent;
/// - a batch that fails for good leaves its values without vectors and the
///   others go on, unless its error would fail every batch (a bad key, a
///   missing model, a bad request): then nothing more is sent;
/// - an abort or the total timeout stops every worker;
/// - the result keeps the values' order, whatever order the batches came
///   back in, and a failure keeps every vector that arrived
///   ([`EmbedFailure`]).
///
/// ```
/// use skyl::{ClientConfig, EmbedMachine, EmbedRequest, EmbedStep, Provider, RetryPolicy, Timers};
///
/// let config = ClientConfig::new(Provider::OpenAi).with_api_key("sk-test");
/// let request = EmbedRequest::new(["hello"]);
/// let mut m = EmbedMachine::new(config, request, RetryPolicy::default(), Timers::default(), 7).unwrap();
/// assert_eq!(m.workers(), 1);
/// let EmbedStep::Send(http) = m.next(0) else { panic!() };
/// assert!(http.url.ends_with("/embeddings"));
/// assert!(matches!(m.responded(0, 200, Vec::new(), 0), EmbedStep::Read));
/// // [1.0, 2.0] as little-endian f32s in base64.
/// m.feed(0, br#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPwAAAEA="}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}"#);
/// assert!(matches!(m.ended(0), EmbedStep::Idle));
/// let result = m.finish().unwrap();
/// assert_eq!(result.vectors, vec![vec![1.0, 2.0]]);
/// assert_eq!(result.usage.and_then(|u| u.input), Some(1));
/// ```
#[derive(Debug)]
pub struct EmbedMachine {
    provider: Provider,
    config: Box<ClientConfig>,
    request: Box<EmbedRequest>,
    embedder: &'static Embedder,
    model: String,
    queue: VecDeque<Range<usize>>,
    workers: Vec<Worker>,
    vectors: Vec<Option<Vec<f32>>>,
    usage: Option<Usage>,
    answered_model: Option<String>,
    batches: u32,
    retry: RetryPolicy,
    timers: Timers,
    random: u64,
    /// The error that ends the whole call (an abort, the total timeout).
    stop: Option<Error>,
    /// The first batch's error that was final.
    failure: Option<Error>,
    /// No further batch is sent (a failure every batch would share).
    halted: bool,
}

impl EmbedMachine {
    /// A call for `config`'s provider, checked before anything is sent:
    /// an invalid request (or a timer of 0 ms) is an
    /// [`Error::InvalidRequest`] naming the field. Each batch is retried
    /// by `retry`; `timers` as for a chat request (the total one covers
    /// the whole call); `seed` seeds the backoff's jitter.
    pub fn new(
        config: ClientConfig,
        request: EmbedRequest,
        retry: RetryPolicy,
        timers: Timers,
        seed: u64,
    ) -> Result<Self, Error> {
        let (embedder, model) = check_embed(&config, &request)?;
        timers.check()?;
        let provider = config
            .provider
            .ok_or_else(|| Error::invalid_request("provider", "no provider was given"))?;
        let max = request.max_batch_size.unwrap_or(embedder.max_batch);
        let queue = plan::batches(&request.values, max, embedder.max_bytes);
        let concurrency = request.max_concurrency.unwrap_or(DEFAULT_EMBED_CONCURRENCY);
        let n = queue.len().min(concurrency as usize);
        let workers = (0..n)
            .map(|_| Worker {
                batch: None,
                attempts: Attempts::new(retry),
                phase: Phase::Idle,
                url: String::new(),
                status: 0,
                headers: Vec::new(),
                now_ms: 0,
                body: Vec::new(),
                cut: None,
            })
            .collect();
        Ok(EmbedMachine {
            provider,
            vectors: vec![None; request.values.len()],
            config: Box::new(config),
            request: Box::new(request),
            embedder,
            model,
            queue: queue.into(),
            workers,
            usage: None,
            answered_model: None,
            batches: 0,
            retry,
            timers,
            random: seed,
            stop: None,
            failure: None,
            halted: false,
        })
    }

    /// How many workers to run at once: the concurrency limit, or fewer
    /// when there are fewer batches. Each is numbered from 0.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// How many values the call embeds.
    pub fn values(&self) -> usize {
        self.vectors.len()
    }

    /// The batches still to send, as ranges of the values' indices.
    pub fn batches(&self) -> Vec<Range<usize>> {
        self.queue.iter().cloned().collect()
    }

    /// The call's timeouts.
    pub fn timers(&self) -> Timers {
        self.timers
    }

    /// The timer that runs while a worker carries out `step`, and its
    /// limit: the first-byte timer while sending, the idle timer while
    /// reading.
    pub fn timer(&self, step: &EmbedStep) -> Option<(Timeout, u64)> {
        let which = match step {
            EmbedStep::Send(_) => Timeout::FirstByte,
            EmbedStep::Read => Timeout::Idle,
            _ => return None,
        };
        Some((which, self.timers.get(which)?))
    }

    /// Worker `w`'s next batch, or [`EmbedStep::Idle`] when none is left
    /// for it (or the call was stopped).
    pub fn next(&mut self, w: usize) -> EmbedStep {
        if self.stop.is_some() || self.halted {
            return self.idle(w);
        }
        let Some(batch) = self.queue.pop_front() else {
            return self.idle(w);
        };
        let retry = self.retry;
        let Some(worker) = self.workers.get_mut(w) else {
            self.queue.push_front(batch);
            return EmbedStep::Idle;
        };
        worker.batch = Some(batch);
        worker.attempts = Attempts::new(retry);
        self.attempt(w)
    }

    /// Worker `w`'s response came, with its status and headers, at
    /// `now_ms` (the driver's clock, for a `retry-after` date; 0 if it has
    /// none, and a date is then not read).
    pub fn responded(
        &mut self,
        w: usize,
        status: u16,
        headers: Vec<(String, String)>,
        now_ms: u64,
    ) -> EmbedStep {
        if let Some(step) = self.cut_step(w) {
            return step;
        }
        let Some(worker) = self.live(w, Phase::Sending) else {
            return EmbedStep::Idle;
        };
        worker.body.clear();
        // Room for the body as its length says (up to 64 MiB): no copy as it grows.
        let length = (headers.iter())
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok());
        worker.body.reserve(length.unwrap_or(0).min(64 << 20));
        worker.phase = if (200..300).contains(&status) {
            Phase::Reading
        } else {
            Phase::ReadingError
        };
        worker.status = status;
        worker.headers = headers;
        worker.now_ms = now_ms;
        EmbedStep::Read
    }

    /// Worker `w`'s request could not be sent (the transport's `cause`).
    pub fn unreachable(&mut self, w: usize, cause: &str) -> EmbedStep {
        if let Some(step) = self.cut_step(w) {
            return step;
        }
        let Some(worker) = self.live(w, Phase::Sending) else {
            return EmbedStep::Idle;
        };
        let e = Error::unreachable(&worker.url, cause);
        self.fail_attempt(w, e)
    }

    /// Worker `w`'s request was refused before it was sent (`error`: a
    /// URL the fetch refuses, say). Not retried; it stops the call.
    pub fn refused(&mut self, w: usize, error: Error) -> EmbedStep {
        if let Some(step) = self.cut_step(w) {
            return step;
        }
        if self.live(w, Phase::Sending).is_none() {
            return EmbedStep::Idle;
        }
        self.give_up(w, error)
    }

    /// A chunk of worker `w`'s body came.
    pub fn feed(&mut self, w: usize, chunk: &[u8]) {
        if let Some(worker) = self.workers.get_mut(w) {
            if matches!(worker.phase, Phase::Reading | Phase::ReadingError) {
                worker.body.extend_from_slice(chunk);
            }
        }
    }

    /// Room for the next `len` bytes of worker `w`'s body, to write a
    /// chunk into in place of [`Self::feed`] (a driver that copies it into
    /// the module's memory anyway saves a copy); empty when the worker is
    /// not reading.
    pub fn chunk_buffer(&mut self, w: usize, len: usize) -> &mut [u8] {
        let Some(worker) = self
            .workers
            .get_mut(w)
            .filter(|k| matches!(k.phase, Phase::Reading | Phase::ReadingError))
        else {
            return &mut [];
        };
        let at = worker.body.len();
        worker.body.resize(at + len, 0);
        worker.body.get_mut(at..).unwrap_or_default()
    }

    /// Worker `w`'s body ended: its vectors are kept, or the attempt
    /// failed.
    pub fn ended(&mut self, w: usize) -> EmbedStep {
        if let Some(step) = self.cut_step(w) {
            return step;
        }
        let Some(worker) = self.workers.get_mut(w) else {
            return EmbedStep::Idle;
        };
        let body = std::mem::take(&mut worker.body);
        let text = crate::sse::utf8(&body);
        let Some(batch) = worker.batch.clone() else {
            return self.idle(w);
        };
        match worker.phase {
            Phase::Reading => match (self.embedder.decode)(&text, batch.len()) {
                Ok(answer) => {
                    let slots = self.vectors.get_mut(batch).unwrap_or_default();
                    for (slot, v) in slots.iter_mut().zip(answer.vectors) {
                        *slot = Some(v);
                    }
                    if let Some(u) = answer.usage {
                        let sum = self.usage.get_or_insert_with(Usage::default);
                        sum.input = add(sum.input, u.input);
                        sum.total = add(sum.total, u.total.or(u.input));
                    }
                    self.answered_model = answer.model.or(self.answered_model.take());
                    self.batches += 1;
                    if let Some(worker) = self.workers.get_mut(w) {
                        worker.batch = None;
                        worker.phase = Phase::Idle;
                    }
                    self.next(w)
                }
                Err(e) => self.fail_attempt(w, e),
            },
            Phase::ReadingError => {
                let (status, now) = (worker.status, worker.now_ms);
                let e = decode_error_at(self.provider, status, &worker.headers, &text, now);
                self.fail_attempt(w, e)
            }
            _ => EmbedStep::Idle,
        }
    }

    /// Reading worker `w`'s body failed (the transport's `cause`).
    pub fn lost(&mut self, w: usize, cause: &str) -> EmbedStep {
        if let Some(step) = self.cut_step(w) {
            return step;
        }
        match self.workers.get(w).map(|k| k.phase) {
            // An error response's body is read as far as it can be.
            Some(Phase::ReadingError) => self.ended(w),
            Some(Phase::Reading) => self.fail_attempt(w, Error::connection_lost(cause, false)),
            _ => EmbedStep::Idle,
        }
    }

    /// Worker `w`'s wait is over (or was cancelled): its batch again,
    /// unless another batch's failure stopped every batch while it waited.
    pub fn waited(&mut self, w: usize) -> EmbedStep {
        if self.stop.is_some() || self.halted || self.live(w, Phase::Waiting).is_none() {
            return self.idle(w);
        }
        self.attempt(w)
    }

    /// The timer `which` fired for worker `w` (any worker for the total
    /// one): what to cancel. [`Cancel::Attempt`] ends that worker's
    /// attempt (it reports the end as usual and is told what follows);
    /// [`Cancel::Run`] ends every worker.
    pub fn expired(&mut self, w: usize, which: Timeout) -> Cancel {
        let Some(ms) = self.timers.get(which).filter(|_| self.stop.is_none()) else {
            return Cancel::Nothing;
        };
        if which == Timeout::Total {
            self.stop = Some(which.error(ms, false));
            return Cancel::Run;
        }
        let phase = self.workers.get(w).map(|k| k.phase);
        let live = match which {
            Timeout::FirstByte => phase == Some(Phase::Sending),
            _ => matches!(phase, Some(Phase::Reading | Phase::ReadingError)),
        };
        match self.workers.get_mut(w).filter(|_| live) {
            Some(worker) => {
                worker.cut.get_or_insert(which.error(ms, false));
                Cancel::Attempt
            }
            None => Cancel::Nothing,
        }
    }

    /// The caller aborted, for `reason`: no further request is sent, and
    /// the ones in flight are cancelled ([`Cancel::Run`]).
    pub fn abort(&mut self, reason: Option<&str>) -> Cancel {
        if self.stop.is_some() {
            return Cancel::Nothing;
        }
        self.stop = Some(Error::aborted(reason, false));
        Cancel::Run
    }

    /// The error that stopped the whole call (an abort, the total
    /// timeout), once [`Cancel::Run`] was returned.
    pub fn stopped(&self) -> Option<&Error> {
        self.stop.as_ref()
    }

    /// The result, once every worker is idle: every vector in the values'
    /// order, or the failure with every vector that arrived.
    pub fn finish(&mut self) -> Result<Embeddings, EmbedFailure> {
        let vectors = std::mem::take(&mut self.vectors);
        let error = (self.stop.clone().or_else(|| self.failure.clone())).or_else(|| {
            let early = "`finish` came before every batch was done";
            (vectors.iter().any(Option::is_none)).then(|| Error::invalid_request("driver", early))
        });
        if let Some(error) = error {
            let failed = (vectors.iter().enumerate())
                .filter(|(_, v)| v.is_none())
                .map(|(i, _)| i)
                .collect();
            return Err(EmbedFailure {
                error,
                vectors,
                failed,
            });
        }
        Ok(Embeddings {
            vectors: vectors.into_iter().flatten().collect(),
            usage: self.usage.take(),
            model: self.answered_model.take().or(Some(self.model.clone())),
            batches: self.batches,
        })
    }

    // ------------------------------------------------------------ inside

    /// Worker `w` if it is in `phase`.
    fn live(&mut self, w: usize, phase: Phase) -> Option<&mut Worker> {
        self.workers.get_mut(w).filter(|k| k.phase == phase)
    }

    /// Worker `w` has nothing more to do.
    fn idle(&mut self, w: usize) -> EmbedStep {
        if let Some(worker) = self.workers.get_mut(w) {
            worker.phase = Phase::Idle;
            worker.batch = None;
        }
        EmbedStep::Idle
    }

    /// A new attempt of worker `w`'s batch, encoded anew.
    fn attempt(&mut self, w: usize) -> EmbedStep {
        let Some(worker) = self.workers.get_mut(w) else {
            return EmbedStep::Idle;
        };
        let Some(batch) = worker.batch.clone() else {
            return self.idle(w);
        };
        let values = self.request.values.get(batch).unwrap_or_default();
        match encode_embed(
            &self.config,
            &self.request,
            self.embedder,
            &self.model,
            values,
        ) {
            Ok(http) => {
                worker.url.clone_from(&http.url);
                worker.cut = None;
                worker.phase = Phase::Sending;
                EmbedStep::Send(http)
            }
            Err(e) => self.give_up(w, e),
        }
    }

    /// The step after a timer ended worker `w`'s attempt while the driver
    /// awaited it, or after the call was stopped.
    fn cut_step(&mut self, w: usize) -> Option<EmbedStep> {
        if self.stop.is_some() {
            return Some(self.idle(w));
        }
        let e = self.workers.get_mut(w)?.cut.take()?;
        Some(self.fail_attempt(w, e))
    }

    /// Worker `w`'s attempt failed with `e`: halve a batch that was too
    /// large, wait and try again, or give the batch up.
    fn fail_attempt(&mut self, w: usize, e: Error) -> EmbedStep {
        if self.stop.is_some() || self.halted {
            return self.idle(w);
        }
        let random = next_random(&mut self.random);
        let Some(worker) = self.workers.get_mut(w) else {
            return EmbedStep::Idle;
        };
        let batch = worker.batch.clone().unwrap_or_default();
        if too_large(&e) && batch.len() > 1 {
            let mid = batch.start + batch.len() / 2;
            self.queue.push_front(mid..batch.end);
            self.queue.push_front(batch.start..mid);
            worker.batch = None;
            worker.phase = Phase::Idle;
            return self.next(w);
        }
        match worker.attempts.retry_delay(&e, random) {
            Some(ms) => {
                worker.phase = Phase::Waiting;
                EmbedStep::Wait(ms)
            }
            None => self.give_up(w, e),
        }
    }

    /// Worker `w`'s batch failed for good: its values stay without
    /// vectors; the worker goes on to the next batch unless `e` would fail
    /// every batch (a bad key, a missing model, a bad request that is not
    /// about size).
    fn give_up(&mut self, w: usize, e: Error) -> EmbedStep {
        // A value too large alone (over the model's input limit) is its
        // own: the others still go.
        let shared = match &e {
            _ if too_large(&e) => false,
            Error::Api(api) => matches!(
                api.kind,
                ApiErrorKind::Authentication
                    | ApiErrorKind::Permission
                    | ApiErrorKind::NotFound
                    | ApiErrorKind::BadRequest
            ),
            Error::InvalidRequest { .. } => true,
            _ => false,
        };
        self.halted |= shared;
        self.failure.get_or_insert(e);
        if let Some(worker) = self.workers.get_mut(w) {
            worker.batch = None;
            worker.phase = Phase::Idle;
        }
        self.next(w)
    }
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(all(test, feature = "openai", feature = "gemini"))]
mod tests;
