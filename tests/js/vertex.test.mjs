// Vertex AI through the built package, the mock provider and a loopback
// token endpoint (vertex-endpoint.mjs): the service account's JWT verified
// with the key's public half, one exchange for many concurrent requests, a
// token renewed when it nears its expiry and once after a 401, the URL of
// each location form, Claude's Vertex body, express mode, and no secret in
// what a failure reports. Loads that fail: vertex-failures.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, ask } from "./helpers.mjs";
import { useTokenEndpoint } from "./vertex-endpoint.mjs";

const mock = useMock();
const { KEY_FILE, PRIVATE_BODY, tokens, reset, account, recorder, gemini, tokenURI } =
  useTokenEndpoint(mock);

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
  assert.equal(claims.aud, tokenURI());
  assert.ok(claims.iat >= before - 1 && claims.iat <= Date.now() / 1000 + 1, `${claims.iat}`);
  assert.equal(claims.exp, claims.iat + 3600);
  const [exchange, call] = sent;
  assert.equal(exchange.url, tokenURI());
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
  const used = sent.filter((r) => r.url !== tokenURI()).map((r) => r.headers.authorization);
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
  const used = sent.filter((q) => q.url !== tokenURI()).map((q) => q.headers.authorization);
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
