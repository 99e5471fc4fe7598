// Fallback across providers (issue 32), carried out by the JS half: the
// core's run machine decides when to go on to the next provider
// (src/fallback.rs, src/run/chain.rs); these check what a user sees
// against the mock provider. The scenario table (src/run/scenarios.json)
// covers the switches themselves in all three drivers.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import {
  against,
  ask,
  client,
  collect,
  eventually,
  skyl,
  sleep,
  TOOLS,
  useMock,
} from "./helpers.mjs";
import { readCase } from "./mock-server.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

/** A client whose first provider answers `fail` (statuses) before anything else. */
function chain({ first = "openai", fail = "529,529", next = "anthropic", ...options } = {}) {
  return client(mock, first, {
    mockOptions: { fail, scenario: `first ${Math.random()}` },
    maxRetries: 1,
    fallback: [against(mock, next, { model: "fallback-model", maxRetries: 0 })],
    ...options,
  });
}

const paths = () => mock.requests.map((r) => r.path);

describe("fallback", () => {
  test("an overloaded provider past its retries: the next one answers in its own wire format", async () => {
    const { events, response, error } = await collect(chain().stream({ messages: ask("Hi") }));
    assert.ifError(error);
    assert.deepEqual(paths(), ["/v1/chat/completions", "/v1/chat/completions", "/v1/messages"]);
    // The warning comes first, before the first event of the provider that answers.
    assert.equal(events[0].type, "warning");
    assert.equal(events[0].code, "fallback");
    assert.match(
      events[0].message,
      /^openai failed \(overloaded: .*\); anthropic \(fallback-model\) answers instead$/,
    );
    assert.equal(events.filter((e) => e.type === "warning").length, 1);
    assert.ok(response.text.length > 0);
    assert.equal(response.provider, "anthropic");
    assert.equal(response.attempts.length, 1);
    const [failed] = response.attempts;
    assert.equal(failed.provider, "openai");
    assert.equal(failed.model, "mock-model");
    assert.equal(failed.error.code, "overloaded");
    assert.equal(failed.error.status, 529);
    // The fallback's own model and key went to it.
    const last = mock.requests.at(-1);
    assert.equal(last.body.model, "fallback-model");
    assert.equal(last.headers["x-api-key"], "sk-test-key-0001");
    // The finish event's response says the same, and it survives JSON.
    assert.deepEqual(events.at(-1).response, response);
    assert.deepEqual(JSON.parse(JSON.stringify(response)), response);
  });

  test("complete(): the same chain, the response naming who answered", async () => {
    const c = chain({ first: "anthropic", fail: "500", maxRetries: 0, next: "gemini" });
    const response = await c.complete({ messages: ask("Hi") });
    assert.deepEqual(paths(), ["/v1/messages", "/v1beta/models/fallback-model:generateContent"]);
    assert.equal(response.provider, "gemini");
    assert.deepEqual(
      response.attempts.map((a) => [a.provider, a.error.code, a.error.status]),
      [["anthropic", "server", 500]],
    );
  });

  test("the first provider answering needs no fallback, and its response says so", async () => {
    const response = await chain({ fail: "" }).complete({ messages: ask("Hi") });
    assert.equal(response.provider, "openai");
    assert.equal(response.attempts, undefined);
    assert.equal(mock.requests.length, 1);
  });

  test("a 400 does not go on: it rejects with the first provider's error", async () => {
    const { error } = await collect(chain({ fail: "400" }).stream({ messages: ask("Hi") }));
    assert.ok(error instanceof skyl.BadRequestError, `${error}`);
    assert.equal(error.provider, "openai");
    assert.equal(mock.requests.length, 1);
  });

  test("an in-band error after the first text does not go on: the typed error keeps the partial", async () => {
    const c = client(mock, "anthropic", {
      mockOptions: { inband_error: "after_text" },
      fallback: [against(mock, "openai")],
    });
    const { events, error } = await collect(c.stream({ messages: ask("Hi") }));
    assert.ok(error instanceof skyl.OverloadedError, `${error}`);
    assert.equal(error.eventsEmitted, true);
    assert.ok(error.partial.text.length > 0);
    assert.ok(events.some((e) => e.type === "text"));
    assert.ok(!events.some((e) => e.type === "warning"));
    assert.deepEqual(paths(), ["/v1/messages"]);
  });

  test("an abort during the first provider's backoff sends nothing further", async () => {
    const c = chain({ fail: "529,529,529", maxRetries: 2 });
    const stream = c.stream({ messages: ask("Hi") });
    const done = collect(stream);
    await eventually(() => mock.requests.length === 1);
    stream.abort("user left");
    const { error } = await done;
    assert.ok(error instanceof skyl.AbortError, `${error}`);
    await sleep(1500); // past the backoff (500 ms) and a switch
    assert.equal(mock.requests.length, 1);
  });

  test("an abort or the total timeout while the next provider is tried: the error lists who failed", async () => {
    // The first provider fails (529); the next one takes 2 s to answer.
    const slow = (options) =>
      client(mock, "openai", {
        mockOptions: { fail: "529", scenario: `first ${Math.random()}` },
        maxRetries: 0,
        fallback: [
          against(mock, "anthropic", {
            maxRetries: 0,
            mockOptions: { first_byte_delay: 2000, scenario: `next ${Math.random()}` },
          }),
        ],
        ...options,
      });
    const failedBefore = (e) => e.attempts?.map((a) => [a.provider, a.error.code, a.error.status]);
    const timed = await slow({ timeout: 500 })
      .complete({ messages: ask("Hi") })
      .catch((e) => e);
    assert.ok(timed instanceof skyl.TimeoutError, String(timed));
    assert.deepEqual(failedBefore(timed), [["openai", "overloaded", 529]]);
    mock.reset();
    const stream = slow().stream({ messages: ask("Hi") });
    const done = collect(stream);
    // (Once the next provider was asked.)
    assert.ok(await eventually(() => paths().includes("/v1/messages")));
    stream.abort("user left");
    const { error } = await done;
    assert.ok(error instanceof skyl.AbortError, String(error));
    assert.deepEqual(failedBefore(error), [["openai", "overloaded", 529]]);
  });

  test("a key the first provider echoes appears nowhere: not in attempts, events or the response", async () => {
    const first = "sk-first-provider-SECRET-1";
    const second = "sk-second-provider-SECRET-2";
    const c = client(mock, "openai", {
      apiKey: first,
      mockOptions: { fail: "503", echo_key: "1", scenario: "echo 1" },
      maxRetries: 0,
      fallback: [against(mock, "gemini", { apiKey: second })],
    });
    const { events, response, error } = await collect(c.stream({ messages: ask("Hi") }));
    assert.ifError(error);
    // The mock did echo it.
    assert.equal(mock.requests[0].headers.authorization, `Bearer ${first}`);
    const shown = JSON.stringify({ events, response });
    assert.ok(!shown.includes(first), shown);
    assert.ok(!shown.includes(second));
    assert.match(response.attempts[0].error.message, /\[redacted\]/);
    // And a chain that fails for good throws an error without either key.
    const failing = client(mock, "openai", {
      apiKey: first,
      mockOptions: { fail: "503", echo_key: "1", scenario: "echo 2" },
      maxRetries: 0,
      fallback: [
        against(mock, "gemini", {
          apiKey: second,
          mockOptions: { fail: "503", echo_key: "1", scenario: "echo 3" },
        }),
      ],
    });
    await assert.rejects(failing.complete({ messages: ask("Hi") }), (e) => {
      const all = JSON.stringify(e) + e.message + JSON.stringify(e.body ?? "");
      assert.ok(!all.includes(first) && !all.includes(second), all);
      assert.equal(e.provider, "gemini");
      // Who failed before the last provider, scrubbed as well.
      assert.deepEqual(
        e.attempts.map((a) => [a.provider, a.error.status]),
        [["openai", 503]],
      );
      assert.match(e.attempts[0].error.message, /\[redacted\]/);
      return e instanceof skyl.OverloadedError; // (Gemini says UNAVAILABLE)
    });
  });

  test("providerOptions keyed by provider: each provider is sent only its own", async () => {
    await chain({ fail: "529", maxRetries: 0 }).complete({
      messages: ask("Hi"),
      providerOptions: { openai: { service_tier: "flex" }, anthropic: { top_k: 5 } },
    });
    const [first, second] = mock.requests.map((r) => r.body);
    assert.equal(first.service_tier, "flex");
    assert.equal(first.top_k, undefined);
    assert.equal(second.top_k, 5);
    assert.equal(second.service_tier, undefined);
  });

  test("a history built on Anthropic goes to the fallback without Anthropic's fields, with a warning", async () => {
    // A recorded Anthropic turn with server-tool blocks, decoded as an app would get it.
    const recorded = readCase("anthropic/anthropic-code-execution-20250825.1.stream");
    const turn = await skyl.decodeStream("anthropic", new Response(recorded.body)).response();
    const messages = [...ask("Run it."), turn.message, ...ask("Thanks.")];
    const c = chain({ first: "anthropic", fail: "529", maxRetries: 0, next: "openai" });
    const { events, response, error } = await collect(c.stream({ messages }));
    assert.ifError(error);
    assert.equal(response.provider, "openai");
    assert.deepEqual(
      events.filter((e) => e.type === "warning").map((e) => e.code),
      ["fallback", "provider_parts_dropped"],
    );
    assert.match(
      events[1].message,
      /^openai cannot read \d+ parts? of this history, left out: messages\[1\]/,
    );
    const sent = JSON.stringify(mock.requests[1].body);
    for (const field of [
      "server_tool_use",
      "code_execution_tool_result",
      "signature",
      "cache_control",
    ])
      assert.ok(!sent.includes(field), `${field} in ${sent}`);
    // Sent to Anthropic first, the same history kept its blocks.
    assert.ok(JSON.stringify(mock.requests[0].body).includes("server_tool_use"));
  });

  test("client.run: each step goes through the chain and its response says who answered", async () => {
    const c = client(mock, "openai", {
      mockOptions: { fail: "529,529" },
      maxRetries: 0,
      fallback: [against(mock, "anthropic")],
    });
    const run = c.run({
      messages: ask("What is the weather in Kampala?"),
      tools: [{ ...TOOLS[0], execute: ({ city }) => ({ city, tempC: 21 }) }],
    });
    for await (const _ of run);
    const result = await run.result();
    assert.equal(result.stopReason, "done");
    assert.equal(result.steps.length, 2);
    for (const step of result.steps) {
      assert.equal(step.provider, "anthropic");
      assert.deepEqual(
        step.attempts.map((a) => a.provider),
        ["openai"],
      );
    }
    assert.deepEqual(paths(), [
      "/v1/chat/completions",
      "/v1/messages",
      "/v1/chat/completions",
      "/v1/messages",
    ]);
  });

  test("bad fallback options are refused, naming the option, before anything is sent", () => {
    for (const [options, path] of [
      [{ fallback: "anthropic" }, "fallback"],
      [{ fallback: [null] }, "fallback[0]"],
      [{ fallback: [{ provider: "vertex" }] }, "fallback[0].provider"],
      [{ fallback: [{ provider: "openaicompat" }] }, "fallback[0].baseURL"],
      [{ fallback: [{ provider: "gemini", apiKey: 7 }] }, "fallback[0].apiKey"],
      [{ fallback: [{ provider: "gemini", headers: { "a b": "1" } }] }, "fallback[0].headers"],
      [{ fallback: [{ provider: "gemini", maxRetries: -1 }] }, "fallback[0].maxRetries"],
      [{ fallback: [{ provider: "gemini", timeout: 5 }] }, "fallback[0].timeout"],
      [{ fallback: [{ provider: "gemini", fallback: [] }] }, "fallback[0].fallback"],
      [{ fallbackOn: [401, "404"] }, "fallbackOn"],
      [{ fallbackOn: 401 }, "fallbackOn"],
    ]) {
      assert.throws(
        () => new skyl.Client({ provider: "openai", apiKey: "k", ...options }),
        (e) => e instanceof skyl.InvalidRequestError && e.path === path,
        JSON.stringify(options),
      );
    }
    assert.equal(mock.requests.length, 0);
    // What the client shows of its chain: no key.
    const c = new skyl.Client({
      provider: "openai",
      apiKey: "sk-one",
      fallback: [{ provider: "anthropic", apiKey: "sk-two", model: "claude" }],
    });
    assert.deepEqual(JSON.parse(JSON.stringify(c)).fallback, [
      { provider: "anthropic", model: "claude" },
    ]);
  });

  test("a request a fallback provider cannot take is refused before anything is sent", async () => {
    // The fallback has no model, and the request names none.
    const c = client(mock, "openai", {
      fallback: [{ provider: "anthropic", apiKey: "k", baseURL: mock.url }],
    });
    await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
      assert.equal(e.path, "fallback[0].model");
      return e instanceof skyl.InvalidRequestError;
    });
    assert.equal(mock.requests.length, 0);
  });
});
