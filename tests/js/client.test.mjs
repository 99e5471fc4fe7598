// The client against the mock provider: the tool loop in every wire format,
// streaming delivery, cancellation, retries and timeouts (its errors and
// key safety: errors.test.mjs).
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import {
  skyl,
  useMock,
  client,
  collect,
  ask,
  answerCalls,
  PROVIDERS,
  TOOLS,
  eventually,
} from "./helpers.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

describe("tool loop", () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: streamed tool call, results sent back, final answer`, async () => {
      const c = client(mock, provider);
      const messages = ask("What is the weather in Paris?");
      const stream = c.stream({ messages, tools: TOOLS });
      const { events, response, error } = await collect(stream);
      assert.ifError(error);
      const calls = events.filter((e) => e.type === "tool_call");
      assert.equal(calls.length, 1, "one tool_call event");
      assert.equal(calls[0].call.name, "get_weather");
      assert.deepEqual(JSON.parse(calls[0].call.arguments), { city: "Paris" });
      assert.equal(response.finishReason, "tool_calls");
      assert.equal(response.text, "Let me look that up.");
      // Reasoning comes first in the formats that have it; Chat Completions has none.
      const reasoning = events.filter((e) => e.type === "reasoning");
      assert.equal(reasoning.length > 0, provider !== "openai", "reasoning events");
      if (reasoning.length)
        assert.match(
          response.reasoning,
          /weather in Paris\. I will call get_weather \{"city":"Paris"\}/,
        );
      assert.ok(
        events.findIndex((e) => e.type === "reasoning") <
          events.findIndex((e) => e.type === "text"),
        "reasoning before text",
      );

      // Replay through JSON, as an app that stores its history would (with
      // the reasoning and its signature, where the format has them).
      const history = [...messages];
      answerCalls(history, response, () => ({ temp: 21 }));
      const final = await collect(c.stream({ messages: history, tools: TOOLS }));
      assert.ifError(final.error);
      // The answer is from the result sent back, for the city the call named.
      assert.equal(final.response.text, "It is 21 °C in Paris.");
      assert.equal(final.response.finishReason, "stop");

      // The provider received the call and its result in its own format.
      const sent = JSON.stringify(mock.requests.at(-1).body);
      assert.match(sent, /get_weather/);
      assert.match(sent, /temp/);
    });

    test(`${provider}: complete() runs the same loop`, async () => {
      const c = client(mock, provider);
      const first = await c.complete({ messages: ask("Weather in Oslo?"), tools: TOOLS });
      assert.equal(first.toolCalls.length, 1);
      assert.deepEqual(JSON.parse(first.toolCalls[0].arguments), { city: "Oslo" });
      const history = [
        ...ask("Weather in Oslo?"),
        first.message,
        skyl.toolErrorMessage(first.toolCalls[0].id, new Error("station offline")),
      ];
      const final = await c.complete({ messages: history, tools: TOOLS });
      // Chat Completions has no error flag for a tool result: the model
      // sees only the text. The other formats say it was an error.
      assert.equal(
        final.text,
        provider.startsWith("openai")
          ? 'The get_weather tool answered: "station offline".'
          : "I could not look up the weather for Oslo: station offline.",
      );
    });
  }
});

describe("streaming delivery", () => {
  test("the first event arrives before the body is complete", async () => {
    const c = client(mock, "anthropic", { mockOptions: { chunk: 40, delay: 30 } });
    const started = Date.now();
    let firstAt = null;
    for await (const _ of c.stream({ messages: ask("hi"), tools: TOOLS })) {
      firstAt ??= Date.now() - started;
    }
    const total = Date.now() - started;
    assert.ok(firstAt < total / 2, `first event after ${firstAt} ms of ${total} ms`);
  });

  test("response() works without iterating", async () => {
    const r = await client(mock, "gemini")
      .stream({ messages: ask("What is the weather in Paris?"), tools: TOOLS })
      .response();
    assert.equal(r.toolCalls.length, 1);
  });

  test("a stream can be iterated only once", async () => {
    const s = client(mock, "openai").stream({ messages: ask("hi") });
    for await (const _ of s);
    assert.throws(() => s[Symbol.asyncIterator](), skyl.InvalidRequestError);
  });

  test("decodeStream reads a body the caller fetched", async () => {
    const c = client(mock, "openai");
    const res = await fetch(`${mock.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "x-mock-fixture": "openaicompat/deepseek-tool-call.stream" },
      body: "{}",
    });
    const { events, response } = await collect(skyl.decodeStream("openaicompat", res));
    assert.equal(response.toolCalls.length, 1);
    assert.equal(events.filter((e) => e.type === "tool_call").length, 1);
    void c;
    // A bare ReadableStream of strings works too.
    const body = new ReadableStream({
      start(ctl) {
        ctl.enqueue('data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n');
        ctl.close();
      },
    });
    assert.equal((await skyl.decodeStream("openai", body).response()).text, "ok");
  });
});

