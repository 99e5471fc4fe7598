// Embeddings (issue 28): 5,000 values of 1,536 dimensions, served by the
// mock provider (tests/js/mock-server.mjs, in its own process, so that its
// CPU is not the client's) in OpenAI's format, each library batching the
// same way: 2,048 values a request (3 requests), at most 4 in flight. Each
// row runs in its own Node process (this script with --child): a warm-up,
// then timed runs; median CPU (user + system) of the client process, and
// the response bytes on the wire (counted in the first, checked run).
//   node bench/embed.mjs           full run; writes its block of RESULTS.md
//   node bench/embed.mjs --quick   a few seconds, prints only
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SKYL_PKG } from "./libs.mjs";
import { median, writeBlock } from "./spawn.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const N = 5000;
const DIMS = 1536;
const BATCH = 2048;
const CONCURRENCY = 4;
const BEGIN = "<!-- embed.mjs: begin (node bench/embed.mjs writes this block) -->";
const END = "<!-- embed.mjs: end -->";
const MOCK_VECTOR = pathToFileURL(path.join(here, "../tests/js/mock-embed.mjs")).href;

/** The values: short support-desk sentences, as a retrieval index holds. */
function values() {
  const subjects = [
    "my order",
    "the invoice",
    "a refund",
    "the password",
    "shipping",
    "my account",
  ];
  const verbs = ["has not arrived", "looks wrong", "was charged twice", "cannot be reset"];
  return Array.from(
    { length: N },
    (_, i) => `Ticket ${i}: ${subjects[i % 6]} ${verbs[i % 4]} since ${1 + (i % 28)} March.`,
  );
}

/** A fetch that counts the response bytes (the checked run only). */
function counting(bytes) {
  return async (url, init) => {
    const res = await fetch(url, init);
    const buf = await res.arrayBuffer();
    bytes.n += buf.byteLength;
    return new Response(buf, { status: res.status, headers: res.headers });
  };
}

/** `xs` in batches of BATCH, at most CONCURRENCY at once, results in order. */
async function batched(xs, embedBatch) {
  const batches = [];
  for (let i = 0; i < xs.length; i += BATCH) batches.push(xs.slice(i, i + BATCH));
  const out = new Array(batches.length);
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const k = next++;
      out[k] = await embedBatch(batches[k]);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return out.flat();
}

// Each row: load(baseURL) gives run(values, fetch) → the vectors.
const ROWS = {
  skyl: async (baseURL) => {
    const skyl = await import(pathToFileURL(path.join(SKYL_PKG, "node.js")).href);
    return async (xs, fetch) => {
      const c = new skyl.Client({ provider: "openai", apiKey: "k", baseURL, fetch });
      const r = await c.embed({ values: xs, model: "text-embedding-3-small", dimensions: DIMS });
      return r.embeddings;
    };
  },
  "openai-node": async (baseURL) => {
    const { default: OpenAI } = await import("openai");
    return async (xs, fetch) => {
      const client = new OpenAI({ apiKey: "k", baseURL, fetch, maxRetries: 0 });
      // Base64 by default, decoded by openai-node into number arrays.
      return batched(xs, async (input) => {
        const r = await client.embeddings.create({
          model: "text-embedding-3-small",
          input,
          dimensions: DIMS,
        });
        return r.data.map((d) => d.embedding);
      });
    };
  },
  "ai-sdk embedMany": async (baseURL) => {
    const { embedMany } = await import("ai");
    const { createOpenAI } = await import("@ai-sdk/openai");
    return async (xs, fetch) => {
      const model = createOpenAI({ apiKey: "k", baseURL, fetch }).embedding(
        "text-embedding-3-small",
      );
      const r = await embedMany({
        model,
        values: xs,
        maxParallelCalls: CONCURRENCY,
        maxRetries: 0,
        providerOptions: { openai: { dimensions: DIMS } },
      });
      return r.embeddings;
    };
  },
};

async function child([lib, baseURL, runs, warmup]) {
  const { mockVector } = await import(MOCK_VECTOR);
  const xs = values();
  const run = await ROWS[lib](baseURL);
  const bytes = { n: 0 };
  const c0 = process.cpuUsage();
  const first = await run(xs, counting(bytes));
  const c = process.cpuUsage(c0);
  // Checked: every vector is the mock's for its value, in order.
  for (const i of [0, 1, 2047, 2048, 4095, 4096, N - 1]) {
    const want = mockVector(xs[i], DIMS);
    const got = first[i];
    if (got?.length !== DIMS || want.some((x, j) => Math.abs(x - got[j]) > 1e-6)) {
      console.log(JSON.stringify({ error: `${lib}: vector ${i} differs` }));
      process.exit(1);
    }
  }
  console.log(JSON.stringify({ first: (c.user + c.system) / 1000, bytes: bytes.n }));
  for (let i = 0; i < Number(warmup); i++) await run(xs, fetch);
  for (let i = 0; i < Number(runs); i++) {
    const t0 = process.cpuUsage();
    await run(xs, fetch);
    const t = process.cpuUsage(t0);
    console.log(JSON.stringify({ cpu: (t.user + t.system) / 1000 }));
  }
}

