// All 336 recorded cases through the built package and real HTTP: streams
// through client.stream(), responses through client.complete(), error bodies
// as typed errors from both. The Responses group has its own expected
// fields (tests/fixtures/conformance/README.md), checked as the Rust
// harness does (tests/conformance/responses.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, client, collect, ask } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";

const mock = useMock();

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
    // Expected counts are the provider's own; skyl's are normalised (input
    // with cache reads and writes, output with reasoning): what the
    // provider reports apart, read from its own usage object, is added.
    const raw = r.usage.raw ?? {};
    const apart = (...keys) => keys.reduce((n, k) => n + (raw[k] ?? 0), 0);
    const provider = id.split("/")[0];
    const inputApart =
      provider === "anthropic"
        ? apart("cache_read_input_tokens", "cache_creation_input_tokens")
        : provider === "bedrock"
          ? apart("cacheReadInputTokens", "cacheWriteInputTokens")
          : 0;
    const outputApart = provider === "gemini" ? apart("thoughtsTokenCount") : 0;
    const plus = (want, n) => (want == null ? want : want + n);
    assert.equal(r.usage.input, plus(want.usage.input, inputApart), `${id}: usage input`);
    assert.equal(r.usage.output, plus(want.usage.output, outputApart), `${id}: usage output`);
    if (r.usage.input != null && r.usage.output != null)
      assert.equal(r.usage.total, r.usage.input + r.usage.output, `${id}: usage total`);
  }
  // Bedrock's cases list the calls cut off: never executable, with what arrived.
  if (id.startsWith("bedrock/")) {
    const incomplete = (r.incompleteToolCalls ?? []).map((c) => [c.id, c.name, c.arguments]);
    const listed = want.incomplete_tool_calls.map((c) => [c.id, c.name, c.arguments_raw]);
    assert.deepEqual(incomplete, listed, `${id}: incomplete calls`);
  }
  // The history replays identically after a JSON round trip.
  assert.deepEqual(JSON.parse(JSON.stringify(r.message)), r.message);
}

// ------------------------------------------------------------- responses

/** Items a client must carry out (the README's `client_actions`), read from the item. */
function isClientAction(item) {
  switch (item.type) {
    case "local_shell_call":
    case "apply_patch_call":
    case "computer_call":
    case "mcp_approval_request":
      return true;
    case "shell_call":
      return item.environment?.type == null || item.environment.type === "local";
    case "tool_search_call":
      return item.execution === "client";
    default:
      return false;
  }
}

/** Result items the server adds, which `server_tool_calls` does not list. */
const RESULTS = ["shell_call_output", "tool_search_output", "program_output", "compaction"];

