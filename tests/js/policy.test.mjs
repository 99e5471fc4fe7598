// The JS half's share of the driver policy (src/policy.rs, asked through
// the wasm): the rules it takes from policy.js, which the core generates
// (src/shell/policy_js.rs checks it), and what works before the WebAssembly
// module has loaded, as in a browser, which loads it on first use.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { skyl, ask } from "./helpers.mjs";
import { encodeWith } from "./fixtures.mjs";
import { BASE_URL_REQUIRED, PROVIDER_FEATURES } from "../../src/shell/js/policy.js";

test("the providers and the baseURL rule are the core's", () => {
  for (const p of skyl.PROVIDERS) assert.ok(Object.hasOwn(PROVIDER_FEATURES, p), p);
  for (const [provider, why] of Object.entries(BASE_URL_REQUIRED)) {
    if (!skyl.PROVIDERS.includes(provider)) continue;
    assert.throws(
      () => new skyl.Client({ provider, model: "m" }),
      (e) =>
        e instanceof skyl.InvalidRequestError && e.path === "baseURL" && e.message.endsWith(why),
    );
  }
});

/** A fresh copy of the package's modules whose WebAssembly loads on first use. */
async function lazyPackage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-lazy-"));
  for (const f of ["api.js", "load.js", "adapters.js", "skyl_wasm.js", "skyl_wasm_bg.wasm"])
    fs.copyFileSync(new URL(`../../pkg/${f}`, import.meta.url), path.join(dir, f));
  const at = (f) => pathToFileURL(path.join(dir, f)).href;
  const load = await import(at("load.js"));
  const glue = await import(at("skyl_wasm.js"));
  const wasm = fs.readFileSync(path.join(dir, "skyl_wasm_bg.wasm"));
  const loaded = { count: 0 };
  load.setLoader(async () => {
    loaded.count++;
    glue.initSync({ module: wasm });
  });
  const api = await import(at("api.js"));
  // (Imported modules stay loaded; the files are not needed any more.)
  fs.rmSync(dir, { recursive: true, force: true });
  return { api, loaded, state: load.wasmState };
}

test("before the module loads, options are checked and abort() sends nothing", async () => {
  const { api, loaded, state } = await lazyPackage();
  assert.equal(state.done, false);
  assert.throws(
    () => new api.Client({ provider: "openaicompat", model: "m" }),
    (e) => e instanceof api.InvalidRequestError && e.path === "baseURL",
  );
  assert.throws(() => new api.Client({ provider: "nope" }), api.InvalidRequestError);
  let sent = 0;
  const c = new api.Client({
    provider: "openai",
    model: "m",
    maxRetries: 0,
    fetch: async () => {
      sent++;
      throw new Error("not expected");
    },
  });
  assert.equal(state.done, false, "nothing loads the module before a request");
  const s = c.stream({ messages: ask("hi") });
  s.abort(new Error("bye"));
  await assert.rejects(s.response(), (e) => {
    assert.ok(e instanceof api.AbortError, String(e));
    assert.equal(e.code, "abort");
    assert.equal(e.message, "request aborted: bye");
    assert.equal(e.retryable, false);
    return true;
  });
  assert.equal(sent, 0, "nothing was sent");
  assert.equal(loaded.count, 1);
  // The same client works once the module is there.
  const t = c.stream({ messages: ask("hi") });
  const err = await t.response().catch((e) => e);
  assert.ok(err instanceof api.ConnectionError, String(err));
  assert.equal(sent, 1);
});

test("a key or header fetch would refuse: the constructor's check is the core's", () => {
  // The raw module, in a copy of its own (the package's instance stays as it is).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-headers-"));
  for (const f of ["skyl_wasm.js", "skyl_wasm_bg.wasm"])
    fs.copyFileSync(new URL(`../../pkg/${f}`, import.meta.url), path.join(dir, f));
  return import(pathToFileURL(path.join(dir, "skyl_wasm.js")).href).then((glue) => {
    glue.initSync({ module: fs.readFileSync(path.join(dir, "skyl_wasm_bg.wasm")) });
    fs.rmSync(dir, { recursive: true, force: true });
    const request = JSON.stringify({
      messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    });
    const cases = [
      [" sk-1\n", { "x-a": "b c", "X_Y.z~": "\té" }, null],
      ["sk-secret\u201cx", {}, "apiKey"],
      ["a\u{1f600}", {}, "apiKey"],
      [undefined, { "x a": "v" }, "headers"],
      [undefined, { "x-é": "v" }, "headers"],
      [undefined, { "x-a": "a\rb" }, "headers.x-a"],
      [undefined, { "x-a": "a\0" }, "headers.x-a"],
      [undefined, { "!#$%&'*+-.^_`|~": "v" }, null],
    ];
    for (const [apiKey, headers, want] of cases) {
      let js = null;
      try {
        new skyl.Client({ provider: "openai", model: "m", apiKey, headers });
      } catch (e) {
        js = e.path;
      }
      const out = encodeWith(
        glue,
        JSON.stringify({ provider: "openai", model: "m", apiKey, headers }),
        request,
        false,
      );
      const core = out.startsWith('{"error"') ? JSON.parse(out).error : null;
      assert.equal(js, want, JSON.stringify([apiKey, headers]));
      assert.equal(core?.path ?? null, want, JSON.stringify([apiKey, headers]));
      if (core && apiKey) assert.ok(!core.message.includes("secret"), core.message);
    }
  });
});
