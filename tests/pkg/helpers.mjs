// What the runtime tests of the packed package share: scratch projects with
// dist/skyl-*.tgz installed, the mock provider's lifetime, the checks every
// runtime's tool loop must pass, and a static server plus headless Chromium
// for the browser builds.
import { after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import net from "node:net";
import { execFileSync, execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { launchChromium, watchErrors } from "../js/chromium.mjs";
import { ENTRIES, PROVIDERS } from "../js/fixtures.mjs";

export { useMock } from "../js/use-mock.mjs";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const artifacts = path.join(root, "target/test-artifacts");
fs.mkdirSync(artifacts, { recursive: true });

/** Every provider. */
export const ALL = PROVIDERS;

/** The one-adapter entries and the providers each speaks. */
export { ENTRIES };

// The mock runs in the test's process: children that call it must not block
// it, hence the promisified execFile.
export const run = promisify(execFile);

const tarball = () => {
  const dist = path.join(root, "dist");
  const t = fs.existsSync(dist) && fs.readdirSync(dist).find((f) => /^skyl-.*\.tgz$/.test(f));
  assert.ok(t, "run scripts/build first: no dist/skyl-*.tgz");
  return path.join(dist, t);
};

// The scratch projects and browser profiles this process made, removed at its end.
const made = [];
after(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = (name) => {
  made.push(fs.mkdtempSync(path.join(os.tmpdir(), `skyl-${name}-`)));
  return made.at(-1);
};

/**
 * A scratch project with the packed package installed, the apps of
 * tests/pkg/app/ copied in, and `files` ({ relative path: text }) written.
 */
export function scratch(name, files = {}) {
  const dir = tempDir(name);
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: `scratch-${name}`, private: true, type: "module" }),
  );
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball()], {
    cwd: dir,
    stdio: "pipe",
  });
  fs.cpSync(path.join(root, "tests/pkg/app"), dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

/**
 * The assertions every runtime's results (tests/pkg/app/toolloop.js) must
 * pass: the question asks for the weather in Paris, so each provider's first
 * turn calls get_weather with exactly { city: "Paris" } and finishes
 * "tool_calls", and the second answers from the tool's result (21 degrees)
 * and finishes "stop".
 */
export function checkResults(results, runtime, providers = ALL) {
  // Where the entry speaks anthropic, Claude on Vertex AI comes last (a
  // service account's token, signed with the runtime's WebCrypto).
  assert.deepEqual(
    results.map((r) => r.provider),
    providers.includes("anthropic") ? [...providers, "vertex"] : providers,
    runtime,
  );
  for (const r of results) {
    const [first, second] = r.turns;
    assert.equal(r.turns.length, 2, `${runtime} ${r.provider}: two turns`);
    assert.equal(typeof first.text, "string", `${runtime} ${r.provider}: first text`);
    assert.equal(first.calls.length, 1, `${runtime} ${r.provider}: one call`);
    assert.equal(first.calls[0].name, "get_weather");
    assert.deepEqual(JSON.parse(first.calls[0].arguments), { city: "Paris" });
    assert.equal(first.finishReason, "tool_calls");
    assert.deepEqual(second.calls, [], `${runtime} ${r.provider}: no call in the answer`);
    assert.match(
      second.text,
      /Paris.*21|21.*Paris/,
      `${runtime} ${r.provider}: the answer quotes the tool result`,
    );
    assert.equal(second.finishReason, "stop");
  }
}

/**
 * Checks what tests/pkg/app/entries.js returned: each one-adapter entry
 * speaks its providers (its tool loop passes checkResults) and refuses
 * another with an InvalidRequestError naming the entry.
 */
export function checkEntries(out, runtime) {
  for (const [sub, providers] of Object.entries(ENTRIES)) {
    assert.deepEqual(out[sub].providers, providers, `${runtime} skyl/${sub}`);
    checkResults(out[sub].results, `${runtime} skyl/${sub}`, providers);
    assert.equal(out[sub].refused?.invalid, true, `${runtime} skyl/${sub} refuses another`);
    assert.equal(out[sub].refused.path, "provider");
    assert.match(
      out[sub].refused.message,
      new RegExp(
        `skyl/${sub} is built without the (gemini|openai) adapter: import "skyl" for every provider`,
      ),
    );
  }
}

export const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

/** Serves the directory `dist` on 127.0.0.1; resolves with the server. */
export async function serve(dist) {
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url, "http://x");
    const file = path.join(dist, decodeURIComponent(pathname === "/" ? "/index.html" : pathname));
    if (!file.startsWith(dist) || !fs.existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

/** The files of a browser build in `dist` (recursively), by extension. */
export function builtFiles(dist, ext) {
  return fs
    .readdirSync(dist, { recursive: true })
    .filter((f) => f.endsWith(ext))
    .map((f) => path.join(dist, f));
}

/**
 * Checks a browser build of tests/pkg/app/page.js in `dist`: no Node
 * built-ins in its JavaScript and each entry's WebAssembly emitted as its
 * own asset; then serves it on loopback, opens it in Debian's Chromium
 * (headless, through playwright-core) against the mock, checks what the
 * page ran and saves a screenshot as target/test-artifacts/<name>.png.
 */
export async function checkBrowserBuild(dist, mockURL, name) {
  const js = builtFiles(dist, ".js")
    .map((f) => fs.readFileSync(f, "utf8"))
    .join("\n");
  assert.ok(!/node:fs|require\("fs"\)/.test(js), `${name}: no Node built-ins in the bundle`);
  // Three modules: the full one, skyl/anthropic's and skyl/openai's own.
  assert.equal(builtFiles(dist, ".wasm").length, 3, `${name}: each entry's wasm is an asset`);

  const server = await serve(dist);
  const context = await launchChromium(tempDir("chromium"));
  try {
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(
      `http://127.0.0.1:${server.address().port}/?mock=${encodeURIComponent(mockURL)}`,
    );
    await page.waitForFunction(() => window.__result, null, { timeout: 30000 });
    const out = await page.evaluate(() => window.__result);
    await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
    assert.ok(!out.error, out.error);
    assert.deepEqual(errors, [], `${name}: no page errors`);
    assert.deepEqual(
      out.guard,
      { refused: true, optIn: true },
      `${name}: an API key in a page needs dangerouslyAllowBrowser`,
    );
    checkResults(out.all, name);
    checkResults(out.anthropic, `${name}, skyl/anthropic`, ENTRIES.anthropic);
    checkResults(out.openai, `${name}, skyl/openai`, ENTRIES.openai);
  } finally {
    await context.close();
    server.close();
  }
}
