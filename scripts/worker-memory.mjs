// One Worker isolate under load, measured for skyl's own share (see
// RELIABILITY.md, "One Worker isolate"). workerd's RSS says little: a Worker
// without skyl grows as much. So this reads, from inside the isolate:
//   - skyl's WebAssembly memory, from the demo Worker's diagnostic route
//     (GET /api/_memory, served with DIAGNOSTICS=1; wasmMemorySize());
//   - the isolate's V8 heap, through the V8 inspector that wrangler dev
//     serves (Runtime.getHeapUsage; workerd exposes no memory API to the
//     Worker itself, and the inspector cannot force a collection there);
// for the demo Worker (www/worker) and for a passthrough Worker without
// skyl (www/worker/passthrough) under the same load, one after the other:
// at rest, at 200 concurrent chats, after them, after a second round and
// after sequential chats, then with one 16 MiB event in flight (the mock's
// `huge_event`, data that is not JSON) and one 16 MiB text delta (valid
// JSON, served by a small loopback relay in front of the mock). Every
// chat's answer must be the one a lone run of the same question gave (the
// tool call for the city asked; for the passthrough, the same bytes).
//
// Then issue 29's case, in a fresh isolate of each Worker: 20 concurrent
// streams that each carry a generated image of 2 MiB of base64 (the mock's
// "draw a …" in the Gemini format: an inlineData part in the frames of a
// recorded image stream, padded by `image_bytes`), each stream's image
// checked against the bytes the mock served.
//
// Loopback only (127.0.0.1), bounded in count (at most 500 concurrent and
// 5,000 sequential chats) and time (about 3 minutes on two cores; it
// stops at 10). Needs pkg/ (scripts/build). Prints the tables (Markdown) on
// stdout, progress on stderr. Usage:
//   node scripts/worker-memory.mjs [--concurrent 200] [--sequential 200]
//     [--images 20] [--images-only]
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startWorker } from "../www/worker/start.mjs";
import { imageFor } from "../tests/js/mock-wire-images.mjs";

// Node 20 has WebSocket (for the inspector) behind a flag.
if (typeof WebSocket === "undefined") {
  const args = ["--experimental-websocket", "--no-warnings", ...process.argv.slice(1)];
  process.exit(spawnSync(process.execPath, args, { stdio: "inherit" }).status ?? 1);
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: opts } = parseArgs({
  options: {
    concurrent: { type: "string", default: "200" },
    sequential: { type: "string", default: "200" },
    images: { type: "string", default: "20" },
    "images-only": { type: "boolean", default: false },
  },
});
const IMAGES = Math.min(Number(opts.images), 100);
const CONCURRENT = Math.min(Number(opts.concurrent), 500);
const SEQUENTIAL = Math.min(Number(opts.sequential), 5000);
/** The whole run stops here, whatever is left. */
const DEADLINE_MS = 10 * 60 * 1000;
/** 16 MiB, the default limit for one event. */
const LIMIT = 16 * 1024 * 1024;
/** The mock sends `huge_event` in 64 KiB pieces, so the most under the limit. */
const HUGE = LIMIT - 64 * 1024;
/** A text delta whose whole line stays under the limit. */
const HUGE_TEXT = LIMIT - 4096;
/** Workers' memory limit per isolate. */
const ISOLATE_LIMIT = 128 * 1024 * 1024;
/**
 * Slows each concurrent chat (about 2 KB, in 512-byte pieces 2 s apart:
 * some 10 s) so that all of them are in flight together, past the seconds
 * wrangler dev takes to take 200 connections at once (a passthrough Worker
 * takes as long), while the diagnostic route is read.
 */
const SLOW = { chunk: 512, delay: 2000 };
/**
 * Issue 29's image: 2 MiB of base64, sent in 64 KiB pieces 250 ms apart
 * (some 8 s a stream), so that the streams hold their images together.
 */
const IMAGE_BYTES = 2 * 1024 * 1024;
const IMAGE_MOCK = { "image-bytes": IMAGE_BYTES, chunk: 65536, delay: 250 };
const CITIES = ["Paris", "Kampala", "Lima", "Tokyo", "Oslo"];
const TOOLS = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

