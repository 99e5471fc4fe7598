// The packed npm package (dist/skyl-*.tgz, from scripts/build) installed
// into scratch projects, in each server runtime: Node (ESM, and CommonJS's
// clear refusal) and a Worker in workerd (wrangler dev, local). Each runs a
// streamed tool loop against the loopback mock for all five providers, and
// through each one-adapter entry for its own (tests/pkg/app/), and the test
// checks what it assembled. The browser builds are in bundlers.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startWorker } from "../../www/worker/start.mjs";
import { execFileSync } from "node:child_process";
import {
  run,
  scratch,
  useMock,
  checkResults,
  checkEntries,
  freePort,
  ENTRIES,
} from "./helpers.mjs";

const mock = useMock();

// One scratch project for the server apps.
let app;
const appDir = () => {
  app ??= scratch("server");
  return app;
};

/** Runs `command` in the scratch project; resolves with its JSON output. */
async function runApp(command, args) {
  const { stdout } = await run(command, args, { cwd: appDir(), timeout: 120000 });
  return JSON.parse(stdout);
}

test("Node: an ES module app, and the one-adapter entries", async () => {
  const out = await runApp(process.execPath, ["server.js", mock().url]);
  checkResults(out.all, "node");
  checkEntries(out.entries, "node");
  // Each entry's WebAssembly is its own, smaller than the full one.
  const size = (p) => fs.statSync(path.join(appDir(), "node_modules/skyl", p)).size;
  for (const sub of Object.keys(ENTRIES))
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
      await fetch(`${worker.url}/?${query}mock=${encodeURIComponent(mock().url)}`)
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
