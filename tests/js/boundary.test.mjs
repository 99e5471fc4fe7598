// The boundary's two readings of a decoder result (src/shell/js/boundary.js):
// the commonest result, one text event alone, is read without JSON.parse;
// every other result in full. Every recorded stream, fed one SSE event per
// chunk (mostly results of one text event) and whole (one result of many
// events), must give the same events; and texts chosen to stress the
// lengths (non-BMP characters, digits, quotes, NUL-like escapes, empty).
import { test } from "node:test";
import assert from "node:assert/strict";
import { skyl } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";

const enc = new TextEncoder();

/** A Response whose body streams `chunks`. */
function responseOf(chunks) {
  let i = 0;
  const body = new ReadableStream({
    pull(ctl) {
      if (i < chunks.length) ctl.enqueue(chunks[i++]);
      else ctl.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** The SSE events of a body, each with its blank line, as bytes. */
/** An AWS event stream body cut into its messages (each starts with its length). */
function messagesOf(body) {
  const out = [];
  for (let at = 0; at < body.length; ) {
    const total = new DataView(body.buffer, body.byteOffset + at, 4).getUint32(0);
    out.push(body.subarray(at, at + total));
    at += total;
  }
  return out;
}

function eventsOf(body) {
  const text = new TextDecoder().decode(body).replace(/\r\n/g, "\n");
  return text
    .split(/\n\n/)
    .filter((e) => e.trim() !== "")
    .map((e) => enc.encode(`${e}\n\n`));
}

async function decode(provider, chunks) {
  const events = [];
  let error = null;
  try {
    for await (const ev of skyl.decodeStream(provider, responseOf(chunks))) events.push(ev);
  } catch (e) {
    error = e.code;
  }
  return { events: JSON.parse(JSON.stringify(events)), error };
}

test("every recorded stream gives the same events one event per chunk as whole", async () => {
  let streams = 0;
  let texts = 0;
  for (const id of listCases()) {
    const { body, stream } = readCase(id);
    if (!stream) continue;
    const provider = id.split("/")[0];
    const binary = body[0] === 0; // (an event stream's first length byte)
    const one = await decode(provider, binary ? messagesOf(body) : eventsOf(body));
    const whole = await decode(provider, [body]);
    assert.deepEqual(one, whole, id);
    texts += one.events.filter((e) => e.type === "text").length;
    streams++;
  }
  assert.ok(streams > 100, `${streams} streams`);
  assert.ok(texts > 1000, `${texts} text events`);
});

test("text events of any length and content read alike both ways", async () => {
  const samples = [
    "",
    "7",
    "12, 34]}",
    'He said "hi" \\ there',
    "naïve café",
    "🌍 emoji 🎉 and 𝄞",
    "\u2028line\u2029sep",
    "x".repeat(5000),
    "\u0000 after a NUL escape",
  ];
  const frames = samples.map((t) =>
    enc.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`),
  );
  const end = enc.encode(
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  );
  const one = await decode("openai", [...frames, end]);
  const whole = await decode("openai", [
    enc.encode(frames.map((f) => new TextDecoder().decode(f)).join("")),
    end,
  ]);
  assert.deepEqual(one, whole);
  const texts = one.events.filter((e) => e.type === "text").map((e) => e.text);
  assert.deepEqual(
    texts,
    samples.filter((t) => t !== ""),
    "every non-empty text, exactly",
  );
  assert.equal(one.error, null);
});
