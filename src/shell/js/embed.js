// One embeddings call: `client.embed`, a thin executor of the core's embed
// machine (src/embed.rs, through the wasm class `Embed` of
// src/shell/embed.rs). The machine splits the values into batches, says
// how many workers run at once, and decides each batch's retries, halving
// and failure; this file runs the workers (fetch, read, wait, cancel) and
// tells it what happened. The vectors cross once, at the end, as one
// Float32Array.

import * as wasm from "./skyl_wasm.js";
import { makeError } from "./errors.js";
import { call, ready } from "./guard.js";
import { encoded, memoryBytes, parse } from "./boundary.js";
import { CANCEL, INPUT, STEP } from "./policy.js";
import {
  bytes,
  checkedResponse,
  headerPairs,
  limits,
  post,
  requestJson,
  said,
  sleep,
  why,
} from "./run.js";

/** One `client.embed(request)`. */
export class Embed {
  constructor(o, key, fetchFn, request) {
    this.o = o;
    this.key = key;
    this.fetch = fetchFn;
    this.request = request;
    this.m = null;
    // Per worker: its fetch's controller, body reader and current step.
    this.slots = [];
    this.stopped = false;
    this.halted = new AbortController();
    this.reason = undefined;
  }

  async run() {
    await ready();
    const json = requestJson(this.request);
    const signal = this.request?.signal;
    this.m = call(() => new wasm.Embed(this.o.config, json, ...limits(this.o)));
    try {
      const invalid = call(() => this.m.invalid());
      if (invalid) throw makeError(parse(invalid).error, this.key);
      const onAbort = () => this.abort(signal.reason);
      if (signal?.aborted) onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      const total = call(() => this.m.timerMs(STEP.DONE, 0));
      const timer = total ? setTimeout(() => this.expire(0, true), total) : null;
      try {
        const n = this.stopped ? 0 : call(() => this.m.workers());
        const workers = [];
        for (let w = 0; w < n; w++) workers.push(this.worker(w));
        // Every worker ends before the machine is read (or freed).
        const ends = await Promise.allSettled(workers);
        const thrown = ends.find((e) => e.status === "rejected")?.reason;
        if (thrown) {
          // (A JS error, such as a fetch that gave no Response, keeps the
          // vectors that came; after a panic there are none to read.)
          try {
            this.result();
          } catch (e) {
            thrown.partial ??= e.partial;
          }
          throw thrown;
        }
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      }
      return this.result();
    } finally {
      this.m.free();
      this.m = null;
    }
  }

  /** The machine's result: the embeddings, or its error with every vector that came. */
  result() {
    const code = call(() => this.m.finish());
    const out = parse(call(() => this.m.takeOutput()));
    const addresses = call(() => this.m.vectorAddresses());
    // One buffer, each vector copied straight out of wasm memory into its
    // part (no wasm call in between: the memory stays put); each vector is
    // a view of its part.
    const all = new Float32Array(out.lengths.reduce((a, n) => a + (n ?? 0), 0));
    const memory = wasm.wasmMemory().buffer;
    const embeddings = [];
    const failed = [];
    let at = 0;
    out.lengths.forEach((n, i) => {
      if (n === null) {
        embeddings.push(undefined);
        failed.push(i);
        return;
      }
      all.set(new Float32Array(memory, addresses[i], n), at);
      embeddings.push(all.subarray(at, at + n));
      at += n;
    });
    if (code === STEP.DONE) {
      const { model, batches, usage } = out;
      return { embeddings, usage: usage ?? null, model, batches };
    }
    const cause = out.error.code === "abort" ? this.reason : undefined;
    const err = makeError(out.error, this.key, cause);
    err.partial = { embeddings, failed };
    throw err;
  }

  /** Carries out worker `w`'s steps until it is idle. */
  async worker(w) {
    this.slots[w] = { controller: null, reader: null, step: STEP.DONE };
    try {
      let step = call(() => this.m.input(w, INPUT.NEXT));
      for (;;) {
        this.slots[w].step = step;
        if (step === STEP.SEND) step = await this.send(w);
        else if (step === STEP.READ) step = await this.read(w);
        else if (step === STEP.WAIT) step = await this.wait(w);
        else return;
      }
    } catch (e) {
      // A panic, or a fetch that gave no Response: every worker stops,
      // the machine told (the others' cut fetches are not retried).
      this.abort();
      throw e;
    }
  }