const timer = setTimeout(() => {
  console.error(`worker-memory: stopped after ${DEADLINE_MS / 1000} s`);
  cleanup();
  process.exit(1);
}, DEADLINE_MS);
const cleanups = [];
function cleanup() {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      c();
    } catch {
      /* best effort */
    }
  }
}
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

const MiB = (n) => (n === undefined ? "n/a" : `${(n / 1048576).toFixed(1)} MiB`);
const size = (n) => (n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : MiB(n));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** The mock provider, in its own process (its CPU is not the client's). */
async function startMockProcess() {
  const proc = spawn(process.execPath, [path.join(root, "tests/js/mock-server.mjs"), "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => proc.kill());
  // It logs every request: read on, and drop the lines.
  let out = "";
  return new Promise((resolve, reject) => {
    proc.stdout.on("data", (chunk) => {
      if (out === null) return;
      out += chunk;
      const url = out.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0];
      if (url) {
        out = null;
        resolve(url);
      }
    });
    proc.on("exit", () => reject(new Error("the mock did not start")));
  });
}

/**
 * A relay in front of the mock: everything goes to the mock, except a
 * Chat Completions request with `x-mock-huge-text: <n>`, answered here with
 * one text delta of n characters (valid JSON, in 64 KiB pieces), then the
 * finish frame.
 */
async function startRelay(mockURL) {
  const target = new URL(mockURL);
  const server = http.createServer((req, res) => {
    const huge = Number(req.headers["x-mock-huge-text"] ?? 0);
    if (huge) {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      (async () => {
        const write = async (b) => res.write(b) || (await once(res, "drain"));
        await write(
          'data: {"id":"c1","model":"mock-model","choices":[{"index":0,"delta":{"content":"',
        );
        const piece = Buffer.alloc(64 * 1024, "x");
        for (let sent = 0; sent < huge && !res.destroyed; sent += piece.length)
          await write(piece.subarray(0, Math.min(piece.length, huge - sent)));
        res.end(
          '"}}]}\n\ndata: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
        );
      })().catch(() => res.destroy());
      return;
    }
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return `http://127.0.0.1:${server.address().port}`;
}

/** A client of the V8 inspector that wrangler dev serves for the Worker. */
async function inspector(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  // wrangler's inspector proxy accepts loopback origins only.
  const ws = new WebSocket(target.webSocketDebuggerUrl, {
    headers: { origin: "http://127.0.0.1" },
  });
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("the inspector refused the connection"));
  });
  let id = 0;
  const pending = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    pending.get(msg.id)?.(msg);
    pending.delete(msg.id);
  };
  const send = (method) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method }));
      setTimeout(() => resolve({}), 5000);
    });
  // wrangler's proxy turns on the Network domain: workerd then reports
  // every piece of every subrequest's body to the inspector (and keeps the
  // bodies for it), which slowed 20 streams of 2 MiB past two minutes and
  // grew workerd by gigabytes. The figures need none of it.
  await send("Network.disable");
  return {
    /** { usedSize, totalSize, embedderHeapUsedSize, backingStorageSize } */
    heap: async () => (await send("Runtime.getHeapUsage")).result ?? {},
    close: () => ws.close(),
  };
}

/** The RSS of the Worker's workerd processes (Linux), else undefined. */
function workerdRSS(pgid) {
  let total = 0;
  try {
    for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (Number(fields[2]) !== pgid || !stat.includes("(workerd)")) continue;
        const rss = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
        if (rss) total += Number(rss[1]) * 1024;
      } catch {
        /* gone */
      }
    }
  } catch {
    return undefined;
  }
  return total || undefined;
}

/** Reads a Worker's figures now: { wasm, active, heap, rss }; one it cannot read is missing. */
async function reading(w) {
  const heap = await w.inspector.heap();
  const mem = w.skyl
    ? await fetch(`${w.url}/api/_memory`, { signal: AbortSignal.timeout(10_000) })
        .then((r) => r.json())
        .catch(() => ({}))
    : {};
  return {
    wasm: mem.wasmMemoryBytes,
    active: mem.activeStreams,
    heap: heap.usedSize,
    backing: heap.backingStorageSize,
    rss: workerdRSS(w.pid),
  };
}

/**
 * Runs `load` while sampling the Worker every 100 ms: the peak of each
 * figure; `active` is the most chats in flight as the demo Worker counts
 * them, `client` as the client does (answer begun, not ended).
 */
