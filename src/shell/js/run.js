// One request from start to end: the Run class (encoding, attempts,
// retries, timeouts, cancellation, reading the body) and the small HTTP
// helpers it uses. This is a driver: it does the I/O and keeps the timers,
// and asks the core (src/policy.rs, through the wasm) every decision: the
// transport's errors (network, timeout, abort), whether and when to retry,
// what a timeout or a broken connection means, the request id, the
// `retry-after` date. Those are failure paths or once per request; the
// per-chunk path calls nothing more than the decoder.

import * as wasm from "./skyl_wasm.js";
import { wasmState } from "./load.js";
import { makeError, SkylError } from "./errors.js";
import { call, ready } from "./guard.js";
import { Decoding, encoded, parse } from "./boundary.js";

/** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** A response's headers as `[[name, value], ...]` JSON, for the wasm. */
function headerPairs(headers) {
  const out = [];
  headers?.forEach?.((v, k) => {
    out.push([k, v]);
  });
  return JSON.stringify(out);
}

/** What a thrown value says, for an error message. */
const said = (e) => String(e?.message ?? e);

const utf8 = new TextEncoder();

/** A body chunk as bytes, whatever the stream yields. */
function bytes(value) {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "string") return utf8.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`unsupported body chunk: ${Object.prototype.toString.call(value)}`);
}

/**
 * One logical request: attempts, retries, timeouts, cancellation, decoding.
 *
 * Two levels of failure: `stopped` ends the whole run (the caller's signal,
 * `abort()`, leaving `for await`, the total timeout); `failure` ends one
 * attempt (first-byte or idle timeout), which may be retried while no event
 * has been handed out.
 */
export class Run {
  constructor(o, key, fetchFn, request, streaming, body = null) {
    this.o = o;
    this.key = key;
    this.fetch = fetchFn;
    this.given = body;
    this.eventsEmitted = false;
    this.stopped = null;
    // Aborted by stop() to end a retry wait; made only when one begins
    // (an AbortController costs Node a few microseconds; most runs never
    // wait).
    this.halted = null;
    this.failure = null;
    this.controller = null;
    this.reader = null;
    // The current attempt's stream decoder (a timeout asks it whether the
    // stream is already complete).
    this.decoding = null;
    // The final response has been handed over.
    this.finished = false;
    // Called once when the run is stopped (StreamResult rejects response()).
    this.onStop = null;
    // Undoes begin(): its timer and the caller's signal listener.
    this.release = null;
    // The current attempt's response headers (for its request id).
    this.headers = undefined;
    // abort() came before the module loaded (see abort()).
    this.abortPending = null;
    this.userSignal = request?.signal;
    this.request = request;
    this.streaming = streaming;
    this.http = null;
  }

  /** Loads the wasm if needed and encodes the request (once). */
  async prepare() {
    await ready();
    if (this.abortPending) this.abort(this.abortPending.reason);
    if (this.stopped) throw this.stopped;
    if (this.given || this.http) return;
    const { signal, ...plain } = this.request ?? {};
    const out = encoded(
      call(() => wasm.encodeRequest(this.o.config, JSON.stringify(plain), this.streaming)),
    );
    if (out.error) throw makeError(out.error, this.key);
    this.http = out.ok;
  }

  // ---------------------------------------------------- the run's errors
  // Made by the core (src/policy.rs): its class, message and `retryable`.

  /**
   * The core's answer to what interrupted the run (`what`: a timer, the
   * connection, an abort; see `interrupt` in src/shell/decisions.rs), with
   * whether an event was handed out: null when the body just ends, else
   * `{ error, stop }` (`stop`: the whole run ends, not just the attempt).
   */
  interrupt(what, cause) {
    what.eventsEmitted = this.eventsEmitted;
    const out = call(() => wasm.interrupt(this.o.provider, JSON.stringify(what)));
    if (!out) return null;
    const { error, stop } = parse(out);
    return { error: makeError(error, this.key, cause), stop };
  }

  abortError(reason) {
    const why = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
    return this.interrupt({ abort: why }, reason).error;
  }

  /** The error of an in-band failure (inside a 2xx body), with the response's request id. */
  inBand(info) {
    info.requestId ??= call(() => wasm.requestId(headerPairs(this.headers))) || undefined;
    return makeError(info, this.key);
  }

  // ------------------------------------- stopping: aborts and timeouts

  /** Ends the whole run with `err`. */
  stop(err) {
    if (this.stopped) return;
    this.stopped = err;
    this.halted?.abort(err);
    this.cut(err);
    this.release?.();
    this.onStop?.(err);
  }

  /**
   * The timer `which` (firstByte, idle, total) fired after `ms`; the core
   * says what that means. After the stream's terminal frame nothing is
   * missing (a server or proxy kept the connection open): the body is ended
   * there and the stream finishes normally. Else the total timeout stops
   * the run, and the others end the attempt.
   */
  expire(which, ms) {
    let cut;
    try {
      const complete = this.decoding?.isComplete() ?? false;
      cut = this.interrupt({ timeout: which, afterMs: ms, complete });
    } catch (e) {
      // A panic (in a timer callback, with nobody to throw to): the run
      // ends with it.
      this.stop(e);
      return;
    }
    if (!cut) this.reader?.cancel().catch(() => {});
    else if (cut.stop) this.stop(cut.error);
    else this.cut(cut.error);
  }

