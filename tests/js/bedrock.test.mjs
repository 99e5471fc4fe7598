// Bedrock through the built package and the mock: each attempt signed with
// SigV4 (checked here by an independent signer on node:crypto), credentials
// from a callback fetched once and again before they expire, and no secret
// in what a failure reports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { skyl, useMock, baseURL, ask, against } from "./helpers.mjs";

const mock = useMock();

const KEY_ID = "AKIAIOSFODNN7EXAMPLE";
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const TOKEN = "IQoJb3JpZ2luX2VjEOr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ-example";
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/** A fetch that records each request as sent (URL, headers, body text). */
function recorder() {
  const sent = [];
  const fetchFn = async (url, init) => {
    sent.push({ url, headers: Object.fromEntries(new Headers(init.headers)), body: init.body });
    return globalThis.fetch(url, init);
  };
  return { sent, fetchFn };
}

const sha = (s) => createHash("sha256").update(s).digest("hex");
const hmac = (k, s) => createHmac("sha256", k).update(s).digest();

/**
 * The signature AWS would compute for `req` (every header it lists as
 * signed), by the published algorithm: the path's segments encoded again,
 * headers lowercased and sorted.
 */
function expectedSignature({ url, headers, body }, secret) {
  const u = new URL(url);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  lower.host = u.host;
  const auth = lower.authorization;
  const signed = /SignedHeaders=([^,]+)/.exec(auth)[1].split(";");
  const [, date, region, service] = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\//.exec(auth);
  const path = u.pathname
    .split("/")
    .map((s) =>
      encodeURIComponent(s).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join("/");
  const canonical = [
    "POST",
    path,
    "",
    ...signed.map((h) => `${h}:${String(lower[h]).trim()}`),
    "",
    signed.join(";"),
    sha(body),
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", lower["x-amz-date"], scope, sha(canonical)].join("\n");
  let k = hmac(`AWS4${secret}`, date);
  for (const part of [region, service, "aws4_request"]) k = hmac(k, part);
  return {
    signature: createHmac("sha256", k).update(toSign).digest("hex"),
    signed,
    region,
    service,
  };
}

const options = (extra) => ({
  provider: "bedrock",
  region: "us-east-1",
  model: MODEL,
  baseURL: baseURL(mock, "bedrock"),
  ...extra,
});

test("each attempt is signed with SigV4, anew after a retry", async () => {
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(
    options({
      credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN },
      headers: { "x-mock-fail": "503" },
      maxRetries: 1,
      fetch: fetchFn,
    }),
  );
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(sent.length, 2, "one retry");
  for (const req of sent) {
    assert.ok(req.url.endsWith(`/model/${encodeURIComponent(MODEL)}/converse`), req.url);
    const auth = req.headers.authorization;
    assert.match(
      auth,
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEY_ID}/\\d{8}/us-east-1/bedrock/aws4_request, `),
    );
    assert.equal(req.headers["x-amz-security-token"], TOKEN);
    const at = req.headers["x-amz-date"];
    const when = Date.UTC(
      +at.slice(0, 4),
      +at.slice(4, 6) - 1,
      +at.slice(6, 8),
      +at.slice(9, 11),
      +at.slice(11, 13),
      +at.slice(13, 15),
    );
    assert.ok(Math.abs(when - Date.now()) < 60_000, `signed now: ${at}`);
    const want = expectedSignature(req, SECRET);
    assert.ok(want.signed.includes("host") && want.signed.includes("x-amz-date"));
    assert.equal(/Signature=([0-9a-f]{64})$/.exec(auth)[1], want.signature);
  }
});

test("credentials from a callback: one fetch for concurrent requests, again before they expire", async () => {
  let calls = 0;
  // The first expire within the 5-minute margin, the second in an hour.
  const expirations = [Date.now() + 4 * 60_000, new Date(Date.now() + 60 * 60_000).toISOString()];
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(
    options({
      fetch: fetchFn,
      credentials: async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 20));
        const expiration = expirations[calls - 1];
        return {
          accessKeyId: `${KEY_ID}${calls}`,
          secretAccessKey: SECRET,
          sessionToken: TOKEN,
          expiration,
        };
      },
    }),
  );
  await Promise.all(Array.from({ length: 5 }, () => c.complete({ messages: ask("Hi") })));
  assert.equal(calls, 1, "one fetch for five requests");
  await c.complete({ messages: ask("Hi") });
  assert.equal(calls, 2, "fetched again: the first expire in 4 minutes");
  await c.complete({ messages: ask("Hi") });
  assert.equal(calls, 2, "kept: the second expire in an hour");
  const ids = sent.map((r) => /Credential=(\w+)\//.exec(r.headers.authorization)[1]);
  assert.deepEqual(
    ids,
    [1, 1, 1, 1, 1, 2, 2].map((n) => `${KEY_ID}${n}`),
  );
});

test("a callback's bad credentials are a typed error naming the field, nothing sent", async () => {
  const { sent, fetchFn } = recorder();
  const c = new skyl.Client(
    options({ fetch: fetchFn, credentials: async () => ({ accessKeyId: KEY_ID }) }),
  );
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.InvalidRequestError, e.name);
    assert.equal(e.path, "credentials().secretAccessKey");
    return true;
  });
  assert.equal(sent.length, 0);
  // Given as an object, they are checked when the client is made.
  for (const [credentials, path] of [
    [{ accessKeyId: KEY_ID }, "credentials.secretAccessKey"],
    [{ accessKeyId: "", secretAccessKey: SECRET }, "credentials.accessKeyId"],
    [{ accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: 5 }, "credentials.sessionToken"],
  ]) {
    assert.throws(
      () => new skyl.Client(options({ credentials })),
      (e) => e instanceof skyl.InvalidRequestError && e.path === path,
    );
    assert.throws(
      () => new skyl.Client(options({ apiKey: "k", fallback: [options({ credentials })] })),
      (e) => e.path === `fallback[0].${path}`,
    );
  }
});

test("credentials AWS refuses as expired are fetched again, once per request", async () => {
  // (No expiration: without the refusal they would be kept for good.)
  let calls = 0;
  const expired = new Set([`${KEY_ID}1`]);
  const { sent, fetchFn } = recorder();
  const refusing = async (url, init) => {
    const id = /Credential=(\w+)\//.exec(new Headers(init.headers).get("authorization"))[1];
    if (!expired.has(id)) return fetchFn(url, init);
    sent.push({ url, headers: Object.fromEntries(new Headers(init.headers)) });
    return new Response(
      JSON.stringify({ message: "The security token included in the request is expired" }),
      {
        status: 403,
        headers: {
          "content-type": "application/json",
          "x-amzn-ErrorType":
            "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/",
          "x-amzn-RequestId": "0c1b2a39-6f8d-4c3a-9e1a-1234567890ab",
        },
      },
    );
  };
  const c = new skyl.Client(
    options({
      fetch: refusing,
      maxRetries: 0,
      credentials: async () => {
        calls++;
        return { accessKeyId: `${KEY_ID}${calls}`, secretAccessKey: SECRET };
      },
    }),
  );
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text);
  assert.equal(calls, 2);
  await c.complete({ messages: ask("Hi") });
  assert.equal(calls, 2, "the renewed ones are kept");
  const ids = sent.map((q) => /Credential=(\w+)\//.exec(q.headers.authorization)[1]);
  assert.deepEqual(
    ids,
    [1, 2, 2].map((n) => `${KEY_ID}${n}`),
  );
  // Refused again after the renewal: the request ends in AWS's error,
  // typed, with its request id; no loop.
  expired.add(`${KEY_ID}2`).add(`${KEY_ID}3`);
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.AuthenticationError, e.name);
    assert.equal(e.providerType, "ExpiredTokenException");
    assert.equal(e.requestId, "0c1b2a39-6f8d-4c3a-9e1a-1234567890ab");
    return true;
  });
  assert.equal(calls, 3);
});

test("a signature AWS refuses for a skewed clock is made again by AWS's time", async () => {
  // AWS's clock 10 minutes ahead of this one: the first attempt's
  // signature is refused with AWS's Date; the next is signed by it.
  const ahead = 10 * 60_000;
  const dates = [];
  const { fetchFn } = recorder();
  const skewed = async (url, init) => {
    dates.push(new Headers(init.headers).get("x-amz-date"));
    if (dates.length > 1) return fetchFn(url, init);
    return new Response(JSON.stringify({ message: "Signature expired" }), {
      status: 403,
      headers: {
        "content-type": "application/json",
        "x-amzn-ErrorType": "InvalidSignatureException",
        date: new Date(Date.now() + ahead).toUTCString(),
      },
    });
  };
  const c = new skyl.Client(
    options({
      fetch: skewed,
      maxRetries: 0,
      credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET },
    }),
  );
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text);
  const ms = (d) => Date.parse(d.replace(/^(....)(..)(..)T(..)(..)(..)Z$/, "$1-$2-$3T$4:$5:$6Z"));
  const shift = ms(dates[1]) - ms(dates[0]);
  assert.ok(Math.abs(shift - ahead) < 5_000, `${dates} shifted by ${shift} ms`);
});

test("credentials a header cannot carry are refused by name, nothing sent", async () => {
  for (const [creds, path] of [
    [{ accessKeyId: `${KEY_ID}\nX`, secretAccessKey: SECRET }, "credentials.accessKeyId"],
    [
      { accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: `${TOKEN}\u2028x` },
      "credentials.sessionToken",
    ],
  ]) {
    const { sent, fetchFn } = recorder();
    const c = new skyl.Client(options({ fetch: fetchFn, credentials: async () => creds }));
    await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
      assert.ok(e instanceof skyl.InvalidRequestError, e.name);
      assert.equal(e.path, path);
      assert.ok(!e.message.includes(SECRET) && !e.message.includes(TOKEN), e.message);
      return true;
    });
    assert.equal(sent.length, 0);
  }
});

test("a fallback's credentials callback is asked only when its entry is tried", async () => {
  let calls = 0;
  let broken = false;
  const credentials = async () => {
    calls++;
    if (broken) throw new Error("STS is down");
    return { accessKeyId: KEY_ID, secretAccessKey: SECRET };
  };
  const { sent, fetchFn } = recorder();
  const chain = (fail) =>
    new skyl.Client({
      ...against(mock, "openai", { mockOptions: { fail, scenario: `creds ${Math.random()}` } }),
      maxRetries: 0,
      fetch: fetchFn,
      fallback: [options({ credentials, maxRetries: 0 })],
    });
  // The first provider answers: the fallback's callback is never asked,
  // so a broken one does not fail the request.
  broken = true;
  const first = await chain("").complete({ messages: ask("Hi") });
  assert.equal(first.provider, "openai");
  assert.equal(calls, 0);
  // It fails: the callback is asked once, when the fallback is tried, and
  // its credentials sign the fallback's request.
  broken = false;
  const second = await chain("500").complete({ messages: ask("Hi") });
  assert.equal(second.provider, "bedrock");
  assert.equal(calls, 1);
  const signedReq = sent.at(-1);
  assert.match(signedReq.url, /\/model\//);
  const { signature } = expectedSignature(signedReq, SECRET);
  assert.match(signedReq.headers.authorization, new RegExp(`Signature=${signature}$`));
  // A request that will not be sent asks no callback.
  const own = new skyl.Client(options({ fetch: fetchFn, credentials }));
  const before = sent.length;
  await assert.rejects(
    own.complete({ messages: ask("Hi"), responseFormat: { type: "json_schema" } }),
    (e) => e instanceof skyl.InvalidRequestError && e.path.startsWith("responseFormat"),
  );
  assert.equal(calls, 1, "no callback for a request that fails its checks");
  assert.equal(sent.length, before);
});

test("a credentials callback that never settles: the total timeout and an abort still end the request", {
  timeout: 10_000,
}, async () => {
  const { sent, fetchFn } = recorder();
  const never = () => new Promise(() => {});
  const timed = new skyl.Client(options({ fetch: fetchFn, credentials: never, timeout: 100 }));
  await assert.rejects(timed.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.TimeoutError, e.name);
    return true;
  });
  const c = new skyl.Client(options({ fetch: fetchFn, credentials: never }));
  const controller = new AbortController();
  const stream = c.stream({ messages: ask("Hi"), signal: controller.signal });
  setTimeout(() => controller.abort(new Error("user left")), 20);
  await assert.rejects(
    (async () => {
      for await (const _ of stream);
    })(),
    (e) => e instanceof skyl.AbortError && e.message.includes("user left"),
  );
  await assert.rejects(stream.response(), skyl.AbortError);
  assert.equal(sent.length, 0, "nothing sent");
});

test("a callback left hanging by a request that stopped is asked again by the next one", {
  timeout: 10_000,
}, async () => {
  const { sent, fetchFn } = recorder();
  let asked = 0;
  // The first call never settles (an SSO prompt nobody answers); the
  // second answers.
  const credentials = () =>
    ++asked === 1
      ? new Promise(() => {})
      : Promise.resolve({ accessKeyId: KEY_ID, secretAccessKey: SECRET });
  const c = new skyl.Client(options({ fetch: fetchFn, credentials, timeout: 200 }));
  await assert.rejects(c.complete({ messages: ask("Hi") }), skyl.TimeoutError);
  assert.equal(sent.length, 0);
  const r = await c.complete({ messages: ask("Hi") });
  assert.ok(r.text.length > 0);
  assert.equal(asked, 2, "the hanging load was let go");
  assert.equal(sent.length, 1);
});

test("a load let go that ends after a newer one does not replace the newer credentials", {
  timeout: 10_000,
}, async () => {
  const { sent, fetchFn } = recorder();
  let asked = 0;
  let late;
  // The first call answers only when the test says so, after the second.
  const credentials = () =>
    ++asked === 1
      ? new Promise((resolve) => {
          late = () => resolve({ accessKeyId: `${KEY_ID}1`, secretAccessKey: SECRET });
        })
      : Promise.resolve({ accessKeyId: `${KEY_ID}2`, secretAccessKey: SECRET });
  const c = new skyl.Client(options({ fetch: fetchFn, credentials, timeout: 200 }));
  await assert.rejects(c.complete({ messages: ask("Hi") }), skyl.TimeoutError);
  await c.complete({ messages: ask("Hi") });
  late();
  await new Promise((r) => setTimeout(r, 10));
  await c.complete({ messages: ask("Hi") });
  assert.equal(asked, 2);
  const ids = sent.map((r) => /Credential=(\w+)\//.exec(r.headers.authorization)[1]);
  assert.deepEqual(ids, [`${KEY_ID}2`, `${KEY_ID}2`], "the newer credentials are kept");
});

test("a callback that throws is a SkylError naming it, its error the cause, scrubbed", async () => {
  const { sent, fetchFn } = recorder();
  const cause = new Error(`SSO session expired for key ${SECRET}`);
  const c = new skyl.Client(
    options({
      fetch: fetchFn,
      credentials: async () => {
        throw cause;
      },
      fallback: [options({ credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } })],
    }),
  );
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    assert.ok(e instanceof skyl.SkylError, String(e));
    assert.equal(e.code, "callback");
    assert.equal(e.path, "credentials()");
    assert.match(e.message, /^skyl: credentials\(\) failed: SSO session expired/);
    const shown = `${e.message} ${e.cause?.message} ${e.cause?.stack} ${e.stack}`;
    assert.ok(!shown.includes(SECRET), shown);
    return true;
  });
  // A throw that is not an Error is reported as well, even one that
  // cannot be made a string.
  const bare = Object.create(null);
  const odder = new skyl.Client(
    options({ fetch: fetchFn, credentials: () => Promise.reject(bare) }),
  );
  await assert.rejects(odder.complete({ messages: ask("Hi") }), (e) => {
    assert.equal(e.code, "callback");
    return e.cause === bare;
  });
  const odd = new skyl.Client(options({ fetch: fetchFn, credentials: () => Promise.reject(42) }));
  await assert.rejects(odd.complete({ messages: ask("Hi") }), (e) => {
    assert.equal(e.code, "callback");
    assert.match(e.message, /failed: 42$/);
    return e.cause === 42;
  });
  assert.equal(sent.length, 0);
});

test("an abort in the backoff asks no callback, and leaves no rejection unhandled", async () => {
  let asked = 0;
  let unhandled = 0;
  const count = () => unhandled++;
  process.on("unhandledRejection", count);
  try {
    const c = new skyl.Client(
      options({
        maxRetries: 2,
        headers: {
          "x-mock-fail": "429",
          "x-mock-retry-after-ms": "2000",
          "x-mock-scenario": `backoff ${Math.random()}`,
        },
        credentials: async () => {
          asked++;
          // Expiring within the 5-minute margin: asked before each attempt.
          return {
            accessKeyId: KEY_ID,
            secretAccessKey: SECRET,
            expiration: Date.now() + 60_000,
          };
        },
      }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(
      c.complete({ messages: ask("Hi"), signal: controller.signal }),
      skyl.AbortError,
    );
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(asked, 1, "asked for the first attempt only");
    assert.equal(unhandled, 0);
  } finally {
    process.off("unhandledRejection", count);
  }
});

test("no secret in what a failure reports", async () => {
  const failing = async (_url, init) => {
    const token = new Headers(init.headers).get("x-amz-security-token");
    assert.equal(token, TOKEN);
    throw new Error(`proxy refused ${token} and ${SECRET}`);
  };
  const c = new skyl.Client(
    options({
      maxRetries: 0,
      fetch: failing,
      credentials: async () => ({
        accessKeyId: KEY_ID,
        secretAccessKey: SECRET,
        sessionToken: TOKEN,
      }),
    }),
  );
  await assert.rejects(c.complete({ messages: ask("Hi") }), (e) => {
    const shown = `${e.message} ${JSON.stringify(e)} ${e.cause?.message ?? ""} ${e.stack}`;
    assert.ok(!shown.includes(SECRET) && !shown.includes(TOKEN), shown);
    return true;
  });
});

test("options are checked when the client is made", () => {
  const bad = (o, path) =>
    assert.throws(
      () => new skyl.Client({ provider: "bedrock", model: MODEL, ...o }),
      (e) => {
        assert.equal(e.path, path);
        return true;
      },
    );
  bad({}, "region");
  bad(
    { region: "us-east-1", apiKey: "k", credentials: { accessKeyId: "a", secretAccessKey: "b" } },
    "apiKey",
  );
  bad({ region: "us-east-1", credentials: { accessKeyId: "a" } }, "credentials.secretAccessKey");
  bad({ baseURL: "http://127.0.0.1:9", credentials: async () => ({}) }, "region");
  assert.ok(new skyl.Client({ provider: "bedrock", model: MODEL, baseURL: "http://127.0.0.1:9" }));
});
