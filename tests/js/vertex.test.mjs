// Vertex AI through the built package, the mock provider and a loopback
// token endpoint: the service account's JWT verified with the key's public
// half (node:crypto, independent of skyl's signing through WebCrypto), one
// exchange for many concurrent requests, a token renewed when it nears its
// expiry and once after a 401, the URL of each location form, Claude's
// Vertex body, express mode, and no secret in what a failure reports.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import { createPublicKey, createVerify } from "node:crypto";
import { skyl, useMock, ask, against } from "./helpers.mjs";

const mock = useMock();
const fixtures = new URL("../fixtures/google/", import.meta.url);
const KEY_FILE = JSON.parse(fs.readFileSync(new URL("service-account.json", fixtures), "utf8"));
const PUBLIC = createPublicKey(fs.readFileSync(new URL("public.pem", fixtures)));
const PRIVATE_BODY = KEY_FILE.private_key.split("\n")[1]; // one line of the key's base64

/** The loopback token endpoint: verifies each JWT, answers a numbered token. */
const tokens = {
  exchanges: [], // the verified claims and header of each exchange
  expiresIn: 3600,
  delayMs: 0,
  answer: null, // { status, body } to answer instead
};
let server;
let tokenURI;
before(async () => {
  server = http.createServer((req, res) => {
    let form = "";
    req.on("data", (c) => {
      form += c;
    });
    req.on("end", async () => {
      const params = new URLSearchParams(form);
      const jwt = params.get("assertion") ?? "";
      const [h, c, s] = jwt.split(".");
      const verified = createVerify("RSA-SHA256")
        .update(`${h}.${c}`)
        .verify(PUBLIC, Buffer.from(s ?? "", "base64url"));
      const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
      if (
        req.headers["content-type"] !== "application/x-www-form-urlencoded" ||
        params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
        !verified
      ) {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ error: "invalid_grant", error_description: "Invalid JWT Signature." }),
        );
      }
      tokens.exchanges.push({ header: decode(h), claims: decode(c), at: Date.now() });
      if (tokens.delayMs) await new Promise((r) => setTimeout(r, tokens.delayMs));
      if (tokens.answer) {
        res.writeHead(tokens.answer.status, { "content-type": "application/json" });
        res.end(tokens.answer.body);
        if (tokens.answer.once) tokens.answer = null;
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          access_token: `ya29.loopback-token-${tokens.exchanges.length}`,
          expires_in: tokens.expiresIn,
          token_type: "Bearer",
        }),
      );
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  tokenURI = `http://127.0.0.1:${server.address().port}/token`;
});
after(() => server?.close());

/** A fresh state for one test: no exchanges, hour-long tokens. */
function reset() {
  tokens.exchanges = [];
  tokens.expiresIn = 3600;
  tokens.delayMs = 0;
  tokens.answer = null;
}

const account = () => ({ ...KEY_FILE, token_uri: tokenURI });

/** A fetch that records each request (URL, headers, body), then sends it to the mock. */
function recorder() {
  const sent = [];
  const fetchFn = async (url, init) => {
    const headers = Object.fromEntries(new Headers(init.headers));
    sent.push({ url: String(url), headers, body: init.body });
    if (String(url).startsWith(tokenURI)) return globalThis.fetch(url, init);
    const u = new URL(url);
    return globalThis.fetch(`${mock.url}${u.pathname}${u.search}`, init);
  };
  return { sent, fetchFn };
}

const gemini = (extra) => ({
  provider: "gemini",
  model: "gemini-2.5-flash",
  vertex: { project: "skyl-test", location: "us-central1" },
  baseURL: mock.url,
  ...extra,
});

test("the service account's JWT verifies with the key's public half, and its claims are Google's", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(gemini({ serviceAccount: account(), fetch: fetchFn }));
  const before = Math.floor(Date.now() / 1000);
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(tokens.exchanges.length, 1);
  const { header, claims } = tokens.exchanges[0];
  assert.deepEqual(header, { alg: "RS256", typ: "JWT", kid: KEY_FILE.private_key_id });
  assert.equal(claims.iss, KEY_FILE.client_email);
  assert.equal(claims.scope, "https://www.googleapis.com/auth/cloud-platform");
  assert.equal(claims.aud, tokenURI);
  assert.ok(claims.iat >= before - 1 && claims.iat <= Date.now() / 1000 + 1, `${claims.iat}`);
  assert.equal(claims.exp, claims.iat + 3600);
  const [exchange, call] = sent;
  assert.equal(exchange.url, tokenURI);
  assert.equal(
    call.url,
    `${mock.url}/v1/projects/skyl-test/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`,
  );
  assert.equal(call.headers.authorization, "Bearer ya29.loopback-token-1");
  assert.equal(call.headers["x-goog-api-key"], undefined);
});

test("50 concurrent requests on a cold client make one token exchange", async () => {
  reset();
  tokens.delayMs = 50;
  const c = new skyl.Client(gemini({ serviceAccount: JSON.stringify(account()) }));
  const all = await Promise.all(
    Array.from({ length: 50 }, () => c.complete({ messages: ask("Hi") })),
  );
  assert.equal(all.length, 50);
  assert.equal(tokens.exchanges.length, 1);
});

