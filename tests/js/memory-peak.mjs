// One large event through a fresh instance of the package: prints, as
// JSON, the wasm memory at rest (after a small stream) and after the large
// event's stream, which is the peak (WebAssembly memory never shrinks).
// Run by memory.test.mjs in a child process per case:
//   node tests/js/memory-peak.mjs <text|prose|skipped|image|responses> <bytes>
// `text`: an OpenAI text delta of that many bytes; `prose`: the same in
// lines, each newline escaped in the JSON; `skipped`: a data line of that
// many bytes that is not JSON, then a stop; `image`: a Gemini inlineData
// part with that many bytes of base64 and a thought signature of a tenth
// of it, in the frames a recorded image stream has; `responses`: the
// Responses API's recorded image stream with an image of that size.
// Bodies come in 4 KiB chunks (what workerd hands a Worker).
import { readFileSync } from "node:fs";

const entry = process.env.SKYL_ENTRY ?? new URL("../../pkg/node.js", import.meta.url).href;
const { decodeStream, wasmMemorySize } = await import(entry);

const [kind, size] = [process.argv[2], Number(process.argv[3])];
const enc = new TextEncoder();

function chunks(text) {
  const bytes = enc.encode(text);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      c.enqueue(bytes.slice(at, at + 4096));
      at += 4096;
      if (at >= bytes.length) c.close();
    },
  });
}

/**
 * An OpenAI text delta of `n` bytes of text, as its frame writes it: with
 * `prose`, lines of 79 characters and a newline (escaped in the JSON).
 */
function textStream(n, prose = false) {
  const line = `${"x".repeat(79)}\n`;
  const plain = prose ? line.repeat(Math.ceil(n / 80)).slice(0, n) : "x".repeat(n);
  const text = JSON.stringify(plain).slice(1, -1);
  return (
    `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n` +
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
  );
}

function imageStream(n) {
  const b64 = "ABCD".repeat(Math.ceil(n / 4)).slice(0, n);
  const sig = "c2ln".repeat(Math.ceil(n / 40)).slice(0, Math.floor(n / 40) * 4);
  const usage =
    '"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1471,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":244,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"r1"';
  return (
    `data: {"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"${b64}"},"thoughtSignature":"${sig}"}],"role":"model"},"index":0}],${usage}}\n\n` +
    `data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],${usage}}\n\n`
  );
}

async function run(provider, text) {
  const s = decodeStream(provider, chunks(text));
  for await (const _ of s);
  return s.response();
}

/** A data line that is not JSON (skipped with a warning), then a stop. */
function skippedStream(n) {
  return `data: ${"x".repeat(n)}\n\n${textStream(0)}`;
}

/**
 * The Responses API's recorded image stream (openai-image-generation-tool.1)
 * with an image of `n` bytes of base64: in its partial_image frame, in
 * output_item.done and again in response.completed.
 */
function responsesStream(n) {
  const b64 = "ABCD".repeat(Math.ceil(n / 4)).slice(0, n);
  return recorded.replace(/"(partial_image_b64|result)":"[^"]*"/g, `"$1":"${b64}"`);
}
const recorded = readFileSync(
  new URL(
    "../fixtures/conformance/responses/openai-image-generation-tool.1.stream.sse",
    import.meta.url,
  ),
  "utf8",
);

const provider = { image: "gemini", responses: "responses" }[kind] ?? "openai";
const proseStream = (n) => textStream(n, true);
const make =
  { image: imageStream, skipped: skippedStream, responses: responsesStream, prose: proseStream }[
    kind
  ] ?? textStream;
await run(provider, make(1000));
const rest = wasmMemorySize();
const response = await run(provider, make(size));
const after = wasmMemorySize();
const image = kind === "image" || kind === "responses";
const got = image ? (response.files?.[0]?.data.length ?? -1) : response.text.length;
// (`skipped`: the text is empty, the event having been skipped.)
console.log(JSON.stringify({ kind, size, rest, after, growth: after - rest, got }));