  /** Starts the timer of worker `w`'s step, if it has one; returns its cleanup. */
  arm(w, step) {
    const ms = call(() => this.m.timerMs(step, w));
    if (!ms) return () => {};
    const t = setTimeout(() => this.expire(w, false), ms);
    return () => clearTimeout(t);
  }

  async send(w) {
    const http = encoded(call(() => this.m.takeOutput())).ok;
    const slot = this.slots[w];
    slot.controller = new AbortController();
    slot.reader = null;
    const disarm = this.arm(w, STEP.SEND);
    let res;
    try {
      res = await post(this.fetch, http, slot.controller.signal);
    } catch (e) {
      return call(() => this.m.input(w, INPUT.UNREACHABLE, said(e)));
    } finally {
      disarm();
    }
    slot.response = checkedResponse(res, this.key);
    return call(() => this.m.responded(w, res.status, headerPairs(res.headers), Date.now()));
  }

  async read(w) {
    const slot = this.slots[w];
    const res = slot.response;
    slot.response = null;
    if (typeof res?.body?.getReader !== "function") {
      try {
        const text = typeof res?.text === "function" ? await res.text() : "";
        const chunk = bytes(text);
        this.put(w, [chunk], chunk.length);
      } catch (e) {
        return call(() => this.m.input(w, INPUT.LOST, said(e)));
      }
      return call(() => this.m.input(w, INPUT.ENDED));
    }
    slot.reader = res.body.getReader();
    // The chunks go into wasm memory together at the end: one copy, into
    // room made once, rather than a buffer grown (and copied) as they come.
    const chunks = [];
    let length = 0;
    for (;;) {
      const disarm = this.arm(w, STEP.READ);
      let result;
      let chunk;
      try {
        result = await slot.reader.read();
        // A chunk that is not bytes ends the body as a break does.
        if (!result.done) chunk = bytes(result.value);
      } catch (e) {
        return call(() => this.m.input(w, INPUT.LOST, said(e)));
      } finally {
        disarm();
      }
      if (result.done) {
        this.put(w, chunks, length);
        return call(() => this.m.input(w, INPUT.ENDED));
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  }

  /** Writes worker `w`'s body (`chunks`, `length` bytes) straight into its room in wasm memory. */
  put(w, chunks, length) {
    let at = call(() => this.m.chunkBuffer(w, length));
    if (!at) return;
    const memory = memoryBytes();
    for (const c of chunks) {
      memory.set(c, at);
      at += c.length;
    }
  }

  async wait(w) {
    this.cut(w);
    const ms = call(() => this.m.timerMs(STEP.WAIT, w));
    await sleep(ms, this.halted.signal);
    return call(() => this.m.input(w, INPUT.WAITED));
  }

  /** Ends worker `w`'s attempt: its fetch and body reader are cancelled. */
  cut(w) {
    const slot = this.slots[w];
    slot?.controller?.abort();
    slot?.reader?.cancel().catch(() => {});
  }

  /** Ends every worker's attempt and wait. */
  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.halted.abort();
    for (let w = 0; w < this.slots.length; w++) this.cut(w);
  }

  cancel(c, w) {
    if (c === CANCEL.ATTEMPT) this.cut(w);
    else if (c === CANCEL.RUN) this.stop();
  }

  /** A timer fired: the total one, or worker `w`'s; the core says what it ends. */
  expire(w, total) {
    if (!this.m) return;
    const step = this.slots[w]?.step ?? STEP.DONE;
    try {
      this.cancel(
        call(() => this.m.expired(w, total, step)),
        w,
      );
    } catch {
      this.stop();
    }
  }

  abort(reason) {
    if (!this.m) return;
    this.reason = reason;
    try {
      this.cancel(call(() => this.m.abort(why(reason))));
    } catch {
      this.stop();
    }
  }
}
