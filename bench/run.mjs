// The side-by-side benchmark: every library on the same inputs, each in its
// own Node process; checks that each assembled the same text and tool calls;
// reports wall and CPU time (median, min), MB/s, events/s, peak memory and
// ratios to skyl, with the native Rust core as the ceiling; then cold start
// and Worker bundle sizes. Writes bench/RESULTS.md.
//   node bench/run.mjs            the full run (15 runs per cell)
//   node bench/run.mjs --quick    a tiny smoke run (used by the test command)
//   --no-native                   leave out the native core (no cargo build)
//   SKYL_NATIVE=<binary>          a bench_native already built, instead of
//                                 building it; a wire it does not know has
//                                 no native row
//   SKYL_PKG=<dir>                the built package to measure (../pkg)
//   --wires=a,b --kinds=a,b --deliveries=a,b   only those cases (a partial
//                                 run prints, and writes no RESULTS.md)
//   SKYL_BENCH_ROWS=<file>        also write every row as JSON there
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chunksFile, makeInput, WIRES, KINDS, DELIVERIES } from "./inputs.mjs";
import { hasWebDriver, LIBRARIES, SKYL_PKG, WEB_DRIVER } from "./libs.mjs";
import { childRun, median } from "./spawn.mjs";
import { targets } from "./targets.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const quick = process.argv.includes("--quick");
const RUNS = quick ? 2 : 15;
const WARMUP = quick ? 1 : 10;
const only = (name, all) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3).split(",") : all;
};
const partial = process.argv.some((a) => /^--(wires|kinds|deliveries)=/.test(a));
const wires = only("wires", quick ? ["anthropic", "responses"] : WIRES);
const kinds = only("kinds", quick ? ["tools-real"] : KINDS);
const deliveries = only("deliveries", quick ? ["event"] : DELIVERIES);
const loadBefore = os.loadavg();

const min = (xs) => Math.min(...xs);
const f1 = (x) =>
  Number.isNaN(x) ? "n/a" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);

// The native core, built once (or given, or left out).
const prebuilt = process.env.SKYL_NATIVE ? path.resolve(process.env.SKYL_NATIVE) : null;
let native = prebuilt;
if (!native && !process.argv.includes("--no-native")) {
  execFileSync("cargo", ["build", "--release", "--quiet", "--example", "bench_native"], {
    cwd: root,
    stdio: "inherit",
  });
  native = path.join(root, "target/release/examples/bench_native");
}
const noNative = [];

// The native core of the package measured as "skyl before", if given.
const nativeBefore = process.env.SKYL_NATIVE_BEFORE
  ? path.resolve(process.env.SKYL_NATIVE_BEFORE)
  : null;

function nativeRun(wire, kind, delivery, binary = native, lib = "native Rust core") {
  if (!binary || noNative.includes(wire)) return null;
  const input = makeInput(wire, kind, delivery);
  const file = path.join(os.tmpdir(), `skyl-bench-${wire}-${kind}-${delivery}.bin`);
  fs.writeFileSync(file, chunksFile(input));
  const p = spawnSync(binary, [wire, file, String(RUNS)], { encoding: "utf8" });
  if (p.status !== 0) {
    // A binary built elsewhere may predate a wire: leave its rows out.
    if (!prebuilt) throw new Error(`native core on ${wire}: ${p.stderr}`);
    console.error(`${prebuilt} does not run ${wire} (${p.stderr.trim()}): no native row`);
    noNative.push(wire);
    return null;
  }
  const out = JSON.parse(p.stdout);
  if (out.calls !== input.expected.calls.length)
    throw new Error(`native core: ${out.calls} calls, expected ${input.expected.calls.length}`);
  return {
    lib,
    wall: out.wall,
    cpu: out.wall,
    bytes: input.body.length,
    events: input.events,
  };
}

/** What RESULTS.md says about where the native rows came from. */
function nativeNote() {
  if (!native) return " This run left it out (`--no-native`).";
  if (!prebuilt) return "";
  const missing = noNative.length
    ? `; it does not know ${noNative.join(", ")}, which has no native row`
    : "";
  return ` Its rows here come from a \`bench_native\` built beforehand (\`SKYL_NATIVE\`: ${path.basename(prebuilt)}), not by this run${missing}.`;
}

// The Rust driver's rows need bench/web-driver built (scripts/bench does).
const webDriver = hasWebDriver();
if (!webDriver)
  console.error(`${WEB_DRIVER} is not built (scripts/bench builds it): no "skyl web" rows`);

