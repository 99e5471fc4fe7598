// What `client.stream()` and `decodeStream()` return: the async iterator
// over a Run's events, and the promise of its final response.

import { InvalidRequestError, localError } from "./errors.js";

/** What `client.stream()` returns: an async iterable of events with `response()` and `abort()`. */
export class StreamResult {
  #run;
  #iterating = false;
  #final;
  #resolve;
  #reject;

  constructor(run) {
    this.#run = run;
    this.#final = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#final.catch(() => {}); // observed through response() only
    // abort(), the caller's signal or the total timeout reject response()
    // at once, even while nobody is reading the stream.
    run.onStop = (err) => {
      if (!run.finished) this.#reject(err);
    };
  }

  [Symbol.asyncIterator]() {
    if (this.#iterating)
      throw new InvalidRequestError(
        localError(
          "InvalidRequestError",
          "already_consumed",
          "this stream is already being read: iterate it once",
        ),
      );
    this.#iterating = true;
    const gen = this.#run.events((r) => this.#resolve(r));
    const reject = this.#reject;
    const run = this.#run;
    // Our own iterator object: ReadableStream's async iteration is not
    // relied on anywhere (Safari lacks it).
    return {
      async next() {
        try {
          return await gen.next();
        } catch (e) {
          reject(e);
          throw e;
        }
      },
      async return(value) {
        // Stopped first: a next() still waiting for data would hold
        // gen.return() back until the data came.
        // (stop() rejects response() through run.onStop.)
        if (!run.finished && !run.stopped) run.abort();
        return gen.return(value);
      },
      async throw(e) {
        reject(e);
        return gen.throw(e);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** The final response; reads the stream to the end if nobody iterates it. */
  response() {
    if (!this.#iterating) {
      (async () => {
        for await (const _ of this) {
          /* drain */
        }
      })().catch(() => {});
    }
    return this.#final;
  }

  /** Cancels the request: the fetch and the body reader are aborted. */
  abort(reason) {
    this.#run.abort(reason);
  }
}
