// Progress events (issue 27): what `partial: { tools: true }` costs. One
// `write_file` call whose arguments stream ONE character per Anthropic
// `input_json_delta` (frames shaped as `anthropic-json-other-tool.1.stream`
// records a tool-only turn, with `inference_geo` as the 2026 recordings
// have it), in 1-4 KB chunks. Each row runs in its own Node process (this
// script with --child): a warm-up, then timed runs; median CPU (user +
// system). Every row's result is checked, or the run fails.
//   node bench/progress.mjs           full run; writes its block of RESULTS.md
//   node bench/progress.mjs --quick   a few seconds, prints only
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { prng } from "./content.mjs";
import { fakeFetch } from "./inputs.mjs";
import { SKYL_PKG } from "./libs.mjs";
import { median, writeBlock } from "./spawn.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const BIG = 128 * 1024;
const CAP_S = 300; // a row's process is stopped after this long
// This script's block in RESULTS.md, which run.mjs keeps when it rewrites the file.
const BEGIN = "<!-- progress.mjs: begin (node bench/progress.mjs writes this block) -->";
const END = "<!-- progress.mjs: end -->";

/** Arguments JSON text of exactly `n` characters, as the API spaces it. */
function argsText(n) {
  const rand = prng(27);
  const w = () =>
    ["file", "path", "value", "count", "name", "état", "→ next"][Math.floor(rand() * 7)];
  const lines = [
    () => `let ${w()}_${Math.floor(rand() * 100)} = "${w()} ${w()}";`,
    () => `// see C:\\tmp\\${w()} for the ${w()}`,
    () => `\tprintf("%s\\n", ${w()});`,
    () => `if (${w()} != ${w()}) { return "${w()}"; }`,
  ];
  const head = '{"path": "src/generated/write_file.c", "content": "';
  const room = n - head.length - 2;
  let raw = "";
  for (let len = 0; len < room; ) {
    const line = `${"  ".repeat(Math.floor(rand() * 3))}${lines[Math.floor(rand() * 4)]()}\n`;
    raw += line;
    len += JSON.stringify(line).length - 2;
  }
  let body = "";
  const escaped = JSON.stringify(raw).slice(1, -1); // cut between escapes, not inside one
  for (const tok of escaped.match(/\\u[0-9a-f]{4}|\\.|[^\\]/g)) {
    if (body.length + tok.length > room) break;
    body += tok;
  }
  return `${head}${body.padEnd(room, " ")}"}`;
}

/**
 * The stream: one tool_use block, one character of arguments per delta
 * (`text`: the same characters as a text block, one `text_delta` each).
 */