const rows = [];
let failed = false;
for (const wire of wires) {
  for (const kind of kinds) {
    for (const delivery of deliveries) {
      const cell = [];
      for (const [lib, spec] of Object.entries(LIBRARIES)) {
        if (!spec.wires.includes(wire) || (spec.optional && !webDriver)) continue;
        const r = childRun(lib, wire, kind, delivery, RUNS, WARMUP);
        if (r.error) {
          console.error(r.error);
          failed = true;
          continue;
        }
        cell.push(r);
      }
      const nat = nativeRun(wire, kind, delivery);
      if (nat) cell.push(nat);
      const natBefore =
        nativeBefore && nativeRun(wire, kind, delivery, nativeBefore, "native before");
      if (natBefore) cell.push(natBefore);
      const skyl = cell.find((r) => r.lib === "skyl");
      for (const r of cell) {
        rows.push({
          wire,
          kind,
          delivery,
          lib: r.lib,
          wallMed: median(r.wall),
          wallMin: min(r.wall),
          cpuMed: median(r.cpu),
          cpuMin: min(r.cpu),
          mbps: r.bytes / 1e6 / (median(r.wall) / 1000),
          eps: r.events / (median(r.wall) / 1000),
          peak: r.peakRss ? r.peakRss / 1048576 : null,
          ratio: skyl ? median(r.cpu) / median(skyl.cpu) : null,
          bytes: r.bytes,
          events: r.events,
        });
      }
      const show = rows.filter(
        (x) => x.wire === wire && x.kind === kind && x.delivery === delivery,
      );
      console.log(
        `\n${wire} / ${kind} / ${delivery === "event" ? "one event per chunk" : "1-4 KB chunks"} (${(show[0].bytes / 1e6).toFixed(2)} MB, ${show[0].events} events)`,
      );
      for (const x of show)
        console.log(
          `  ${x.lib.padEnd(18)} cpu ${f1(x.cpuMed).padStart(7)} ms  wall ${f1(x.wallMed).padStart(7)} ms  ×skyl ${x.ratio === null ? "" : x.ratio.toFixed(2)}`,
        );
    }
  }
}

// Cold start (fresh process, import + first construction) and Worker bundles.
function coldStart() {
  const out = [];
  const entries = {
    skyl: `const s = await import(${JSON.stringify(pathToFileURL(path.join(SKYL_PKG, "node.js")).href)}); new s.Client({ provider: "openai", model: "m", apiKey: "k" });`,
    "ai-sdk": `const a = await import("ai"); const o = await import("@ai-sdk/openai"); o.createOpenAI({ apiKey: "k" }).chat("m"); void a.streamText;`,
    openai: `const { default: O } = await import("openai"); new O({ apiKey: "k" });`,
    "@anthropic-ai/sdk": `const { default: A } = await import("@anthropic-ai/sdk"); new A({ apiKey: "k" });`,
    "@google/genai": `const { GoogleGenAI } = await import("@google/genai"); new GoogleGenAI({ apiKey: "k" });`,
  };
  for (const [lib, code] of Object.entries(entries)) {
    const file = path.join(here, `.cold-${lib.replace(/\W/g, "_")}.mjs`);
    fs.writeFileSync(
      file,
      `const t0 = performance.now();\n${code}\nconsole.log(performance.now() - t0);\n`,
    );
    const times = [];
    for (let i = 0; i < (quick ? 1 : 9); i++)
      times.push(Number(execFileSync(process.execPath, [file], { cwd: here, encoding: "utf8" })));
    fs.rmSync(file);
    out.push({ lib, ms: median(times) });
  }
  return out;
}

/** First-response time of a bundled Worker in a fresh Miniflare (workerd), median of `runs`. */
async function workerdStart(outdir, runs) {
  const { Miniflare } = await import(path.join(root, "node_modules/miniflare/dist/src/index.js"));
  const modules = fs
    .readdirSync(outdir)
    .sort((a, b) => a.endsWith(".wasm") - b.endsWith(".wasm"))
    .map((f) => ({
      type: f.endsWith(".wasm") ? "CompiledWasm" : "ESModule",
      path: path.join(outdir, f),
    }));
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const mf = new Miniflare({
      modules,
      modulesRoot: outdir,
      compatibilityDate: "2026-04-01",
      compatibilityFlags: ["nodejs_compat"],
    });
    const res = await mf.dispatchFetch("http://localhost/ping");
    await res.text();
    times.push(performance.now() - t0);
    await mf.dispose();
  }
  return median(times);
}

