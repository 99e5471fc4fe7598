// client.embed against the mock provider: both vector forms (and both in
// one answer), a malformed vector, 5,000 values batched for each provider,
// the concurrency limit, a 413 halved, a batch that fails for good with the
// others kept, and an abort that sends nothing more.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, client } from "./helpers.mjs";
import { mockVector } from "./mock-embed.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

const EMBEDDERS = ["openai", "openaicompat", "gemini", "responses"];
const values = (n) => Array.from({ length: n }, (_, i) => `value number ${i}`);
const embedRequests = () =>
  mock.requests.filter((r) => /embeddings$|EmbedContents?$|embedContent$/.test(r.path));
const sizeOf = (r) => (r.body.input ?? r.body.requests ?? [r.body.content]).length;

/** Asserts every vector is the mock's for its value (so the order is the values'). */
function assertVectors(embeddings, texts, dims) {
  assert.equal(embeddings.length, texts.length);
  embeddings.forEach((v, i) => {
    assert.ok(v instanceof Float32Array, `vector ${i} is a Float32Array`);
    assert.deepEqual(Array.from(v), Array.from(mockVector(texts[i], dims)), `vector ${i}`);
  });
}

describe("embed", () => {
  for (const provider of EMBEDDERS) {
    test(`${provider}: vectors in the values' order, with usage and model`, async () => {
      const texts = values(7);
      const c = client(mock, provider);
      const out = await c.embed({ values: texts, model: "emb-1", dimensions: 12, maxBatchSize: 3 });
      assertVectors(out.embeddings, texts, 12);
      assert.equal(out.batches, 3);
      assert.equal(embedRequests().length, 3);
      if (provider === "gemini") {
        assert.equal(out.usage, null, "Gemini reports no tokens");
        // The last batch of one value goes to :embedContent.
        assert.ok(embedRequests()[2].path.endsWith("/models/emb-1:embedContent"));
      } else {
        assert.equal(
          out.usage.input,
          texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0),
        );
        assert.equal(out.model, "emb-1");
        // base64 asked for; the body says so.
        assert.equal(embedRequests()[0].body.encoding_format, "base64");
      }
    });
  }

  test("numbers from a server that ignores encoding_format, and both forms in one answer", async () => {
    const texts = values(6);
    for (const embed_format of ["ignore", "mixed"]) {
      const c = client(mock, "openaicompat", { mockOptions: { embed_format } });
      const out = await c.embed({ values: texts, model: "nomic", dimensions: 1024 });
      // 1,024 numbers, not cut to 256 by a base64 misreading (openai-node #1542).
      assert.equal(out.embeddings[1].length, 1024);
      assertVectors(out.embeddings, texts, 1024);
    }
  });

  test("encodingFormat float asks for numbers", async () => {
    const c = client(mock, "openaicompat");
    await c.embed({ values: ["a b"], model: "m", encodingFormat: "float" });
    assert.equal(embedRequests()[0].body.encoding_format, "float");
  });

  test("a malformed base64 vector is an error naming the item", async () => {
    const c = client(mock, "openai", { mockOptions: { embed_bad: 1 }, maxRetries: 0 });
    await assert.rejects(c.embed({ values: values(3) }), (e) => {
      assert.ok(e instanceof skyl.SkylError, e.name);
      assert.match(e.message, /data\[1\]\.embedding/);
      assert.match(e.message, /4-byte floats/);
      assert.deepEqual(e.partial.failed, [0, 1, 2]);
      return true;
    });
  });

  for (const [provider, size] of [
    ["openai", 2048],
    ["gemini", 100],
    ["openaicompat", 32],
  ]) {
    test(`${provider}: 5,000 values split into batches of at most ${size}`, async () => {
      const texts = values(5000);
      const c = client(mock, provider);
      const out = await c.embed({
        values: texts,
        model: "m",
        dimensions: 4,
        maxBatchSize: provider === "openaicompat" ? 32 : undefined,
      });
      const sizes = embedRequests().map(sizeOf);
      assert.equal(sizes.length, Math.ceil(5000 / size));
      assert.ok(sizes.every((n) => n <= size));
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        5000,
      );
      assert.equal(out.batches, sizes.length);
      assertVectors(out.embeddings, texts, 4);
    });
  }

  test("never more batches in flight than maxConcurrency", async () => {
    for (const maxConcurrency of [undefined, 2]) {
      mock.reset();
      const c = client(mock, "openai", { mockOptions: { embed_delay: 20 } });
      await c.embed({ values: values(40), maxBatchSize: 2, maxConcurrency, dimensions: 4 });
      const limit = maxConcurrency ?? 4;
      assert.equal(mock.embedStats.maxInflight, limit, `at most ${limit} (and that many)`);
    }
  });

  test("a 413 halves the batch until it fits", async () => {
    const texts = values(10);
    const c = client(mock, "openaicompat", { mockOptions: { embed_max: 3 } });
    const out = await c.embed({ values: texts, model: "tei", dimensions: 4 });
    assertVectors(out.embeddings, texts, 4);
    const sizes = embedRequests().map(sizeOf);
    // 10 → 5 + 5 → (2 + 3) + (2 + 3)
    assert.deepEqual(sizes.slice().sort(), [10, 2, 2, 3, 3, 5, 5].sort());
    assert.equal(out.batches, 4);
  });

  test("a batch that fails for good rejects, and partial keeps every other vector", async () => {
    const texts = values(9);
    texts[4] = "fail this one";
    const c = client(mock, "openai", { maxRetries: 1 });
    await assert.rejects(
      c.embed({ values: texts, maxBatchSize: 3, maxConcurrency: 1, dimensions: 4 }),
      (e) => {
        assert.ok(e instanceof skyl.InternalServerError, e.name);
        assert.equal(e.status, 500);
        assert.deepEqual(e.partial.failed, [3, 4, 5]);
        for (const i of [0, 1, 2, 6, 7, 8])
          assert.deepEqual(
            Array.from(e.partial.embeddings[i]),
            Array.from(mockVector(texts[i], 4)),
          );
        assert.equal(e.partial.embeddings[4], undefined);
        return true;
      },
    );
    // The failing batch was retried once; the batch after it was still sent.
    assert.deepEqual(embedRequests().map(sizeOf), [3, 3, 3, 3]);
  });

  test("a fetch that gives no Response for one batch: its error keeps the vectors that came", async () => {
    const texts = values(3);
    let n = 0;
    const c = client(mock, "openai", {
      fetch: (url, init) => (++n === 2 ? Promise.resolve({}) : globalThis.fetch(url, init)),
    });
    await assert.rejects(
      c.embed({ values: texts, maxBatchSize: 1, maxConcurrency: 1, dimensions: 4 }),
      (e) => {
        assert.ok(e instanceof skyl.MalformedStreamError, e.name);
        assert.match(e.message, /not a Response/);
        assert.deepEqual(Array.from(e.partial.embeddings[0]), Array.from(mockVector(texts[0], 4)));
        assert.deepEqual(e.partial.failed, [1, 2]);
        return true;
      },
    );
    assert.equal(n, 2, "no batch after it");
    // Two at once: the other batch's fetch, cut, is not tried again, and
    // no later batch is sent.
    let m = 0;
    const two = client(mock, "openai", {
      fetch: (url, init) => (++m === 2 ? Promise.resolve({}) : globalThis.fetch(url, init)),
    });
    await assert.rejects(
      two.embed({ values: values(6), maxBatchSize: 1, maxConcurrency: 2, dimensions: 4 }),
      (e) => e instanceof skyl.MalformedStreamError && e.partial.failed.includes(5),
    );
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(m, 2, "two fetches, none after");
  });

  test("an abort mid-batch sends no further batch", async () => {
    const c = client(mock, "openai", { mockOptions: { embed_delay: 200 } });
    const ac = new AbortController();
    const p = c.embed({
      values: values(20),
      maxBatchSize: 2,
      maxConcurrency: 2,
      signal: ac.signal,
      dimensions: 4,
    });
    setTimeout(() => ac.abort(new Error("user left")), 50);
    await assert.rejects(p, (e) => {
      assert.ok(e instanceof skyl.AbortError, e.name);
      assert.equal(e.partial.failed.length, 20);
      return true;
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(embedRequests().length, 2, "only the two batches in flight were sent");
  });

  test("bad input is refused with the field named, and nothing is sent", async () => {
    const cases = [
      ["anthropic", { values: ["a"] }, "provider", /Voyage/],
      ["openai", { values: ["a"], taskType: "RETRIEVAL_QUERY" }, "taskType", /Gemini/],
      ["openai", { values: ["a", ""] }, "values[1]", /empty/],
      ["openai", { values: ["a", 3] }, "values[1]", /string/],
      ["openaicompat", { values: ["a"] }, "model", /model/],
      ["gemini", { values: ["a"], encodingFormat: "hex" }, "encodingFormat", /base64/],
      ["openai", { values: "a" }, "values", /array/],
    ];
    for (const [provider, request, path, message] of cases) {
      await assert.rejects(client(mock, provider).embed(request), (e) => {
        assert.ok(e instanceof skyl.InvalidRequestError, `${path}: ${e.name}`);
        assert.equal(e.path, path);
        assert.match(e.message, message);
        return true;
      });
    }
    assert.equal(embedRequests().length, 0);
  });

  test("no values resolve at once, sending nothing", async () => {
    const out = await client(mock, "openai").embed({ values: [] });
    assert.deepEqual(out.embeddings, []);
    assert.equal(out.batches, 0);
    assert.equal(embedRequests().length, 0);
  });

  test("the key never shows in an embedding error", async () => {
    const key = "sk-test-SECRET-embed-key";
    const c = client(mock, "openai", {
      apiKey: key,
      maxRetries: 0,
      mockOptions: { fail: "401", echo_key: 1 },
    });
    await assert.rejects(c.embed({ values: ["a"] }), (e) => {
      assert.ok(e instanceof skyl.AuthenticationError, e.name);
      assert.ok(!JSON.stringify({ ...e, message: e.message }).includes(key));
      return true;
    });
  });
});
