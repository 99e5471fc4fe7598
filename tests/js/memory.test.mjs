// skyl's WebAssembly memory across streams: wasmMemorySize(), and that what
// a stream used is reused by the next ones (WebAssembly memory grows and
// never shrinks, so anything a finished stream kept would add up). Bodies
// come from ReadableStreams built here, in fixed chunks, so that the
// allocations, and the figures, are the same on every run. The figures
// under load in a Worker: scripts/worker-memory.mjs, RELIABILITY.md.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { skyl } from "./helpers.mjs";

const { decodeStream, wasmMemorySize } = skyl;
const encoder = new TextEncoder();
const PAGE = 64 * 1024;

/** A Chat Completions stream: some text, then one tool call in fragments. */
const TOOL_STREAM = encoder.encode(
  [
    '{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."}}]}',
    '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}',
    '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]}}]}',
    '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"Paris\\"}"}}]}}]}',
    '{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
    "[DONE]",
  ]
    .map((f) => `data: ${f}\n\n`)
    .join(""),
);

/**
 * One event of `n` bytes, then the end: a text delta (valid JSON), or, with
 * `skipped`, data that is not JSON (skipped with a warning).
 */
function bigEventStream(n, skipped = false) {
  const head = encoder.encode(
    skipped ? "data: " : 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"',
  );
  const tail = encoder.encode(
    skipped
      ? "\n\n"
      : '"}}]}\n\ndata: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  );
  const body = new Uint8Array(head.length + n + tail.length).fill(120);
  body.set(head);
  body.set(tail, head.length + n);
  return body;
}

/**
 * `bytes` as a body in chunks of `size` (4 KiB: what workerd hands a
 * Worker); with a `gate`, only the first chunk comes before it opens.
 */
function body(bytes, gate = null, size = 4096) {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (at > 0 && gate) await gate;
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
      if (at >= bytes.length) controller.close();
    },
  });
}

/** The response, or the error the stream ended with. */
async function decode(bytes, gate, size) {
  const stream = decodeStream("openai", body(bytes, gate, size));
  try {
    for await (const _ of stream);
    return await stream.response();
  } catch (e) {
    return e;
  }
}

test("wasmMemorySize is the instance's memory, in whole 64 KiB pages", async () => {
  await decode(TOOL_STREAM);
  const size = wasmMemorySize();
  assert.ok(size >= PAGE && size % PAGE === 0, String(size));
});

test("sequential streams leave the memory where it was", async () => {
  await decode(TOOL_STREAM);
  const rest = wasmMemorySize();
  for (let i = 0; i < 300; i++) {
    const r = await decode(TOOL_STREAM);
    assert.equal(r.toolCalls[0].arguments, '{"city":"Paris"}');
  }
  assert.equal(wasmMemorySize(), rest);
});

test("200 concurrent streams hold a few KiB each, reused by the next 200", async () => {
  await decode(TOOL_STREAM);
  const rest = wasmMemorySize();
  const round = async () => {
    // Every stream stops after its first chunk (half of its text and of
    // its call's arguments) until all have started.
    let open;
    const gate = new Promise((r) => {
      open = r;
    });
    const all = Array.from({ length: 200 }, () => decode(TOOL_STREAM, gate, 400));
    await new Promise((r) => setTimeout(r, 50));
    open();
    for (const r of await Promise.all(all)) assert.equal(r.finishReason, "tool_calls");
    return wasmMemorySize();
  };
  const first = await round();
  assert.ok(first - rest <= 200 * 16 * 1024, `${first - rest} bytes for 200 streams`);
  const second = await round();
  assert.ok(second - first <= PAGE, `${second - first} bytes more for the next 200`);
});

const MiB4 = 4 * 1024 * 1024;

test("a large event is held once while it arrives", async () => {
  const rest = wasmMemorySize();
  await decode(bigEventStream(MiB4, true));
  // The line's pieces, then the line joined once, which becomes the
  // event's data, and its frame, which goes to JS in a warning, copied into
  // the pieces' room: 2x, and some of it reused from earlier tests. (Before the line's first buffer was freed with
  // the pieces, the frame did not fit there: 3x; grown by doubling, the
  // line alone took up to 4x; before that, the body was also kept whole as
  // a possible JSON body without SSE framing: 6x.)
  const grown = wasmMemorySize() - rest;
  assert.ok(grown <= 2.5 * MiB4, `${grown} bytes for a ${MiB4}-byte event`);
});

test("a large event's memory is reused: after two, more do not grow it", async () => {
  const big = bigEventStream(MiB4);
  const rest = wasmMemorySize();
  for (let i = 0; i < 2; i++) assert.equal((await decode(big)).text.length, MiB4);
  const after = wasmMemorySize();
  // (Two copies are alive at once: its text and the message's text part;
  // see RELIABILITY.md.)
  assert.ok(after - rest <= 3 * MiB4, `${after - rest} bytes for a ${MiB4}-byte event`);
  for (let i = 0; i < 3; i++) await decode(big);
  for (let i = 0; i < 50; i++) await decode(TOOL_STREAM);
  assert.equal(wasmMemorySize(), after);
});

/**
 * The peak for one event of `bytes` in a fresh instance (a child process:
 * wasm memory never shrinks, so what is left after the stream is the
 * peak), above the memory at rest: tests/js/memory-peak.mjs.
 */
function peak(kind, bytes) {
  const script = new URL("memory-peak.mjs", import.meta.url);
  const out = execFileSync(process.execPath, [fileURLToPath(script), kind, String(bytes)], {
    env: process.env,
    encoding: "utf8",
  });
  const r = JSON.parse(out);
  assert.equal(r.got, kind === "skipped" ? 0 : bytes, "the event was read whole");
  return r.growth;
}

// Issue 29's bound: at most 3x (measured: 2.0x for a text delta, with
// escapes or without, data that is not JSON and the Responses API's image,
// whose stream repeats it twice; 2.4-2.5x for a Gemini image with its
// thought signature; RELIABILITY.md).
for (const mib of [2, 8, 24]) {
  test(`one ${mib} MiB event at most 3x its size in wasm memory (text, images, skipped)`, () => {
    const bytes = mib * 1024 * 1024;
    for (const kind of ["text", "prose", "image", "responses", "skipped"]) {
      const grown = peak(kind, bytes);
      assert.ok(grown <= 3 * bytes, `${kind}: ${(grown / bytes).toFixed(2)}x, over 3x`);
    }
  });
}
