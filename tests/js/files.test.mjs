// Files the model makes (issue 29): a generated image from the Responses
// API's image generation tool is one `file` part and one `file` event, not
// the three copies the stream carries, and it replays to its provider.
// The recordings are the corpus's (tests/fixtures/conformance/responses).
import { test } from "node:test";
import http from "node:http";
import assert from "node:assert/strict";
import { ask, client, collect, useMock } from "./helpers.mjs";
import { readCase } from "./mock-server.mjs";

const mock = useMock();

/** The recorded image of a case: its `image_generation_call` item's `result`. */
function recordedImage(id) {
  const { body, stream } = readCase(id);
  const find = (v) =>
    v && typeof v === "object"
      ? v.type === "image_generation_call" && typeof v.result === "string"
        ? v.result
        : Object.values(v).map(find).find(Boolean)
      : undefined;
  if (!stream) return find(JSON.parse(body.toString()));
  for (const line of body.toString().split("\n")) {
    if (line.startsWith("data: ") && line.includes('"response.output_item.done"')) {
      const found = find(JSON.parse(line.slice(6)));
      if (found) return found;
    }
  }
}

for (const id of [
  "responses/openai-image-generation-tool.1.stream",
  "responses/azure-image-generation-tool.1.stream",
  "responses/xai-image-generation-tool.1.stream",
]) {
  test(`${id}: one file event and one file in the response, the recorded image`, async () => {
    const c = client(mock, "responses", { mockOptions: { fixture: id, chunk: 97 } });
    const { events, response, error } = await collect(c.stream({ messages: ask("Draw.") }));
    assert.ifError(error);
    const files = events.filter((e) => e.type === "file");
    assert.equal(files.length, 1);
    const { file } = files[0];
    assert.equal(file.type, "file");
    assert.equal(file.data, recordedImage(id));
    assert.match(file.mediaType, /^image\//);
    assert.equal(file.providerData.responses.type, "image_generation_call");
    assert.equal(file.providerData.responses.result, undefined, "the image is not kept twice");
    assert.deepEqual(response.files, [file]);
    // The event's frame is kept without the image, which `file` carries.
    assert.ok(!files[0].raw.includes(file.data));
    assert.ok(
      files[0].raw.includes(
        `<skyl: ${file.data.length} bytes of base64, in the event's file.data>`,
      ),
    );
    assert.deepEqual(
      response.message.parts.filter((p) => p.type === "file"),
      [file],
    );
    // The history stays plain JSON.
    assert.deepEqual(JSON.parse(JSON.stringify(response.message)), response.message);
  });
}

test("complete(): a body's image is a file too", async () => {
  const id = "responses/openai-image-generation-tool.1";
  const c = client(mock, "responses", { mockOptions: { fixture: id } });
  const response = await c.complete({ messages: ask("Draw.") });
  assert.equal(response.files.length, 1);
  assert.equal(response.files[0].data, recordedImage(id));
});

test("the image replays to the Responses API as its item, and is left out for Anthropic with a warning", async () => {
  const id = "responses/openai-image-generation-tool.1";
  const made = await client(mock, "responses", { mockOptions: { fixture: id } }).complete({
    messages: ask("Draw a cat."),
  });
  const messages = [...ask("Draw a cat."), made.message, ...ask("Now a dog.")];
  mock.reset();
  await client(mock, "responses").complete({ messages });
  const item = mock.requests[0].body.input.find((i) => i.type === "image_generation_call");
  assert.equal(item.result, recordedImage(id));
  assert.equal(item.id, made.files[0].providerData.responses.id);

  mock.reset();
  const { events, error } = await collect(client(mock, "anthropic").stream({ messages }));
  assert.ifError(error);
  const warning = events.find((e) => e.type === "warning" && e.code === "provider_parts_dropped");
  assert.match(warning.message, /messages\[1\]\.parts\[\d+\] \(responses file image\/webp\)/);
  assert.ok(!JSON.stringify(mock.requests[0].body).includes(recordedImage(id)));
});

/**
 * A Gemini image stream as the API sends it (the frames of a recorded one:
 * the AI SDK's fixture issue-10660-image-thought-signature, from
 * gemini-3-pro-image-preview), with `data` of 3 MiB served from a
 * loopback server, split across many reads.
 */
async function withGeminiImage(data, signature, run) {
  const usage =
    '"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1219,"totalTokenCount":1471,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":244,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"live-response-id"';
  const body =
    `data: {"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/jpeg","data":"${data}"},"thoughtSignature":"${signature}"}],"role":"model"},"index":0}],${usage}}\n\n` +
    `data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],${usage}}\n\n`;
  const server = http.createServer(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < body.length; i += 65_536) {
      res.write(body.slice(i, i + 65_536));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await run(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.close();
  }
}

test("a Gemini stream with a 3 MiB inlineData image: one file event, the served bytes", async () => {
  const bytes = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
  const data = bytes.toString("base64");
  const signature = Buffer.from("a thought signature").toString("base64");
  await withGeminiImage(data, signature, async (baseURL) => {
    const c = client(mock, "gemini", { baseURL });
    const { events, response, error } = await collect(c.stream({ messages: ask("Draw.") }));
    assert.ifError(error);
    const files = events.filter((e) => e.type === "file");
    assert.equal(files.length, 1);
    const { file, raw } = files[0];
    assert.deepEqual(Buffer.from(file.data, "base64"), bytes);
    assert.equal(file.mediaType, "image/jpeg");
    assert.deepEqual(file.providerData, { gemini: { thoughtSignature: signature } });
    assert.ok(!raw.includes(file.data));
    assert.ok(raw.includes(`<skyl: ${data.length} bytes of base64, in the event's file.data>`));
    assert.deepEqual(response.files, [file]);
    assert.deepEqual(response.message.parts, [file]);
    assert.equal(response.finishReason, "stop");
  });
});

test("a history with a Gemini image and a Responses image replays to each provider", async () => {
  const responsesId = "responses/openai-image-generation-tool.1";
  const drawn = await client(mock, "responses", {
    mockOptions: { fixture: responsesId },
  }).complete({ messages: ask("Draw a cat.") });
  const signature = "c2lnbmF0dXJl";
  const geminiImage =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  const painted = await withGeminiImage(geminiImage, signature, async (baseURL) => {
    const { response, error } = await collect(
      client(mock, "gemini", { baseURL }).stream({ messages: ask("Paint a dog.") }),
    );
    assert.ifError(error);
    return response;
  });
  assert.equal(painted.files.length, 1);
  const messages = [
    ...ask("Draw a cat."),
    drawn.message,
    ...ask("Paint a dog."),
    painted.message,
    ...ask("Now both together."),
  ];
  const responsesImage = recordedImage(responsesId);
  for (const provider of ["gemini", "responses", "openai", "anthropic", "bedrock"]) {
    mock.reset();
    const { events, error } = await collect(client(mock, provider).stream({ messages }));
    assert.ifError(error, provider);
    const sent = JSON.stringify(mock.requests[0].body);
    const warning = events.find((e) => e.type === "warning" && e.code === "provider_parts_dropped");
    if (provider === "gemini") {
      // Both as inlineData; its own with its thought signature.
      const model = mock.requests[0].body.contents.filter((c) => c.role === "model");
      assert.deepEqual(model[1].parts, [
        { inlineData: { mimeType: "image/jpeg", data: geminiImage }, thoughtSignature: signature },
      ]);
      assert.ok(model[0].parts.some((p) => p.inlineData?.data === responsesImage));
      assert.doesNotMatch(warning?.message ?? "", /file/);
    } else if (provider === "responses") {
      // Its own image as its item; Gemini's left out, with a warning.
      assert.ok(sent.includes(responsesImage));
      assert.ok(!sent.includes(geminiImage));
      assert.match(warning.message, /messages\[3\]\.parts\[0\] \(gemini file image\/jpeg\)/);
    } else {
      // An assistant turn here holds no image: both left out, named.
      assert.ok(!sent.includes(geminiImage) && !sent.includes(responsesImage), provider);
      assert.match(warning.message, /messages\[1\]/, provider);
      assert.match(
        warning.message,
        /messages\[3\]\.parts\[0\] \(gemini file image\/jpeg\)/,
        provider,
      );
    }
  }
});

for (const id of [
  "responses/openai-image-generation-tool.1.stream",
  "responses/azure-image-generation-tool.1.stream",
]) {
  test(`${id}: with partial.files, its partial image comes first, as file_partial`, async () => {
    const { body } = readCase(id);
    const recorded = body
      .toString()
      .split("\n")
      .filter((l) => l.includes('"response.image_generation_call.partial_image"'))
      .map((l) => JSON.parse(l.slice(6)))[0];
    const c = client(mock, "responses", { mockOptions: { fixture: id, chunk: 97 } });
    const asked = await collect(c.stream({ messages: ask("Draw."), partial: { files: true } }));
    assert.ifError(asked.error);
    const kinds = asked.events.map((e) => e.type).filter((t) => t.startsWith("file"));
    assert.deepEqual(kinds, ["file_partial", "file"]);
    const partial = asked.events.find((e) => e.type === "file_partial");
    assert.equal(partial.index, recorded.partial_image_index);
    assert.equal(partial.file.data, recorded.partial_image_b64);
    assert.equal(partial.file.mediaType, `image/${recorded.output_format}`);
    assert.equal(partial.file.providerData.responses.id, recorded.item_id);
    assert.ok(!partial.raw.includes(partial.file.data));
    assert.equal(asked.response.files.length, 1, "only the whole image is a file");
    const plain = await collect(c.stream({ messages: ask("Draw.") }));
    assert.ok(!plain.events.some((e) => e.type === "file_partial"));
    assert.equal(plain.events.length, asked.events.length - 1);
  });
}

// (The core leaves a streamed file's data out of the message it keeps, so
// that wasm holds an image once: JS takes it from the file event, for the
// finish and for an error's partial response alike.)
test("a stream cut after its image: the error's partial has the image its event had", async () => {
  const mockOptions = { image_bytes: 200_000 };
  const c = client(mock, "gemini", { mockOptions, maxRetries: 0 });
  const whole = await collect(c.stream({ messages: ask("Draw a cat.") }));
  assert.ifError(whole.error);
  const image = whole.response.files[0].data;
  assert.ok(image.length > 190_000);
  // The mock's body again, cut before its last frame (the finish).
  const res = await fetch(`${mock.url}/v1beta/models/mock-model:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-mock-image-bytes": "200000" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Draw a cat." }] }] }),
  });
  const body = Buffer.from(await res.arrayBuffer());
  const last = body.lastIndexOf("data: ");
  const cut = client(mock, "gemini", {
    mockOptions: { ...mockOptions, disconnect_after: last, chunk: 4096 },
    maxRetries: 0,
  });
  const { events, error } = await collect(cut.stream({ messages: ask("Draw a cat.") }));
  assert.deepEqual(
    events.filter((e) => e.type === "file").map((e) => e.file.data),
    [image],
  );
  assert.ok(error?.partial, String(error));
  const parts = error.partial.message.parts.filter((p) => p.type === "file");
  assert.deepEqual(
    parts.map((p) => p.data),
    [image],
  );
  assert.deepEqual(
    error.partial.files.map((p) => p.data),
    [image],
  );
});

test("Responses: a large image is left out of the completed response's frame, which repeats it", async () => {
  const c = client(mock, "responses", { mockOptions: { image_bytes: 100_000 } });
  const { events, response, error } = await collect(c.stream({ messages: ask("Draw a cat.") }));
  assert.ifError(error);
  const [file] = response.files;
  assert.ok(file.data.length > 64 * 1024);
  const finish = events.at(-1);
  assert.equal(finish.type, "finish");
  assert.match(finish.raw, /"type":"response.completed"/);
  assert.ok(!finish.raw.includes(file.data));
  assert.ok(
    finish.raw.includes(`<skyl: ${file.data.length} bytes of base64, a file of response.files>`),
  );
  // Every event's frame: the image in none, the file event's marked.
  assert.ok(events.every((e) => typeof e.raw !== "string" || !e.raw.includes(file.data)));
});
