// The client's errors against the mock provider: what a failure keeps, key
// safety, invalid options and requests refused before anything is sent,
// and the options JS reads (headers, fetch, providerOptions).
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, client, collect, ask, PROVIDERS, TOOLS, baseURL } from "./helpers.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

const KEY = "sk-test-SECRET-key-9f8e7d6c";

describe("errors", () => {
  test("a disconnect mid-stream keeps what arrived and never yields a partial call", async () => {
    // 1500 bytes end the body inside the call's streamed arguments.
    const c = client(mock, "openai", { maxRetries: 0, mockOptions: { disconnect_after: 1500 } });
    const { events, error } = await collect(
      c.stream({ messages: ask("What is the weather in Paris?"), tools: TOOLS }),
    );
    assert.ok(error instanceof skyl.SkylError, String(error));
    assert.ok(["stream_ended_early", "network"].includes(error.code), error.code);
    assert.equal(events.filter((e) => e.type === "tool_call").length, 0);
    assert.ok(error.partial, "the partial response is attached");
    assert.equal(error.partial.text, "Let me look that up.", "the text that came is kept");
    assert.equal(error.partial.toolCalls.length, 0);
    const [cut] = error.partial.incompleteToolCalls;
    assert.equal(cut.name, "get_weather", "the call was cut off, listed as incomplete");
    assert.ok(cut.arguments.length > 0 && !cut.arguments.endsWith("}"), cut.arguments);
  });

  test("the API key never appears in an error, even when the server echoes it", async () => {
    for (const provider of PROVIDERS) {
      const c = client(mock, provider, {
        apiKey: KEY,
        mockOptions: { fail: "401,401", echo_key: 1, scenario: `k${provider}` },
      });
      for (const err of [
        await c.complete({ messages: ask("hi") }).catch((e) => e),
        (await collect(c.stream({ messages: ask("hi") }))).error,
      ]) {
        assert.ok(err instanceof skyl.AuthenticationError, String(err));
        const everything = [
          String(err),
          err.stack,
          JSON.stringify(err),
          JSON.stringify(Object.getOwnPropertyDescriptors(err)),
          err.body,
        ].join("\n");
        assert.ok(!everything.includes(KEY), `${provider}: key leaked: ${everything}`);
        assert.match(err.message, /\[redacted\]/);
      }
    }
    // Network errors and the client itself do not show it either.
    const c = new skyl.Client({
      provider: "openai",
      model: "m",
      apiKey: KEY,
      baseURL: "http://127.0.0.1:9/v1",
      maxRetries: 0,
    });
    const err = await c.complete({ messages: ask("hi") }).catch((e) => e);
    assert.ok(err instanceof skyl.ConnectionError, String(err));
    assert.ok(
      ![String(err), err.stack, JSON.stringify(err), JSON.stringify(c)].join().includes(KEY),
    );
  });

  test("a transport error that carries the key anywhere reaches the cause scrubbed", async () => {
    const { inspect } = await import("node:util");
    const throwers = [
      // A string, not an Error.
      () => Promise.reject(`refused: Bearer ${KEY}`),
      // An Error carrying the request, as some fetch wrappers do.
      (url, init) =>
        Promise.reject(
          Object.assign(new Error("proxy refused"), {
            request: { url, headers: init.headers },
          }),
        ),
      // An Error carrying the Request itself (its Headers hold the key).
      (url, init) =>
        Promise.reject(Object.assign(new Error("HTTPError"), { request: new Request(url, init) })),
      // The key two causes down.
      () =>
        Promise.reject(
          new Error("fetch failed", {
            cause: new Error("socket", { cause: new Error(`auth ${KEY} refused`) }),
          }),
        ),
    ];
    for (const fetch of throwers) {
      const c = new skyl.Client({
        provider: "openai",
        model: "m",
        apiKey: KEY,
        maxRetries: 0,
        fetch,
      });
      const err = await c.complete({ messages: ask("hi") }).catch((e) => e);
      assert.ok(err instanceof skyl.ConnectionError, String(err));
      assert.ok(err.cause !== undefined);
      const everything = inspect(err, { depth: 20, showHidden: true });
      assert.ok(!everything.includes(KEY), `key leaked: ${everything}`);
    }
  });

  test("invalid options throw an InvalidRequestError naming the option", () => {
    for (const [options, option] of [
      [undefined, "options"],
      [{ provider: "bard" }, "provider"],
      [{ provider: "openaicompat" }, "baseURL"],
      [{ provider: "openai", baseURL: "not a url" }, "baseURL"],
      [{ provider: "openai", maxRetries: -1 }, "maxRetries"],
      [{ provider: "openai", timeout: 0 }, "timeout"],
      [{ provider: "openai", timeout: { idle: "5" } }, "timeout.idle"],
      [{ provider: "openai", fetch: "no" }, "fetch"],
      [{ provider: "openai", headers: [] }, "headers"],
      [{ provider: "openai", model: 5 }, "model"],
      [{ provider: "openai", headers: { "x-n": 42 } }, "headers.x-n"],
      [{ provider: "openai", includeUsage: "false" }, "includeUsage"],
      [
        { provider: "openai", fallback: [{ provider: "openai", headers: { "x-t": true } }] },
        "fallback[0].headers.x-t",
      ],
    ]) {
      assert.throws(
        () => new skyl.Client(options),
        (e) =>
          e instanceof skyl.InvalidRequestError && e.path === option && e.message.includes(option),
      );
    }
  });

  test("headers as a Headers or a Map are sent as given", async () => {
    for (const headers of [new Headers({ "x-team": "blue" }), new Map([["x-team", "blue"]])]) {
      mock.reset();
      const options = { provider: "openai", model: "m", apiKey: "k", baseURL: `${mock.url}/v1` };
      const c = new skyl.Client({ ...options, headers });
      await c.complete({ messages: ask("hi") });
      assert.equal(mock.requests[0].headers["x-team"], "blue");
      assert.equal(headers.get("x-team"), "blue", "the caller's object is left as it was");
    }
  });

  test("an invalid request is rejected before anything is sent", async () => {
    const c = client(mock, "anthropic");
    const bad = [...ask("hi"), skyl.toolResultMessage("nope", "x")];
    const { error } = await collect(c.stream({ messages: bad }));
    assert.ok(
      error instanceof skyl.InvalidRequestError && /unknown call id/.test(error.message),
      String(error),
    );
    await assert.rejects(c.complete({ messages: bad }), skyl.InvalidRequestError);
    await assert.rejects(
      c.complete({
        messages: [
          {
            role: "assistant",
            parts: [{ type: "tool_call", id: "c", name: "f", arguments: "{oops" }],
          },
        ],
      }),
      (e) => e instanceof skyl.InvalidRequestError && /not valid JSON/.test(e.message),
    );
    assert.equal(mock.requests.length, 0);
  });

  test("validation helpers", () => {
    assert.doesNotThrow(() => skyl.validateTool({ name: "f" }));
    assert.throws(
      () => skyl.validateTool({ name: "" }),
      (e) => e instanceof skyl.InvalidRequestError && e.path === "tool.name",
    );
    assert.throws(
      () => skyl.validateToolCall({ id: "", name: "f", arguments: "{}" }),
      (e) => e.path === "toolCall.id",
    );
    assert.throws(
      () => skyl.validateToolCall({ id: "c", name: "", arguments: "{}" }),
      (e) => e.path === "toolCall.name",
    );
    assert.throws(
      () =>
        skyl.validateRequest({
          messages: skyl.toolResultMessage("x", "y") ? [skyl.toolResultMessage("x", "y")] : [],
        }),
      skyl.InvalidRequestError,
    );
    // A field of the wrong type is named exactly, with what was expected.
    const wrongType = {
      messages: [
        {
          role: "user",
          parts: [
            { type: "text", text: "a" },
            { type: "text", text: 5 },
          ],
        },
      ],
    };
    assert.throws(
      () => skyl.validateRequest(wrongType),
      (e) =>
        e instanceof skyl.InvalidRequestError &&
        e.path === "messages[0].parts[1].text" &&
        /expected a string, got a number/.test(e.message),
    );
    assert.throws(
      () => skyl.validateTool({ name: "f", description: 1 }),
      (e) => e.path === "tool.description",
    );
    const m = skyl.toolErrorMessage("c1", new Error("boom"));
    assert.deepEqual(m, {
      role: "tool",
      parts: [{ type: "tool_result", callId: "c1", content: "boom", isError: true }],
    });
  });

  test("the instance keeps working after errors", async () => {
    const c = client(mock, "openai", { maxRetries: 0 });
    await collect(
      client(mock, "openai", { maxRetries: 0, mockOptions: { disconnect_after: 50 } }).stream({
        messages: ask("hi"),
      }),
    );
    assert.equal((await c.complete({ messages: ask("hi") })).finishReason, "stop");
  });

  test("the global fetch is called with globalThis as this, and without credentials or mode", async () => {
    const original = globalThis.fetch;
    let seen;
    globalThis.fetch = function (url, init) {
      seen = { self: this, init };
      return original(url, init);
    };
    try {
      await new skyl.Client({
        provider: "openai",
        model: "m",
        baseURL: baseURL(mock, "openai"),
      }).complete({ messages: ask("hi") });
    } finally {
      globalThis.fetch = original;
    }
    assert.equal(seen.self, globalThis);
    assert.ok(!("credentials" in seen.init) && !("mode" in seen.init));
  });
});

