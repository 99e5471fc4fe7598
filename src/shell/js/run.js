// One request from start to end: the Run class, a thin executor of the
// core's run machine (src/run.rs, through the wasm class `Run` of
// src/shell/run.rs). The machine decides everything: each attempt's
// encoded request, which timer runs during which step and what it ends,
// the error of every failure, whether and how long to wait before the
// next attempt, and when read events are handed out. This file does what
// it says (fetch, read, wait, cancel) and tells it what happened. The
// per-chunk path is one wasm call, as decoding alone is.

import * as wasm from "./skyl_wasm.js";
import { wasmState } from "./load.js";
import { localError, makeError, requestError } from "./errors.js";
import { call, ready } from "./guard.js";
import { decoded, encoded, Input, parse, progressState, withFiles } from "./boundary.js";
import { CANCEL, INPUT, STEP } from "./policy.js";
import { fresh } from "./credentials.js";

/** Resolves after `ms`, or when the signal aborts. */
export const sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

/** A response's headers as `[[name, value], ...]` JSON, for the wasm. */
export function headerPairs(headers) {
  const out = [];
  headers?.forEach?.((v, k) => {
    out.push([k, v]);
  });
  return JSON.stringify(out);
}

/**
 * `res` if it is a Response (or looks like one: a whole-number status,
 * and a body or `text()`), else the error skyl::web gives for it (a
 * `fetch` option that resolved to something else).
 */
export function checkedResponse(res, key) {
  const s = res?.status;
  const readable = typeof res?.body === "object" || typeof res?.text === "function";
  if (Number.isInteger(s) && s >= 0 && s < 1000 && readable) return res;
  const what = res === null || typeof res !== "object" ? String(res) : "an object";
  const message = `invalid response body: the fetch function returned ${what}, not a Response`;
  throw makeError(localError("MalformedStreamError", "invalid_response", message), key);
}

/** What a thrown value says, for an error message. */
export const said = (e) => String(e?.message ?? e);

const utf8 = new TextEncoder();

/** A body chunk as bytes, whatever the stream yields. */
export function bytes(value) {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "string") return utf8.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(
    `a body chunk must be bytes (a Uint8Array), not ${Object.prototype.toString.call(value)}`,
  );
}

/**
 * A request's retries and timers as the wasm classes take them (`Limits`,
 * shell/run.rs): maxRetries, total, first-byte and idle milliseconds (0:
 * none), and a fresh seed for the backoff's jitter.
 */
export function limits(o) {
  const t = o.timeouts;
  const seed = Math.floor(Math.random() * 2 ** 32);
  return [o.maxRetries, t.total ?? 0, t.firstByte ?? 0, t.idle ?? 0, seed];
}

/** A request's `signal`: an AbortSignal, or absent. */
export function checkSignal(signal) {
  if (signal != null && typeof signal.addEventListener !== "function")
    throw requestError("signal", "must be an AbortSignal");
}

/**
 * `request` as the JSON text the core reads, without its `signal` (which
 * must be an AbortSignal, or absent); a value JSON cannot hold (a BigInt,
 * a cycle) is an InvalidRequestError, as the core's own checks are.
 */
export function requestJson(request) {
  const { signal, ...plain } = request ?? {};
  checkSignal(signal);
  try {
    return JSON.stringify(plain);
  } catch (e) {
    throw requestError("request", `cannot be sent as JSON (${e.message})`);
  }
}

/** Sends an encoded request (`{url, headers, body}`) with `fetchFn`, cancellable by `signal`. */
export const post = (fetchFn, http, signal) =>
  fetchFn(http.url, { method: "POST", headers: http.headers, body: http.body, signal });

/** Why the caller aborted, as text. */
export const why = (reason) =>
  reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";

const NO_TIMER = () => {};

/**
 * One logical request. `stopped` is the error that ended the whole run
 * early (the caller's signal, `abort()`, leaving `for await`, the total
 * timeout), as the machine made it.
 */
