//! [`EmbedMachine`] as the JS half drives it (`shell/js/embed.js`): each
//! worker's inputs are numbers and strings, each returns a step code (the
//! `STEP` table of `policy.js`; `DONE` is "idle"), and the vectors cross
//! once, at the end, as one `Float32Array`.

use super::error_info::{error_info, info};
use super::run::{answered, cancel_code, Limits, CANCEL_NOTHING, DONE, FAIL, READ, SEND, WAIT};
use super::{config_and, error_json, http_text};
use crate::embed::{EmbedMachine, EmbedStep};
use crate::error::{Error, Timeout};
use crate::json::write::Out;
use crate::model::embed_request;
use crate::model::to_json::usage;

/// One embeddings call for the JS half.
#[derive(Debug)]
pub(crate) struct BoundaryEmbed {
    /// `Err`: the options or the request are invalid (nothing is sent).
    machine: Result<EmbedMachine, Error>,
    label: &'static str,
    output: String,
    /// Each worker's wait, by index: read once the driver gets to it,
    /// which may be after another worker's step (an await between).
    delays: Vec<u64>,
    /// The vectors of [`Self::finish`], by index (`None`: none came).
    vectors: Vec<Option<Vec<f32>>>,
}

impl BoundaryEmbed {
    /// A call: `config_json` as for a chat request, `request_json` an
    /// `EmbedRequest` (`{"values", "model"?, ...}`), the limits as for
    /// [`super::BoundaryRun::new`].
    pub(crate) fn new(config_json: &str, request_json: &str, limits: &Limits) -> Self {
        let (label, input) = config_and(config_json, request_json, embed_request);
        let (timers, retry) = (limits.timers(), limits.retry());
        // (Embeddings go to the client's own provider: a chain's others
        // would answer with vectors of another space.)
        let machine = input.and_then(|(o, request)| {
            EmbedMachine::new(o.config, request, retry, timers, limits.seed as u64)
        });
        BoundaryEmbed {
            machine,
            label,
            output: String::new(),
            delays: Vec::new(),
            vectors: Vec::new(),
        }
    }

    /// `""`, or `{"error": ...}` when the call is invalid (then nothing
    /// may be sent).
    pub(crate) fn invalid(&self) -> String {
        match &self.machine {
            Ok(_) => String::new(),
            Err(e) => error_json(e, self.label),
        }
    }

    /// How many workers to run at once (0 for an invalid call or no
    /// values).
    pub(crate) fn workers(&self) -> u32 {
        self.machine
            .as_ref()
            .map_or(0, |m| u32::try_from(m.workers()).unwrap_or(0))
    }

    /// Worker `w`'s step from `f`, as its code.
    fn on(&mut self, w: u32, f: impl FnOnce(&mut EmbedMachine, usize) -> EmbedStep) -> u32 {
        let (Ok(m), w) = (&mut self.machine, w as usize) else {
            return DONE;
        };
        match f(m, w) {
            EmbedStep::Send(http) => {
                self.output = http_text(&http);
                SEND
            }
            EmbedStep::Read => READ,
            EmbedStep::Wait(ms) => {
                if self.delays.len() <= w {
                    self.delays.resize(w + 1, 0);
                }
                if let Some(d) = self.delays.get_mut(w) {
                    *d = ms;
                }
                WAIT
            }
            _ => DONE,
        }
    }

    /// [`EmbedMachine::next`].
    pub(crate) fn next(&mut self, w: u32) -> u32 {
        self.on(w, |m, w| m.next(w))
    }

    /// [`EmbedMachine::responded`]: `headers_json` is `[[name, value], ...]`.
    pub(crate) fn responded(
        &mut self,
        w: u32,
        status: u16,
        headers_json: &str,
        now_ms: f64,
    ) -> u32 {
        let (headers, now) = answered(headers_json, now_ms);
        self.on(w, |m, w| m.responded(w, status, headers, now))
    }

    /// [`EmbedMachine::unreachable`].
    pub(crate) fn unreachable(&mut self, w: u32, cause: &str) -> u32 {
        self.on(w, |m, w| m.unreachable(w, cause))
    }

    /// [`EmbedMachine::feed`] (native tests; JS writes into [`Self::chunk_buffer`]).
    #[cfg(test)]
    pub(crate) fn feed(&mut self, w: u32, chunk: &[u8]) {
        if let Ok(m) = &mut self.machine {
            m.feed(w as usize, chunk);
        }
    }

    /// The address of room for worker `w`'s next `len` body bytes in the
    /// module's memory ([`EmbedMachine::chunk_buffer`]), 0 when it is not
    /// reading: JS writes the chunk there, as it would copy it for
    /// [`Self::feed`].
    pub(crate) fn chunk_buffer(&mut self, w: u32, len: usize) -> usize {
        match &mut self.machine {
            Ok(m) => {
                let room = m.chunk_buffer(w as usize, len);
                if room.len() == len {
                    room.as_mut_ptr() as usize
                } else {
                    0
                }
            }
            Err(_) => 0,
        }
    }

