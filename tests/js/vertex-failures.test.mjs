// Vertex AI when a token cannot be had, through the built package, the
// mock provider and the loopback token endpoint (vertex-endpoint.mjs): a
// fallback's source asked only when its entry is tried; an endpoint that
// fails retried like an attempt, then the fallback; a callback that throws
// or never settles; a token a header cannot carry; the exchange's own time
// limit; the attempts each waiting request keeps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, ask, against } from "./helpers.mjs";
import { useTokenEndpoint } from "./vertex-endpoint.mjs";

const mock = useMock();
const { tokens, reset, account, recorder, gemini, tokenURI } = useTokenEndpoint(mock);

test("a fallback's service account is exchanged only when its entry is tried", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  const chain = (fail) =>
    new skyl.Client({
      ...against(mock, "openai", { mockOptions: { fail, scenario: `vertex ${Math.random()}` } }),
      maxRetries: 0,
      fetch: fetchFn,
      fallback: [gemini({ serviceAccount: account(), maxRetries: 0 })],
    });
  // The first provider answers: no exchange, so a token endpoint that
  // fails does not fail the request.
  tokens.answer = { status: 500, body: '{"error":"internal_failure"}' };
  const first = await chain("").complete({ messages: ask("Hi") });
  assert.equal(first.provider, "openai");
  assert.equal(tokens.exchanges.length, 0);
  assert.ok(!sent.some((r) => r.url.startsWith(tokenURI())));
  // It fails: one exchange, when the fallback is tried, and its token
  // authorizes the fallback's request.
  tokens.answer = null;
  const second = await chain("500").complete({ messages: ask("Hi") });
  assert.equal(second.provider, "gemini");
  assert.equal(tokens.exchanges.length, 1);
  assert.equal(sent.at(-1).headers.authorization, "Bearer ya29.loopback-token-1");
});

test("a token endpoint that fails is retried like an attempt, then the fallback goes on", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  // A 503 once: retried by the request's policy, after its backoff.
  tokens.answer = { status: 503, body: '{"error":"backend_error"}', once: true };
  const c = new skyl.Client(gemini({ serviceAccount: account(), fetch: fetchFn, maxRetries: 1 }));
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(tokens.exchanges.length, 2);
  // Always 503, in a chain: the Vertex entry's retries used up, the next
  // provider answers, and the response lists both failures.
  reset();
  sent.length = 0;
  tokens.answer = { status: 503, body: '{"error":"backend_error"}' };
  const chain = new skyl.Client({
    ...against(mock, "openai", {
      mockOptions: { fail: "500", scenario: `chain ${Math.random()}` },
    }),
    maxRetries: 0,
    fetch: fetchFn,
    fallback: [
      gemini({ serviceAccount: account(), maxRetries: 1 }),
      against(mock, "anthropic", { maxRetries: 0 }),
    ],
  });
  const answered = await chain.complete({ messages: ask("Hi") });
  assert.equal(answered.provider, "anthropic");
  // (The token endpoint's failure counts as the entry's network
  // failure; its message says what the endpoint answered.)
  assert.deepEqual(
    answered.attempts.map((a) => [a.provider, a.error.status ?? a.error.code]),
    [
      ["openai", 500],
      ["gemini", "network"],
    ],
  );
  assert.match(answered.attempts[1].error.message, /token exchange failed/);
  assert.equal(tokens.exchanges.length, 2, "the Vertex entry's exchange and its retry");
  assert.ok(!sent.some((q) => q.headers.authorization?.startsWith("Bearer ya29.")));
});

test("a fallback's token callback that throws: its error keeps the earlier provider's failure", async () => {
  reset();
  const c = new skyl.Client({
    ...against(mock, "openai", { mockOptions: { fail: "500", scenario: `cb ${Math.random()}` } }),
    maxRetries: 0,
    fallback: [
      gemini({
        accessToken: async () => {
          throw new Error("metadata server unreachable");
        },
      }),
      against(mock, "anthropic"),
    ],
  });
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.SkylError, String(e));
    assert.equal(e.code, "callback");
    assert.equal(e.path, "fallback[0].accessToken()");
    assert.deepEqual(
      e.attempts.map((a) => [a.provider, a.error.status]),
      [["openai", 500]],
    );
    return true;
  });
});

