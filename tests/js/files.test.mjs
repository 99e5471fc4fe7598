// Files the model makes (issue 29): a generated image from the Responses
// API's image generation tool is one `file` part and one `file` event, not
// the three copies the stream carries, and it replays to its provider.
// The recordings are the corpus's (tests/fixtures/conformance/responses).
import { test } from "node:test";
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
