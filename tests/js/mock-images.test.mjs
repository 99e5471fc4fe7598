// The mock's drawings ("draw a …"): a real PNG (its chunks' CRC-32s, its
// pixels inflated back), streamed in the recorded image shapes of Gemini
// and the Responses API, and read by skyl as one file with the served
// bytes; the other formats say they cannot draw.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import zlib from "node:zlib";
import { useMock, client, collect, ask, PROVIDERS } from "./helpers.mjs";
import { crc32, drawing, picture, pngSize, SIDE } from "./mock-png.mjs";
import { imageFor } from "./mock-wire-images.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

/** A PNG's chunks: [{ type, data }], each CRC-32 checked. */
function chunks(png) {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const out = [];
  for (let at = 8; at < png.length; ) {
    const n = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    assert.equal(png.readUInt32BE(at + 8 + n), crc32(png.subarray(at + 4, at + 8 + n)), type);
    out.push({ type, data: png.subarray(at + 8, at + 8 + n) });
    at += 12 + n;
  }
  return out;
}

test("a drawing is a valid PNG of the picture, the same bytes for the same words", () => {
  const png = Buffer.from(drawing("a cat").png, "base64");
  const parts = chunks(png);
  assert.deepEqual(
    parts.map((c) => c.type),
    ["IHDR", "IDAT", "IEND"],
  );
  assert.deepEqual(pngSize(png), { width: SIDE, height: SIDE });
  const rows = zlib.inflateSync(parts[1].data);
  const rgb = picture("a cat");
  for (let y = 0; y < SIDE; y++) {
    const row = rows.subarray(y * (1 + SIDE * 3), (y + 1) * (1 + SIDE * 3));
    assert.equal(row[0], 0);
    assert.ok(row.subarray(1).equals(rgb.subarray(y * SIDE * 3, (y + 1) * SIDE * 3)), `row ${y}`);
  }
  assert.equal(drawing("a cat").png, drawing("a cat").png);
  assert.notEqual(drawing("a cat").png, drawing("a dog").png);
  // Padded to a size: still a valid PNG of the same picture.
  const big = Buffer.from(imageFor("a cat", 1 << 20).data, "base64");
  assert.ok(Math.abs(big.toString("base64").length - (1 << 20)) < 8);
  assert.deepEqual(
    chunks(big).map((c) => c.type),
    ["IHDR", "IDAT", "skYl", "IEND"],
  );
});

test("Gemini: the recorded image frames, one file event with the served bytes", async () => {
  const c = client(mock, "gemini");
  const { events, response, error } = await collect(c.stream({ messages: ask("Draw a cat.") }));
  assert.ifError(error);
  const files = events.filter((e) => e.type === "file");
  assert.equal(files.length, 1);
  assert.equal(files[0].file.data, drawing("a cat").png);
  assert.equal(files[0].file.mediaType, "image/png");
  assert.ok(files[0].file.providerData.gemini.thoughtSignature);
  assert.deepEqual(response.files, [files[0].file]);
  assert.equal(response.finishReason, "stop");
});

/** A JSON value's shape: its keys in order, each value's type. */
const shape = (v) =>
  Array.isArray(v)
    ? v.map(shape)
    : v && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]))
      : typeof v;

// The AI SDK's recorded gemini-3-pro-image-preview stream
// (issue-10660-image-thought-signature.chunks.txt), its image redacted there.
const RECORDED_GEMINI = [
  '{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/jpeg","data":"AA=="},"thoughtSignature":"live-image-thought-signature"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1471,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":244,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"live-response-id"}',
  '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1394,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":167,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"live-response-id"}',
];

test("Gemini: the image frames have the recorded stream's fields, in its order", async () => {
  const res = await fetch(`${mock.url}/v1beta/models/mock-model:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "draw a cat" }] }] }),
  });
  const frames = (await res.text())
    .split("\r\n\r\n")
    .filter(Boolean)
    .map((f) => JSON.parse(f.slice("data: ".length)));
  assert.deepEqual(
    frames.slice(-2).map((f) => JSON.stringify(shape(f))),
    RECORDED_GEMINI.map((f) => JSON.stringify(shape(JSON.parse(f)))),
  );
});

/** The SSE events of a Responses stream: [{ name, data }]. */
const sseEvents = (text) =>
  text
    .split("\n\n")
    .filter(Boolean)
    .map((f) => ({
      name: /^event: (.*)$/m.exec(f)[1],
      data: JSON.parse(/^data: (.*)$/m.exec(f)[1]),
    }));

test("Responses: the image item's events have the recorded stream's fields, in its order", async () => {
  const recorded = sseEvents(
    fs.readFileSync(
      new URL(
        "../fixtures/conformance/responses/openai-image-generation-tool.1.stream.sse",
        import.meta.url,
      ),
      "utf8",
    ),
  );
  const res = await fetch(`${mock.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, input: "draw a cat" }),
  });
  const served = sseEvents(await res.text());
  const image = (events) =>
    events.filter(
      (e) =>
        e.name.startsWith("response.image_generation_call.") ||
        e.data.item?.type === "image_generation_call",
    );
  const kinds = (events) => image(events).map((e) => e.name);
  assert.deepEqual(kinds(served), [
    "response.output_item.added",
    "response.image_generation_call.in_progress",
    "response.image_generation_call.generating",
    "response.image_generation_call.partial_image",
    "response.image_generation_call.partial_image",
    "response.image_generation_call.completed",
    "response.output_item.done",
  ]);
  const shapes = (events) =>
    new Map(image(events).map((e) => [e.name, JSON.stringify(shape(e.data))]));
  assert.deepEqual(shapes(served), shapes(recorded));
  // The image once more in response.completed, as the API sends it.
  const completed = served.at(-1).data.response.output;
  assert.equal(
    completed.find((i) => i.type === "image_generation_call").result,
    drawing("a cat").png,
  );
});

test("Responses: two partial images, then one file, in response.files once", async () => {
  const c = client(mock, "responses");
  const { events, response, error } = await collect(
    c.stream({ messages: ask("draw a cat"), partial: { files: true } }),
  );
  assert.ifError(error);
  const images = events.filter((e) => e.type === "file" || e.type === "file_partial");
  assert.deepEqual(
    images.map((e) => [e.type, e.index]),
    [
      ["file_partial", 0],
      ["file_partial", 1],
      ["file", undefined],
    ],
  );
  const { png, partials } = drawing("a cat");
  assert.deepEqual(
    images.map((e) => e.file.data),
    [...partials, png],
  );
  assert.equal(response.files.length, 1);
  assert.equal(response.files[0].data, png);
  assert.equal(response.text, "Here is a cat.");
});

test("the formats without images say they cannot draw", async () => {
  for (const provider of PROVIDERS.filter((p) => p !== "gemini" && p !== "responses")) {
    const { response, error } = await collect(
      client(mock, provider).stream({ messages: ask("draw a cat") }),
    );
    assert.ifError(error);
    assert.equal(response.files, undefined, provider);
    assert.match(response.text, /cannot draw/, provider);
  }
});