async function bundles() {
  const esbuild = path.join(here, "node_modules/.bin/esbuild");
  const ping = `if (new URL(r.url).pathname === "/ping") return new Response("ok");`;
  const entries = {
    "(empty Worker)": `export default { async fetch(r) { ${ping} return new Response("x"); } };`,
    skyl: `import { Client } from "skyl"; export default { async fetch(r, env) { ${ping} const c = new Client({ provider: "anthropic", model: "m", apiKey: env.K }); return Response.json(await c.complete(await r.json())); } };`,
    // The one-adapter entry a Worker that only calls Anthropic would import.
    "skyl/anthropic": `import { Client } from ${JSON.stringify(path.join(SKYL_PKG, "anthropic/workerd.js"))}; export default { async fetch(r, env) { ${ping} const c = new Client({ provider: "anthropic", model: "m", apiKey: env.K }); return Response.json(await c.complete(await r.json())); } };`,
    "ai-sdk (+ @ai-sdk/anthropic)": `import { generateText } from "ai"; import { createAnthropic } from "@ai-sdk/anthropic"; export default { async fetch(r, env) { ${ping} const m = createAnthropic({ apiKey: env.K })("m"); return Response.json(await generateText({ model: m, prompt: await r.text() })); } };`,
    openai: `import OpenAI from "openai"; export default { async fetch(r, env) { ${ping} const c = new OpenAI({ apiKey: env.K }); return Response.json(await c.chat.completions.create({ model: "m", messages: [] })); } };`,
    "@anthropic-ai/sdk": `import Anthropic from "@anthropic-ai/sdk"; export default { async fetch(r, env) { ${ping} const c = new Anthropic({ apiKey: env.K }); return Response.json(await c.messages.create({ model: "m", max_tokens: 1, messages: [] })); } };`,
    "@google/genai": `import { GoogleGenAI } from "@google/genai"; export default { async fetch(r, env) { ${ping} const c = new GoogleGenAI({ apiKey: env.K }); return Response.json(await c.models.generateContent({ model: "m", contents: "x" })); } };`,
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-bundle-"));
  fs.symlinkSync(path.join(here, "node_modules"), path.join(dir, "node_modules"));
  fs.mkdirSync(path.join(dir, "node_modules_skyl"));
  const out = [];
  let warmed = false;
  for (const [lib, code] of Object.entries(entries)) {
    const src = path.join(dir, "entry.js");
    fs.writeFileSync(src, code);
    const outdir = path.join(dir, `out-${out.length}`);
    execFileSync(
      esbuild,
      [
        src,
        "--bundle",
        "--minify",
        "--format=esm",
        "--platform=neutral",
        "--conditions=workerd,worker,browser",
        "--main-fields=module,main",
        "--loader:.wasm=copy",
        `--alias:skyl=${path.join(SKYL_PKG, "workerd.js")}`,
        "--external:node:*",
        `--outdir=${outdir}`,
      ],
      { cwd: dir, stdio: "pipe" },
    );
    let js = 0,
      wasm = 0,
      jsGz = 0,
      wasmGz = 0;
    for (const f of fs.readdirSync(outdir)) {
      const b = fs.readFileSync(path.join(outdir, f));
      const gz = zlib.gzipSync(b, { level: 9 }).length;
      if (f.endsWith(".wasm")) {
        wasm += b.length;
        wasmGz += gz;
      } else {
        js += b.length;
        jsGz += gz;
      }
    }
    let workerdMs = NaN;
    if (!warmed) {
      // One untimed start first: the first workerd start of a run is slower.
      await workerdStart(outdir, 1).catch(() => {});
      warmed = true;
    }
    try {
      workerdMs = await workerdStart(outdir, quick ? 1 : 7);
    } catch (e) {
      console.error(`${lib}: did not start in workerd: ${String(e.message ?? e).split("\n")[0]}`);
      // skyl's own Workers must start (the smoke run in the tests checks it).
      if (lib.startsWith("skyl")) failed = true;
    }
    out.push({ lib, js, jsGz, wasm, wasmGz, workerdMs });
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

const loadAfter = os.loadavg();
const summary = targets(rows, wires, kinds, deliveries);
console.log(`\n${summary}`);
if (process.env.SKYL_BENCH_ROWS)
  fs.writeFileSync(process.env.SKYL_BENCH_ROWS, JSON.stringify(rows, null, 1));
if (partial) process.exit(failed ? 1 : 0);

const cold = coldStart();
const bund = await bundles();
const empty = bund.find((b) => b.lib === "(empty Worker)")?.workerdMs ?? 0;
console.log("\ncold start (fresh Node process, import + construct a client), median:");
for (const c of cold) console.log(`  ${c.lib.padEnd(18)} ${f1(c.ms)} ms`);
console.log("\nWorker bundle (esbuild --minify), gzip:");
for (const b of bund)
  console.log(
    `  ${b.lib.padEnd(30)} JS ${(b.jsGz / 1024).toFixed(1)} KiB${b.wasm ? ` + wasm ${(b.wasmGz / 1024).toFixed(1)} KiB` : ""} = ${((b.jsGz + b.wasmGz) / 1024).toFixed(1)} KiB; workerd first response ${f1(b.workerdMs)} ms (+${f1(b.workerdMs - empty)} over an empty Worker)`,
  );

if (!quick) {
  const versions = Object.fromEntries(
    [
      "ai",
      "@ai-sdk/openai",
      "@ai-sdk/anthropic",
      "@ai-sdk/google",
      "openai",
      "@anthropic-ai/sdk",
      "@google/genai",
    ].map((p) => [
      p,
      JSON.parse(fs.readFileSync(path.join(here, "node_modules", p, "package.json"), "utf8"))
        .version,
    ]),
  );
  const cpuModel = os.cpus()[0]?.model ?? "unknown";
  let md = `# Benchmark results\n\nGenerated by \`node bench/run.mjs\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${cpuModel}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}.\n`;
  md += `Libraries: skyl ${JSON.parse(fs.readFileSync(path.join(SKYL_PKG, "package.json"), "utf8")).version} (${SKYL_PKG === path.join(root, "pkg") ? "this build" : `the package in ${SKYL_PKG}`}), ${Object.entries(
    versions,
  )
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")}.\n\n`;
  md += `Each library runs in its own Node process on the same bytes (a \`fetch\` whose body streams them), at least ${WARMUP} warm-up runs and 0.5 s of them, then ${RUNS} timed runs. CPU is the process's user + system time during a run; ×skyl is the library's median CPU divided by skyl's (above 1: skyl uses less CPU). Every library's assembled text and tool calls were checked against the expected result. The native Rust core is skyl's decoder without JS or WebAssembly (wall time, single thread): the ceiling for skyl.${nativeNote()} The drain floor is no library: the body read and each chunk copied into skyl's wasm memory, nothing decoded (the runtime's own cost per chunk, which no decoder goes below). Load average (1, 5, 15 min) of this 2-CPU machine, which other engineers' builds share: ${loadBefore.map((x) => x.toFixed(2)).join(", ")} at the start of the run, ${loadAfter.map((x) => x.toFixed(2)).join(", ")} at the end.\n\n${summary}\n`;
  for (const wire of wires)
    for (const kind of kinds)
      for (const delivery of deliveries) {
        const show = rows.filter(
          (x) => x.wire === wire && x.kind === kind && x.delivery === delivery,
        );
        if (!show.length) continue;
        md += `## ${wire} / ${kind} / ${delivery === "event" ? "one event per chunk" : "1-4 KB chunks"}\n\n${(show[0].bytes / 1e6).toFixed(2)} MB, ${show[0].events} events.\n\n| library | CPU median ms | CPU min ms | wall median ms | wall min ms | MB/s | events/s | peak RSS MB | CPU ×skyl |\n|---|---|---|---|---|---|---|---|---|\n`;
        for (const x of show)
          md += `| ${x.lib} | ${f1(x.cpuMed)} | ${f1(x.cpuMin)} | ${f1(x.wallMed)} | ${f1(x.wallMin)} | ${f1(x.mbps)} | ${Math.round(x.eps).toLocaleString("en")} | ${x.peak ? x.peak.toFixed(0) : "-"} | ${x.ratio === null ? "-" : x.ratio.toFixed(2)} |\n`;
        md += "\n";
      }
  md += `## Cold start\n\nA fresh Node process: import the library and construct a client (median of 9).\n\n| library | ms |\n|---|---|\n${cold.map((c) => `| ${c.lib} | ${f1(c.ms)} |`).join("\n")}\n\n`;
  md += `## Worker bundle and cold start in workerd\n\nA minimal Worker entry per library, bundled by esbuild (minified, workerd conditions), gzip -9; then loaded in a fresh Miniflare (real workerd) and timed to its first response (median of 7), next to an empty Worker. workerd's own start (~100 ms) varies by about ±10 ms on this machine: smaller differences are noise.\n\n| library | JS gzip KiB | wasm gzip KiB | total gzip KiB | workerd first response ms | over an empty Worker ms |\n|---|---|---|---|---|---|\n${bund.map((b) => `| ${b.lib} | ${(b.jsGz / 1024).toFixed(1)} | ${b.wasm ? (b.wasmGz / 1024).toFixed(1) : "-"} | ${((b.jsGz + b.wasmGz) / 1024).toFixed(1)} | ${f1(b.workerdMs)} | ${b.lib.startsWith("(") ? "-" : f1(b.workerdMs - empty)} |`).join("\n")}\n`;
  // Keep the block bench/progress.mjs writes (its own run, after this one in scripts/bench).
  const file = path.join(here, "RESULTS.md");
  const kept = fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .match(/<!-- progress\.mjs: begin[\s\S]*?<!-- progress\.mjs: end -->/)
    : null;
  fs.writeFileSync(file, kept ? `${md}\n${kept[0]}\n` : md);
  console.log("\nwrote bench/RESULTS.md");
}
process.exit(failed ? 1 : 0);