/** A row in its own process: { ms, bytes }. */
function measure(lib, baseURL, runs, warmup) {
  const args = [fileURLToPath(import.meta.url), "--child", lib, baseURL, runs, warmup];
  const p = spawnSync(process.execPath, args.map(String), {
    cwd: here,
    encoding: "utf8",
    timeout: 300_000,
  });
  const lines = (p.stdout.match(/^\{.*/gm) ?? []).map((l) => JSON.parse(l));
  const err = lines.find((l) => l.error)?.error;
  if (err || p.status !== 0) throw new Error(err ?? `${lib}: ${p.stderr}`);
  const cpu = lines.filter((l) => l.cpu !== undefined).map((l) => l.cpu);
  return { ms: median(cpu), bytes: lines[0].bytes };
}

/** Starts the mock provider in its own process; resolves to { url, stop }. */
function startMock() {
  const server = path.join(here, "../tests/js/mock-server.mjs");
  const p = spawn(process.execPath, [server, "0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    p.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ url: m[1], stop: () => p.kill() });
    });
    p.on("exit", (code) => reject(new Error(`the mock exited (${code})`)));
  });
}

async function main(quick) {
  const mock = await startMock();
  const baseURL = `${mock.url}/v1`;
  const loadBefore = os.loadavg();
  const res = {};
  try {
    for (const lib of Object.keys(ROWS)) {
      res[lib] = measure(lib, baseURL, quick ? 3 : 11, quick ? 1 : 3);
      const r = res[lib];
      console.log(
        `${lib.padEnd(18)} ${r.ms.toFixed(0).padStart(6)} ms  ${(r.bytes / 1e6).toFixed(1)} MB`,
      );
    }
  } finally {
    mock.stop();
  }
  const loadAfter = os.loadavg();
  const ratio = (lib) => res.skyl.ms / res[lib].ms;
  const mark = (x) => `${x.toFixed(2)} ${x <= 0.5 ? "✓" : "✗"}`;
  const targets = `skyl ÷ openai-node ${mark(ratio("openai-node"))}, skyl ÷ ai-sdk embedMany ${mark(ratio("ai-sdk embedMany"))} (target ≤ 0.5 each)`;
  console.log(`\n${targets}`);
  if (quick) return;
  const version = (p) => JSON.parse(fs.readFileSync(path.join(p, "package.json"), "utf8")).version;
  const nm = (p) => version(path.join(here, "node_modules", p));
  let md = "| library | CPU ms | ÷ skyl | response MB on the wire |\n|---|---|---|---|\n";
  for (const [lib, r] of Object.entries(res))
    md += `| ${lib} | ${r.ms.toFixed(0)} | ${(r.ms / res.skyl.ms).toFixed(2)} | ${(r.bytes / 1e6).toFixed(1)} |\n`;
  const section = `## Embeddings (issue 28)

Generated by \`node bench/embed.mjs\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}, Node ${process.version}; skyl ${version(SKYL_PKG)}, openai ${nm("openai")}, ai ${nm("ai")}, @ai-sdk/openai ${nm("@ai-sdk/openai")}. Load average (1, 5, 15 min) ${loadBefore.map((x) => x.toFixed(2)).join(", ")} at the start, ${loadAfter.map((x) => x.toFixed(2)).join(", ")} at the end.

${N.toLocaleString("en")} values (short sentences) embedded at ${DIMS.toLocaleString("en")} dimensions by the mock provider (\`tests/js/mock-server.mjs\`, its own process, OpenAI's \`/v1/embeddings\` format) over loopback HTTP, every library batching alike: ${BATCH.toLocaleString("en")} values a request (3 requests), at most ${CONCURRENCY} in flight. *skyl*: \`client.embed\` (asks for base64, decoded in wasm into one \`Float32Array\`); *openai-node*: \`embeddings.create\` per batch (asks for base64, decodes it into number arrays); *ai-sdk embedMany*: \`embedMany\` with \`@ai-sdk/openai\` (asks for JSON numbers). Each cell: median CPU (user + system) of the client's Node process over 11 timed runs after 3 warm-up runs; the bytes are the response bodies of the first run, in which seven vectors (each batch's ends) are checked against the mock's.

${md}
Targets: ${targets}.
`;
  writeBlock(BEGIN, END, section);
}

if (process.argv[2] === "--child") await child(process.argv.slice(3));
else await main(process.argv.includes("--quick"));