  /**
   * The caller stopped the run (abort(), leaving the loop). Before the
   * module has loaded (a browser, before first use) nothing was sent yet:
   * the run stops with the core's AbortError as soon as it has.
   */
  abort(reason) {
    if (!wasmState.done) {
      this.abortPending ??= { reason };
      ready().then(
        () => this.abort(reason),
        () => {},
      );
      return;
    }
    let err;
    try {
      err = this.abortError(reason);
    } catch (e) {
      err = e; // a panic: the run ends with it
    }
    this.stop(err);
  }

  /** Ends the current attempt with `err`: the fetch and body reader are cancelled. */
  cut(err) {
    this.failure ??= err;
    this.controller?.abort(err);
    this.reader?.cancel(err).catch(() => {});
  }

  /** The error to report for `e`: the reason the run or attempt was cut, if it was. */
  reason(e) {
    return this.stopped ?? this.failure ?? e;
  }

  /** Whether the run or the current attempt was cut on purpose. */
  get wasCut() {
    return this.stopped !== null || this.failure !== null;
  }

  /** Starts run-wide guards (the caller's signal, the total timeout); returns their cleanup. */
  begin() {
    if (this.userSignal?.aborted) throw this.abortError(this.userSignal.reason);
    const onAbort = () => this.abort(this.userSignal.reason);
    this.userSignal?.addEventListener("abort", onAbort, { once: true });
    const { total } = this.o.timeouts;
    const timer = total ? setTimeout(() => this.expire("total", total), total) : null;
    this.release = () => {
      clearTimeout(timer);
      this.userSignal?.removeEventListener("abort", onAbort);
    };
    return this.release;
  }

  // ------------------------------------------------ attempts and retries

  /** One HTTP attempt: the Response (2xx) or a typed error. */
  async attempt() {
    if (this.stopped) throw this.stopped;
    this.failure = null;
    this.reader = null;
    this.decoding = null;
    const res = this.given ?? (await this.send());
    this.headers = res.headers;
    if (!res.ok) throw await this.httpError(res);
    return res;
  }

  /** The typed error of a response that is not 2xx, from its status, headers and body. */
  async httpError(res) {
    let text = "";
    try {
      text = await res.text();
    } catch (e) {
      if (this.wasCut) throw this.reason(e);
    }
    const info = parse(
      call(() =>
        wasm.decodeHttpError(
          this.o.provider,
          res.status,
          headerPairs(res.headers),
          text,
          Date.now(),
        ),
      ),
    ).error;
    return makeError(info, this.key);
  }

  /** Sends the request: the Response, whatever its status, or a typed error. */
  async send() {
    this.controller = new AbortController();
    const { firstByte } = this.o.timeouts;
    const timer = firstByte
      ? setTimeout(() => this.expire("firstByte", firstByte), firstByte)
      : null;
    let res;
    try {
      res = await this.fetch(this.http.url, {
        method: "POST",
        headers: this.http.headers,
        body: this.http.body,
        signal: this.controller.signal,
      });
    } catch (e) {
      if (this.wasCut) throw this.reason(e);
      throw this.interrupt({ unreachable: this.http.url, cause: said(e) }, e).error;
    } finally {
      clearTimeout(timer);
    }
    return res;
  }

  /** Runs `body` again after retryable failures, while no event has been handed out. */
  async withRetries(body) {
    for (let retries = 0; ; retries++) {
      try {
        return await body();
      } catch (e) {
        const err = this.reason(e);
        const delay = this.retryDelay(err, retries);
        if (delay < 0) throw err;
        await this.pause(delay, err);
      }
    }
  }

  /**
   * The wait before retrying after `err` (with `retries` done), or -1: the
   * core's decision from the error's `retryable` and `retryAfterMs` (which
   * it computed), the retries left and whether an event was handed out.
   * (A stopped run's error, an abort or the total timeout, is not
   * retryable; a body the caller gave has no retries.) A value that is not
   * an error the core described is never retried.
   */
  retryDelay(err, retries) {
    if (!(err instanceof SkylError)) return -1;
    const { retryable, retryAfterMs } = err;
    return call(() =>
      wasm.retryDelay(
        retries,
        this.o.maxRetries,
        retryable,
        this.eventsEmitted,
        retryAfterMs ?? -1,
        Math.random(),
      ),
    );
  }

  /** Waits `ms` before the next attempt; stop() ends the wait with its error. */
  async pause(ms, err) {
    // The failed attempt's connection is closed before the next one.
    this.cut(err);
    try {
      // (stop() has not run: retryDelay() checked `this.stopped`, and
      // nothing was awaited since.)
      this.halted ??= new AbortController();
      await sleep(ms, this.halted.signal);
    } catch {
      throw this.stopped ?? err;
    }
  }