export class Run {
  constructor(o, key, fetchFn, request, streaming, given = null) {
    this.o = o;
    this.key = key;
    this.fetch = fetchFn;
    this.given = given;
    this.request = request;
    this.streaming = streaming;
    this.userSignal = request?.signal;
    // The wasm run machine, made once the module has loaded.
    this.m = null;
    this.input = new Input();
    this.stopped = null;
    // The final response has been handed over.
    this.finished = false;
    // Called once when the run is stopped (StreamResult rejects response()).
    this.onStop = null;
    // Undoes begin(): its timer and the caller's signal listener.
    this.release = null;
    // The current attempt: its fetch's controller, its response, its reader.
    this.controller = null;
    this.response = null;
    this.reader = null;
    // Aborted by stop() to end a retry wait; made only when one begins.
    this.halted = null;
    // The token or credentials this run gave each entry, once checked.
    this.gave = null;
    // The transport's exception behind the last failure, and the caller's
    // abort reason: the cause of a network error and of an abort.
    this.cause = undefined;
    this.reason = undefined;
    // A tool loop's step: makes the machine, and takes its response once done.
    this.make = null;
    this.onDone = null;
  }

  /** The machine (made on first use; the module must have loaded). */
  machine() {
    if (this.m) return this.m;
    const t = this.o.timeouts;
    if (this.make) {
      this.m = call(this.make);
    } else if (this.given) {
      this.m = call(() => wasm.Run.given(this.o.provider, t.total ?? 0, t.idle ?? 0));
    } else {
      const json = requestJson(this.request);
      this.m = call(() => new wasm.Run(this.o.config, json, this.streaming, ...limits(this.o)));
    }
    return this.m;
  }

  /** Loads the wasm if needed and makes the machine. */
  async prepare() {
    await ready();
    this.machine();
    if (this.stopped) throw this.stopped;
  }

  /**
   * Before an attempt, then `next` (the machine's start or waited): the
   * entry it goes to (the machine's `entry`) gets fresh credentials from
   * its callback (Bedrock) or its token (Vertex AI), refused ones renewed;
   * then the clock the attempt is signed at. A fallback's callback is
   * asked only when its entry is tried, and no callback for a request that
   * will not be sent. A load that fails is the machine's to decide, as an
   * attempt's failure is: the step it gives (a retry's wait, the next
   * provider), or its error with the providers that failed before.
   */
  async signed(next) {
    // (A stop in the wait before: no callback is asked for nothing.)
    if (this.stopped) throw this.stopped;
    const sources = [
      ...((SKYL_AWS && this.o.aws) || []),
      ...((SKYL_VERTEX && this.o.tokens) || []),
    ];
    if (sources.length) {
      if (!this.gave) {
        if (call(() => this.m.start(true)) === STEP.FAIL) throw this.failure();
        this.gave = {};
      }
      // (-1 - entry: the provider refused the entry's token or
      // credentials, to renew.)
      const at = call(() => this.m.entry);
      const own = (s) => s.entry === at || -1 - s.entry === at;
      try {
        await fresh(sources.filter(own), this, at < 0);
      } catch (e) {
        if (this.stopped) throw this.stopped;
        // (Its message if the core marked it retryable: the token
        // endpoint unreachable, its 429 or 5xx.)
        const cause = e?.retryable ? e.message : "";
        const step = call(() => this.m.input(INPUT.UNSIGNED, cause));
        if (step !== STEP.FAIL) return step;
        const { attempts } = parse(call(() => this.m.takeOutput())).error;
        if (!attempts?.length) throw e;
        // (A copy: the requests that waited on one load share its error.)
        const own = new e.constructor(e, { cause: e.cause });
        own.attempts = attempts;
        throw own;
      }
    }
    call(() => this.m.at(Date.now()));
    return call(next);
  }

  /**
   * `p`, unless the run stops first (its abort, its total timeout): then
   * the stop's error, without waiting for `p` (a callback that hangs).
   */
  until(p) {
    const loading = Promise.resolve(p);
    // (When the stop wins, how the load ends is nobody's: never unhandled.)
    loading.catch(() => {});
    if (this.stopped) return Promise.reject(this.stopped);
    this.halted ??= new AbortController();
    const { signal } = this.halted;
    return new Promise((resolve, reject) => {
      const stop = () => reject(this.stopped);
      signal.addEventListener("abort", stop, { once: true });
      loading.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
    });
  }