async function sampled(w, load) {
  const peak = { wasm: 0, heap: 0, backing: 0, rss: 0, active: 0, client: 0 };
  let running = true;
  const sampler = (async () => {
    while (running) {
      const r = { ...(await reading(w)), client: w.inFlight };
      for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], r[k] ?? 0);
      await sleep(100);
    }
  })();
  try {
    return { result: await load(), peak };
  } finally {
    running = false;
    await sampler;
  }
}

/**
 * One chat: POST `body` to `path` with the mock options as x-mock-*
 * headers; the response text, or how the connection failed.
 */
async function post(w, path, body, mock = {}) {
  const headers = { "content-type": "application/json" };
  for (const [k, v] of Object.entries(mock)) headers[`x-mock-${k}`] = String(v);
  try {
    const res = await fetch(`${w.url}${path}`, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(120_000),
    });
    w.inFlight++;
    try {
      return { text: await res.text() };
    } finally {
      w.inFlight--;
    }
  } catch (e) {
    return { failed: e.cause?.code ?? e.name };
  }
}

/** The demo Worker's SSE text as events; an error event as { error: "Name (code)" }. */
function* demoEvents(text) {
  for (const block of text.split("\n\n")) {
    const data = block.match(/^data: (.*)$/m)?.[1];
    if (!data) continue;
    const ev = JSON.parse(data);
    yield /^event: error$/m.test(block) ? { error: `${ev.name} (${ev.code})` } : ev;
  }
}

/** What the demo Worker streamed: its tool calls and how it ended. */
function skylOutcome(text) {
  const calls = [];
  let end = "no finish";
  for (const ev of demoEvents(text)) {
    if (ev.error) end = ev.error;
    else if (ev.type === "tool_call") calls.push(`${ev.call.name} ${ev.call.arguments}`);
    else if (ev.type === "finish") end = `finish ${ev.response.finishReason}`;
  }
  return { calls, end };
}

const question = (i) => `What is the weather in ${CITIES[i % CITIES.length]}?`;
/** The demo Worker's chat request for question i (the page's format, mock options in it). */
const skylBody = (i, mock) =>
  JSON.stringify({
    provider: "openai",
    request: {
      messages: [{ role: "user", parts: [{ type: "text", text: question(i) }] }],
      tools: TOOLS,
    },
    mock,
  });

const rows = [];
function row(worker, phase, r, note = "") {
  rows.push({ worker, phase, ...r, note });
  console.error(`${worker}: ${phase}: ${MiB(r.wasm)} wasm, ${MiB(r.heap)} V8 heap. ${note}`);
}

/**
 * The same phases for either Worker. `chat(i, mock)` runs chat i and
 * returns { key } (what must equal the lone run's) or { failed }.
 */
async function phases(name, w, chat) {
  const lone = [];
  for (let i = 0; i < CITIES.length; i++) lone.push(await chat(i));
  const expected = lone.map((r) => r.key);
  const notes = [...new Set(lone.map((r) => r.failed ?? r.note))].join("; ");
  row(name, `after ${CITIES.length} lone chats (the reference answers)`, await reading(w), notes);
  await w.reset();
  /** Every chat's answer is the lone run's; connections the harness dropped are counted. */
  const check = (results, what) => {
    const failed = results.filter((r) => r.failed);
    const wrong = results.filter((r, i) => !r.failed && r.key !== expected[i % CITIES.length]);
    if (wrong.length) throw new Error(`${name}, ${what}: ${wrong.length} answers differ`);
    const lost = failed.length
      ? `; ${failed.length} connections dropped (${failed[0].failed})`
      : "";
    return `${results.length - failed.length} of ${results.length} answers right${lost}`;
  };
  for (const round of [1, 2]) {
    const { result, peak } = await sampled(w, () =>
      Promise.all(Array.from({ length: CONCURRENT }, (_, i) => chat(i, SLOW))),
    );
    const counted = w.skyl ? "the Worker's count" : "the client's count";
    const inFlight = w.skyl ? peak.active : peak.client;
    const note = `${check(result, `round ${round}`)}; up to ${inFlight} in flight at once (${counted})`;
    row(name, `${CONCURRENT} concurrent chats, round ${round}: peak`, peak, note);
    await w.reset();
    await sleep(500);
    row(name, `after round ${round}`, await reading(w));
  }
  const seq = [];
  for (let i = 0; i < SEQUENTIAL; i++) seq.push(await chat(i));
  await w.reset();
  row(name, `after ${SEQUENTIAL} sequential chats`, await reading(w), check(seq, "sequential"));
  for (const [what, mock] of [
    ["one 16 MiB event in flight (not JSON)", { "huge-event": HUGE }],
    ["one 16 MiB text delta in flight (valid JSON)", { "huge-text": HUGE_TEXT }],
  ]) {
    // (Once more if the harness drops the connection, which it sometimes does.)
    const { result, peak } = await sampled(w, async () => {
      const r = await chat(0, mock);
      return r.failed ? { ...(await chat(0, mock)), dropped: r.failed } : r;
    });
    const again = result.dropped
      ? ` (a second try: the first connection was dropped, ${result.dropped})`
      : "";
    row(name, `${what}: peak`, peak, `${result.note ?? result.failed}${again}`);
    await sleep(500);
  }
  const last = await chat(0);
  row(name, "after them, and one more chat", await reading(w), check([last], "last"));
}

