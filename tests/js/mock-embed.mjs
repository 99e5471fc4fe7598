// The mock provider's embeddings: OpenAI's `POST /v1/embeddings` and
// Gemini's `:batchEmbedContents` / `:embedContent`, with deterministic
// vectors that carry meaning the way a bag of words does: texts that share
// words point the same way, so cosine similarity ranks them sensibly (the
// demo's third tab).
//
// Options, as for the chat endpoints (query parameters or x-mock-* headers):
//
//   embed_format=ignore   answer JSON numbers whatever was asked (Ollama,
//                         LM Studio)
//   embed_format=mixed    odd items as numbers, even ones as base64
//   embed_bad=<i>         item i of every answer is base64 of 6 bytes (not
//                         whole floats)
//   embed_max=<n>         a batch of more than n values is refused with a 413
//                         (TEI's body)
//   embed_delay=<ms>      wait this long before answering
//
// A batch holding a value that starts with "fail" is answered 500, always.
// `stats` counts requests in flight (`inflight`, its maximum `maxInflight`).

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A word's 32-bit FNV-1a hash. */
function hash(word) {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The mock's vector of `text`: the sum of a dense pseudo-random unit
 * vector per word (seeded by the word), normalised. Dense, as real
 * embeddings are; texts that share words point the same way.
 */
export function mockVector(text, dims) {
  const v = new Float32Array(dims);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) {
    let s = hash(w) || 1;
    for (let i = 0; i < dims; i++) {
      // xorshift32: a word's own sequence in [-1, 1).
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      v[i] += (s >>> 0) / 2 ** 31 - 1;
    }
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] /= norm;
  return v;
}

const base64 = (floats) =>
  Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");

/** Which embeddings endpoint `url` is, or null. */
export function embedWire(url) {
  if (url.pathname.endsWith("/embeddings")) return "openai";
  if (url.pathname.includes(":batchEmbedContents")) return "gemini-batch";
  if (url.pathname.includes(":embedContent")) return "gemini-one";
  return null;
}

/** Answers an embeddings request. */
export async function embedAnswer(res, wire, body, opt, stats) {
  stats.inflight += 1;
  stats.maxInflight = Math.max(stats.maxInflight, stats.inflight);
  try {
    const delay = Number(opt("embed_delay") ?? 0);
    if (delay) await sleep(delay);
    const texts =
      wire === "openai"
        ? [body?.input ?? []].flat()
        : wire === "gemini-batch"
          ? (body?.requests ?? []).map((r) => r?.content?.parts?.[0]?.text ?? "")
          : [body?.content?.parts?.[0]?.text ?? ""];
    const dims =
      Number(
        wire === "openai" ? body?.dimensions : (body?.requests?.[0] ?? body)?.outputDimensionality,
      ) || 64;
    const json = (status, value) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const max = Number(opt("embed_max") ?? 0);
    if (max && texts.length > max)
      return json(413, {
        error: `batch size ${texts.length} > maximum allowed batch size ${max}`,
        error_type: "Validation",
      });
    if (texts.some((t) => String(t).startsWith("fail"))) {
      const error =
        wire === "openai"
          ? { message: "mock: this batch always fails", type: "server_error" }
          : { code: 500, message: "mock: this batch always fails", status: "INTERNAL" };
      return json(500, { error });
    }
    const vectors = texts.map((t) => mockVector(String(t), dims));
    if (wire !== "openai") {
      const values = (v) => ({ values: Array.from(v) });
      return json(
        200,
        wire === "gemini-one"
          ? { embedding: values(vectors[0]) }
          : { embeddings: vectors.map(values) },
      );
    }
    const format = opt("embed_format");
    const bad = opt("embed_bad") != null ? Number(opt("embed_bad")) : -1;
    const data = vectors.map((v, index) => {
      const asFloat =
        format === "ignore" ||
        (format === "mixed" ? index % 2 === 1 : body?.encoding_format !== "base64");
      let embedding = asFloat ? Array.from(v) : base64(v);
      if (index === bad) embedding = "AAAAAAAA";
      return { object: "embedding", index, embedding };
    });
    const tokens = texts.reduce((n, t) => n + Math.ceil(String(t).length / 4), 0);
    return json(200, {
      object: "list",
      data,
      model: String(body?.model ?? "mock-embed"),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  } finally {
    stats.inflight -= 1;
  }
}