test("providerOptions keyed by provider: each provider gets its own; a stray key is refused", async () => {
  const providerOptions = {
    anthropic: { thinking: { type: "enabled", budget_tokens: 1024 } },
    openai: { parallel_tool_calls: false },
  };
  for (const provider of ["anthropic", "openai", "gemini"]) {
    mock.reset();
    const c = client(mock, provider);
    await c.complete({ messages: ask("Hi"), providerOptions });
    const body = mock.requests[0].body;
    assert.equal("thinking" in body, provider === "anthropic", provider);
    assert.equal("parallel_tool_calls" in body, provider === "openai", provider);
    assert.ok(!("anthropic" in body) && !("openai" in body), "no provider key is sent");
  }
  mock.reset();
  const c = client(mock, "openai");
  await assert.rejects(
    c.complete({ messages: ask("Hi"), providerOptions: { ...providerOptions, top_p: 0.5 } }),
    (e) => e instanceof skyl.InvalidRequestError && e.path === "providerOptions.top_p",
  );
  assert.equal(mock.requests.length, 0, "nothing was sent");
});

test("an aborted signal on a request that cannot be read gives the request's error", async () => {
  const c = new skyl.Client({
    provider: "openai",
    model: "m",
    apiKey: "sk-test",
    baseURL: mock.url,
  });
  for (const go of [
    (r) => c.complete(r),
    (r) => collect(c.stream(r)).then((o) => Promise.reject(o.error)),
  ]) {
    await assert.rejects(go({ messages: "hi", signal: AbortSignal.abort() }), (e) => {
      assert.ok(e instanceof skyl.InvalidRequestError, String(e));
      assert.equal(e.path, "messages");
      return true;
    });
  }
  // A request that can be read is aborted as ever.
  await assert.rejects(
    c.complete({ messages: ask("hi"), signal: AbortSignal.abort() }),
    skyl.AbortError,
  );
});