test("requests that wait on one failing callback each keep their own attempts", async () => {
  reset();
  // The first provider answers the two requests 500 and 503; both then
  // wait on the fallback's one token callback, which fails.
  const statuses = [500, 503];
  const fetchFn = async (url, init) =>
    String(url).startsWith(mock.url)
      ? new Response('{"error":{"message":"down","type":"server_error"}}', {
          status: statuses.shift(),
          headers: { "content-type": "application/json" },
        })
      : globalThis.fetch(url, init);
  let calls = 0;
  const c = new skyl.Client({
    ...against(mock, "openai"),
    maxRetries: 0,
    fetch: fetchFn,
    fallback: [
      gemini({
        accessToken: async () => {
          calls++;
          await new Promise((r) => setTimeout(r, 100));
          throw new Error("metadata server unreachable");
        },
      }),
    ],
  });
  const [a, b] = await Promise.allSettled([1, 2].map(() => c.complete({ messages: ask("Hi") })));
  assert.equal(calls, 1, "one load for both");
  assert.notEqual(a.reason, b.reason);
  const seen = [a, b].map((r) => r.reason.attempts.map((x) => x.error.status)).sort();
  assert.deepEqual(seen, [[500], [503]]);
  assert.ok(a.reason instanceof skyl.SkylError && a.reason.code === "callback");
});

test("an accessToken callback or an exchange that never settles: an abort ends the request", {
  timeout: 10_000,
}, async () => {
  reset();
  tokens.delayMs = 400;
  const { sent, fetchFn } = recorder();
  const never = () => new Promise(() => {});
  for (const extra of [{ accessToken: never }, { serviceAccount: account() }]) {
    const c = new skyl.Client(gemini({ fetch: fetchFn, ...extra }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(
      c.complete({ messages: ask("Hi"), signal: controller.signal }),
      skyl.AbortError,
    );
  }
  assert.ok(
    sent.every((r) => r.url.startsWith(tokenURI())),
    "nothing sent to the provider",
  );
});

test("an accessToken callback that throws is a SkylError naming it, nothing sent", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(
    gemini({
      fetch: fetchFn,
      accessToken: async () => {
        throw new TypeError("metadata server unreachable");
      },
    }),
  );
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.SkylError, String(e));
    assert.equal(e.code, "callback");
    assert.equal(e.path, "accessToken()");
    assert.ok(e.cause instanceof TypeError);
    return true;
  });
  assert.equal(sent.length, 0);
});

test("a token a header cannot carry is refused by name, nothing sent", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  // (A pasted curly quote: fetch would refuse the header as if the
  // network had failed, and the run would retry and fall back.)
  const c = new skyl.Client(
    gemini({ fetch: fetchFn, accessToken: async () => "ya29.SECRET\u201d", maxRetries: 2 }),
  );
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.InvalidRequestError, String(e));
    assert.equal(e.path, "accessToken");
    assert.match(e.message, /U\+201D at position 12/);
    assert.ok(!JSON.stringify(e).includes("SECRET") && !e.message.includes("SECRET"));
    return true;
  });
  assert.equal(sent.length, 0);
});

test("the token exchange has its own time limit; after it gives up the next request exchanges again", async () => {
  reset();
  const signals = [];
  let hang = true;
  const { sent, fetchFn } = recorder();
  const fetchWithHang = (url, init) => {
    if (!String(url).startsWith(tokenURI())) return fetchFn(url, init);
    signals.push(init.signal);
    if (!hang) return fetchFn(url, init);
    // An endpoint that never answers: what the time limit ends (here, as
    // if it had passed).
    return new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), 50));
  };
  const c = new skyl.Client(
    gemini({ serviceAccount: account(), fetch: fetchWithHang, maxRetries: 0 }),
  );
  const waiting = await Promise.allSettled([1, 2].map(() => c.complete({ messages: ask("Hi") })));
  assert.equal(signals.length, 1, "one exchange for both");
  assert.ok(signals[0] instanceof AbortSignal && !signals[0].aborted);
  for (const w of waiting) assert.ok(w.reason instanceof skyl.ConnectionError, String(w.reason));
  hang = false;
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(signals.length, 2, "a new exchange");
  assert.equal(sent.filter((q) => !q.url.startsWith(tokenURI())).length, 1);
});
