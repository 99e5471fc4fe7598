// The packed npm package (dist/skyl-*.tgz, from scripts/build) installed
// into scratch projects this test creates, in each runtime: Node (ESM, and
// CommonJS's clear refusal), a Vite build served on loopback and driven in
// Debian's Chromium by playwright-core, and a Worker in workerd (wrangler
// dev, local). Each runs a streamed tool loop against the loopback mock for
// all five providers (and the one-adapter entries for theirs) and the test
// checks what it assembled.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import net from "node:net";
import { execFileSync, execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { startMock } from "../js/mock-server.mjs";
import { startWorker } from "../../www/worker/start.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = path.join(root, "target/test-artifacts");
fs.mkdirSync(artifacts, { recursive: true });

const tarball = () => {
  const dist = path.join(root, "dist");
  const t = fs.readdirSync(dist).find((f) => /^skyl-.*\.tgz$/.test(f));
  assert.ok(t, "run scripts/build first: no dist/skyl-*.tgz");
  return path.join(dist, t);
};

let mock;
before(async () => {
  mock = await startMock();
});
after(async () => {
  await mock.close();
});

/** A scratch project with the packed package installed and the app copied in. */
function scratch(name, files = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `skyl-${name}-`));
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: `scratch-${name}`, private: true, type: "module" }),
  );
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball()], {
    cwd: dir,
    stdio: "pipe",
  });
  fs.copyFileSync(path.join(root, "tests/pkg/app/toolloop.js"), path.join(dir, "toolloop.js"));
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