test("a fetch option that resolves to no Response is a typed error", async () => {
  for (const answer of [undefined, null, 42, { status: "200" }]) {
    const c = new skyl.Client({
      provider: "openai",
      model: "m",
      apiKey: "sk-test",
      maxRetries: 0,
      fetch: async () => answer,
    });
    const check = (e) => {
      assert.ok(e instanceof skyl.MalformedStreamError, `${answer}: ${e}`);
      assert.equal(e.code, "invalid_response");
      assert.match(e.message, /not a Response/);
      return true;
    };
    await assert.rejects(c.complete({ messages: ask("hi") }), check);
    await assert.rejects(c.embed({ values: ["a"], model: "emb" }), check);
  }
});

test("a request JS cannot hand over is an InvalidRequestError naming it, nothing sent", async () => {
  let sent = 0;
  const c = new skyl.Client({
    provider: "openai",
    model: "m",
    apiKey: "sk-test",
    maxRetries: 0,
    fetch: async () => {
      sent++;
      throw new Error("nothing should be sent");
    },
  });
  const looped = { role: "user", parts: [{ type: "text", text: "hi" }] };
  looped.self = looped;
  const cases = [
    [{ messages: ask("hi"), signal: "stop" }, "signal", /must be an AbortSignal/],
    [{ messages: ask("hi"), signal: {} }, "signal", /must be an AbortSignal/],
    [{ messages: ask("hi"), maxTokens: 10n }, "request", /cannot be sent as JSON.*BigInt/],
    [{ messages: [looped] }, "request", /cannot be sent as JSON.*circular/],
    [{ messages: ask("hi"), tools: [null] }, "tools[0]", /expected an object/],
  ];
  const ways = {
    complete: (r) => c.complete(r),
    stream: (r) => collect(c.stream(r)).then((o) => Promise.reject(o.error)),
    run: (r) => c.run(r).result(),
    embed: ({ messages, ...r }) => c.embed({ ...r, values: ["a"], model: "emb" }),
  };
  for (const [request, path, message] of cases) {
    for (const [way, go] of Object.entries(ways)) {
      // (Embeddings take no messages or tools.)
      if (way === "embed" && path !== "signal" && !("maxTokens" in request)) continue;
      await assert.rejects(go(request), (e) => {
        assert.ok(e instanceof skyl.InvalidRequestError, `${way} ${path}: ${e}`);
        assert.equal(e.path, path, way);
        assert.match(e.message, message, way);
        return true;
      });
    }
  }
  assert.equal(sent, 0);
});