  // ---------------------------------------------- the whole response

  async complete() {
    await this.prepare();
    const end = this.begin();
    try {
      return await this.withRetries(() => this.completeAttempt());
    } finally {
      end();
    }
  }

  /** One attempt of `complete()`: the decoded response, or a typed error. */
  async completeAttempt() {
    const res = await this.attempt();
    let text;
    try {
      text = await this.readText(res);
    } catch (e) {
      throw this.wasCut ? this.reason(e) : this.interrupt({ lost: said(e) }, e).error;
    }
    const out = parse(call(() => wasm.decodeResponse(this.o.provider, text)));
    if (out.error) throw this.inBand(out.error);
    return out.response;
  }

  /** A whole body as text, the idle timeout guarding each chunk. */
  async readText(res) {
    const { idle } = this.o.timeouts;
    if (!idle || typeof res.body?.getReader !== "function") return res.text();
    this.reader = res.body.getReader();
    const utf8In = new TextDecoder();
    let text = "";
    for (;;) {
      const timer = setTimeout(() => this.expire("idle", idle), idle);
      let result;
      try {
        result = await this.reader.read();
      } finally {
        clearTimeout(timer);
      }
      if (this.stopped || this.failure) throw this.reason();
      if (result.done) return text + utf8In.decode();
      text += utf8In.decode(bytes(result.value), { stream: true });
    }
  }

  // ------------------------------------------------------- the stream

  /** The events of the stream, handed out as soon as their bytes are decoded. */
  async *events(onResponse) {
    await this.prepare();
    const end = this.begin();
    let decoder = null;
    let failure;
    try {
      const opened = await this.withRetries(() => this.streamAttempt());
      decoder = opened.decoder;
      let chunk = opened.first;
      for (;;) {
        for (const ev of chunk.events) {
          // stream.abort() or the caller's signal while the loop body ran:
          // nothing more is handed out.
          if (this.stopped) throw this.stopped;
          // response() settles before the finish event is handed out, so a
          // loop may await it there (and `break` at it keeps it).
          if (ev.type === "finish" && chunk.response) this.finish(chunk.response, onResponse);
          this.eventsEmitted = true;
          yield ev;
        }
        if (chunk.error) throw this.inBand(chunk.error);
        if (chunk.response) {
          this.finish(chunk.response, onResponse);
          return;
        }
        chunk = await this.pull(decoder);
      }
    } catch (e) {
      if (decoder) this.keepPartial(e, decoder);
      failure = e;
      throw e;
    } finally {
      decoder?.free();
      this.decoding = null;
      // Leaving early (break, return(), an error) cancels the request;
      // response() rejects with the error, or AbortError.
      if (!this.finished) this.stop(this.stopped ?? failure ?? this.abortError());
      end();
    }
  }

  /**
   * One attempt of `events()`, up to its first events: `{ decoder, first }`
   * (a result of `pull`), or a typed error, the decoder freed.
   */
  async streamAttempt() {
    const res = await this.attempt();
    const d = new Decoding(this.o.provider);
    this.decoding = d;
    try {
      this.reader = res.body ? res.body.getReader() : null;
      const first = await this.pull(d);
      // An error before any event may be retried (in-band overloaded,
      // an early end): nothing was handed out yet.
      if (first.error && first.events.length === 0) throw this.inBand(first.error);
      return { decoder: d, first };
    } catch (e) {
      d.free();
      throw e;
    }
  }

  /**
   * A failure after the stream began (a timeout, an abort, a broken
   * connection) keeps what had been assembled.
   */
  keepPartial(e, decoder) {
    if (!(e instanceof SkylError) || e.partial !== undefined) return;
    try {
      e.partial = decoder.partial();
    } catch {
      /* a panic: reported as it is */
    }
    e.eventsEmitted ??= this.eventsEmitted;
  }

  /** Hands over the final response (once). */
  finish(response, onResponse) {
    if (this.finished) return;
    this.finished = true;
    onResponse(response);
  }

  /** Reads until at least one event, the end of the body, or an error: { events, response?, error? }. */
  async pull(decoder) {
    const { idle } = this.o.timeouts;
    for (;;) {
      let result;
      const timer = idle ? setTimeout(() => this.expire("idle", idle), idle) : null;
      try {
        result = this.reader ? await this.reader.read() : { done: true };
      } catch (e) {
        if (this.wasCut) throw this.reason(e);
        // The connection broke: after the terminal frame nothing is
        // missing, and the stream ends normally (the core says which).
        const cut = this.interrupt({ lost: said(e), complete: decoder.isComplete() }, e);
        if (!cut) return decoder.finish();
        cut.error.partial = decoder.partial();
        throw cut.error;
      } finally {
        clearTimeout(timer);
      }
      if (this.stopped || this.failure) throw this.reason();
      // (An error after events says so and is not retryable: the core's
      // decoder knows what it handed out, as this loop does.)
      const out = result.done ? decoder.finish() : decoder.feed(bytes(result.value));
      if (result.done || out.events.length || out.error) return out;
    }
  }
}
