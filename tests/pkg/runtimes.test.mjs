// The packed npm package (dist/skyl-*.tgz, from scripts/build) installed
// into a scratch project, in each server runtime: Node (import, and
// require() where Node can require an ES module), Deno, Bun, and a Worker in
// workerd (wrangler dev, local). Each runs a streamed tool loop against the
// loopback mock for every provider, and through each one-adapter entry
// for its own (tests/pkg/app/), and the test checks what it assembled. The
// browser builds are in bundlers.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startWorker } from "../../www/worker/start.mjs";
import {
  root,
  run,
  scratch,
  useMock,
  checkResults,
  checkEntries,
  freePort,
  ENTRIES,
} from "./helpers.mjs";

const mock = useMock();

// One scratch project for Node, Deno and Bun: the same installed package.
let app;
const appDir = () => {
  app ??= scratch("server");
  return app;
};

/** Runs `command` in the scratch project; resolves with its JSON output. */
async function runApp(command, args, env = {}) {
  const { stdout } = await run(command, args, {
    cwd: appDir(),
    timeout: 120000,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout);
}

/**
 * Runs tests/pkg/app/server.js (import) and, unless `esmOnly`,
 * tests/pkg/app/require.cjs (require()) with `command` and its `args`;
 * checks both.
 */
async function checkApps(runtime, command, args = [], env = {}, esmOnly = false) {
  const entries = Object.keys(ENTRIES);
  const out = await runApp(command, [...args, "server.js", mock.url, ...entries], env);
  checkResults(out.all, runtime);
  checkEntries(out.entries, runtime);
  if (esmOnly) return;
  const cjs = await runApp(command, [...args, "require.cjs", mock.url, ...entries], env);
  assert.ok(!cjs.refused, `${runtime}: require("skyl") refused: ${cjs.refused?.message}`);
  checkResults(cjs.all, `${runtime} require()`);
  checkEntries(cjs.entries, `${runtime} require()`);
  assert.equal(cjs.sameAsImport, true, `${runtime}: require() and import share one instance`);
}

test("Node: import, require() where Node can require an ES module, the entries", async (t) => {
  // Node 20.19+ and 22.12+ load an ES module without top-level await with
  // require(), and resolve the "module-sync" condition (for import too).
  const requireESM = process.features.require_module === true;
  if (!requireESM) t.diagnostic(`Node ${process.version} cannot require() an ES module`);
  await checkApps("node", process.execPath, [], {}, !requireESM);
  // Where require(esm) is off (older Node, or turned off as here), the
  // message says what to do instead.
  const args = requireESM ? ["--no-experimental-require-module", "require.cjs"] : ["require.cjs"];
  const out = await runApp(process.execPath, args);
  assert.equal(out.refused?.code, "ERR_REQUIRE_ESM", JSON.stringify(out));
  assert.match(out.refused.message, /await import\("skyl"\)/);
  // Each entry's WebAssembly is its own, smaller than the full one.
  const size = (p) => fs.statSync(path.join(appDir(), "node_modules/skyl", p)).size;
  for (const sub of Object.keys(ENTRIES))
    assert.ok(size(`${sub}/skyl_wasm_bg.wasm`) < size("skyl_wasm_bg.wasm") * 0.9, sub);
});

// The runtimes' binaries come from the npm packages deno and bun
// (devDependencies; their postinstall links the platform package's binary).
const bin = (name) => {
  const file = path.join(root, "node_modules/.bin", name);
  assert.ok(fs.existsSync(file), `no ${file}: run npm ci (with install scripts)`);
  return file;
};

test("Deno: import and require() from node_modules, network access to the mock only", async () => {
  const { host } = new URL(mock.url);
  // Deno resolves the "node" condition (and "module-sync" for require()),
  // as Node does; the node entry reads its .wasm file beside it.
  const perms = ["run", "--no-prompt", `--allow-net=${host}`, "--allow-read=node_modules/skyl"];
  await checkApps("deno", bin("deno"), perms, { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" });
});

test("Bun: import and require() from node_modules", async () => {
  // Bun resolves "node" for import but not "module-sync": its require()
  // finds the node entry through the "bun" condition.
  await checkApps("bun", bin("bun"), ["--no-install"]);
});

test("Cloudflare Workers: a Worker in workerd (wrangler dev, local)", async () => {
  const dir = scratch("worker", {
    "src/index.js": `import * as skyl from "skyl";
import * as anthropicOnly from "skyl/anthropic";
import * as openaiOnly from "skyl/openai";
import { runAll, runEntry } from "../toolloop.js";
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const mock = url.searchParams.get("mock");
    const entry = { anthropic: anthropicOnly, openai: openaiOnly }[url.searchParams.get("entry")];
    try {
      return Response.json(entry ? await runEntry(entry, mock) : await runAll(skyl, mock));
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
  const get = async (query) => {
    const body = await (
      await fetch(`${worker.url}/?${query}mock=${encodeURIComponent(mock.url)}`)
    ).json();
    assert.ok(!body.error, `${body.error}\n${worker.log()}`);
    return body;
  };
  try {
    checkResults(await get(""), "workerd");
    checkResults(await get("entry=anthropic&"), "workerd, skyl/anthropic", ENTRIES.anthropic);
    checkResults(await get("entry=openai&"), "workerd, skyl/openai", ENTRIES.openai);
  } finally {
    worker.stop();
  }
});
