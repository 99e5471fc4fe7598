// client.run, the tool loop, against the mock provider: how a run stops
// (abort, signals, timeouts, limits, approvals, concurrency, retries, bad
// options) and progress events passing through it (issue 26; the
// decisions are the core's, src/runner.rs).
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { skyl, useMock, client, against, ask, PROVIDERS, sleep, eventually } from "./helpers.mjs";
import { QUESTION, weather, convert, drain, results, callsOf } from "./runner-tools.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

describe("client.run stops", () => {
  test("abort reaches the running tools, and nothing starts or is sent after it", async () => {
    let toolSignal;
    const c = client(mock, "responses");
    const run = c.run({
      messages: ask(QUESTION),
      tools: [
        weather({
          execute: (_, ctx) => {
            toolSignal = ctx.signal;
            return new Promise(() => {});
          },
        }),
        convert({ execute: () => "x" }),
      ],
    });
    const seen = [];
    let error;
    try {
      for await (const ev of run) {
        seen.push(ev.type);
        if (ev.type === "tool_start" && ev.call.name === "get_weather") run.abort("user left");
      }
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof skyl.AbortError, String(error));
    await assert.rejects(run.result(), skyl.AbortError);
    assert.equal(toolSignal.aborted, true);
    assert.equal(mock.requests.length, 1, "no request after the abort");
    // Started calls get "cancelled", so the history replays.
    const r = results(error.partial.messages);
    assert.deepEqual(
      r.map(([, text]) => text),
      r.map(([id]) => (id.includes("weather") ? "cancelled" : r.find(([i]) => i === id)[1])),
    );
    assert.ok(r.some(([, text, isError]) => text === "cancelled" && isError));
    assert.deepEqual(error.messages, error.partial.messages);
  });

  test("leaving the loop early stops the run; a run is read once", async () => {
    const c = client(mock, "openai");
    const run = c.run({ messages: ask(QUESTION), tools: [weather(), convert()] });
    for await (const ev of run) if (ev.type === "tool_call") break;
    await assert.rejects(run.result(), skyl.AbortError);
    assert.equal(mock.requests.length, 1, "no second step");
    const again = c.run({ messages: ask(QUESTION), tools: [weather()] });
    again[Symbol.asyncIterator]();
    assert.throws(() => again[Symbol.asyncIterator](), skyl.InvalidRequestError);
    again.abort();
    await assert.rejects(again.result(), skyl.AbortError);
  });

  test("the request's signal aborts the run, even before it starts", async () => {
    const ctrl = new AbortController();
    ctrl.abort("gone");
    const run = client(mock, "openai").run({
      messages: ask(QUESTION),
      tools: [weather()],
      signal: ctrl.signal,
    });
    await assert.rejects(run.result(), skyl.AbortError);
    assert.equal(mock.requests.length, 0);
  });

  test("the step limit leaves a valid history; finalAnswer ends in text", async () => {
    const c = client(mock, "anthropic");
    const capped = await c
      .run({ messages: ask(QUESTION), tools: [weather(), convert()], maxSteps: 1 })
      .result();
    assert.equal(capped.stopReason, "max_steps");
    assert.deepEqual(
      results(capped.messages).map(([, text]) => text),
      ["not run: step limit", "not run: step limit"],
    );
    mock.reset();
    const final = await c
      .run({
        messages: ask(QUESTION),
        tools: [weather(), convert()],
        maxSteps: 1,
        finalAnswer: true,
      })
      .result();
    assert.equal(final.stopReason, "done");
    assert.equal(final.steps.length, 2);
    assert.ok(final.response.text.length > 0);
    assert.deepEqual(mock.requests[1].body.tool_choice, { type: "none" });
  });

  test("a forced toolChoice goes with the first step only, so the run can end in text", async () => {
    const c = client(mock, "openai");
    const out = await c
      .run({ messages: ask(QUESTION), tools: [weather(), convert()], toolChoice: "required" })
      .result();
    assert.equal(out.stopReason, "done");
    assert.equal(mock.requests[0].body.tool_choice, "required");
    assert.ok(mock.requests.length >= 2);
    for (const r of mock.requests.slice(1)) assert.equal(r.body.tool_choice, undefined);
  });

  test("finalAnswer where a provider of the chain cannot turn the tools off: refused at the start", async () => {
    // Bedrock's Converse API has no tool choice "none", and a conversation
    // with tool calls needs its tools: the last request could not be sent.
    const own = client(mock, "bedrock");
    const chained = client(mock, "openai", { fallback: [against(mock, "bedrock")] });
    for (const [c, path] of [
      [own, "finalAnswer"],
      [chained, "fallback[0].finalAnswer"],
    ]) {
      let ran = 0;
      const tools = [weather({ execute: () => ran++ }), convert()];
      const run = c.run({ messages: ask(QUESTION), tools, maxSteps: 1, finalAnswer: true });
      await assert.rejects(run.result(), (e) => {
        assert.ok(e instanceof skyl.InvalidRequestError, String(e));
        assert.equal(e.path, path);
        assert.match(e.message, /Bedrock's Converse API has no tool choice "none"/);
        return true;
      });
      assert.equal(ran, 0);
    }
    assert.equal(mock.requests.length, 0, "nothing sent");
    // Without it, the step limit ends the run as before.
    const capped = await own
      .run({ messages: ask(QUESTION), tools: [weather(), convert()], maxSteps: 1 })
      .result();
    assert.equal(capped.stopReason, "max_steps");
  });

  test("approve: asked per call; a denial becomes an error result with its reason", async () => {
    const asked = [];
    const c = client(mock, "openai");
    const run = c.run({
      messages: ask(QUESTION),
      tools: [
        weather({ needsApproval: true }),
        convert({ needsApproval: (args) => args.value > 100 }),
      ],
      approve: async (call, args) => {
        asked.push([call.name, args.city]);
        return { deny: "not today" };
      },
    });
    const { events, result, error } = await drain(run);
    assert.ifError(error);
    assert.deepEqual(asked, [["get_weather", "Kampala"]]);
    assert.equal(events.filter((e) => e.type === "approval_request").length, 1);
    const [denied, ran] = results(result.messages);
    assert.deepEqual(denied.slice(1), ["denied: not today", true]);
    assert.equal(ran[2], false);
  });

  test("an approve that throws fails the run with a SkylError naming it, the turn kept", async () => {
    const c = client(mock, "openai");
    for (const thrown of [new Error("approvals service down"), null]) {
      let ran = 0;
      const run = c.run({
        messages: ask(QUESTION),
        tools: [weather({ needsApproval: true, execute: () => ran++ }), convert()],
        approve: () => {
          throw thrown;
        },
      });
      await assert.rejects(run.result(), (e) => {
        assert.ok(e instanceof skyl.SkylError, String(e));
        assert.equal(e.code, "callback");
        assert.equal(e.path, "approve()");
        assert.equal(e.cause, thrown);
        // The assistant's turn and a result for each of its calls.
        assert.equal(e.messages[0].role, "assistant");
        return true;
      });
      assert.equal(ran, 0, "the call it was asked about never ran");
    }
  });

  test("without approve the run stops approval_pending, and resumes with approvals", async () => {
    const c = client(mock, "gemini");
    const tools = [weather({ needsApproval: true }), convert()];
    const first = await c.run({ messages: ask(QUESTION), tools }).result();
    assert.equal(first.stopReason, "approval_pending");
    assert.deepEqual(
      first.pending.map((p) => p.name),
      ["get_weather"],
    );
    const history = [...ask(QUESTION), ...first.messages];
    // Resuming without a decision is refused, naming the call.
    await assert.rejects(c.run({ messages: history, tools }).result(), (e) => {
      assert.ok(e instanceof skyl.InvalidRequestError);
      assert.match(e.message, /approvals\[/);
      return true;
    });
    const id = first.pending[0].id;
    const resumed = await c.run({ messages: history, tools, approvals: { [id]: true } }).result();
    assert.equal(resumed.stopReason, "done");
    assert.equal(results(resumed.messages)[0][0], id);
    assert.match(resumed.response.text, /Kampala/);
  });

  test("a tool without execute is handed back", async () => {
    const c = client(mock, "anthropic");
    const { execute, ...clientSide } = weather();
    const result = await c
      .run({ messages: ask(QUESTION), tools: [clientSide, convert()] })
      .result();
    assert.equal(result.stopReason, "client_tool");
    assert.deepEqual(
      result.pending.map((p) => p.name),
      ["get_weather"],
    );
    // The runner's own results went in: only the handed-back call is open.
    assert.deepEqual(
      results(result.messages).map(([id]) => id),
      [callsOf(result.messages).find((p) => p.name === "convert_units").id],
    );
  });

  test("a call repeated in the next step is asked about again", async () => {
    // Gemini sends no call ids: each step's call of get_weather has the
    // same one until the core renames it at the turn's end.
    const frame = (parts, finishReason = "STOP") =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts }, finishReason }] })}\r\n\r\n`;
    const call = frame([{ functionCall: { name: "get_weather", args: { city: "Paris" } } }]);
    const bodies = [call, call, frame([{ text: "Sunny twice." }])];
    let n = 0;
    const fetch = async () =>
      new Response(bodies[Math.min(n++, bodies.length - 1)], {
        headers: { "content-type": "text/event-stream" },
      });
    const asked = [];
    const c = new skyl.Client({ provider: "gemini", apiKey: "k", model: "m", fetch });
    const needsApproval = (args, call) => {
      asked.push(`${call.name} ${args.city}`);
      return false;
    };
    const result = await c
      .run({ messages: ask("Paris?"), tools: [weather({ needsApproval, execute: () => "sunny" })] })
      .result();
    assert.equal(result.stopReason, "done");
    assert.equal(result.steps.length, 3);
    assert.deepEqual(asked, ["get_weather Paris", "get_weather Paris"]);
  });

  test("maxConcurrency holds tools back", async () => {
    let now = 0;
    let most = 0;
    const slow = async () => {
      most = Math.max(most, ++now);
      await sleep(20);
      now--;
      return "ok";
    };
    const c = client(mock, "openai");
    const result = await c
      .run({
        messages: ask(QUESTION),
        tools: [weather({ execute: slow }), convert({ execute: slow })],
        maxConcurrency: 1,
      })
      .result();
    assert.equal(result.stopReason, "done");
    assert.equal(most, 1);
  });

  test("a step is retried only before its first event", async () => {
    const c = client(mock, "openai", {
      maxRetries: 1,
      mockOptions: { fail: "500", scenario: "runner-retry" },
    });
    const result = await c.run({ messages: ask(QUESTION), tools: [weather(), convert()] }).result();
    assert.equal(result.stopReason, "done");
    assert.equal(mock.requests.length, 3); // a 500, then the two steps
  });

  test("bad run options are typed errors naming the field, and nothing is sent", async () => {
    const c = client(mock, "openai");
    const cases = [
      [{ maxSteps: 0 }, "maxSteps"],
      [{ maxSteps: 1.5 }, "maxSteps"],
      [{ maxConcurrency: 0 }, "maxConcurrency"],
      [{ approve: "yes" }, "approve"],
      [{ tools: [weather({ execute: "x" })] }, "tools[0].execute"],
      [{ tools: [weather({ needsApproval: "no" })] }, "tools[0].needsApproval"],
      [{ tools: [weather({ timeout: -1 })] }, "tools[0].timeout"],
      [{ tools: [weather({ readOnly: 1 })] }, "tools[0].readOnly"],
      [{ finalAnswer: "yes" }, "finalAnswer"],
      [{ approvals: { call_1: "true" } }, "approvals.call_1"],
      [{ approvals: ["call_1"] }, "approvals"],
    ];
    for (const [bad, path] of cases) {
      const run = c.run({ messages: ask(QUESTION), tools: [weather()], ...bad });
      await assert.rejects(run.result(), (e) => {
        assert.ok(e instanceof skyl.InvalidRequestError, `${path}: ${e}`);
        assert.equal(e.path, path);
        return true;
      });
    }
    // The core's request checks hold too.
    await assert.rejects(
      c.run({ messages: [{ role: "user", parts: [{ type: "nope" }] }] }).result(),
      skyl.InvalidRequestError,
    );
    assert.ok(await eventually(() => mock.requests.length === 0));
  });
});

describe("client.run with progress events", () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: each call's start and deltas pass through with their step, before its call runs`, async () => {
      const c = client(mock, provider);
      const { events, result } = await drain(
        c.run({
          messages: ask(QUESTION),
          tools: [weather(), convert()],
          partial: { tools: true },
        }),
      );
      assert.equal(result.stopReason, "done");
      const calls = events.filter((e) => e.type === "tool_call");
      assert.ok(calls.length >= 2);
      for (const { call, step } of calls) {
        const at = (type) => events.findIndex((e) => e.type === type && e.id === call.id);
        const start = events[at("tool_call_start")];
        assert.equal(start.step, step);
        assert.equal(start.name, call.name);
        const deltas = events.filter((e) => e.type === "tool_call_delta" && e.id === call.id);
        assert.ok(deltas.every((d) => d.step === step));
        assert.equal(deltas.map((d) => d.argumentsDelta).join(""), call.arguments);
        assert.deepEqual(deltas.at(-1).partial, JSON.parse(call.arguments));
        const called = events.findIndex((e) => e.type === "tool_call" && e.call.id === call.id);
        const ran = events.findIndex((e) => e.type === "tool_start" && e.call.name === call.name);
        assert.ok(at("tool_call_start") < called && called < ran, "it runs only once whole");
      }
    });
  }
});
