//! Awaiting one promise after another with one pair of callbacks.
//!
//! A body is read with one `reader.read()` promise per chunk. A
//! `wasm_bindgen_futures::JsFuture` for each would make two closures per
//! chunk (a JS function each, registered for finalisation, then dropped),
//! which measured as the largest single cost of the Rust driver per chunk
//! (bench/README.md, "The two drivers"). A [`Settler`] makes its two
//! callbacks once and hands each promise to them with `then`.
//!
//! Its promises are awaited one at a time. A wait given up before its
//! promise settled (a timeout, a drop) leaves that promise holding the
//! callbacks: the next wait then gets a new pair, and the old pair stays
//! alive until its promise settles, then is freed (a callback freed
//! before would throw when the promise settles: an unhandled rejection in
//! the runtime).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::Promise;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsValue;

/// Where a promise's outcome is left for the future awaiting it.
#[derive(Default)]
struct Slot {
    /// A promise is out with the callbacks and has not settled.
    pending: Cell<bool>,
    outcome: RefCell<Option<Result<JsValue, JsValue>>>,
    waker: RefCell<Option<Waker>>,
    /// The callbacks of a wait given up, kept until its promise settles.
    kept: RefCell<Option<Pair>>,
}

/// A fulfilment and a rejection callback.
type Pair = (Closure<dyn FnMut(JsValue)>, Closure<dyn FnMut(JsValue)>);

impl Slot {
    fn settle(&self, outcome: Result<JsValue, JsValue>) {
        self.pending.set(false);
        if let Ok(mut slot) = self.outcome.try_borrow_mut() {
            *slot = Some(outcome);
        }
        let waker = self.waker.try_borrow_mut().ok().and_then(|mut w| w.take());
        if let Some(waker) = waker {
            waker.wake();
        }
        // A given-up wait's callbacks are freed now that they have run
        // (wasm-bindgen frees the running one once it returns).
        let kept = self.kept.try_borrow_mut().ok().and_then(|mut k| k.take());
        drop(kept);
    }
}

/// The callbacks of one [`Slot`].
struct Callbacks {
    slot: Rc<Slot>,
    on_ok: Closure<dyn FnMut(JsValue)>,
    on_err: Closure<dyn FnMut(JsValue)>,
}

impl Callbacks {
    fn new() -> Self {
        let slot = Rc::new(Slot::default());
        let ok = slot.clone();
        let err = slot.clone();
        Callbacks {
            slot,
            on_ok: Closure::new(move |value| ok.settle(Ok(value))),
            on_err: Closure::new(move |reason| err.settle(Err(reason))),
        }
    }

    /// Leaves the callbacks to a promise that has not settled yet: they
    /// live until it does (a cycle through the slot, broken by
    /// [`Slot::settle`]; a promise that never settles keeps them).
    fn abandon(self) {
        let Callbacks {
            slot,
            on_ok,
            on_err,
        } = self;
        let mut pair = Some((on_ok, on_err));
        if let Ok(mut kept) = slot.kept.try_borrow_mut() {
            *kept = pair.take();
        }
        if let Some((on_ok, on_err)) = pair {
            on_ok.forget();
            on_err.forget();
        }
    }
}

/// Awaits promises one after another with callbacks made once.
#[derive(Default)]
pub(crate) struct Settler {
    callbacks: Option<Callbacks>,
}

impl Settler {
    /// The outcome of `promise`: its value, or the reason it was rejected.
    pub(crate) fn wait(&mut self, promise: &Promise) -> Settle {
        self.give_up();
        let callbacks = self.callbacks.get_or_insert_with(Callbacks::new);
        let slot = callbacks.slot.clone();
        if let Ok(mut outcome) = slot.outcome.try_borrow_mut() {
            *outcome = None;
        }
        slot.pending.set(true);
        // (The promise `then` returns settles with the callbacks' result,
        // undefined, and is not awaited.)
        let _ = promise.then2(&callbacks.on_ok, &callbacks.on_err);
        Settle { slot }
    }
}

impl Settler {
    /// If the last wait was given up before its promise settled, leaves
    /// that promise its callbacks (the next wait makes a new pair).
    fn give_up(&mut self) {
        if let Some(old) = self.callbacks.take_if(|c| c.slot.pending.get()) {
            old.abandon();
        }
    }
}

impl Drop for Settler {
    fn drop(&mut self) {
        self.give_up();
    }
}

/// The future of one [`Settler::wait`].
pub(crate) struct Settle {
    slot: Rc<Slot>,
}

impl Future for Settle {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = self
            .slot
            .outcome
            .try_borrow_mut()
            .ok()
            .and_then(|mut o| o.take());
        if let Some(outcome) = outcome {
            return Poll::Ready(outcome);
        }
        if let Ok(mut waker) = self.slot.waker.try_borrow_mut() {
            *waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}
