// All 126 recorded cases through the built package and real HTTP: streams
// through client.stream(), responses through client.complete(), error bodies
// as typed errors from both.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { skyl, startMock, client, collect, ask } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";

let mock;
before(async () => {
  mock = await startMock();
});
after(async () => {
  await mock.close();
});

function checkResponse(r, want, id) {
  assert.equal(r.text, want.text, `${id}: text`);
  assert.equal(r.reasoning ?? "", want.reasoning ?? "", `${id}: reasoning`);
  assert.equal(r.toolCalls.length, want.tool_calls.length, `${id}: tool call count`);
  want.tool_calls.forEach((w, i) => {
    const c = r.toolCalls[i];
    assert.equal(c.name, w.name, `${id}: call ${i} name`);
    if (w.id !== null) assert.equal(c.id, w.id, `${id}: call ${i} id`);
    assert.deepEqual(JSON.parse(c.arguments), w.arguments, `${id}: call ${i} arguments`);
  });
  assert.equal(r.rawFinishReason ?? null, want.finish_reason, `${id}: finish reason`);
  if (want.usage) {
    assert.equal(r.usage.input, want.usage.input, `${id}: usage input`);
    assert.equal(r.usage.output, want.usage.output, `${id}: usage output`);
  }
  // The history replays identically after a JSON round trip.
  assert.deepEqual(JSON.parse(JSON.stringify(r.message)), r.message);
}

for (const id of listCases()) {
  const { expected: want } = readCase(id);
  const provider = id.split("/")[0];
  test(id, async () => {
    const c = client(mock, provider, { maxRetries: 0, mockOptions: { fixture: id, chunk: 997 } });
    if (want.kind === "stream") {
      const { events, response, error } = await collect(c.stream({ messages: ask("hi") }));
      if (want.error) {
        assert.ok(error instanceof skyl.SkylError, `${id}: expected an error, got ${error}`);
        assert.equal(error.code, "malformed_stream");
        assert.equal(error.message, `malformed stream: ${want.error.message}`);
        checkResponse(error.partial, want, id);
        return;
      }
      assert.ifError(error);
      checkResponse(response, want, id);
      const text = events
        .filter((e) => e.type === "text")
        .map((e) => e.text)
        .join("");
      assert.equal(text, want.text, `${id}: text events`);
      const calls = events.filter((e) => e.type === "tool_call").map((e) => e.call);
      assert.deepEqual(calls, response.toolCalls, `${id}: tool_call events`);
      assert.equal(events.at(-1).type, "finish");
      assert.ok(
        events.every((e) => typeof e.raw === "string"),
        `${id}: raw on every event`,
      );
    } else if (want.kind === "response") {
      checkResponse(await c.complete({ messages: ask("hi") }), want, id);
    } else {
      for (const call of [
        () => c.complete({ messages: ask("hi") }),
        async () => {
          for await (const _ of c.stream({ messages: ask("hi") }));
        },
      ]) {
        const err = await call().then(
          () => null,
          (e) => e,
        );
        assert.ok(err instanceof skyl.APIError, `${id}: ${err}`);
        assert.equal(err.status, want.http_status);
        assert.equal(err.providerType, want.error.type);
        assert.equal(err.message, want.error.message);
        assert.ok(err.requestId?.startsWith("req_mock_"), "request id from the response header");
      }
    }
  });
}
