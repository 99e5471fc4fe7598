// One request from start to end: the Run class (encoding, attempts,
// retries, timeouts, cancellation, reading the body) and the small HTTP
// helpers it uses. The retry policy and every decoding are the core's.

import * as wasm from "./skyl_wasm.js";
import { localError, makeError, SkylError } from "./errors.js";
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

/**
 * A response's headers as [name, value] pairs for the wasm. A `retry-after`
 * that is an HTTP date (RFC 9110) is also given as `retry-after-ms` from
 * now: the core has no clock.
 */
function headerPairs(headers) {
  const out = [];
  headers?.forEach?.((v, k) => {
    out.push([k, v]);
  });
  const after = headers?.get?.("retry-after");
  const at = after && !/^\s*[\d.]+\s*$/.test(after) ? Date.parse(after) : NaN;
  if (!Number.isNaN(at) && !headers.has("retry-after-ms"))
    out.push(["retry-after-ms", String(Math.max(0, at - Date.now()))]);
  return out;
}

/** The request id of a response (the headers `crate::http::request_id` reads, in its order). */
function requestId(headers) {
  for (const name of ["x-request-id", "request-id", "x-goog-request-id", "cf-ray"]) {
    const v = headers?.get?.(name);
    if (v) return v;
  }
  return undefined;
}

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
    this.yielded = false;
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
    // The request id of the current attempt's response.
    this.requestId = undefined;
    this.userSignal = request?.signal;
    this.request = request;
    this.streaming = streaming;
    this.http = null;
  }

  /** Loads the wasm if needed and encodes the request (once). */
  async prepare() {
    await ready();
    if (this.given || this.http) return;
    const { signal, ...plain } = this.request ?? {};
    const out = encoded(
      call(() => wasm.encodeRequest(this.o.config, JSON.stringify(plain), this.streaming)),
    );
    if (out.error) throw makeError(out.error, this.key);
    this.http = out.ok;
  }

  // ---------------------------------------------------- the run's errors

  error(name, code, message, extra, cause) {
    return makeError(
      localError(name, code, message, { provider: this.o.provider, ...extra }),
      this.key,
      cause,
    );
  }

  abortError(reason) {
    const why = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
    return this.error(
      "AbortError",
      "abort",
      why ? `request aborted: ${why}` : "request aborted",
      {},
      reason,
    );
  }

  timeoutError(which, ms) {
    const what = {
      "first byte": "response",
      idle: "data between chunks",
      total: "complete response",
    }[which];
    return this.error("TimeoutError", "timeout", `${which} timeout: no ${what} within ${ms} ms`, {
      retryable: which !== "total" && !this.yielded,
    });
  }

  bodyError(e) {
    return this.error(
      "ConnectionError",
      "network",
      `the connection broke while reading the response: ${e?.message ?? e}`,
      { retryable: !this.yielded, eventsEmitted: this.yielded },
      e,
    );
  }

  /** The error of an in-band failure (inside a 2xx body), with the response's request id. */
  inBand(info) {
    info.requestId ??= this.requestId;
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
   * A timeout fired. After the stream's terminal frame nothing is missing
   * (a server or proxy kept the connection open): the body is ended there
   * and the stream finishes normally instead of failing.
   */
  expire(which, ms) {
    let complete = false;
    try {
      complete = this.decoding?.isComplete() ?? false;
    } catch {
      /* a panic: reported by the next call */
    }
    if (complete) {
      this.reader?.cancel().catch(() => {});
      return;
    }
    const err = this.timeoutError(which, ms);
    if (which === "total") this.stop(err);
    else this.cut(err);
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
    const onAbort = () => this.stop(this.abortError(this.userSignal.reason));
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
    this.requestId = requestId(res.headers);
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
          JSON.stringify(headerPairs(res.headers)),
          text,
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
      ? setTimeout(() => this.cut(this.timeoutError("first byte", firstByte)), firstByte)
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
      throw this.error(
        "ConnectionError",
        "network",
        `could not reach ${new URL(this.http.url).host}: ${e?.message ?? e}`,
        { retryable: true },
        e,
      );
    } finally {
      clearTimeout(timer);
    }
    return res;
  }

  /** Runs `body` again after retryable failures, while nothing has been yielded. */
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
   * The wait before retrying after `err` (with `retries` done), or -1: none
   * once the run is stopped, for a body the caller gave, once an event was
   * handed out, or for an error that is not retryable.
   */
  retryDelay(err, retries) {
    if (this.stopped || this.given || this.yielded || !(err instanceof SkylError) || !err.retryable)
      return -1;
    return call(() =>
      wasm.retryDelay(retries, this.o.maxRetries, err.retryAfterMs ?? -1, Math.random()),
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
      throw this.wasCut ? this.reason(e) : this.bodyError(e);
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
      const timer = setTimeout(() => this.cut(this.timeoutError("idle", idle)), idle);
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
          this.yielded = true;
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
    e.eventsEmitted ??= this.yielded;
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
        // The connection broke after the terminal frame: nothing is
        // missing, so the stream ends normally.
        if (decoder.isComplete()) return decoder.finish();
        const err = this.bodyError(e);
        err.partial = decoder.partial();
        throw err;
      } finally {
        clearTimeout(timer);
      }
      if (this.stopped || this.failure) throw this.reason();
      const out = result.done ? decoder.finish() : decoder.feed(bytes(result.value));
      if (out.error && this.yielded) {
        out.error.eventsEmitted = true;
        out.error.retryable = false;
      }
      if (result.done || out.events.length || out.error) return out;
    }
  }
}
