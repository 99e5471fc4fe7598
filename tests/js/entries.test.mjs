// The one-adapter builds (pkg/openai, pkg/anthropic, pkg/gemini,
// pkg/bedrock): their
// WebAssembly refuses the providers it was built without, with a typed
// error, even when called below the JS API's own check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ENTRIES, encodeWith } from "./fixtures.mjs";
import { NO_EMBEDDINGS } from "../../src/shell/js/policy.js";

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
      const ok = encodeWith(wasm, config(provider), request, true);
      assert.ok(ok.startsWith('{"ok":'), `${provider}: ${ok.slice(0, 200)}`);
    }
    const refused = JSON.parse(encodeWith(wasm, config(other), request, true));
    assert.equal(refused.error.name, "InvalidRequestError");
    assert.equal(refused.error.path, "provider");
    assert.match(refused.error.message, new RegExp(`no ${other} adapter`));
    // A stream given for it fails at its first frame, and says why.
    const run = wasm.Run.given(other, 0, 0);
    run.start();
    run.responded(200, "[]", 0);
    const chunk = new TextEncoder().encode('data: {"a":1}\n\n');
    const at = run.inputBuffer(chunk.length);
    new Uint8Array(wasm.wasmMemory().buffer).set(chunk, at);
    run.feedInput(chunk.length);
    const { error } = JSON.parse(run.takeOutput());
    assert.match(error.message, new RegExp(`no ${other} adapter`));
    run.free();
  });
}

// Embeddings: an entry whose adapters embed has the embed machine; one
// without (skyl/anthropic, skyl/bedrock) has only the class's name in its
// wasm (bundlers check the import), and its client.embed says, from the
// core's table (NO_EMBEDDINGS), where to go instead.
for (const [sub, built] of entries) {
  const none = built.filter((p) => Object.hasOwn(NO_EMBEDDINGS, p));
  const embeds = none.length < built.length;
  test(`skyl/${sub}: client.embed ${embeds ? "is built in" : "says where to go instead"}`, async () => {
    const wasm = await import(new URL(`${sub}/skyl_wasm.js`, pkg));
    assert.equal(typeof wasm.Embed, "function");
    assert.equal(typeof wasm.Embed.prototype.input, embeds ? "function" : "undefined");
    if (embeds) return;
    const { Client, InvalidRequestError } = await import(new URL(`${sub}/node.js`, pkg));
    for (const provider of none) {
      const c = new Client({ provider, apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
      await assert.rejects(c.embed({ values: ["a"] }), (e) => {
        assert.ok(e instanceof InvalidRequestError);
        assert.equal(e.path, "provider");
        assert.ok(e.message.includes(NO_EMBEDDINGS[provider]), e.message);
        return true;
      });
    }
  });
}

// Each entry ships the JS of Vertex AI's tokens and of AWS credentials only
// where its wasm has them (scripts/build, by the wasm's exports): where it
// does, they reach the request; where it does not, Vertex's options are
// refused by name.
for (const [sub, built] of entries) {
  const onVertex = built.find((p) => p === "gemini" || p === "anthropic");
  const aws = built.includes("bedrock");
  test(`skyl/${sub}: Vertex AI's tokens ${onVertex ? "reach" : "are refused before"} the request, AWS credentials ${aws ? "sign it" : "are not built in"}`, async () => {
    const { Client, InvalidRequestError } = await import(new URL(`${sub}/node.js`, pkg));
    // (The classes keep their names in the shipped JS: esbuild --keep-names.)
    const api = readFileSync(new URL(`${sub}/api.js`, pkg), "utf8");
    assert.equal(api.includes('"TokenSource"'), Boolean(onVertex), "Vertex AI's token code");
    assert.equal(api.includes('"CredentialSource"'), aws, "AWS credentials code");
    const sent = [];
    const fetch = async (_url, init) => {
      sent.push(new Headers(init.headers));
      return new Response('{"error":{"message":"no"}}', { status: 400 });
    };
    const messages = [{ role: "user", parts: [{ type: "text", text: "hi" }] }];
    const hour = () => Date.now() + 3_600_000;
    if (onVertex) {
      const c = new Client({
        provider: onVertex,
        model: "m",
        vertex: { project: "p", location: "us-east5" },
        accessToken: async () => ({ token: "vertex-token-1", expiresAt: hour() }),
        fetch,
        maxRetries: 0,
      });
      await assert.rejects(c.complete({ messages }));
      assert.equal(sent.at(-1).get("authorization"), "Bearer vertex-token-1");
    } else {
      const vertex = { project: "p", location: "global" };
      assert.throws(
        () =>
          new Client({ provider: built[0], model: "m", apiKey: "k", region: "us-east-1", vertex }),
        (e) =>
          e instanceof InvalidRequestError &&
          e.path === "vertex" &&
          e.message.includes("serves gemini and anthropic"),
      );
    }
    assert.equal(
      typeof (await import(new URL(`${sub}/skyl_wasm.js`, pkg))).Run.prototype.credentials,
      aws ? "function" : "undefined",
    );
    if (!aws) {
      // Not left unused: the option is refused by name.
      const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret-key-1" };
      assert.throws(
        () => new Client({ provider: built[0], model: "m", region: "us-east-1", credentials }),
        (e) =>
          e instanceof InvalidRequestError &&
          e.path === "credentials" &&
          e.message.includes("takes no AWS credentials") &&
          !e.message.includes("secret-key-1"),
      );
      return;
    }
    let asked = 0;
    const c = new Client({
      provider: "bedrock",
      model: "m",
      region: "us-east-1",
      credentials: async () => {
        asked++;
        return { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret-key-1", expiration: hour() };
      },
      fetch,
      maxRetries: 0,
    });
    await assert.rejects(c.complete({ messages }));
    assert.equal(asked, 1);
    assert.match(sent.at(-1).get("authorization"), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
  });
}