test("a token is renewed when it nears its expiry, and kept while it does not", async () => {
  reset();
  tokens.expiresIn = 200; // within the 5-minute margin: renewed on the next request
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(gemini({ serviceAccount: account(), fetch: fetchFn }));
  await c.complete({ messages: ask("Hi") });
  tokens.expiresIn = 3600;
  await c.complete({ messages: ask("Hi") });
  await c.complete({ messages: ask("Hi") });
  assert.equal(tokens.exchanges.length, 2);
  const used = sent.filter((r) => r.url !== tokenURI).map((r) => r.headers.authorization);
  assert.deepEqual(
    used,
    [1, 2, 2].map((n) => `Bearer ya29.loopback-token-${n}`),
  );
});

test("a 401 renews the token once and the request succeeds; a second 401 does not loop", async () => {
  reset();
  const { sent, fetchFn } = recorder();
  const once = new skyl.Client(
    gemini({
      serviceAccount: account(),
      fetch: fetchFn,
      maxRetries: 0,
      headers: { "x-mock-fail": "401", "x-mock-scenario": `vertex-401-once-${Date.now()}` },
    }),
  );
  const r = await once.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(tokens.exchanges.length, 2, "renewed once");
  const used = sent.filter((q) => q.url !== tokenURI).map((q) => q.headers.authorization);
  assert.deepEqual(used, ["Bearer ya29.loopback-token-1", "Bearer ya29.loopback-token-2"]);

  reset();
  const always = new skyl.Client(
    gemini({
      serviceAccount: account(),
      maxRetries: 3,
      headers: { "x-mock-fail": "401,401,401,401", "x-mock-scenario": `vertex-401-${Date.now()}` },
    }),
  );
  await assert.rejects(always.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.AuthenticationError, e.name);
    assert.equal(e.status, 401);
    return true;
  });
  assert.equal(tokens.exchanges.length, 2, "one renewal, then the 401 stands");
});

test("an accessToken callback: its token, kept until it nears expiry", async () => {
  let calls = 0;
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(
    gemini({
      fetch: fetchFn,
      accessToken: async () => {
        calls++;
        return { token: `ya29.callback-${calls}`, expiresAt: Date.now() + 3_600_000 };
      },
    }),
  );
  await Promise.all([1, 2, 3].map(() => c.complete({ messages: ask("Hi") })));
  assert.equal(calls, 1);
  assert.ok(sent.every((r) => r.headers.authorization === "Bearer ya29.callback-1"));
});

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
  assert.ok(!sent.some((r) => r.url.startsWith(tokenURI)));
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
    sent.every((r) => r.url.startsWith(tokenURI)),
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
    if (!String(url).startsWith(tokenURI)) return fetchFn(url, init);
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
  assert.equal(sent.filter((q) => !q.url.startsWith(tokenURI)).length, 1);
});

test("the URL of each location form, and express mode's key", async () => {
  const { sent, fetchFn } = recorder();
  const base = { provider: "gemini", model: "gemini-2.5-flash", fetch: fetchFn };
  const forms = {
    "us-east5": "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/",
    global: "https://aiplatform.googleapis.com/v1/projects/p/locations/global/",
    eu: "https://aiplatform.eu.rep.googleapis.com/v1/projects/p/locations/eu/",
    us: "https://aiplatform.us.rep.googleapis.com/v1/projects/p/locations/us/",
  };
  for (const [location, prefix] of Object.entries(forms)) {
    const c = new skyl.Client({ ...base, vertex: { project: "p", location }, accessToken: "t" });
    await c.complete({ messages: ask("Hi") });
    assert.equal(
      sent.at(-1).url,
      `${prefix}publishers/google/models/gemini-2.5-flash:generateContent`,
    );
  }
  const express = new skyl.Client({ ...base, vertex: {}, apiKey: "AQ.express-key-0123" });
  for await (const _ of express.stream({ messages: ask("Hi") }));
  const last = sent.at(-1);
  assert.equal(
    last.url,
    "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
  );
  assert.equal(last.headers["x-goog-api-key"], "AQ.express-key-0123");
  assert.equal(last.headers.authorization, undefined);
});

