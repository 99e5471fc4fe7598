// The one-adapter builds (pkg/openai, pkg/anthropic, pkg/gemini): their
// WebAssembly refuses the providers it was built without, with a typed
// error, even when called below the JS API's own check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ENTRIES } from "./fixtures.mjs";

const pkg = new URL("../../pkg/", import.meta.url);
const request = JSON.stringify({
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
});
const config = (provider) =>
  JSON.stringify({ provider, model: "m", baseURL: "http://127.0.0.1:9/v1" });

// Each entry against the first provider of the next entry (the last against
// the first's): one it was built without.
const entries = Object.entries(ENTRIES);
for (const [i, [sub, built]] of entries.entries()) {
  const other = entries[(i + 1) % entries.length][1][0];
  test(`skyl/${sub}'s wasm encodes for ${built.join(", ")} and refuses ${other}`, async () => {
    const wasm = await import(new URL(`${sub}/skyl_wasm.js`, pkg));
    wasm.initSync({ module: readFileSync(new URL(`${sub}/skyl_wasm_bg.wasm`, pkg)) });
    for (const provider of built) {
      const ok = wasm.encodeRequest(config(provider), request, true);
      assert.ok(ok.startsWith('{"ok":'), `${provider}: ${ok.slice(0, 200)}`);
    }
    const refused = JSON.parse(wasm.encodeRequest(config(other), request, true));
    assert.equal(refused.error.name, "InvalidRequestError");
    assert.equal(refused.error.path, "provider");
    assert.match(refused.error.message, new RegExp(`no ${other} adapter`));
    const out = wasm.decodeResponse(other, "{}");
    assert.match(JSON.parse(out).error.message, new RegExp(`no ${other} adapter`));
    // A stream for it fails at its first frame, and says why.
    const dec = new wasm.Decoder(other);
    const fed = dec.feed(new TextEncoder().encode('data: {"a":1}\n\n'));
    const result = JSON.parse(fed.slice(0, fed.indexOf("\0")));
    assert.match(result.error.message, new RegExp(`no ${other} adapter`));
    dec.free();
  });
}
