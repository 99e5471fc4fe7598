//! Timers, through the global `setTimeout` and `clearTimeout`: browsers,
//! Node and workerd all have them, in pages and workers alike (never
//! `window`'s). Looked up once per request; each timer is cleared when
//! dropped, so no callback outlives the Rust closure it calls.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::js;
use crate::error::Error;
use crate::run::Timers;

/// The error for timeouts asked of a runtime without timers (`clock`:
/// its [`Clock::global`]), or `None`.
pub(crate) fn unsupported(limits: Timers, clock: Option<&Rc<Clock>>) -> Option<Error> {
    let any = limits.total_ms.or(limits.first_byte_ms).or(limits.idle_ms);
    (clock.is_none() && any.is_some())
        .then(|| Error::invalid_request("timeouts", "this runtime has no global setTimeout"))
}

/// The global `setTimeout` and `clearTimeout`.
pub(crate) struct Clock {
    global: JsValue,
    set: Function,
    clear: Function,
}

impl Clock {
    /// The global timer functions, or `None` in a runtime without them.
    pub(crate) fn global() -> Option<Rc<Clock>> {
        let global: JsValue = js_sys::global().into();
        let set = js::method(&global, "setTimeout")?;
        let clear = js::method(&global, "clearTimeout")?;
        Some(Rc::new(Clock { global, set, clear }))
    }

    /// Calls `callback` after `ms`: the timer's handle (a number in
    /// browsers, an object in Node), or `None` if it could not be set.
    fn set(&self, callback: &JsValue, ms: u64) -> Option<JsValue> {
        // Node and browsers fire at once past 2^31 - 1 ms: wait that long
        // at most (24.8 days).
        let ms = ms.min(i32::MAX as u64) as f64;
        self.set
            .call2(&self.global, callback, &JsValue::from_f64(ms))
            .ok()
    }

    fn clear(&self, handle: &JsValue) {
        let _ = self.clear.call1(&self.global, handle);
    }
}

/// The milliseconds since the Unix epoch (`Date.now()`), for reading a
/// `retry-after` date.
pub(crate) fn now_ms() -> u64 {
    let now = js_sys::Date::now();
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

/// A uniform random number in `[0, 1)` (`Math.random()`), for the backoff's
/// jitter.
pub(crate) fn random() -> f64 {
    js_sys::Math::random()
}

/// A callback that can be set to run after a delay, again and again; at
/// most one run is pending. Dropping it clears the pending run.
pub(crate) struct Timer {
    clock: Rc<Clock>,
    callback: Closure<dyn FnMut()>,
    handle: Option<JsValue>,
}

impl Timer {
    pub(crate) fn new(clock: &Rc<Clock>, callback: impl FnMut() + 'static) -> Self {
        Timer {
            clock: Rc::clone(clock),
            callback: Closure::new(callback),
            handle: None,
        }
    }

    /// Runs the callback after `ms`, in place of any pending run. False if
    /// the runtime refused the timer.
    pub(crate) fn start(&mut self, ms: u64) -> bool {
        self.stop();
        self.handle = self.clock.set(self.callback.as_ref(), ms);
        self.handle.is_some()
    }

    /// Clears the pending run, if any.
    pub(crate) fn stop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.clock.clear(&handle);
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A future done after a delay: a promise that `setTimeout` resolves,
/// cleared if dropped first (so that a Node process is not kept alive by a
/// wait nobody awaits).
pub(crate) struct Sleep {
    clock: Rc<Clock>,
    handle: Option<JsValue>,
    done: JsFuture,
}

impl Sleep {
    pub(crate) fn new(clock: &Rc<Clock>, ms: u64) -> Self {
        let mut handle = None;
        let promise = Promise::new(&mut |resolve, _reject| {
            handle = clock.set(resolve.unchecked_ref(), ms);
            if handle.is_none() {
                // No timer: resolve at once rather than never.
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
        Sleep {
            clock: Rc::clone(clock),
            handle,
            done: JsFuture::from(promise),
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match Pin::new(&mut self.done).poll(cx) {
            Poll::Ready(_) => {
                self.handle = None;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.clock.clear(&handle);
        }
    }
}