    /// [`EmbedMachine::ended`].
    pub(crate) fn ended(&mut self, w: u32) -> u32 {
        self.on(w, |m, w| m.ended(w))
    }

    /// [`EmbedMachine::lost`].
    pub(crate) fn lost(&mut self, w: u32, cause: &str) -> u32 {
        self.on(w, |m, w| m.lost(w, cause))
    }

    /// [`EmbedMachine::waited`].
    pub(crate) fn waited(&mut self, w: u32) -> u32 {
        self.on(w, |m, w| m.waited(w))
    }

    /// Worker `w`'s input (`IN_*`, as for a run): its next batch, its body
    /// ended, its wait is over, its request could not be sent (`cause`),
    /// reading its body failed (`cause`).
    pub(crate) fn input(&mut self, w: u32, what: u32, cause: &str) -> u32 {
        use super::run::{IN_ENDED, IN_LOST, IN_NEXT, IN_UNREACHABLE, IN_WAITED};
        match what {
            IN_NEXT => self.next(w),
            IN_ENDED => self.ended(w),
            IN_WAITED => self.waited(w),
            IN_UNREACHABLE => self.unreachable(w, cause),
            IN_LOST => self.lost(w, cause),
            // (No such input: the worker is idle, and `finish` says its
            // batch was not done.)
            _ => DONE,
        }
    }

    /// A timer fired: the total one (`total`), else worker `w`'s (the
    /// first-byte one while it sends, the idle one while it reads: `step`
    /// is the step it carries out). What to cancel.
    pub(crate) fn expired(&mut self, w: u32, total: bool, step: u32) -> u32 {
        let which = match (total, step) {
            (true, _) => Timeout::Total,
            (_, SEND) => Timeout::FirstByte,
            _ => Timeout::Idle,
        };
        match &mut self.machine {
            Ok(m) => cancel_code(m.expired(w as usize, which)),
            Err(_) => CANCEL_NOTHING,
        }
    }

    /// The caller aborted for `reason`: what to cancel.
    pub(crate) fn abort(&mut self, reason: &str) -> u32 {
        match &mut self.machine {
            Ok(m) => cancel_code(m.abort(Some(reason))),
            Err(_) => CANCEL_NOTHING,
        }
    }

    /// The timer of worker `w`'s `step` (a step code), in milliseconds
    /// (0: none): a [`WAIT`]'s is its wait, and [`DONE`]'s the total
    /// timeout (any worker).
    pub(crate) fn timer_ms(&self, step: u32, w: u32) -> f64 {
        let which = match step {
            SEND => Timeout::FirstByte,
            READ => Timeout::Idle,
            WAIT => return self.delays.get(w as usize).copied().unwrap_or(0) as f64,
            DONE => Timeout::Total,
            _ => return 0.0,
        };
        match &self.machine {
            Ok(m) => m.timers().get(which).unwrap_or(0) as f64,
            Err(_) => 0.0,
        }
    }

    /// The result, once every worker is idle: [`DONE`] with
    /// `{"model", "batches", "usage"?, "lengths": [n, ...]}`, or [`FAIL`]
    /// with `{"error": ..., "lengths": [n | null, ...]}` (`null`: no
    /// vector arrived). [`Self::vector_addresses`] says where each vector
    /// is.
    pub(crate) fn finish(&mut self) -> u32 {
        let Ok(m) = &mut self.machine else {
            self.output = self.invalid();
            return FAIL;
        };
        let mut out = Out::default();
        let mut o = out.object();
        let code = match m.finish() {
            Ok(result) => {
                o.opt_str("model", result.model.as_deref());
                o.uint("batches", u64::from(result.batches));
                if let Some(u) = &result.usage {
                    usage(&mut o.object("usage"), u);
                }
                self.vectors = result.vectors.into_iter().map(Some).collect();
                DONE
            }
            Err(failure) => {
                error_info(&mut o.object("error"), &info(&failure.error, self.label));
                self.vectors = failure.vectors;
                FAIL
            }
        };
        let mut lengths = o.array("lengths");
        for v in &self.vectors {
            match v {
                Some(v) => lengths.uint(v.len() as u64),
                None => lengths.json("null"),
            }
        }
        drop(lengths);
        drop(o);
        self.output = out.finish().unwrap_or_default();
        code
    }

    /// The address in the module's memory of each vector of
    /// [`Self::finish`], by index (0: none came): JS copies each straight
    /// into one `Float32Array`, with no wasm call in between.
    pub(crate) fn vector_addresses(&self) -> Vec<u32> {
        (self.vectors.iter())
            .map(|v| v.as_ref().map_or(0, |v| v.as_ptr() as usize as u32))
            .collect()
    }

    /// Every vector that came, end to end (native tests).
    #[cfg(test)]
    pub(crate) fn take_vectors(&mut self) -> Vec<f32> {
        std::mem::take(&mut self.vectors)
            .into_iter()
            .flatten()
            .flatten()
            .collect()
    }

    /// The text of the last step: the request to send, or the result.
    pub(crate) fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }
}

#[cfg(all(test, feature = "openai", feature = "anthropic"))]
#[path = "embed_tests.rs"]
mod tests;
