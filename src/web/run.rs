//! One request from start to end: its attempts and retries, its timeouts,
//! and the decoding of its body, for both [`super::EventStream`] and
//! [`super::Client::complete`].
//!
//! Every decision is the core's: whether and when to retry
//! ([`Attempts`]), what a timeout or a broken connection means
//! ([`Interruption`]), the error of each failure, the request id, the
//! `retry-after` date. This file only does what they say.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::abort::{Cut, Gate};
use super::body::{Body, ReadError};
use super::fetch::{self, Answer};
use super::js;
use super::timer::{self, Clock, Sleep, Timer};
use crate::error::{Error, Timeout};
use crate::http::{request_id, HttpRequest};
use crate::model::{Response, StreamEvent};
use crate::policy::{Attempts, Interruption};
use crate::providers::{decode_error_at, decode_response, Provider};
use crate::retry::RetryPolicy;
use crate::stream::StreamDecoder;

/// The timeouts of a request, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    pub(crate) total: Option<u64>,
    pub(crate) first_byte: Option<u64>,
    pub(crate) idle: Option<u64>,
}

/// What a request sends: an encoded request, or nothing (a body the caller
/// already has, decoded once).
pub(crate) enum Source {
    Send {
        http: HttpRequest,
        fetch: Option<Function>,
    },
    Given(JsValue),
}

/// A timer that cuts the request after its limit.
struct Limit {
    timer: Timer,
    ms: u64,
}

impl Limit {
    fn new(clock: &Rc<Clock>, gate: &Gate, which: Timeout, ms: u64) -> Self {
        let gate = gate.clone();
        let cut = Cut::Timeout(which, ms);
        let timer = Timer::new(clock, move || {
            if which.stops_run() {
                gate.stop(cut);
            } else {
                gate.fail(cut);
            }
        });
        Limit { timer, ms }
    }
}

/// One request.
pub(crate) struct Run {
    provider: Provider,
    source: Source,
    gate: Gate,
    attempts: Attempts,
    clock: Option<Rc<Clock>>,
    limits: Limits,
    total: Option<Limit>,
    first_byte: Option<Limit>,
    idle: Option<Limit>,
    /// The request id of the current attempt's response.
    request_id: Option<String>,
    /// The streamed body being decoded.
    body: Option<Body>,
    decoder: Option<StreamDecoder>,
}

impl Run {
    pub(crate) fn new(
        provider: Provider,
        source: Source,
        retry: RetryPolicy,
        limits: Limits,
    ) -> Run {
        let gate = Gate::new();
        let clock = Clock::global();
        let limit = |which, ms: Option<u64>| Some(Limit::new(clock.as_ref()?, &gate, which, ms?));
        let retry = match source {
            Source::Send { .. } => retry,
            Source::Given(_) => RetryPolicy {
                max_retries: 0,
                ..retry
            },
        };
        Run {
            provider,
            total: limit(Timeout::Total, limits.total),
            first_byte: limit(Timeout::FirstByte, limits.first_byte),
            idle: limit(Timeout::Idle, limits.idle),
            source,
            attempts: Attempts::new(retry),
            clock,
            limits,
            gate,
            request_id: None,
            body: None,
            decoder: None,
        }
    }

    /// The request's cancellation state (the stream aborts through it when
    /// dropped).
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Starts the total timeout; an error if a timeout was asked for in a
    /// runtime without timers.
    fn begin(&mut self) -> Result<(), Error> {
        let limits = self.limits;
        if self.clock.is_none()
            && (limits.total.is_some() || limits.first_byte.is_some() || limits.idle.is_some())
        {
            return Err(Error::InvalidRequest {
                path: "timeouts".into(),
                message: "this runtime has no global setTimeout".into(),
            });
        }
        if let Some(total) = &mut self.total {
            total.timer.start(total.ms);
        }
        Ok(())
    }

    /// The error of a cut, as things stand.
    fn cut_error(&self, cut: Cut) -> Error {
        let events_emitted = self.attempts.events_emitted();
        match cut {
            Cut::Timeout(which, ms) => which.error(ms, events_emitted),
            Cut::Dropped => Error::aborted(None, events_emitted),
        }
    }

