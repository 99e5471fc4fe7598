//! Cancelling: one `AbortController` per attempt, aborted when a timeout
//! fires, before a retry, and when the caller drops the stream (reqwest's
//! abort-on-drop pattern), so that the server sees the connection close.
//!
//! A [`Gate`] is shared by a request and its timers. A timer's callback
//! cuts it (records why, aborts the fetch, cancels the body reader and
//! wakes the waiting future); every wait of the request goes through
//! [`Gate::guard`], which ends with the cut at once even if the fetch
//! function or body of a custom fetch ignores the abort.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::Promise;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

use super::js;
use crate::error::Timeout;

/// Why the request or its current attempt was cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// A timeout fired after its limit in milliseconds.
    Timeout(Timeout, u64),
    /// The caller dropped the stream.
    Dropped,
}

#[derive(Default)]
struct State {
    /// The whole request is over (the total timeout, a drop).
    stopped: Cell<Option<Cut>>,
    /// The current attempt is over (a first-byte or idle timeout).
    failed: Cell<Option<Cut>>,
    controller: RefCell<Option<AbortController>>,
    reader: RefCell<Option<JsValue>>,
    waker: RefCell<Option<Waker>>,
}

/// A request's cancellation state, shared with its timers.
#[derive(Clone, Default)]
pub(crate) struct Gate(Rc<State>);

impl Gate {
    pub(crate) fn new() -> Self {
        Gate::default()
    }

    /// Starts an attempt: a fresh controller, whose signal the fetch gets
    /// (`None` in a runtime without `AbortController`).
    pub(crate) fn begin_attempt(&self) -> Option<AbortSignal> {
        self.next_attempt();
        let controller = AbortController::new().ok()?;
        let signal = controller.signal();
        put(&self.0.controller, controller);
        Some(signal)
    }

    /// The body reader of the current attempt, cancelled with it.
    pub(crate) fn set_reader(&self, reader: &JsValue) {
        put(&self.0.reader, reader.clone());
    }

    /// Ends the current attempt's connection: aborts its fetch and cancels
    /// its body reader.
    pub(crate) fn end_attempt(&self) {
        if let Some(controller) = take(&self.0.controller) {
            controller.abort();
        }
        if let Some(reader) = take(&self.0.reader) {
            cancel(&reader);
        }
    }

    /// Ends the current attempt, and forgets why it was cut: a wait for
    /// the next one is cut only if the whole request is.
    pub(crate) fn next_attempt(&self) {
        self.end_attempt();
        self.0.failed.set(None);
    }

    /// Ends the current attempt for `cut` (a first-byte or idle timeout).
    pub(crate) fn fail(&self, cut: Cut) {
        if self.0.failed.get().is_none() {
            self.0.failed.set(Some(cut));
        }
        self.interrupt();
    }

    /// Ends the whole request for `cut` (the total timeout, a drop).
    pub(crate) fn stop(&self, cut: Cut) {
        if self.0.stopped.get().is_none() {
            self.0.stopped.set(Some(cut));
        }
        self.interrupt();
    }

    fn interrupt(&self) {
        self.end_attempt();
        if let Some(waker) = take(&self.0.waker) {
            waker.wake();
        }
    }

    /// Why the request or its current attempt was cut, if it was.
    pub(crate) fn cut(&self) -> Option<Cut> {
        self.0.stopped.get().or(self.0.failed.get())
    }

    /// `future`, unless the gate is cut first: then `Err` with the cut.
    pub(crate) fn guard<F: Future + Unpin>(&self, future: F) -> Guarded<F> {
        Guarded {
            gate: self.clone(),
            future,
        }
    }
}

/// Takes what `slot` holds (nothing while it is borrowed: a timer's
/// callback never runs inside a borrow, but no borrow may panic).
fn take<T>(slot: &RefCell<Option<T>>) -> Option<T> {
    slot.try_borrow_mut().ok().and_then(|mut s| s.take())
}

/// Puts `value` in `slot` (unless it is borrowed).
fn put<T>(slot: &RefCell<Option<T>>, value: T) {
    if let Ok(mut s) = slot.try_borrow_mut() {
        *s = Some(value);
    }
}

/// Cancels a body reader (or stream); a rejection of the promise it
/// returns is handled (Node ends the process on an unhandled one).
pub(crate) fn cancel(reader: &JsValue) {
    if let Ok(result) = js::call(reader, "cancel", &[]) {
        drop(JsFuture::from(Promise::resolve(&result)));
    }
}

/// See [`Gate::guard`].
pub(crate) struct Guarded<F> {
    gate: Gate,
    future: F,
}

impl<F: Future + Unpin> Future for Guarded<F> {
    type Output = Result<F::Output, Cut>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(cut) = self.gate.cut() {
            return Poll::Ready(Err(cut));
        }
        if let Poll::Ready(out) = Pin::new(&mut self.future).poll(cx) {
            return Poll::Ready(Ok(out));
        }
        put(&self.gate.0.waker, cx.waker().clone());
        Poll::Pending
    }
}