function makeInput(n, text = false) {
  const args = argsText(n);
  const out = [];
  const ev = (e) => out.push(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  // message_start as recorded (anthropic-json-other-tool.1), inference_geo as in 2026's.
  const usage = '"input_tokens":843,"cache_creation_input_tokens":0,"cache_read_input_tokens":0';
  out.push(
    `event: message_start\ndata: {"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","id":"msg_01CD3XaZfhNabxRt1SG5ybtK","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{${usage},"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":16,"service_tier":"standard","inference_geo":"not_available"}}}\n\n`,
  );
  const block = { type: "tool_use", id: "toolu_019Zvehfe1XQWweT1pm7okyt", name: "write_file" };
  const start = text ? { type: "text", text: "" } : { ...block, input: {} };
  ev({ type: "content_block_start", index: 0, content_block: start });
  const piece = text
    ? (s) => `{"type":"text_delta","text":${JSON.stringify(s)}}`
    : (s) => `{"type":"input_json_delta","partial_json":${JSON.stringify(s)}}`;
  const delta = (s) =>
    out.push(
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":${piece(s)}}\n\n`,
    );
  if (!text) delta("");
  ev({ type: "ping" });
  for (let i = 0; i < args.length; i++) delta(args[i]);
  ev({ type: "content_block_stop", index: 0 });
  out.push(
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"${text ? "end_turn" : "tool_use"}","stop_sequence":null},"usage":{${usage},"output_tokens":${Math.ceil(n / 4)}}}\n\n`,
  );
  ev({ type: "message_stop" });
  const body = new TextEncoder().encode(out.join(""));
  const chunks = [];
  const rand = prng(99); // as bench/inputs.mjs cuts its 1-4 KB chunks
  for (let i = 0, k = 0; i < body.length; i += k) {
    k = 1024 + Math.floor(rand() * 3072);
    chunks.push(body.subarray(i, i + k));
  }
  return { args, expected: JSON.parse(args), chunks, bytes: body.length };
}

const SCHEMA = {
  type: "object",
  properties: { path: { type: "string" }, content: { type: "string" } },
  required: ["path", "content"],
};

// Each row: load() gives run(input, check) → { args, deltas, last, starts }.
// `check` (the first, untimed run) also joins the deltas and keeps the last
// partial value; timed runs only touch each one, as a UI reading it would.
async function loadSkyl(partial) {
  const skyl = await import(pathToFileURL(path.join(SKYL_PKG, "node.js")).href);
  const tools = [{ name: "write_file", parameters: SCHEMA }];
  const messages = [{ role: "user", parts: [{ type: "text", text: "write it" }] }];
  return async (input, check) => {
    const fetch = fakeFetch(input.chunks);
    const client = new skyl.Client({ provider: "anthropic", model: "m", apiKey: "k", fetch });
    const request = partial ? { messages, tools, partial: { tools: true } } : { messages, tools };
    const r = { args: null, deltas: "", n: 0, last: undefined, starts: [] };
    for await (const ev of client.stream(request)) {
      if (ev.type === "tool_call_delta") {
        r.n += ev.partial?.path === undefined ? 0 : 1;
        if (check) [r.deltas, r.last] = [r.deltas + ev.argumentsDelta, ev.partial];
      } else if (ev.type === "tool_call_start") r.starts.push(ev.name);
      else if (ev.type === "tool_call") r.args = ev.call.arguments;
    }
    return r;
  };
}

// The per-event floor: the same characters as text, one `text` event each
// (the cheapest event skyl hands out), checked by their join.
async function loadSkylText() {
  const skyl = await import(pathToFileURL(path.join(SKYL_PKG, "node.js")).href);
  const messages = [{ role: "user", parts: [{ type: "text", text: "write it" }] }];
  return async (input, check) => {
    const fetch = fakeFetch(input.chunks);
    const client = new skyl.Client({ provider: "anthropic", model: "m", apiKey: "k", fetch });
    const r = { text: "", n: 0 };
    for await (const ev of client.stream({ messages })) {
      if (ev.type === "text") {
        r.n += ev.text.length;
        if (check) r.text += ev.text;
      }
    }
    return r;
  };
}

async function loadAiSdk(parse) {
  const { streamText, tool, jsonSchema, parsePartialJson } = await import("ai");
  const { createAnthropic } = await import("@ai-sdk/anthropic");
  const tools = { write_file: tool({ description: "write", inputSchema: jsonSchema(SCHEMA) }) };
  return async (input, check) => {
    const model = createAnthropic({ apiKey: "k", fetch: fakeFetch(input.chunks) })("m");
    const result = streamText({ model, prompt: "write it", tools, maxRetries: 0 });
    const r = { args: null, deltas: "", n: 0, last: undefined, starts: [] };
    for await (const part of result.fullStream) {
      if (part.type === "tool-input-delta") {
        // What the AI SDK's UI does per delta (processUIMessageStream): parse all so far.
        r.deltas += part.delta;
        if (parse) {
          r.last = (await parsePartialJson(r.deltas)).value;
          r.n += r.last?.path === undefined ? 0 : 1;
        }
      } else if (part.type === "tool-input-start") r.starts.push(part.toolName);
      else if (part.type === "tool-call") r.args = part.input;
      else if (part.type === "error") throw part.error;
    }
    if (!check) r.deltas = "";
    return r;
  };
}

const ROWS = {
  skyl: { load: () => loadSkyl(false), progress: false },
  "skyl partial": { load: () => loadSkyl(true), progress: true },
  "skyl text": { load: loadSkylText, text: true },
  "ai-sdk": { load: () => loadAiSdk(false), progress: false, joins: true },
  "ai-sdk + parsePartialJson": { load: () => loadAiSdk(true), progress: true, joins: true },
};

/** Why a row's first result is wrong, or null. */
function wrong(lib, r, input) {
  if (ROWS[lib].text)
    return r.text === input.args ? null : "the text events do not join to the text";
  const args = typeof r.args === "string" ? JSON.parse(r.args) : r.args;
  if (!isDeepStrictEqual(args, input.expected)) return "the tool call's arguments differ";
  const spec = ROWS[lib];
  if (spec.progress || spec.joins) {
    if (r.starts.join() !== "write_file") return `tool call starts: ${r.starts.join() || "none"}`;
    if (r.deltas !== input.args) return "the argument deltas do not join to the arguments";
  } else if (r.starts.length || r.deltas) return "progress events without `partial`";
  if (spec.progress && !isDeepStrictEqual(r.last, input.expected))
    return "the last partial value is not the arguments";
  return null;
}

async function child([lib, n, runs, warmup]) {
  globalThis.AI_SDK_LOG_WARNINGS = false;
  const input = makeInput(Number(n), ROWS[lib].text);
  const run = await ROWS[lib].load();
  const timed = async (check) => {
    const c0 = process.cpuUsage();
    const r = await run(input, check);
    const c = process.cpuUsage(c0);
    return [r, (c.user + c.system) / 1000];
  };
  const [r, first] = await timed(true);
  const why = wrong(lib, r, input);
  console.log(JSON.stringify(why ? { error: `${lib}, ${n} deltas: ${why}` } : { first }));
  if (why) process.exit(1);
  // At least `warmup` runs and 0.5 s (none when 0), as bench/child.mjs warms up.
  const until = performance.now() + (Number(warmup) ? 500 : 0);
  for (let i = 0; i < Number(warmup) || performance.now() < until; i++) await run(input, false);
  for (let i = 0; i < Number(runs); i++)
    console.log(JSON.stringify({ cpu: (await timed(false))[1] }));
}

/** A row in its own process: { ms } (median CPU; `firstOnly`: the checked run's), or null. */
function measure(lib, n, runs, warmup) {
  const args = [fileURLToPath(import.meta.url), "--child", lib, ...[n, runs, warmup].map(String)];
  const opts = { cwd: here, encoding: "utf8", timeout: CAP_S * 1000 };
  const p = spawnSync(process.execPath, args, opts);
  const lines = (p.stdout.match(/^\{.*/gm) ?? []).map((l) => JSON.parse(l));
  const err = lines.find((l) => l.error)?.error;
  if (err || (p.status !== 0 && !p.signal)) throw new Error(err ?? `${lib}: ${p.stderr}`);
  const cpu = lines.filter((l) => l.cpu !== undefined).map((l) => l.cpu);
  if (cpu.length) return { ms: median(cpu) };
  return lines[0] ? { ms: lines[0].first, firstOnly: true } : null;
}

if (process.argv[2] === "--child") await child(process.argv.slice(3));
else await main(process.argv.includes("--quick"));

/** Timed runs and warm-up runs of a row; null: left out. */
function plan(lib, n, quick) {
  const parse = lib === "ai-sdk + parsePartialJson";
  if (quick && lib.startsWith("ai-sdk")) return n > 4000 ? null : [1, 0];
  if (quick) return [3, 1];
  if (parse && n > 4000) return n > 40000 ? [0, 0] : [3, 0];
  return n > 40000 ? [5, 2] : [11, 5];
}

async function main(quick) {
  const sizes = quick ? [4000, 40000] : [4000, 40000, BIG];
  const loadBefore = os.loadavg();
  const res = Object.fromEntries(Object.keys(ROWS).map((lib) => [lib, {}])); // [lib][n]
  for (const n of sizes)
    for (const lib of Object.keys(ROWS)) {
      const p = plan(lib, n, quick);
      if (!p) continue;
      // skyl's rows are short: three processes, the median of theirs (one process
      // can run twice as slow as the next on this shared VM).
      const reps = quick || !lib.startsWith("skyl") ? 1 : 3;
      const all = Array.from({ length: reps }, () => measure(lib, n, ...p));
      const m = all.includes(null) ? null : { ...all[0], ms: median(all.map((x) => x.ms)) };
      res[lib][n] = m;
      console.log(`${String(n).padStart(6)} deltas  ${lib.padEnd(26)} ${cell(m)}`);
    }
  const loadAfter = os.loadavg();
  const ratio = (a, b) => (a && b ? a.ms / b.ms : null);
  const big = sizes.at(-1);
  const overhead = ratio(res["skyl partial"][big], res.skyl[big]);
  const linear = ratio(res["skyl partial"][40000], res["skyl partial"][4000]);
  const mark = (x, max) => (x === null ? "n/a" : `${x.toFixed(2)} ${x <= max ? "✓" : "✗"}`);
  const targets = `skyl partial ÷ skyl at ${big.toLocaleString("en")} deltas: ${mark(overhead, 2)} (target ≤ 2); skyl partial's CPU at 40,000 deltas ÷ at 4,000: ${mark(linear, 12)} (target ≤ 12; linear is 10)`;
  console.log(`\n${targets}`);
  if (quick) return;

  const r2 = (x) => (x === null ? "-" : x.toFixed(2));
  let md = `| deltas | stream MB | skyl ms | skyl partial ms | partial ÷ skyl | skyl text ms | text ÷ skyl | ai-sdk ms | ai-sdk + parsePartialJson ms | ai-sdk + parse ÷ skyl partial |\n|${"---|".repeat(10)}\n`;
  for (const n of sizes) {
    const [a, b, t, c, d] = Object.keys(ROWS).map((lib) => res[lib][n]);
    md += `| ${n.toLocaleString("en")} | ${(makeInput(n).bytes / 1e6).toFixed(1)} | ${cell(a)} | ${cell(b)} | ${r2(ratio(b, a))} | ${cell(t)} | ${r2(ratio(t, a))} | ${cell(c)} | ${cell(d)} | ${r2(ratio(d, b))} |\n`;
  }
  const floor = ratio(res["skyl text"][big], res.skyl[big]);
  const growth = (lib) => r2(ratio(res[lib][40000], res[lib][4000]));
  const version = (p) => JSON.parse(fs.readFileSync(path.join(p, "package.json"), "utf8")).version;
  const nm = (p) => version(path.join(here, "node_modules", p));
  const section = `## Progress events (issue 27)

Generated by \`node bench/progress.mjs\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}, Node ${process.version}; skyl ${version(SKYL_PKG)}, ai ${nm("ai")}, @ai-sdk/anthropic ${nm("@ai-sdk/anthropic")}. Load average (1, 5, 15 min) ${loadBefore.map((x) => x.toFixed(2)).join(", ")} at the start, ${loadAfter.map((x) => x.toFixed(2)).join(", ")} at the end.

One \`write_file\` call, \`{"path": "...", "content": "..."}\` (lines of code: \`\\n\`, \`\\t\`, \`\\"\`, \`\\\\\` escapes, a few non-ASCII letters), as an Anthropic Messages stream shaped like the recordings (\`message_start\` with usage, \`content_block_start\` with \`tool_use\`, an empty \`input_json_delta\`, \`ping\`, one \`input_json_delta\` per character of the arguments' JSON text, \`content_block_stop\`, \`message_delta\` with usage, \`message_stop\`), in 1-4 KB chunks; *deltas* is the number of characters. Each cell: median CPU (user + system) of a Node process's timed runs (skyl's rows: the median of three processes' medians): 11 after a warm-up of at least 5 runs and 0.5 s (131,072 deltas: 5 after 2; ai-sdk + parsePartialJson: 3 runs with no warm-up at 40,000, and only the first, checked run at 131,072, *(1 run)*); a process is stopped after ${CAP_S} s. *skyl*: \`client.stream\` without \`partial\`; *skyl partial*: with \`partial: { tools: true }\`, reading \`ev.partial?.path\` at every \`tool_call_delta\`; *skyl text*: the same characters as a text block, one \`text_delta\` frame each (the frames a few bytes shorter), one \`text\` event each; *ai-sdk*: \`streamText\` with \`@ai-sdk/anthropic\`, joining the \`tool-input-delta\` texts; *+ parsePartialJson*: also what the AI SDK's UI does at each delta (\`processUIMessageStream\`), \`await parsePartialJson(text)\` on the whole text so far. Checked in every row: the \`tool_call\`'s arguments parse to the generated ones; with progress, the deltas join to the arguments' text and the last partial value deep-equals them; without \`partial\`, no progress events.

${md}
Targets: ${targets}. CPU at 40,000 deltas ÷ at 4,000 for the others: skyl ${growth("skyl")}, ai-sdk ${growth("ai-sdk")}, ai-sdk + parsePartialJson ${growth("ai-sdk + parsePartialJson")} (the whole text parsed at each delta: quadratic). Without \`partial\`, skyl hands out no event per delta (the arguments stay in its WebAssembly until the call is whole); with it, the one-character frames of each 1-4 KB read become one \`tool_call_delta\` event (their texts joined, their frames in \`raw\`; written by the WebAssembly as a small array: the call's index and the edits to its partial value, the texts beside it, unescaped), which JS turns into the event and the next partial value; each frame is still read once by the incremental parser. *skyl text* measures one event per frame, with the cheapest event skyl has (text events are not joined): ${r2(floor)}× the stream without events at ${big.toLocaleString("en")} deltas.
`;
  writeBlock(BEGIN, END, section);
}

/** A row's median CPU for a table. */
function cell(m) {
  if (m === undefined) return "-";
  if (m === null) return `did not finish in ${CAP_S} s`;
  const x = m.ms;
  return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}${m.firstOnly ? " (1 run)" : ""}`;
}