    /// An error of the response body: the cut that caused it, if any.
    fn read_error(&self, e: ReadError) -> Error {
        let cut = match &e {
            ReadError::Cut(cut) => Some(*cut),
            _ => self.gate.cut(),
        };
        if let Some(cut) = cut {
            return self.cut_error(cut);
        }
        match e {
            ReadError::Failed(message) => {
                Error::connection_lost(&message, self.attempts.events_emitted())
            }
            ReadError::NotBytes(message) => Error::InvalidResponse { message },
            ReadError::Cut(cut) => self.cut_error(cut),
        }
    }

    /// An error from the decoder: an in-band error carries the response's
    /// request id when its frame has none.
    fn decoded(&self, mut e: Error) -> Error {
        if let Error::Api(api) = &mut e {
            if api.request_id.is_none() {
                api.request_id.clone_from(&self.request_id);
            }
        }
        e
    }

    /// After a failed attempt: waits before the next one, or gives up with
    /// the error.
    async fn retry(&mut self, e: Error) -> Result<(), Error> {
        if self.gate.stopped().is_some() {
            return Err(e);
        }
        let Some(ms) = self.attempts.retry_delay(&e, timer::random()) else {
            return Err(e);
        };
        // The failed attempt's connection is closed before the wait.
        self.gate.next_attempt();
        if let Some(clock) = &self.clock {
            let wait = self.gate.guard(Sleep::new(clock, ms)).await;
            wait.map_err(|cut| self.cut_error(cut))?;
        }
        Ok(())
    }

    /// One attempt up to its response: sends the request (or takes the
    /// given body) and types a response that is not a success.
    async fn answer(&mut self) -> Result<Answer, Error> {
        let (http, fetch) = match &self.source {
            Source::Send { http, fetch } => (http, fetch),
            Source::Given(value) => {
                return if js::method(value, "getReader").is_some() {
                    Ok(Answer {
                        status: 200,
                        headers: Vec::new(),
                        body: Some(value.clone()),
                        response: value.clone(),
                    })
                } else {
                    Answer::read(value.clone()).map_err(|_| Error::InvalidResponse {
                        message: format!(
                            "the body to decode must be a ReadableStream or a Response, not {}",
                            js::describe(value)
                        ),
                    })
                };
            }
        };
        self.request_id = None;
        let signal = self.gate.begin_attempt();
        let request = fetch::build(http, signal.as_ref())?;
        if let Some(limit) = &mut self.first_byte {
            limit.timer.start(limit.ms);
        }
        let sent = fetch::send(fetch.as_ref(), &request, &self.gate).await;
        if let Some(limit) = &mut self.first_byte {
            limit.timer.stop();
        }
        let value = match sent {
            Ok(Ok(value)) => value,
            Err(cut) => return Err(self.cut_error(cut)),
            Ok(Err(thrown)) => {
                return Err(match self.gate.cut() {
                    Some(cut) => self.cut_error(cut),
                    None => Error::unreachable(&http.url, &js::message(&thrown)),
                })
            }
        };
        let answer = Answer::read(value)?;
        self.request_id = request_id(&answer.headers);
        if answer.ok() {
            return Ok(answer);
        }
        // The error body, as far as it can be read.
        let mut text = Vec::new();
        let mut body = Body::of(&answer).ok();
        if let Some(body) = &mut body {
            self.watch(body);
            loop {
                match read_chunk(body, &self.gate, &mut self.idle).await {
                    Ok(Some(chunk)) => text.extend_from_slice(chunk),
                    Ok(None) => break,
                    Err(ReadError::Cut(cut)) => return Err(self.cut_error(cut)),
                    Err(_) => break,
                }
            }
        }
        let text = String::from_utf8_lossy(&text);
        Err(decode_error_at(
            self.provider,
            answer.status,
            &answer.headers,
            &text,
            timer::now_ms(),
        ))
    }

    /// Lets the gate cancel `body`'s reader when the attempt ends.
    fn watch(&self, body: &Body) {
        if let Some(reader) = body.reader() {
            self.gate.set_reader(&reader);
        }
    }

    // ------------------------------------------------------ the stream