test("Claude on Vertex: no model in the body, anthropic_version in it, streamed whole", async () => {
  reset();
  const c = new skyl.Client({
    provider: "anthropic",
    model: "claude-sonnet-4-5@20250929",
    vertex: { project: "skyl-test", location: "us-east5" },
    serviceAccount: account(),
    baseURL: mock.url,
  });
  mock.requests.length = 0;
  const events = [];
  for await (const ev of c.stream({
    messages: ask("What's the weather in Kampala?"),
    tools: [
      {
        name: "get_weather",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    ],
  }))
    events.push(ev);
  const [req] = mock.requests;
  assert.equal(
    req.path,
    "/v1/projects/skyl-test/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
  );
  assert.equal(req.body.model, undefined);
  assert.equal(req.body.anthropic_version, "vertex-2023-10-16");
  assert.equal(req.body.stream, true);
  assert.equal(req.headers.authorization, "Bearer ya29.loopback-token-1");
  assert.equal(req.headers["anthropic-version"], undefined);
  const calls = events.filter((e) => e.type === "tool_call");
  assert.deepEqual(
    calls.map((e) => [e.call.name, JSON.parse(e.call.arguments)]),
    [["get_weather", { city: "Kampala" }]],
  );
  assert.equal(events.at(-1).type, "finish");
});

test("no secret in what a failure reports: the key, the token, the exchange's answer", async () => {
  reset();
  // The provider echoes the credential it refused.
  const echo = new skyl.Client(
    gemini({
      serviceAccount: account(),
      maxRetries: 0,
      headers: {
        "x-mock-fail": "403",
        "x-mock-echo-key": "1",
        "x-mock-scenario": `vertex-echo-${Date.now()}`,
      },
    }),
  );
  const shown = (e) => `${e.message} ${JSON.stringify(e)} ${e.cause?.message ?? ""} ${e.stack}`;
  await assert.rejects(echo.complete({ messages: ask("Hi") }), (e) => {
    assert.equal(e.status, 403);
    assert.ok(!shown(e).includes("ya29.loopback-token-1"), shown(e));
    return true;
  });
  // A proxy that quotes the key file back.
  const leaky = async (_url, init) => {
    throw new Error(`refused ${init.body} ${KEY_FILE.private_key}`);
  };
  const c = new skyl.Client(gemini({ serviceAccount: account(), fetch: leaky }));
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.ConnectionError, e.name);
    assert.ok(!shown(e).includes(PRIVATE_BODY), shown(e));
    // Nor the JWT (its header's base64url begins so), a credential for an hour.
    assert.match(shown(e), /refused grant_type=/);
    assert.ok(!shown(e).includes("eyJhbGciOi"), shown(e));
    return true;
  });
  // The token endpoint refuses the key: typed, with Google's reason.
  tokens.answer = {
    status: 400,
    body: JSON.stringify({
      error: "invalid_grant",
      error_description: "Invalid grant: account not found",
    }),
  };
  const refused = new skyl.Client(gemini({ serviceAccount: account() }));
  await assert.rejects(refused.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.AuthenticationError, e.name);
    assert.equal(e.providerType, "invalid_grant");
    assert.match(
      e.message,
      /token exchange failed: invalid_grant: Invalid grant: account not found/,
    );
    assert.ok(!shown(e).includes(PRIVATE_BODY));
    return true;
  });
});

test("options are checked, and nothing is sent for a wrong combination", async () => {
  const bad = (o, path) =>
    assert.throws(
      () => new skyl.Client({ provider: "gemini", model: "g", ...o }),
      (e) => {
        assert.ok(e instanceof skyl.InvalidRequestError, e.name);
        assert.equal(e.path, path);
        return true;
      },
    );
  bad({ accessToken: "t" }, "accessToken");
  bad({ serviceAccount: account() }, "serviceAccount");
  bad({ provider: "openai", vertex: { project: "p", location: "global" } }, "vertex");
  bad({ vertex: "p" }, "vertex");
  bad({ vertex: { project: 1 } }, "vertex.project");
  bad(
    { vertex: { project: "p", location: "global" }, apiKey: "k", accessToken: "t" },
    "accessToken",
  );
  bad({ vertex: { project: "p", location: "global" }, accessToken: 5 }, "accessToken");
  bad({ vertex: { project: "p", location: "global" }, serviceAccount: 5 }, "serviceAccount");
  // The core's rules: checked before anything is sent.
  const { sent, fetchFn } = recorder();
  const refused = async (o, path) => {
    const c = new skyl.Client({ provider: "gemini", model: "g", fetch: fetchFn, ...o });
    await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
      assert.ok(e instanceof skyl.InvalidRequestError, e.name);
      assert.equal(e.path, path);
      return true;
    });
  };
  await refused({ vertex: { project: "p" }, accessToken: "t" }, "vertex.location");
  await refused(
    { vertex: { project: "p", location: "us central" }, accessToken: "t" },
    "vertex.location",
  );
  await refused({ vertex: { project: "p", location: "global" }, apiKey: "k" }, "vertex.project");
  await refused({ vertex: { location: "us-central1" }, apiKey: "k" }, "vertex.location");
  await refused({ provider: "anthropic", vertex: {}, apiKey: "k" }, "apiKey");
  await refused(
    { vertex: { project: "p", location: "global" }, serviceAccount: { type: "authorized_user" } },
    "serviceAccount.type",
  );
  // A service account's key is exchanged only for a request that will be
  // sent: not for a location the core refuses, nor for a bad request.
  await refused(
    { vertex: { project: "p", location: "us central" }, serviceAccount: account() },
    "vertex.location",
  );
  const c = new skyl.Client(gemini({ serviceAccount: account(), fetch: fetchFn }));
  await assert.rejects(
    c.complete({ messages: ask("Hi"), responseFormat: { type: "json_schema" } }),
    (e) => e instanceof skyl.InvalidRequestError && e.path.startsWith("responseFormat"),
  );
  assert.equal(sent.length, 0, "nothing sent, not even a token exchange");
});