  /** The error of a FAIL step (or the run's stop, the same error). */
  failure() {
    if (this.stopped) return this.stopped;
    return this.error(call(() => this.m.takeOutput()));
  }

  /** The error of `{"error": info}` from the machine, with its cause. */
  error(json) {
    const { error } = parse(json);
    const cause =
      error.code === "network" ? this.cause : error.code === "abort" ? this.reason : undefined;
    return makeError(error, this.key, cause);
  }

  // ------------------------------------- stopping: aborts and timeouts

  /** Ends the whole run with `err`. */
  stop(err) {
    if (this.stopped) return;
    this.stopped = err;
    this.halted?.abort();
    this.cut();
    this.release?.();
    this.onStop?.(err);
  }

  /** Cancels what `c` (a CANCEL code from the machine) says. */
  cancel(c) {
    if (c === CANCEL.BODY) this.reader?.cancel().catch(() => {});
    else if (c === CANCEL.ATTEMPT) this.cut();
    else if (c === CANCEL.RUN) this.stop(this.error(call(() => this.m.stopped())));
  }

  /** A timer fired (the total one, or the current step's); the core says what it ends. */
  expire(total) {
    try {
      if (this.m) this.cancel(call(() => this.m.expired(total)));
    } catch (e) {
      // A panic (in a timer callback, with nobody to throw to): the run
      // ends with it.
      this.stop(e);
    }
  }

  /**
   * The caller stopped the run (abort(), leaving the loop). Before the
   * module has loaded (a browser, before first use) nothing was sent yet:
   * the run stops as soon as it has.
   */
  abort(reason) {
    if (!wasmState.done) {
      ready().then(
        () => this.abort(reason),
        () => {},
      );
      return;
    }
    if (this.stopped || this.finished) return;
    this.reason = reason;
    try {
      this.machine();
      this.cancel(call(() => this.m.abort(why(reason))));
    } catch (e) {
      this.stop(e); // a panic: the run ends with it
    }
  }

  /** Ends the current attempt: its fetch and body reader are cancelled. */
  cut() {
    this.controller?.abort();
    this.reader?.cancel().catch(() => {});
  }

