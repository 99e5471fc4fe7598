// The stream contract at its edges: when response() settles, what abort(),
// return() and timeouts do to a stream being read, and what a failure
// keeps. Bodies come from an injected fetch (the `fetch` option) whose
// Response streams chunks the test controls, so each case can pause,
// stall or keep the connection open exactly where it needs to.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { skyl, sleep, eventually } from "./helpers.mjs";

const utf8 = new TextEncoder();
const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const START =
  sse("message_start", {
    message: { id: "m1", model: "c", content: [], usage: { input_tokens: 1, output_tokens: 1 } },
  }) + sse("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
const text = (t) =>
  sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } });
const END =
  sse("content_block_stop", { index: 0 }) +
  sse("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }) +
  sse("message_stop", {});
const STALL = null;

/**
 * A fetch whose n-th call streams `attempts[n]` (the last one repeats): a
 * list of string chunks, STALL for a body that never sends more, or a
 * Response to return as it is. `log` records attempts, aborts and cancels.
 */
function fakeFetch(attempts, log = []) {
  let n = 0;
  return async (_url, init) => {
    const chunks = attempts[Math.min(n++, attempts.length - 1)];
    const id = n;
    log.push(`attempt ${id}`);
    init.signal?.addEventListener("abort", () => log.push(`aborted ${id}`));
    if (chunks instanceof Response) return chunks;
    let i = 0;
    const body = new ReadableStream(
      {
        pull(c) {
          if (i >= chunks.length) return c.close();
          const chunk = chunks[i++];
          if (chunk === STALL) return new Promise(() => {});
          c.enqueue(utf8.encode(chunk));
        },
        cancel() {
          log.push(`cancelled ${id}`);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

const REQUEST = { messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] };
const client = (fetch, options = {}) =>
  new skyl.Client({
    provider: "anthropic",
    model: "c",
    apiKey: "sk-test-key-0001",
    fetch,
    ...options,
  });

/** `promise`'s outcome, or "pending" after `ms`. */
const within = (promise, ms) =>
  Promise.race([
    promise.then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    sleep(ms).then(() => "pending"),
  ]);

describe("when response() settles", () => {
  test("a loop may await response() at the finish event", async () => {
    const stream = client(fakeFetch([[START + text("Hi") + END]])).stream(REQUEST);
    let fromLoop = null;
    for await (const ev of stream) {
      if (ev.type === "finish") fromLoop = await within(stream.response(), 1000);
    }
    assert.equal(fromLoop?.value?.text, "Hi");
  });

  test("break at the finish event keeps the response", async () => {
    const stream = client(fakeFetch([[START + text("Hi") + END]])).stream(REQUEST);
    for await (const ev of stream) if (ev.type === "finish") break;
    assert.equal((await stream.response()).text, "Hi");
  });

  test("a server that keeps the connection open after the terminal frame: the idle timeout ends the body, not the stream", async () => {
    const log = [];
    const stream = client(fakeFetch([[START + text("all here") + END, STALL]], log), {
      timeout: { idle: 100 },
    }).stream(REQUEST);
    const types = [];
    for await (const ev of stream) types.push(ev.type);
    assert.deepEqual(types, ["text", "usage", "finish"]);
    assert.equal((await stream.response()).text, "all here");
    assert.ok(log.includes("cancelled 1"), log.join(", "));
  });

  test("a stall before the terminal frame is still an idle timeout", async () => {
    const stream = client(fakeFetch([[START + text("part"), STALL]]), {
      timeout: { idle: 100 },
      maxRetries: 0,
    }).stream(REQUEST);
    const types = [];
    await assert.rejects(
      async () => {
        for await (const ev of stream) types.push(ev.type);
      },
      { name: "TimeoutError" },
    );
    assert.deepEqual(types, ["text"]);
  });
});

describe("stopping a stream being read", () => {
  test("abort() in the loop body: nothing more is handed out, response() rejects", async () => {
    const log = [];
    const stream = client(
      fakeFetch([[START + text("1") + text("2") + text("3"), STALL]], log),
    ).stream(REQUEST);
    const seen = [];
    await assert.rejects(
      async () => {
        for await (const ev of stream) {
          seen.push(ev.text);
          stream.abort("stop");
        }
      },
      { name: "AbortError" },
    );
    assert.deepEqual(seen, ["1"]);
    await assert.rejects(stream.response(), { name: "AbortError" });
    assert.ok(await eventually(() => log.includes("cancelled 1")), log.join(", "));
  });

  test("abort() while nobody reads rejects response() at once", async () => {
    const log = [];
    const stream = client(fakeFetch([[START + text("1"), STALL]], log)).stream(REQUEST);
    const it = stream[Symbol.asyncIterator]();
    assert.equal((await it.next()).value.type, "text");
    stream.abort("user stop");
    const outcome = await within(stream.response(), 1000);
    assert.equal(outcome.error?.name, "AbortError", JSON.stringify(outcome));
    assert.ok(log.includes("cancelled 1"), log.join(", "));
    await assert.rejects(it.next(), { name: "AbortError" });
  });

  test("an AbortSignal while nobody reads rejects response() at once", async () => {
    const controller = new AbortController();
    const stream = client(fakeFetch([[START + text("1"), STALL]])).stream({
      ...REQUEST,
      signal: controller.signal,
    });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    controller.abort();
    assert.equal((await within(stream.response(), 1000)).error?.name, "AbortError");
  });

  test("return() while next() waits for data cancels the request at once", async () => {
    const log = [];
    const stream = client(fakeFetch([[START + text("1"), STALL]], log)).stream(REQUEST);
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    const waiting = it.next();
    waiting.catch(() => {});
    const returned = await within(it.return(), 1000);
    assert.deepEqual(returned.value, { value: undefined, done: true });
    assert.ok(log.includes("aborted 1") && log.includes("cancelled 1"), log.join(", "));
    assert.equal((await within(waiting, 1000)).error?.name, "AbortError");
  });
});

describe("what a failure keeps", () => {
  test("a timeout after events carries partial and eventsEmitted", async () => {
    const stream = client(fakeFetch([[START + text("kept text"), STALL]]), {
      timeout: { idle: 100 },
    }).stream(REQUEST);
    const err = await (async () => {
      try {
        for await (const _ of stream);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(err.name, "TimeoutError");
    assert.equal(err.eventsEmitted, true);
    assert.equal(err.retryable, false);
    assert.equal(err.partial.text, "kept text");
    assert.equal((await within(stream.response(), 100)).error, err);
  });

  test("an abort after events carries partial", async () => {
    const stream = client(fakeFetch([[START + text("kept"), STALL]])).stream(REQUEST);
    const err = await (async () => {
      try {
        for await (const _ of stream) setTimeout(() => stream.abort(), 20);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(err.name, "AbortError");
    assert.equal(err.eventsEmitted, true);
    assert.equal(err.partial.text, "kept");
  });

  test("a retried attempt's connection is closed before the next one", async () => {
    const overloaded = sse("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    const log = [];
    const stream = client(fakeFetch([[overloaded, STALL], [START + text("ok") + END]], log), {
      maxRetries: 1,
    }).stream(REQUEST);
    for await (const _ of stream);
    assert.equal((await stream.response()).text, "ok");
    const second = log.indexOf("attempt 2");
    assert.ok(
      second > log.indexOf("cancelled 1") && log.indexOf("cancelled 1") >= 0,
      log.join(", "),
    );
    assert.ok(log.indexOf("aborted 1") >= 0 && log.indexOf("aborted 1") < second, log.join(", "));
  });

  test("complete() honours the idle timeout while reading the body", async () => {
    const c = client(fakeFetch([[`{"id":"m`, STALL]]), { timeout: { idle: 100 }, maxRetries: 0 });
    const outcome = await within(c.complete(REQUEST), 2000);
    assert.equal(outcome.error?.name, "TimeoutError", JSON.stringify(outcome));
    assert.match(outcome.error.message, /idle timeout/);
  });

  test("decodeStream of an HTTP error response throws the provider's error", async () => {
    const res = new Response(
      JSON.stringify({
        type: "error",
        error: { type: "rate_limit_error", message: "Rate limited" },
      }),
      {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "3" },
      },
    );
    const err = await (async () => {
      try {
        for await (const _ of skyl.decodeStream("anthropic", res));
      } catch (e) {
        return e;
      }
    })();
    assert.equal(err.name, "RateLimitError");
    assert.equal(err.status, 429);
    assert.equal(err.retryAfterMs, 3000);
    assert.match(err.message, /Rate limited/);
  });

  test("an event over maxEventBytes after events says so, and keeps what came", async () => {
    const big = `data: ${"x".repeat(4096)}\n\n`;
    const stream = client(fakeFetch([[START + text("kept"), big]]), {
      maxRetries: 0,
      maxEventBytes: 1024,
    }).stream(REQUEST);
    const events = [];
    const err = await (async () => {
      try {
        for await (const e of stream) events.push(e);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(events.map((e) => e.text).join(""), "kept");
    assert.equal(err.code, "event_too_large");
    assert.equal(err.eventsEmitted, true);
    assert.equal(err.retryable, false);
    assert.equal(err.partial.text, "kept");
  });

  test("an in-band error after events keeps what came, in decodeStream as in stream()", async () => {
    const overloaded = sse("error", { error: { type: "overloaded_error", message: "Overloaded" } });
    const failure = async (events) => {
      try {
        for await (const _ of events);
      } catch (e) {
        return e;
      }
    };
    const body = new Response(START + text("kept") + overloaded);
    const decoded = await failure(skyl.decodeStream("anthropic", body));
    const streamed = await failure(
      client(fakeFetch([[START + text("kept") + overloaded]]), { maxRetries: 0 }).stream(REQUEST),
    );
    for (const err of [decoded, streamed]) {
      assert.equal(err.name, "OverloadedError");
      assert.equal(err.inBand, true);
      assert.equal(err.eventsEmitted, true);
      assert.equal(err.partial.text, "kept");
    }
  });
});

describe("errors keep what the response said", () => {
  test("an in-band error keeps the response's request id", async () => {
    const body = `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`;
    const res = new Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream", "request-id": "req_sse_1" },
    });
    const stream = client(fakeFetch([res]), { maxRetries: 0 }).stream(REQUEST);
    const err = await (async () => {
      try {
        for await (const _ of stream);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(err.name, "OverloadedError");
    assert.equal(err.requestId, "req_sse_1");
  });

  test("retry-after as an HTTP date is honoured", async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const res = new Response(
      JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "slow down" } }),
      {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": at },
      },
    );
    const err = await client(fakeFetch([res]), { maxRetries: 0 })
      .complete(REQUEST)
      .catch((e) => e);
    assert.equal(err.name, "RateLimitError");
    assert.ok(err.retryAfterMs > 25_000 && err.retryAfterMs <= 30_000, String(err.retryAfterMs));
  });

  test("a stream answered with a JSON error body (no SSE) is that error, not retried", async () => {
    const log = [];
    const res = () =>
      new Response(
        JSON.stringify({
          type: "error",
          error: { type: "not_found_error", message: "model: c-unknown" },
        }),
        {
          status: 200,
          headers: { "content-type": "application/json" },
        },
      );
    const stream = client(fakeFetch([res(), res(), res()], log)).stream(REQUEST);
    const err = await (async () => {
      try {
        for await (const _ of stream);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(err.name, "NotFoundError");
    assert.match(err.message, /c-unknown/);
    assert.deepEqual(
      log.filter((l) => l.startsWith("attempt")),
      ["attempt 1"],
    );
  });
});

describe("options fetch would refuse", () => {
  test("an API key or header value that cannot be sent is an InvalidRequestError, without the key", () => {
    for (const apiKey of ["sk-test\u2019key-0001", "sk-test\nkey-0001", "sk-test\u0000key"]) {
      assert.throws(
        () => client(fakeFetch([[]]), { apiKey }),
        (e) => {
          assert.equal(e.name, "InvalidRequestError");
          assert.equal(e.path, "apiKey");
          assert.ok(!e.message.includes("sk-test"), e.message);
          return true;
        },
      );
    }
    assert.throws(() => client(fakeFetch([[]]), { headers: { "x-a": "caf\u00e9 \u2603" } }), {
      name: "InvalidRequestError",
      path: "headers.x-a",
    });
    assert.throws(() => client(fakeFetch([[]]), { headers: { "bad name": "v" } }), {
      name: "InvalidRequestError",
      path: "headers",
    });
  });

  test("outer whitespace, as fetch trims it, is accepted", async () => {
    const log = [];
    const c = client(fakeFetch([[START + text("ok") + END]], log), {
      apiKey: "sk-test-key-0001\n",
      headers: { "x-a": " caf\u00e9 " },
    });
    const out = [];
    for await (const ev of c.stream(REQUEST)) out.push(ev.type);
    assert.equal(out.at(-1), "finish");
  });
});