/** The assertions every runtime's results must pass. */
function checkResults(
  results,
  runtime,
  providers = ["openai", "openaicompat", "anthropic", "gemini", "responses"],
) {
  assert.deepEqual(
    results.map((r) => r.provider),
    providers,
    runtime,
  );
  for (const r of results) {
    const [first, second] = r.turns;
    assert.equal(r.turns.length, 2, `${runtime} ${r.provider}: two turns`);
    assert.equal(first.text, "Let me look that up.", `${runtime} ${r.provider}: first text`);
    assert.equal(first.calls.length, 1, `${runtime} ${r.provider}: one call`);
    assert.equal(first.calls[0].name, "get_weather");
    assert.deepEqual(JSON.parse(first.calls[0].arguments), { city: "Paris" });
    assert.equal(first.finishReason, "tool_calls");
    assert.match(
      second.text,
      /Paris.*21|21.*Paris/,
      `${runtime} ${r.provider}: the answer quotes the tool result`,
    );
    assert.equal(second.finishReason, "stop");
  }
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

// The mock runs in this process: children that call it must not block it.
const run = promisify(execFile);

test("Node: an ES module app", async () => {
  const dir = scratch("node", {
    "main.mjs": `import * as skyl from "skyl";\nimport { runAll } from "./toolloop.js";\nconsole.log(JSON.stringify(await runAll(skyl, process.argv[2])));\n`,
  });
  const { stdout } = await run(process.execPath, ["main.mjs", mock.url], {
    cwd: dir,
    timeout: 60000,
  });
  checkResults(JSON.parse(stdout), "node");
});

test("Node: the one-adapter entries (skyl/openai, skyl/anthropic, skyl/gemini)", async () => {
  const entries = {
    openai: ["openai", "openaicompat", "responses"],
    anthropic: ["anthropic"],
    gemini: ["gemini"],
  };
  const dir = scratch("entries", {
    "main.mjs": `import { toolLoop } from "./toolloop.js";
const out = {};
for (const sub of ["openai", "anthropic", "gemini"]) {
  const skyl = await import("skyl/" + sub);
  const results = [];
  for (const p of skyl.PROVIDERS) results.push(await toolLoop(skyl, p, process.argv[2]));
  let refused = null;
  try { new skyl.Client({ provider: sub === "gemini" ? "openai" : "gemini", model: "m" }); }
  catch (e) { refused = { invalid: e instanceof skyl.InvalidRequestError, path: e.path, message: e.message }; }
  out[sub] = { providers: skyl.PROVIDERS, results, refused };
}
console.log(JSON.stringify(out));
`,
  });
  const { stdout } = await run(process.execPath, ["main.mjs", mock.url], {
    cwd: dir,
    timeout: 60000,
  });
  const out = JSON.parse(stdout);
  for (const [sub, providers] of Object.entries(entries)) {
    assert.deepEqual(out[sub].providers, providers, sub);
    checkResults(out[sub].results, `skyl/${sub}`, providers);
    assert.equal(out[sub].refused?.invalid, true, `skyl/${sub} refuses another provider`);
    assert.equal(out[sub].refused.path, "provider");
    assert.match(
      out[sub].refused.message,
      new RegExp(
        `skyl/${sub} is built without the (gemini|openai) adapter: import "skyl" for all four`,
      ),
    );
  }
  // Each entry's WebAssembly is its own, smaller than the full one.
  const size = (p) => fs.statSync(path.join(dir, "node_modules/skyl", p)).size;
  for (const sub of Object.keys(entries))
    assert.ok(size(`${sub}/skyl_wasm_bg.wasm`) < size("skyl_wasm_bg.wasm") * 0.9, sub);
});

test("Node: require() gets a clear message", () => {
  const dir = scratch("cjs", {
    "main.cjs": `try { require("skyl"); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }\n`,
  });
  const out = JSON.parse(
    execFileSync(process.execPath, ["main.cjs"], { cwd: dir, encoding: "utf8" }),
  );
  assert.equal(out.code, "ERR_REQUIRE_ESM");
  assert.match(out.message, /await import\("skyl"\)/);
});

test("Browser: a Vite build in headless Chromium", async () => {
  const dir = scratch("vite", {
    "index.html": `<!doctype html><html><head><meta charset="utf-8"><title>skyl vite</title></head><body><pre id="out">running</pre><script type="module" src="/main.js"></script></body></html>`,
    "main.js": `import * as skyl from "skyl";
import * as anthropicOnly from "skyl/anthropic";
import * as openaiOnly from "skyl/openai";
import { runAll, toolLoop } from "./toolloop.js";
const mock = new URLSearchParams(location.search).get("mock");
// The library's own guard: a key in a page needs the explicit opt-in.
const guard = {};
try { new skyl.Client({ provider: "openai", model: "m", apiKey: "sk-page" }); guard.refused = false; }
catch (e) { guard.refused = e instanceof skyl.InvalidRequestError && e.path === "dangerouslyAllowBrowser"; }
try { new skyl.Client({ provider: "openai", model: "m", apiKey: "sk-page", dangerouslyAllowBrowser: true }); guard.optIn = true; }
catch { guard.optIn = false; }
window.__guard = guard;
runAll(skyl, mock).then(
  async (r) => {
    window.__entry = await toolLoop(anthropicOnly, "anthropic", mock);
    window.__openai = [];
    for (const p of openaiOnly.PROVIDERS) window.__openai.push(await toolLoop(openaiOnly, p, mock));
    window.__result = r;
    document.getElementById("out").textContent = JSON.stringify(r, null, 1);
  },
  (e) => { window.__result = { error: String(e && e.stack || e) }; document.getElementById("out").textContent = String(e); },
);
`,
  });
  execFileSync(
    process.execPath,
    [path.join(root, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "error"],
    { cwd: dir, stdio: "pipe" },
  );
  const dist = path.join(dir, "dist");
  // No Node built-ins and no network access at import in the browser bundle.
  const js = fs
    .readdirSync(path.join(dist, "assets"))
    .filter((f) => f.endsWith(".js"))
    .map((f) => fs.readFileSync(path.join(dist, "assets", f), "utf8"))
    .join("\n");
  assert.ok(!/node:fs|require\("fs"\)/.test(js), "no Node built-ins in the browser bundle");
  // Three modules: the full one, skyl/anthropic's and skyl/openai's own.
  assert.equal(
    fs.readdirSync(path.join(dist, "assets")).filter((f) => f.endsWith(".wasm")).length,
    3,
    "each entry's wasm is emitted as an asset",
  );

  const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
  const server = http.createServer((req, res) => {
    const file = path.join(
      dist,
      decodeURIComponent(
        new URL(req.url, "http://x").pathname === "/"
          ? "/index.html"
          : new URL(req.url, "http://x").pathname,
      ),
    );
    if (!file.startsWith(dist) || !fs.existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { chromium } = await import("playwright-core");
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(
      `http://127.0.0.1:${server.address().port}/?mock=${encodeURIComponent(mock.url)}`,
    );
    await page.waitForFunction(() => window.__result, null, { timeout: 30000 });
    const result = await page.evaluate(() => window.__result);
    assert.deepEqual(
      await page.evaluate(() => window.__guard),
      { refused: true, optIn: true },
      "an API key in a page needs dangerouslyAllowBrowser",
    );
    await page.screenshot({ path: path.join(artifacts, "vite-chromium.png") });
    assert.ok(!result.error, result.error);
    assert.deepEqual(errors, []);
    checkResults(result, "chromium");
    checkResults([await page.evaluate(() => window.__entry)], "chromium, skyl/anthropic", [
      "anthropic",
    ]);
    checkResults(await page.evaluate(() => window.__openai), "chromium, skyl/openai", [
      "openai",
      "openaicompat",
      "responses",
    ]);
  } finally {
    await context.close();
    server.close();
  }
});

test("Cloudflare Workers: a Worker in workerd (wrangler dev, local)", async () => {
  const dir = scratch("worker", {
    "src/index.js": `import * as skyl from "skyl";
import * as anthropicOnly from "skyl/anthropic";
import * as openaiOnly from "skyl/openai";
import { runAll, toolLoop } from "../toolloop.js";
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const mock = url.searchParams.get("mock");
    try {
      if (url.searchParams.get("entry") === "anthropic") return Response.json([await toolLoop(anthropicOnly, "anthropic", mock)]);
      if (url.searchParams.get("entry") === "openai") {
        const results = [];
        for (const p of openaiOnly.PROVIDERS) results.push(await toolLoop(openaiOnly, p, mock));
        return Response.json(results);
      }
      return Response.json(await runAll(skyl, mock));
    } catch (e) {
      return Response.json({ error: String(e && e.stack || e) }, { status: 500 });
    }
  },
};
`,
    "wrangler.toml": `name = "skyl-test"\nmain = "src/index.js"\ncompatibility_date = "2026-04-01"\n`,
  });
  const port = await freePort();
  const worker = await startWorker({ port, dir, env: {}, probe: "/?ping=1" });
  try {
    const res = await fetch(`${worker.url}/?mock=${encodeURIComponent(mock.url)}`);
    const body = await res.json();
    assert.ok(!body.error, `${body.error}\n${worker.log()}`);
    checkResults(body, "workerd");
    const entry = await (
      await fetch(`${worker.url}/?entry=anthropic&mock=${encodeURIComponent(mock.url)}`)
    ).json();
    assert.ok(!entry.error, `${entry.error}\n${worker.log()}`);
    checkResults(entry, "workerd, skyl/anthropic", ["anthropic"]);
    const openai = await (
      await fetch(`${worker.url}/?entry=openai&mock=${encodeURIComponent(mock.url)}`)
    ).json();
    assert.ok(!openai.error, `${openai.error}\n${worker.log()}`);
    checkResults(openai, "workerd, skyl/openai", ["openai", "openaicompat", "responses"]);
  } finally {
    worker.stop();
  }
});