    /// Opens the stream, retrying while the policy allows: the first
    /// events (pushed to `out`), and the outcome if the body already ended.
    pub(crate) async fn open(
        &mut self,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Option<Result<Response, Error>>, Error> {
        self.begin()?;
        loop {
            match self.open_attempt(out).await {
                Ok(end) => {
                    if !out.is_empty() {
                        self.attempts.event_emitted();
                    }
                    return Ok(end);
                }
                Err(e) => {
                    out.clear();
                    self.retry(e).await?;
                }
            }
        }
    }

    /// One attempt of [`Run::open`]: an error before any event (an HTTP
    /// error, an in-band error, an early end) fails the attempt.
    async fn open_attempt(
        &mut self,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Option<Result<Response, Error>>, Error> {
        self.body = None;
        self.decoder = None;
        let answer = self.answer().await?;
        let body = Body::of(&answer).map_err(|message| Error::InvalidResponse { message })?;
        self.watch(&body);
        self.body = Some(body);
        self.decoder = Some(StreamDecoder::new(self.provider));
        match self.pull(out).await {
            Some(Err(e)) if out.is_empty() => Err(e),
            end => Ok(end),
        }
    }

    /// Reads until at least one event (pushed to `out`), the end of the
    /// body, or an error: `None` while the stream goes on, else its outcome.
    pub(crate) async fn pull(
        &mut self,
        out: &mut Vec<StreamEvent>,
    ) -> Option<Result<Response, Error>> {
        loop {
            let (Some(body), Some(decoder)) = (&mut self.body, &mut self.decoder) else {
                return Some(Err(Error::aborted(None, self.attempts.events_emitted())));
            };
            let read = read_chunk(body, &self.gate, &mut self.idle).await;
            let e = match read {
                Ok(Some(chunk)) => match decoder.feed(chunk, out) {
                    Ok(()) if out.is_empty() => continue,
                    Ok(()) => {
                        self.attempts.event_emitted();
                        return None;
                    }
                    Err(e) => return Some(Err(self.decoded(e))),
                },
                Ok(None) => {
                    let end = decoder.finish(out).map_err(|e| self.decoded(e));
                    return Some(end);
                }
                Err(e) => e,
            };
            let error = self.read_error(e);
            let Some(decoder) = self.decoder.as_mut() else {
                return Some(Err(error));
            };
            return Some(match Interruption::of(error, decoder.is_complete()) {
                Interruption::EndBody => decoder.finish(out).map_err(|e| self.decoded(e)),
                Interruption::EndAttempt(e) | Interruption::StopRun(e) => {
                    Err(e.with_partial(decoder.partial()))
                }
            });
        }
    }

    // ------------------------------------------------- the whole body

    /// The whole response, retrying while the policy allows.
    pub(crate) async fn complete(&mut self) -> Result<Response, Error> {
        self.begin()?;
        loop {
            match self.complete_attempt().await {
                Ok(response) => return Ok(response),
                Err(e) => self.retry(e).await?,
            }
        }
    }

    async fn complete_attempt(&mut self) -> Result<Response, Error> {
        let answer = self.answer().await?;
        let mut body = Body::of(&answer).map_err(|message| Error::InvalidResponse { message })?;
        self.watch(&body);
        let mut bytes = Vec::new();
        loop {
            match read_chunk(&mut body, &self.gate, &mut self.idle).await {
                Ok(Some(chunk)) => bytes.extend_from_slice(chunk),
                Ok(None) => break,
                Err(e) => {
                    let error = self.read_error(e);
                    return Err(match Interruption::of(error, false) {
                        Interruption::EndAttempt(e) | Interruption::StopRun(e) => e,
                        Interruption::EndBody => Error::aborted(None, false),
                    });
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        decode_response(self.provider, &text).map_err(|e| self.decoded(e))
    }
}

impl Drop for Run {
    /// Ends the connection if the body was not read to its end (an error,
    /// a drop); the timers are cleared as they drop.
    fn drop(&mut self) {
        self.gate.end_attempt();
    }
}

/// The next chunk of `body`, the idle timeout running while it is awaited.
async fn read_chunk<'b>(
    body: &'b mut Body,
    gate: &Gate,
    idle: &mut Option<Limit>,
) -> Result<Option<&'b [u8]>, ReadError> {
    if let Some(limit) = idle.as_mut() {
        limit.timer.start(limit.ms);
    }
    let read = body.next(gate).await;
    if let Some(limit) = idle.as_mut() {
        limit.timer.stop();
    }
    read
}
