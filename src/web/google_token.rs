//! Vertex AI's tokens in the `web` driver, from a service account's key
//! ([`crate::ServiceAccount`]): the core builds the JWT's signing input
//! and reads the token endpoint's answer; here WebCrypto signs it (RS256)
//! and the client's fetch exchanges it. A token is kept until
//! [`crate::CREDENTIALS_REFRESH_MS`] before it expires and shared by every
//! clone of the client; one exchange runs at a time, the other requests
//! wait for it (and share its error if it fails); a token the provider
//! refused (the run machine's [`crate::RunMachine::stale_token`]) is
//! forgotten.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::abort::Gate;
use super::fetch::{self, Answer};
use super::js;
use crate::error::Error;
use crate::{token_from_response, AccessToken, ServiceAccount, CREDENTIALS_REFRESH_MS};

/// A service account's tokens, kept.
pub(crate) struct Tokens {
    account: ServiceAccount,
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    token: Option<AccessToken>,
    /// An exchange is under way.
    busy: bool,
    /// The requests waiting for it.
    waiting: Vec<Waker>,
    /// Exchanges that ended (not cut), and the last one's error: the
    /// requests that waited for a failed exchange share its error rather
    /// than each try again in turn.
    ended: u64,
    failure: Option<Error>,
}

/// Ends the exchange however it ends (a dropped request too): the next
/// waiter may start its own.
struct Busy<'a>(&'a Tokens);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.state.try_borrow_mut() {
            s.busy = false;
            for w in s.waiting.drain(..) {
                w.wake();
            }
        }
    }
}

/// Ready once no exchange is under way.
struct Idle<'a>(&'a Tokens);

impl Future for Idle<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Ok(mut s) = self.0.state.try_borrow_mut() else {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        if !s.busy {
            return Poll::Ready(());
        }
        s.waiting.push(cx.waker().clone());
        Poll::Pending
    }
}

impl Tokens {
    pub(crate) fn new(account: ServiceAccount) -> Rc<Tokens> {
        Rc::new(Tokens {
            account,
            state: RefCell::new(State::default()),
        })
    }

    /// The kept token, if it is valid for longer than the margin.
    pub(crate) fn current(&self) -> Option<String> {
        let s = self.state.try_borrow().ok()?;
        let t = s.token.as_ref()?;
        let left = t.expires_at_ms.saturating_sub(super::timer::now_ms());
        (left > CREDENTIALS_REFRESH_MS).then(|| t.token.clone())
    }

    /// Forgets `token` if it is the kept one (the provider refused it).
    pub(crate) fn forget(&self, token: &str) {
        if let Ok(mut s) = self.state.try_borrow_mut() {
            if s.token.as_ref().is_some_and(|t| t.token == token) {
                s.token = None;
            }
        }
    }

    /// A valid token: the kept one, or one exchanged now (or by the
    /// request already exchanging), through `gate` (a cut ends the wait).
    pub(crate) async fn get(&self, fetch: Option<&Function>, gate: &Gate) -> Result<String, Error> {
        // The count of ended exchanges when this request began to wait.
        let mut waited: Option<u64> = None;
        loop {
            if let Some(token) = self.current() {
                return Ok(token);
            }
            let (busy, ended, failure) = (self.state.try_borrow())
                .map_or((true, 0, None), |s| (s.busy, s.ended, s.failure.clone()));
            if let (Some(n), Some(e)) = (waited, failure) {
                if ended != n {
                    return Err(e);
                }
            }
            if !busy {
                break;
            }
            waited.get_or_insert(ended);
            if gate.guard(Idle(self)).await.is_err() {
                return Err(cut());
            }
        }
        if let Ok(mut s) = self.state.try_borrow_mut() {
            s.busy = true;
        }
        let _busy = Busy(self);
        let exchanged = self.exchange(fetch, gate).await;
        if let Ok(mut s) = self.state.try_borrow_mut() {
            // (A cut is this request's own: the waiters try themselves.)
            if !matches!(exchanged, Err(Error::Aborted { .. })) {
                s.ended += 1;
                s.failure = exchanged.as_ref().err().cloned();
            }
            if let Ok(token) = &exchanged {
                s.token = Some(token.clone());
            }
        }
        exchanged.map(|t| t.token)
    }