describe("cancellation", () => {
  const slow = { chunk: 30, delay: 40 };

  test("stream.abort() mid-stream rejects with AbortError and closes the connection", async () => {
    const s = client(mock, "openai", { mockOptions: slow }).stream({
      messages: ask("hi"),
      tools: TOOLS,
    });
    const seen = [];
    const err = await (async () => {
      for await (const ev of s) {
        seen.push(ev);
        if (seen.length === 1) s.abort();
      }
    })().then(
      () => null,
      (e) => e,
    );
    assert.ok(err instanceof skyl.AbortError, String(err));
    assert.equal(err.name, "AbortError");
    assert.ok(
      await eventually(() => mock.requests[0]?.closedEarly),
      "the server saw the connection close",
    );
    await assert.rejects(s.response(), skyl.AbortError);
  });

  test("an AbortSignal in the request cancels it", async () => {
    const ctl = new AbortController();
    const s = client(mock, "anthropic", { mockOptions: slow }).stream({
      messages: ask("hi"),
      signal: ctl.signal,
    });
    setTimeout(() => ctl.abort(new Error("user left")), 60);
    const { error } = await collect(s);
    assert.ok(error instanceof skyl.AbortError, String(error));
    assert.match(error.message, /user left/);
    assert.ok(await eventually(() => mock.requests[0]?.closedEarly));
  });

  test("an already aborted signal sends nothing", async () => {
    const err = await client(mock, "openai")
      .complete({ messages: ask("hi"), signal: AbortSignal.abort() })
      .catch((e) => e);
    assert.ok(err instanceof skyl.AbortError);
    assert.equal(mock.requests.length, 0);
  });

  test("leaving for-await early (break) closes the connection", async () => {
    const s = client(mock, "gemini", { mockOptions: slow }).stream({
      messages: ask("hi"),
      tools: TOOLS,
    });
    for await (const ev of s) {
      if (ev.type === "text") break;
    }
    assert.ok(await eventually(() => mock.requests[0]?.closedEarly), "closed after break");
    await assert.rejects(s.response(), skyl.AbortError);
  });

  test("abort() during a retry wait stops without another attempt", async () => {
    const s = client(mock, "openai", {
      mockOptions: { fail: "500", scenario: "abort-wait" },
    }).stream({ messages: ask("hi") });
    setTimeout(() => s.abort(), 100);
    const { error } = await collect(s);
    assert.ok(error instanceof skyl.AbortError, String(error));
    assert.equal(mock.requests.length, 1);
  });
});