/** Stream i's drawing, as the mock serves it: "Draw a cat i." → the base64 of its PNG. */
const imageAsk = (i) => `Draw a cat ${i + 1}.`;
const served = [];
const servedImage = (i) => (served[i] ??= imageFor(`a cat ${i + 1}`, IMAGE_BYTES).data);

/** Whether image stream i's one file event and finish's file part carry the served bytes. */
function imageOutcome(i, text) {
  const files = [];
  let part;
  let end = "no finish";
  for (const ev of demoEvents(text)) {
    if (ev.error) end = ev.error;
    else if (ev.type === "file") files.push(ev.file.data);
    else if (ev.type === "finish") {
      end = `finish ${ev.response.finishReason}`;
      part = ev.response.message.parts.find((p) => p.type === "file")?.data;
    }
  }
  const want = servedImage(i);
  const ok = files.length === 1 && files[0] === want && part === want;
  const what = ok ? "the served image" : `${files.length} file(s), not the served image`;
  return { key: `${what} → ${end}` };
}

/**
 * Issue 29's case in a fresh isolate of the Worker `start()` starts: at
 * rest, IMAGES concurrent image streams (peak), after them. `chat(i)`
 * returns { key } ("the served image → …" when right) or { failed }.
 */
async function imageRounds(name, start, chat) {
  const w = await start();
  row(name, "images: a fresh isolate, at rest", await reading(w));
  const { result, peak } = await sampled(w, () =>
    Promise.all(Array.from({ length: IMAGES }, (_, i) => chat(w, i))),
  );
  const right = result.filter((r) => r.key?.startsWith("the served image")).length;
  const wrong = result.filter((r) => r.key && !r.key.startsWith("the served image"));
  const failed = result.filter((r) => r.failed);
  const inFlight = w.skyl
    ? `${peak.active} (the Worker's count)`
    : `${peak.client} (the client's count)`;
  const note = `${right} of ${IMAGES} images the served bytes${wrong.length ? `; ${wrong[0].key}` : ""}${failed.length ? `; ${failed.length} connections dropped (${failed[0].failed})` : ""}; up to ${inFlight} in flight at once`;
  row(
    name,
    `images: ${IMAGES} concurrent streams, a ${MiB(IMAGE_BYTES)} image each: peak`,
    peak,
    note,
  );
  await w.reset();
  await sleep(500);
  row(name, "images: after them", await reading(w));
  w.inspector.close();
  w.stop();
  if (wrong.length || failed.length) process.exitCode = 1;
  return { peak, right };
}