/** A Responses case's assembled response against its expected file. */
function checkResponses(r, want, id) {
  assert.equal(r.text, want.text, `${id}: text`);
  assert.equal(r.reasoning ?? "", want.reasoning ?? "", `${id}: reasoning`);

  assert.equal(r.toolCalls.length, want.tool_calls.length, `${id}: tool call count`);
  want.tool_calls.forEach((w, i) => {
    const c = r.toolCalls[i];
    assert.equal(c.name, w.name, `${id}: call ${i} name`);
    if (w.id !== null) assert.equal(c.id, w.id, `${id}: call ${i} id`);
    else assert.ok(c.id, `${id}: call ${i} has an id`);
    const parsed = JSON.parse(c.arguments);
    if (w.type === "custom_tool_call") {
      // Free-form input, handed out as {"input": ...} (see the adapter).
      assert.deepEqual(parsed, { input: w.arguments }, `${id}: call ${i} custom input`);
      return;
    }
    assert.deepEqual(parsed, w.arguments, `${id}: call ${i} arguments`);
    if (typeof w.arguments_raw === "string") {
      const raw = w.arguments_raw.trim() === "" ? "{}" : w.arguments_raw;
      assert.equal(c.arguments, raw, `${id}: call ${i} argument text`);
    }
  });
  const ids = new Set(r.toolCalls.map((c) => c.id));
  assert.equal(ids.size, r.toolCalls.length, `${id}: tool-call ids are unique`);

  // Calls cut off: never executable, with what arrived.
  const incomplete = r.incompleteToolCalls ?? [];
  assert.equal(
    incomplete.length,
    want.incomplete_tool_calls.length,
    `${id}: incomplete calls ${JSON.stringify(incomplete)}`,
  );
  want.incomplete_tool_calls.forEach((w, i) => {
    assert.equal(incomplete[i].name ?? null, w.name ?? null, `${id}: incomplete call ${i} name`);
    if (typeof w.arguments_raw === "string")
      assert.equal(incomplete[i].arguments, w.arguments_raw, `${id}: incomplete call ${i} text`);
  });

  // Client actions and the server's own items: provider parts, in order.
  // The server's items in output order: provider parts, and the items of
  // the images it made (`file` parts, their item in providerData).
  const items = r.message.parts
    .filter((p) => (p.type === "provider" && p.provider === "responses") || p.type === "file")
    .map((p) => (p.type === "file" ? p.providerData.responses : p.data));
  for (const f of r.files ?? []) {
    assert.match(f.mediaType, /^image\//, `${id}: a generated image's type`);
    assert.ok(f.data.length > 0, `${id}: a generated image's data`);
  }
  assert.deepEqual(
    r.files ?? [],
    r.message.parts.filter((p) => p.type === "file"),
    `${id}: response.files, the message's files`,
  );
  const actions = items.filter(isClientAction);
  assert.deepEqual(
    actions.map((a) => [a.type, a.type === "mcp_approval_request" ? a.id : a.call_id]),
    want.client_actions.map((a) => [a.type, a.id]),
    `${id}: client actions`,
  );
  const servers = items
    .filter((i) => !isClientAction(i) && typeof i.type === "string" && !RESULTS.includes(i.type))
    .map((i) => (i.type === "custom_tool_call" ? `custom_tool_call:${i.name}` : i.type));
  assert.deepEqual(servers, want.server_tool_calls, `${id}: server tool calls`);

  // The raw finish: completed or incomplete:<reason>; a failed response is
  // an error, whose partial response has none.
  if (want.finish_reason === "failed" || want.finish_reason === null)
    assert.equal(r.rawFinishReason, undefined, `${id}: no finish reason`);
  else assert.equal(r.rawFinishReason, want.finish_reason, `${id}: finish reason`);
  if (want.usage) {
    for (const [key, ours] of [
      ["input", r.usage.input],
      ["output", r.usage.output],
      ["cached", r.usage.cacheRead],
      ["reasoning", r.usage.reasoning],
    ]) {
      if (want.usage[key] != null) assert.equal(ours, want.usage[key], `${id}: usage ${key}`);
    }
  }
  assert.equal(r.refusal ?? null, want.refusal ?? null, `${id}: refusal`);

  // Encrypted reasoning is kept on its part, to replay.
  const encrypted = r.message.parts.some(
    (p) => p.type === "reasoning" && p.providerData?.responses?.encrypted_content != null,
  );
  assert.equal(encrypted, want.encrypted_reasoning === true, `${id}: encrypted reasoning kept`);

  // Message phases, which must be replayed with their message.
  if (Array.isArray(want.messages)) {
    const phases = r.message.parts
      .filter((p) => p.type === "text" && p.providerData?.responses?.phase !== undefined)
      .map((p) => p.providerData.responses.phase);
    assert.deepEqual(
      phases,
      want.messages.map((m) => m.phase).filter((p) => p != null),
      `${id}: phases`,
    );
  }
  // The history replays identically after a JSON round trip.
  assert.deepEqual(JSON.parse(JSON.stringify(r.message)), r.message);
}

/** The events of a stream agree with what it assembled. */
function checkEvents(events, r, id) {
  const text = events
    .filter((e) => e.type === "text")
    .map((e) => e.text)
    .join("");
  assert.equal(text, r.text, `${id}: text events`);
  const calls = events.filter((e) => e.type === "tool_call").map((e) => e.call);
  assert.deepEqual(calls, r.toolCalls, `${id}: tool_call events`);
  assert.ok(
    events.every((e) => typeof e.raw === "string"),
    `${id}: raw on every event`,
  );
}

/**
 * A Responses or Bedrock stream or body that fails (`check` reads what it
 * assembled): the client's own errors (no
 * terminal event; an event that does not parse, skipped with a warning, so
 * the terminal one is lost) end the stream early; the provider's (an
 * `error` event of either shape, `response.failed`) are typed API errors
 * with its type, code and message. Either keeps what was received.
 */
function checkStreamError(error, events, want, id, check = checkResponses) {
  assert.ok(error instanceof skyl.SkylError, `${id}: expected an error, got ${error}`);
  assert.ok(!events.some((e) => e.type === "finish"), `${id}: no finish event before an error`);
  if (want.error.source === "client") {
    assert.ok(
      error instanceof skyl.StreamEndedEarlyError,
      `${id}: expected the stream to end early, got ${error.name}: ${error.message}`,
    );
    assert.equal(error.code, "stream_ended_early");
  } else {
    assert.ok(error instanceof skyl.APIError, `${id}: ${error.name}: ${error.message}`);
    assert.equal(error.inBand, true, `${id}: in-band`);
    assert.equal(error.providerType, want.error.type, `${id}: provider type`);
    assert.equal(error.message, want.error.message, `${id}: message`);
    if (want.error.code != null)
      assert.equal(error.providerCode, String(want.error.code), `${id}: provider code`);
    if (typeof want.error.param === "string")
      assert.equal(error.param, want.error.param, `${id}: param`);
  }
  if (error.partial) {
    check(error.partial, want, id);
    checkEvents(events, error.partial, id);
  } else {
    // Nothing assembled, and nothing expected.
    assert.ok(want.text === null || want.text === "", `${id}: expected text`);
    assert.equal(want.tool_calls.length, 0, `${id}: expected tool calls`);
  }
}

async function responsesCase(c, want, id) {
  if (want.kind === "stream") {
    const { events, response, error } = await collect(c.stream({ messages: ask("hi") }));
    if (want.error) return checkStreamError(error, events, want, id);
    assert.ifError(error);
    checkResponses(response, want, id);
    checkEvents(events, response, id);
    assert.equal(events.filter((e) => e.type === "finish").length, 1, `${id}: one finish`);
    assert.equal(events.at(-1).type, "finish");
    assert.deepEqual(events.at(-1).response, response, `${id}: the finish event's response`);
  } else if (want.kind === "response") {
    const result = await c.complete({ messages: ask("hi") }).then(
      (response) => ({ response }),
      (error) => ({ error }),
    );
    if (want.error) return checkStreamError(result.error, [], want, id);
    assert.ifError(result.error);
    checkResponses(result.response, want, id);
  } else {
    await checkAPIError(c, want, id, (err) => {
      if (want.error.code != null) assert.equal(err.providerCode, String(want.error.code));
      if (typeof want.error.param === "string") assert.equal(err.param, want.error.param);
    });
  }
}

/**
 * An error case: complete() and stream() each fail with the APIError the
 * case records (status, provider type, message, the mock's request id);
 * `more(err)` checks what else the case's group records.
 */
async function checkAPIError(c, want, id, more = () => {}) {
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
    // (A null message: the body has none, and the error says so.)
    if (want.error.message !== null) assert.equal(err.message, want.error.message);
    else assert.ok(err.message, `${id}: a message`);
    more(err);
    assert.ok(err.requestId?.startsWith("req_mock_"), "request id from the response header");
  }
}

