// Full-size resource bounds, with peak memory: a single 100 MB event, an
// endless stream of comments, a body of 10^6 tiny events. The mock runs in
// its own process, so the figures are the client's (Node + skyl's wasm).
// Usage: node scripts/reliability.mjs   (after scripts/build)
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const skyl = await import(path.join(root, "pkg/node.js"));
const mockProc = spawn(process.execPath, [path.join(root, "tests/js/mock-server.mjs"), "0"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const [line] = await once(mockProc.stdout, "data");
const mockURL = String(line).match(/http:\/\/\S+/)[0];

const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 5);

async function measure(name, mockOptions, options = {}) {
  global.gc?.();
  const base = process.memoryUsage().rss;
  peak = base;
  const headers = Object.fromEntries(
    Object.entries(mockOptions).map(([k, v]) => [`x-mock-${k.replace(/_/g, "-")}`, String(v)]),
  );
  const client = new skyl.Client({
    provider: "openai",
    model: "m",
    baseURL: `${mockURL}/v1`,
    headers,
    maxRetries: 0,
    ...options,
  });
  const started = performance.now();
  let events = 0;
  let outcome;
  try {
    const s = client.stream({
      messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    });
    for await (const _ of s) events++;
    outcome = `ok, ${(await s.response()).text.length} characters`;
  } catch (e) {
    outcome = `${e.name} (${e.code}): ${e.message}`;
  }
  const ms = performance.now() - started;
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(
    `| ${name} | ${events} | ${outcome} | ${(ms / 1000).toFixed(1)} s | ${mb(peak)} | ${mb(peak - base)} |`,
  );
}

console.log("| input | events | outcome | time | peak RSS | peak over baseline |");
console.log("|---|---|---|---|---|---|");
await measure("one 100 MB event", { huge_event: 100 * 1024 * 1024 });
await measure(
  "comments for 10 s (total timeout 3 s)",
  { comments_ms: 10_000 },
  { timeout: { total: 3000 } },
);
await measure("10^6 tiny events (50 MB body)", { tiny_events: 1_000_000 });
const ok = await new skyl.Client({
  provider: "openai",
  model: "m",
  baseURL: `${mockURL}/v1`,
}).complete({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] });
console.log(`\nafter all of it, the same instance answers: finish ${ok.finishReason}`);
clearInterval(sampler);
mockProc.kill();