async function main() {
  if (!fs.existsSync(path.join(root, "pkg/workerd.js"))) throw new Error("run scripts/build first");
  const mockURL = await startMockProcess();
  const relayURL = await startRelay(mockURL);
  const reset = () => fetch(`${mockURL}/_reset`, { method: "POST" });
  /** The demo Worker (`skyl`) or the passthrough, started on free ports. */
  async function start(skyl) {
    const inspectorPort = await freePort();
    const w = await startWorker({
      port: await freePort(),
      mockURL: relayURL,
      inspectorPort,
      env: {},
      ...(skyl
        ? { vars: { DIAGNOSTICS: "1" } }
        : { dir: path.join(root, "www/worker/passthrough"), probe: "/" }),
    });
    cleanups.push(w.stop);
    return Object.assign(w, {
      skyl,
      inFlight: 0,
      reset,
      inspector: await inspector(inspectorPort),
    });
  }
  if (!opts["images-only"]) await everyPhase(reset, mockURL, start);

  const skylImages = await imageRounds(
    "skyl",
    () => start(true),
    async (w, i) => {
      const body = JSON.stringify({
        provider: "gemini",
        request: { messages: [{ role: "user", parts: [{ type: "text", text: imageAsk(i) }] }] },
        mock: IMAGE_MOCK,
      });
      const r = await post(w, "/api/chat", body);
      return r.failed ? r : imageOutcome(i, r.text);
    },
  );
  await imageRounds(
    "passthrough",
    () => start(false),
    async (w, i) => {
      const body = JSON.stringify({
        contents: [{ role: "user", parts: [{ text: imageAsk(i) }] }],
      });
      const r = await post(w, "/v1beta/models/mock-model:streamGenerateContent", body, IMAGE_MOCK);
      if (r.failed) return r;
      return {
        key: r.text.includes(`"data":"${servedImage(i)}"`)
          ? "the served image"
          : "not the served image",
      };
    },
  );
  const { wasm, heap, backing } = skylImages.peak;
  const total = (wasm ?? 0) + (heap ?? 0) + (backing ?? 0);
  console.log(
    `Issue 29: ${IMAGES} concurrent streams, a ${MiB(IMAGE_BYTES)} image each, in one isolate of the demo Worker: peak wasm memory ${MiB(wasm)} + peak V8 heap ${MiB(heap)} + peak array buffers ${MiB(backing)} = ${MiB(total)}, ${total < ISOLATE_LIMIT ? "under" : "over"} ${MiB(ISOLATE_LIMIT)} (${skylImages.right} of ${IMAGES} images the served bytes).\n`,
  );
  printRows();
}

/** The rows so far, as the Markdown table. */
function printRows() {
  console.log(
    `One Worker isolate (workerd via wrangler dev), loopback mock; Workers allow ${MiB(ISOLATE_LIMIT)} per isolate.`,
  );
  console.log(
    "V8 heap: used size, sampled, no forced collection; array buffers: V8's backing stores. RSS: workerd's processes.\n",
  );
  console.log(
    "| Worker | when | skyl's wasm memory | V8 heap used | array buffers | workerd RSS | notes |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.worker} | ${r.phase} | ${r.worker === "skyl" ? MiB(r.wasm) : "none"} | ${MiB(r.heap)} | ${MiB(r.backing)} | ${MiB(r.rss)} | ${r.note} |`,
    );
}

/** The phases of the chats (above), for the demo Worker and then the passthrough. */
async function everyPhase(reset, mockURL, start) {
  // The demo Worker, with skyl.
  const sw = await start(true);
  row("skyl", "at rest (started, no chat yet)", await reading(sw));
  // The request bodies skyl sends the provider: the passthrough sends the same.
  await reset();
  const bodies = [];
  await phases("skyl", sw, async (i, mock) => {
    const r = await post(sw, "/api/chat", skylBody(i, mock));
    if (r.failed) return r;
    if (bodies.length < CITIES.length) {
      const sent = await (await fetch(`${mockURL}/_requests`)).json();
      bodies.push(JSON.stringify(sent.at(-1).body));
    }
    const { calls, end } = skylOutcome(r.text);
    return { key: `${calls.join("; ")} → ${end}`, note: `${calls.length} tool call(s), ${end}` };
  });
  sw.inspector.close();
  sw.stop();

  // The passthrough Worker, without skyl: the same load, the same bytes.
  const pw = await start(false);
  row("passthrough", "at rest (started, no chat yet)", await reading(pw));
  await phases("passthrough", pw, async (i, mock) => {
    const r = await post(pw, "/v1/chat/completions", bodies[i % CITIES.length], mock);
    if (r.failed) return r;
    return { key: r.text, note: `${size(r.text.length)} relayed` };
  });
  pw.inspector.close();
  pw.stop();
}

try {
  await main();
} finally {
  clearTimeout(timer);
  cleanup();
}