  /** Starts run-wide guards (the caller's signal, the total timeout); returns their cleanup. */
  begin() {
    const signal = this.userSignal;
    if (signal?.aborted) {
      this.abort(signal.reason);
      // A request that could not be read has no run to abort: its own error.
      if (!this.stopped) call(() => this.m.start());
      const e = this.failure();
      this.free();
      throw e;
    }
    const onAbort = () => this.abort(signal.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const total = call(() => this.m.timerMs(true));
    const timer = total ? setTimeout(() => this.expire(true), total) : null;
    this.release = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    return this.release;
  }

  /** Starts the timer of the step being carried out, if it has one; returns its cleanup. */
  arm() {
    const ms = call(() => this.m.timerMs(false));
    if (!ms) return NO_TIMER;
    const t = setTimeout(() => this.expire(false), ms);
    return () => clearTimeout(t);
  }

  /** Frees the machine (at the run's end). */
  free() {
    const m = this.m;
    this.m = null;
    try {
      m?.free();
    } catch {
      /* after a panic the instance is unusable anyway */
    }
  }

  // ------------------------------------------------------- the steps

  /** Carries out steps until one the caller handles: DELIVER, DONE or FAIL. */
  async drive(step) {
    for (;;) {
      if (step === STEP.SEND) step = await this.send();
      else if (step === STEP.READ) step = await this.read();
      else if (step === STEP.WAIT) step = await this.wait();
      else if (step === STEP.TAKE) step = this.responded(this.given);
      else return step;
    }
  }

  /** SEND: sends the attempt's request, the first-byte timer running. */
  async send() {
    const http = encoded(call(() => this.m.takeOutput())).ok;
    this.controller = new AbortController();
    this.response = null;
    this.reader = null;
    this.cause = undefined;
    const disarm = this.arm();
    let res;
    try {
      res = await post(this.fetch, http, this.controller.signal);
    } catch (e) {
      this.cause = e;
      return call(() => this.m.input(INPUT.UNREACHABLE, said(e)));
    } finally {
      disarm();
    }
    return this.responded(checkedResponse(res, this.key));
  }

  responded(res) {
    this.response = res;
    return call(() => this.m.responded(res.status, headerPairs(res.headers), Date.now()));
  }

  /**
   * READ: reads chunks, the idle timer guarding each, until the machine
   * asks for something else (the pull loop: a chunk that completes no
   * event is followed by the next read).
   */
  async read() {
    const res = this.response;
    if (!this.reader) {
      if (typeof res?.body?.getReader !== "function") return this.readWhole(res);
      this.reader = res.body.getReader();
    }
    const ms = call(() => this.m.timerMs(false));
    for (;;) {
      const t = ms ? setTimeout(() => this.expire(false), ms) : null;
      let result;
      let chunk;
      try {
        result = await this.reader.read();
        // A chunk that is not bytes ends the body as a break does.
        if (!result.done) chunk = bytes(result.value);
      } catch (e) {
        this.cause = e;
        return call(() => this.m.input(INPUT.LOST, said(e)));
      } finally {
        clearTimeout(t);
      }
      const step = result.done ? call(() => this.m.input(INPUT.ENDED)) : this.feed(chunk);
      if (step !== STEP.READ) return step;
    }
  }

  /** A response without a body stream (a `fetch` option's own object): its text, whole. */
  async readWhole(res) {
    let text = "";
    try {
      text = typeof res?.text === "function" ? await res.text() : "";
    } catch (e) {
      this.cause = e;
      return call(() => this.m.input(INPUT.LOST, said(e)));
    }
    const step = this.feed(utf8.encode(text));
    return step === STEP.READ ? call(() => this.m.input(INPUT.ENDED)) : step;
  }

  /** Feeds a chunk through the machine's input buffer in wasm memory. */
  feed(chunk) {
    const n = this.input.put(this.m, chunk);
    return call(() => this.m.feedInput(n));
  }

  /** WAIT: closes the failed attempt's connection, then waits; stop() ends the wait. */
  async wait() {
    this.cut();
    const ms = call(() => this.m.timerMs(false));
    this.halted ??= new AbortController();
    // (0 ms: the switch to a fallback, or a token to renew.)
    if (ms) await sleep(ms, this.halted.signal);
    return this.signed(() => this.m.input(INPUT.WAITED));
  }

  // ------------------------------------------------- the two results

  /** The whole response. */
  async complete() {
    await this.prepare();
    const end = this.begin();
    try {
      const step = await this.drive(await this.signed(() => this.m.start()));
      if (step !== STEP.DONE) throw this.failure();
      this.finished = true;
      return parse(call(() => this.m.takeOutput())).response;
    } finally {
      end();
      this.free();
    }
  }

  /** The events of the stream, handed out as soon as their bytes are decoded. */
  async *events(onResponse) {
    await this.prepare();
    const end = this.begin();
    let failure;
    const sent = [];
    const progress = progressState();
    try {
      let step = await this.signed(() => this.m.start());
      for (;;) {
        step = await this.drive(step);
        if (step !== STEP.DELIVER) break;
        const chunk = decoded(
          call(() => this.m.takeOutput()),
          sent,
          progress,
          () => call(() => this.m.takeApart()),
        );
        for (const ev of chunk.events) {
          // stream.abort() or the caller's signal while the loop body ran:
          // nothing more is handed out.
          if (this.stopped) throw this.stopped;
          // response() settles before the finish event is handed out, so a
          // loop may await it there (and `break` at it keeps it).
          if (ev.type === "finish" && chunk.response) this.finish(chunk.response, onResponse);
          yield ev;
        }
        step = call(() => this.m.input(INPUT.DELIVERED));
      }
      if (step !== STEP.DONE) throw this.failure();
      this.onDone?.(this.m);
    } catch (e) {
      failure = e;
      if (e?.partial) withFiles(e.partial, progress);
      throw e;
    } finally {
      // Leaving early (break, return(), an error) cancels the request;
      // response() rejects with the error, or AbortError.
      if (!this.finished) {
        if (failure) this.stop(failure);
        else this.abort();
      }
      end();
      this.free();
    }
  }

  /** Hands over the final response (once). */
  finish(response, onResponse) {
    if (this.finished) return;
    this.finished = true;
    onResponse(response);
  }
}
