// The workers-rs example (examples/workers-rs/) in workerd, under wrangler
// dev, against the mock provider: a Worker written in Rust that streams a
// tool-calling chat through skyl::web and re-emits its events as SSE.
// scripts/test builds it first (worker-build, into examples/workers-rs/build/).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { useMock } from "../js/use-mock.mjs";
import { startWorker } from "../../www/worker/start.mjs";
import { root, freePort } from "../pkg/helpers.mjs";

const dir = path.join(root, "examples/workers-rs");
const QUESTION = {
  messages: [{ role: "user", parts: [{ type: "text", text: "What is the weather in Paris?" }] }],
};

const mock = useMock();
let worker;

before(async () => {
  assert.ok(
    fs.existsSync(path.join(dir, "build/index.js")),
    "build the Worker first: scripts/test does (worker-build --release in examples/workers-rs)",
  );
  await mock.ready();
  // The mock writes each answer in 48-byte pieces 15 ms apart, so that a
  // turn takes a while and its events come in many chunks.
  worker = await startWorker({
    dir,
    port: await freePort(),
    vars: { PROVIDER: "anthropic", BASE_URL: `${mock.url}?chunk=48&delay=15` },
    env: {},
    probe: "/",
  });
});

after(async () => {
  worker?.stop();
});

const chat = (signal) =>
  fetch(`${worker.url}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(QUESTION),
    signal,
  });

/** The `data:` payloads of an SSE text, parsed. */
const frames = (text) =>
  text
    .split("\n\n")
    .filter((f) => f.startsWith("data: "))
    .map((f) => JSON.parse(f.slice("data: ".length)));

test("POST /chat streams the tool loop: events arrive as they come, each call once and whole", async () => {
  mock.reset();
  const res = await chat();
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /^text\/event-stream/);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const chunks = [];
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Date.now());
    text += decoder.decode(value, { stream: true });
  }
  const events = frames(text);
  const types = events.map((e) => e.type);

  // Incremental: many chunks, spread over the upstream's own pace.
  assert.ok(chunks.length >= 10, `${chunks.length} chunks`);
  assert.ok(chunks.at(-1) - chunks[0] >= 300, `over ${chunks.at(-1) - chunks[0]} ms`);
  assert.ok(types.filter((t) => t === "text").length >= 5, types.join(" "));

  // One call, whole: skyl hands it out once, at the provider's end of the call.
  const calls = events.filter((e) => e.type === "tool_call");
  assert.equal(calls.length, 1, types.join(" "));
  assert.equal(calls[0].call.name, "get_weather");
  assert.deepEqual(JSON.parse(calls[0].call.arguments), { city: "Paris" });

  // The Worker ran it, sent the result back, and streamed the answer.
  const result = events.find((e) => e.type === "tool_result");
  assert.equal(result.callId, calls[0].call.id);
  assert.deepEqual(JSON.parse(result.content), {
    city: "Paris",
    temperature_c: 21,
    conditions: "sunny",
  });
  const finishes = events.filter((e) => e.type === "finish");
  assert.deepEqual(
    finishes.map((e) => e.response.finishReason),
    ["tool_calls", "stop"],
  );
  assert.match(finishes[1].response.text, /21.*Paris|Paris.*21/);
  assert.ok(types.indexOf("tool_result") > types.indexOf("finish"), "result after turn 1");
  assert.equal(types.at(-1), "finish");
  assert.ok(!types.includes("error"), text);

  // Upstream: two requests, the second answering the call.
  assert.equal(mock.requests.length, 2);
  const second = JSON.stringify(mock.requests[1].body.messages);
  assert.match(second, /tool_result/);
  assert.ok(second.includes(calls[0].call.id));
});

test("a caller that disconnects aborts the upstream request", async () => {
  mock.reset();
  const controller = new AbortController();
  const res = await chat(controller.signal);
  const reader = res.body.getReader();
  const first = await reader.read();
  assert.ok(!first.done && first.value.length > 0, "a first chunk");
  controller.abort();
  await reader.cancel().catch(() => {});
  const end = Date.now() + 5000;
  while (!mock.requests[0]?.closedEarly && Date.now() < end)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(mock.requests.length, 1, "no second turn");
  assert.equal(mock.requests[0].closedEarly, true, "the mock saw the connection close");
  assert.equal(mock.requests[0].completed, false);
});

test("a request that is not a chat is a 400; other routes a 404", async () => {
  const bad = await fetch(`${worker.url}/chat`, { method: "POST", body: "{" });
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /not a chat request/);
  const other = await fetch(`${worker.url}/`);
  assert.equal(other.status, 404);
  assert.doesNotMatch(worker.log(), /panicked|RuntimeError/, "no panic in the Worker");
});