    /// One exchange: the JWT signed, sent to the token endpoint, its
    /// answer read.
    async fn exchange(&self, fetch: Option<&Function>, gate: &Gate) -> Result<AccessToken, Error> {
        let now_ms = super::timer::now_ms();
        let input = self.account.signing_input(now_ms / 1000);
        let signature = sign(&self.account.private_key_pkcs8, input.as_bytes()).await?;
        let jwt = ServiceAccount::jwt(&input, &signature);
        let http = self.account.token_request(&jwt);
        let request = fetch::build(&http, None)?;
        let value = match fetch::send(fetch, &request, gate).await {
            Ok(Ok(value)) => value,
            Ok(Err(thrown)) => {
                // The JWT is a credential for an hour: never in the message.
                let mut e = Error::unreachable(&http.url, &js::message(&thrown));
                e.scrub(&jwt);
                return Err(e);
            }
            Err(_) => return Err(cut()),
        };
        let answer = Answer::read(value)?;
        let text = match js::call(&answer.response, "text", &[]) {
            Ok(p) => gate.guard(JsFuture::from(Promise::resolve(&p))).await,
            Err(e) => Ok(Err(e)),
        };
        let body = match text {
            Ok(Ok(v)) => v.as_string().unwrap_or_default(),
            Ok(Err(e)) => return Err(Error::unreachable(&http.url, &js::message(&e))),
            Err(_) => return Err(cut()),
        };
        token_from_response(answer.status, &body, super::timer::now_ms())
    }
}

/// The error of an exchange a cut ended: the request's abort or timeout
/// (the run reports the machine's own reason when it has one).
fn cut() -> Error {
    Error::aborted(Some("the token exchange was cut"), false)
}

/// `message` signed with RS256 (RSASSA-PKCS1-v1_5, SHA-256) by the
/// PKCS#8 key `pkcs8`, through WebCrypto.
async fn sign(pkcs8: &[u8], message: &[u8]) -> Result<Vec<u8>, Error> {
    let refused = |why: &str| {
        Error::invalid_request(
            "serviceAccount.private_key",
            format!("WebCrypto could not sign with it ({why})"),
        )
    };
    let crypto = js::get(&js_sys::global().into(), "crypto");
    let subtle = js::get(&crypto, "subtle");
    if !subtle.is_object() {
        return Err(refused("this runtime has no crypto.subtle"));
    }
    let algorithm = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&algorithm, &JsValue::from_str(k), v).is_ok();
    let _ = set("name", &"RSASSA-PKCS1-v1_5".into()) && set("hash", &"SHA-256".into());
    let usages = Array::of1(&"sign".into());
    let key_data: JsValue = Uint8Array::from(pkcs8).into();
    let args = [
        &"pkcs8".into(),
        &key_data,
        &algorithm.clone().into(),
        &JsValue::FALSE,
        &usages.into(),
    ];
    let key = await_call(&subtle, "importKey", &args)
        .await
        .map_err(|_| refused("not an RSA PKCS#8 key"))?;
    let data: JsValue = Uint8Array::from(message).into();
    let signed = await_call(&subtle, "sign", &[&algorithm.into(), &key, &data])
        .await
        .map_err(|_| refused("sign failed"))?;
    Ok(Uint8Array::new(&signed).to_vec())
}

/// Calls `name` on `target` and awaits the promise it returns.
async fn await_call(target: &JsValue, name: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let promise = js::call(target, name, args)?;
    JsFuture::from(Promise::resolve(&promise)).await
}
