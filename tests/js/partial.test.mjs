// Progress events (`partial: { tools, output }`) through the built package
// and real HTTP, on every recorded stream of the corpus (in 997-byte
// chunks): the other events are exactly those without `partial`; a call's
// `tool_call_start` comes once, before its deltas; its deltas concatenate
// to its `tool_call`'s arguments; each `partial` is consistent with the
// final value and the last one equals it; a value handed out is never
// changed by a later event; a started call without `tool_call` is listed
// as incomplete; each progress event carries its frame. The same checks
// as tests/partial_events.rs in Rust.
import { test } from "node:test";
import assert from "node:assert/strict";
import { useMock, client, collect, ask } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";

const mock = useMock();

const PROGRESS = new Set(["tool_call_start", "tool_call_delta", "output_delta"]);

/** Whether `p` is consistent with `whole` (strings prefixes, the rest equal where present). */
function consistent(p, whole) {
  if (typeof p === "string") return typeof whole === "string" && whole.startsWith(p);
  if (Array.isArray(p))
    return (
      Array.isArray(whole) && p.length <= whole.length && p.every((x, i) => consistent(x, whole[i]))
    );
  if (p !== null && typeof p === "object")
    return (
      whole !== null &&
      typeof whole === "object" &&
      !Array.isArray(whole) &&
      Object.keys(p).every((k) => Object.hasOwn(whole, k) && consistent(p[k], whole[k]))
    );
  return p === whole;
}

const request = (partial) => ({
  messages: ask("hi"),
  responseFormat: { type: "json_schema", schema: { type: "object" } },
  ...(partial ? { partial: { tools: true, output: true } } : {}),
});

const streams = listCases().filter((id) => readCase(id).expected.kind === "stream");
let deltas = 0;

for (const id of streams) {
  const provider = id.split("/")[0];
  test(id, async () => {
    const run = (partial) =>
      collect(
        client(mock, provider, { maxRetries: 0, mockOptions: { fixture: id, chunk: 997 } }).stream(
          request(partial),
        ),
      );
    const plain = await run(false);
    const got = await run(true);
    assert.ok(!plain.events.some((e) => PROGRESS.has(e.type)), "none without asking");
    assert.deepEqual(
      got.events.filter((e) => !PROGRESS.has(e.type)),
      plain.events,
      "the other events are unchanged",
    );
    assert.equal(String(got.error), String(plain.error));

    for (const e of got.events.filter((e) => PROGRESS.has(e.type)))
      assert.ok(e.raw.length > 0, `${e.type} carries its frame`);
    const calls = new Map();
    const outputs = [];
    const handedOut = [];
    for (const e of got.events) {
      if (e.type === "tool_call_start") {
        assert.ok(!calls.has(e.id), `${e.id} starts once`);
        assert.equal(e.index, calls.size);
        assert.ok(!("arguments" in e), "a start is not a call");
        calls.set(e.id, { index: e.index, text: "", partials: [], called: false });
      } else if (e.type === "tool_call_delta") {
        const c = calls.get(e.id);
        assert.ok(c && !c.called, `a delta of ${e.id} after its start, before its call`);
        assert.equal(e.index, c.index);
        c.text += e.argumentsDelta;
        if ("partial" in e) {
          c.partials.push(e.partial);
          handedOut.push([e.partial, JSON.stringify(e.partial)]);
        }
        deltas++;
      } else if (e.type === "tool_call") {
        const c = calls.get(e.call.id);
        assert.ok(c, `${e.call.id} started`);
        assert.equal(c.text, e.call.arguments, "the deltas are the arguments");
        const whole = JSON.parse(e.call.arguments);
        for (const p of c.partials) assert.ok(consistent(p, whole), `${JSON.stringify(p)}`);
        assert.deepEqual(c.partials.at(-1), whole);
        c.called = true;
      } else if (e.type === "output_delta") {
        outputs.push(e.partial);
        handedOut.push([e.partial, JSON.stringify(e.partial)]);
      }
    }
    for (const [value, text] of handedOut)
      assert.equal(JSON.stringify(value), text, "never changed later");
    const response = got.response ?? got.error?.partial;
    for (const [callId, c] of calls) {
      const incomplete = (response?.incompleteToolCalls ?? []).some((i) => i.id === callId);
      if (got.response) assert.ok(c.called !== incomplete, `${callId}: called or incomplete`);
    }
    if (got.response && outputs.length > 0) {
      let whole;
      try {
        whole = JSON.parse(got.response.text);
      } catch {
        return;
      }
      for (const p of outputs) assert.ok(consistent(p, whole));
      assert.deepEqual(outputs.at(-1), whole);
    }
  });
}

test("the corpus gives the checks above something to check", () => {
  assert.ok(deltas >= 100, `${deltas} deltas`);
});

test("partial asks for known kinds, and output needs a responseFormat", async () => {
  const c = client(mock, "openai");
  await assert.rejects(
    c.stream({ messages: ask("hi"), partial: { tool: true } }).response(),
    (e) => {
      assert.equal(e.name, "InvalidRequestError");
      assert.equal(e.path, "partial.tool");
      return true;
    },
  );
  await assert.rejects(c.complete({ messages: ask("hi"), partial: { output: true } }), (e) => {
    assert.equal(e.path, "partial.output");
    return true;
  });
});

test('a key named "__proto__" is the partial\'s own key, as JSON.parse makes it', async () => {
  const frame = (delta, finish = null) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const call = (args, head) => ({
    tool_calls: [
      {
        index: 0,
        ...(head ? { id: "c1", type: "function" } : {}),
        function: { ...head, arguments: args },
      },
    ],
  });
  const body = [
    frame(call("", { name: "f" })),
    frame(call('{"__proto__": {"x": 1')),
    frame(call('}, "a": {"__proto__": "s')),
    frame(call('t"}}')),
    frame({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
  // (A frame per read: a delta, with its partial, per frame.)
  const stream = new ReadableStream({
    async pull(controller) {
      await new Promise((r) => setTimeout(r, 1));
      const next = body.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(next));
    },
  });
  const c = client(mock, "openai", {
    fetch: async () => new Response(stream, { headers: { "content-type": "text/event-stream" } }),
  });
  const { events } = await collect(c.stream({ messages: ask("hi"), partial: { tools: true } }));
  const partials = events.filter((e) => e.type === "tool_call_delta" && e.partial);
  const whole = JSON.parse(events.find((e) => e.type === "tool_call").call.arguments);
  assert.ok(partials.length >= 2, JSON.stringify(events.map((e) => e.type)));
  for (const p of partials.map((e) => e.partial)) {
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.ok(Object.hasOwn(p, "__proto__"), JSON.stringify(p));
    assert.ok(consistent(p, whole), JSON.stringify(p));
  }
  assert.deepEqual(partials.at(-1).partial, whole);
});