describe("retries", () => {
  test("429 with retry-after-ms is honoured, then succeeds", async () => {
    const c = client(mock, "anthropic", {
      mockOptions: { fail: "429", retry_after_ms: 300, scenario: "ra" },
    });
    const started = Date.now();
    const r = await c.complete({ messages: ask("hi") });
    assert.ok(Date.now() - started >= 300, "waited for retry-after-ms");
    assert.equal(r.finishReason, "stop");
    assert.equal(mock.requests.length, 2);
  });

  test("retry-after in seconds is honoured", async () => {
    const started = Date.now();
    await client(mock, "openai", {
      mockOptions: { fail: "429", retry_after: "1", scenario: "ras" },
    }).complete({ messages: ask("hi") });
    assert.ok(Date.now() - started >= 1000);
  });

  for (const status of [408, 409, 500, 503, 529]) {
    test(`${status} is retried`, async () => {
      const c = client(mock, "anthropic", {
        mockOptions: { fail: String(status), retry_after_ms: 10, scenario: `s${status}` },
      });
      const { error } = await collect(c.stream({ messages: ask("hi") }));
      assert.ifError(error);
      assert.equal(mock.requests.length, 2);
    });
  }

  for (const [status, Class] of [
    [400, skyl.BadRequestError],
    [401, skyl.AuthenticationError],
    [403, skyl.PermissionDeniedError],
    [404, skyl.NotFoundError],
  ]) {
    test(`${status} is not retried and is a ${Class.name}`, async () => {
      const err = await client(mock, "openai", {
        mockOptions: { fail: String(status), scenario: `n${status}` },
      })
        .complete({ messages: ask("hi") })
        .catch((e) => e);
      assert.ok(err instanceof Class, String(err));
      assert.equal(err.status, status);
      assert.equal(err.retryable, false);
      assert.equal(mock.requests.length, 1);
    });
  }

  test("maxRetries bounds the attempts", async () => {
    const err = await client(mock, "gemini", {
      maxRetries: 1,
      mockOptions: { fail: "503,503,503", retry_after_ms: 5, scenario: "mr" },
    })
      .complete({ messages: ask("hi") })
      .catch((e) => e);
    // (Gemini's 503 UNAVAILABLE is "the model is overloaded", typed as
    // the same error is in a stream.)
    assert.ok(err instanceof skyl.OverloadedError, String(err));
    assert.equal(mock.requests.length, 2);
  });

  test("network errors are retried", async () => {
    let calls = 0;
    const flaky = async (url, init) => {
      calls++;
      if (calls === 1) throw new TypeError("fetch failed");
      return fetch(url, init);
    };
    const r = await client(mock, "openai", { fetch: flaky }).complete({ messages: ask("hi") });
    assert.equal(r.finishReason, "stop");
    assert.equal(calls, 2);
  });

  for (const provider of PROVIDERS) {
    test(`${provider}: an in-band error before any event is retried`, async () => {
      let n = 0;
      // First attempt gets the in-band error, the second the normal stream.
      const fetchOnce = (url, init) => {
        n++;
        const headers = { ...Object.fromEntries(init.headers) };
        if (n === 1) headers["x-mock-inband-error"] = "start";
        return fetch(url, { ...init, headers });
      };
      const { error, response } = await collect(
        client(mock, provider, { fetch: fetchOnce }).stream({ messages: ask("hi") }),
      );
      assert.ifError(error);
      assert.equal(response.finishReason, "stop");
      assert.equal(n, 2);
    });

    test(`${provider}: an in-band error after an event surfaces and is not retried`, async () => {
      const c = client(mock, provider, { mockOptions: { inband_error: "after_text" } });
      const { events, error } = await collect(c.stream({ messages: ask("hi") }));
      assert.ok(
        events.some((e) => e.type === "text"),
        "an event came first",
      );
      assert.ok(error instanceof skyl.APIError, String(error));
      assert.equal(error.inBand, true);
      assert.equal(error.eventsEmitted, true);
      assert.equal(error.retryable, false);
      assert.equal(mock.requests.length, 1);
    });
  }
});

test("the mock's option headers may spell an option with - or _", async () => {
  for (const header of ["x-mock-inband-error", "x-mock-inband_error"]) {
    const res = await fetch(`${mock.url}/v1/messages`, {
      method: "POST",
      headers: { [header]: "start" },
      body: JSON.stringify({ stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.match(await res.text(), /^event: error\n.*overloaded_error/, header);
  }
});

describe("timeouts", () => {
  test("first-byte timeout", async () => {
    const c = client(mock, "openai", {
      maxRetries: 0,
      timeout: { firstByte: 100 },
      mockOptions: { first_byte_delay: 1000 },
    });
    const started = Date.now();
    const err = await c.complete({ messages: ask("hi") }).catch((e) => e);
    assert.ok(err instanceof skyl.TimeoutError, String(err));
    assert.match(err.message, /first byte/);
    assert.ok(Date.now() - started < 900);
  });

  test("a first-byte timeout is retried", async () => {
    const c = client(mock, "openai", {
      maxRetries: 1,
      timeout: { firstByte: 100 },
      mockOptions: { first_byte_delay: 400 },
    });
    const err = await c.complete({ messages: ask("hi") }).catch((e) => e);
    assert.ok(err instanceof skyl.TimeoutError);
    assert.equal(mock.requests.length, 2);
  });

  test("idle timeout between chunks", async () => {
    const c = client(mock, "anthropic", {
      maxRetries: 0,
      timeout: { idle: 100 },
      mockOptions: { hang: 1 },
    });
    const { error } = await collect(c.stream({ messages: ask("hi") }));
    assert.ok(error instanceof skyl.TimeoutError, String(error));
    assert.match(error.message, /idle/);
    assert.ok(await eventually(() => mock.requests[0]?.closedEarly));
  });

  test("total timeout", async () => {
    const c = client(mock, "gemini", {
      maxRetries: 0,
      timeout: { total: 150 },
      mockOptions: { chunk: 20, delay: 50 },
    });
    const { events, error } = await collect(c.stream({ messages: ask("hi"), tools: TOOLS }));
    assert.ok(error instanceof skyl.TimeoutError, String(error));
    assert.match(error.message, /total/);
    assert.ok(events.length >= 0);
  });
});