// ------------------------------------------------------------ every case

for (const id of listCases()) {
  const { expected: want } = readCase(id);
  const provider = id.split("/")[0];
  if (provider === "responses") {
    test(id, async () => {
      const c = client(mock, provider, { maxRetries: 0, mockOptions: { fixture: id, chunk: 997 } });
      await responsesCase(c, want, id);
    });
    continue;
  }
  test(id, async () => {
    const c = client(mock, provider, { maxRetries: 0, mockOptions: { fixture: id, chunk: 997 } });
    if (want.kind === "stream") {
      const { events, response, error } = await collect(c.stream({ messages: ask("hi") }));
      if (want.error && provider === "bedrock")
        return checkStreamError(error, events, want, id, checkResponse);
      if (want.error) {
        assert.ok(error instanceof skyl.SkylError, `${id}: expected an error, got ${error}`);
        assert.equal(error.code, "malformed_stream");
        assert.equal(error.message, `malformed stream: ${want.error.message}`);
        checkResponse(error.partial, want, id);
        return;
      }
      assert.ifError(error);
      checkResponse(response, want, id);
      // The text events join to the response's text, which is the case's.
      checkEvents(events, response, id);
      assert.equal(events.at(-1).type, "finish");
    } else if (want.kind === "response") {
      checkResponse(await c.complete({ messages: ask("hi") }), want, id);
    } else {
      await checkAPIError(c, want, id);
    }
  });
}
