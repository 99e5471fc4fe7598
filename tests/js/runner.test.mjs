// client.run, the tool loop, against the mock provider in every wire
// format: each behaviour of issue 26 (the runner's decisions are the
// core's, src/runner.rs; these check that the JS half carries them out).
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { useMock, client, ask, PROVIDERS, sleep } from "./helpers.mjs";
import { QUESTION, weather, convert, drain, results, callsOf } from "./runner-tools.mjs";

const mock = useMock();
beforeEach(() => mock.reset());

describe("client.run", () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: runs the tools and ends in the answer, results in call order`, async () => {
      const c = client(mock, provider);
      // The first call's tool is the slower one: it ends last.
      const run = c.run({
        messages: ask(QUESTION),
        tools: [
          weather({
            execute: async ({ city }) => {
              await sleep(60);
              return { city, tempC: 21 };
            },
          }),
          convert(),
        ],
      });
      const { events, result, error } = await drain(run);
      assert.ifError(error);
      assert.equal(result.stopReason, "done");
      assert.deepEqual(
        result.messages.map((m) => m.role),
        ["assistant", "tool", "assistant"],
      );
      assert.equal(result.steps.length, 2);
      assert.deepEqual(result.response, result.steps[1]);
      assert.match(result.response.text, /21 °C in Kampala/);
      assert.match(result.response.text, /18\.6/);
      // Completion order in the events, call order in the messages.
      const done = events.filter((e) => e.type === "tool_result").map((e) => e.call.name);
      assert.deepEqual(done, ["convert_units", "get_weather"]);
      const calls = callsOf(result.messages);
      assert.deepEqual(
        results(result.messages).map(([id]) => id),
        calls.map((p) => p.id),
      );
      assert.deepEqual(JSON.parse(results(result.messages)[0][1]), { city: "Kampala", tempC: 21 });
      // Every event of a step carries it; usage is summed over the steps.
      assert.ok(
        events.every((e) => e.step === 1 || e.step === 2),
        "each event has its step",
      );
      assert.deepEqual(
        events.filter((e) => e.type === "step_start").map((e) => e.step),
        [1, 2],
      );
      const input = result.steps.reduce((n, s) => n + s.usage.input, 0);
      assert.equal(result.usage.input, input);
      // The history replays: the second request carried the first turn.
      assert.equal(mock.requests.length, 2);
      // The results are in the messages as the app would store them.
      const again = JSON.parse(JSON.stringify(result.messages));
      assert.deepEqual(again, result.messages);
    });

    test(`${provider}: the next request is the same bytes whatever the tools' latencies`, async () => {
      const bodies = [];
      for (const [slow, fast] of [
        [60, 0],
        [0, 60],
      ]) {
        mock.reset();
        const run = client(mock, provider).run({
          messages: ask(QUESTION),
          tools: [
            weather({
              execute: async ({ city }) => {
                await sleep(slow);
                return { city, tempC: 21 };
              },
            }),
            convert({
              execute: async () => {
                await sleep(fast);
                return { value: 18.64 };
              },
            }),
          ],
        });
        await run.result();
        bodies.push(JSON.stringify(mock.requests[1].body));
      }
      assert.equal(bodies[0], bodies[1]);
    });

    test(`${provider}: a turn cut off at the output limit runs none of its calls`, async () => {
      let ran = 0;
      const c = client(mock, provider, { mockOptions: { cut_off: 1 } });
      const run = c.run({
        messages: ask(QUESTION),
        tools: [weather({ execute: () => ++ran }), convert({ execute: () => ++ran })],
      });
      const { events, result, error } = await drain(run);
      assert.ifError(error);
      assert.equal(result.stopReason, "truncated");
      assert.equal(ran, 0);
      assert.equal(result.response.finishReason, "length");
      assert.equal(events.filter((e) => e.type === "tool_start").length, 0);
      // Each whole call of the turn still gets a result, so the history
      // replays (calls the limit cut are incomplete: not in the message).
      const r = results(result.messages);
      assert.deepEqual(
        r.map(([id]) => id),
        callsOf(result.messages).map((p) => p.id),
      );
      assert.ok(r.every(([, text, isError]) => isError && /cut off \(length\)/.test(text)));
      assert.equal(mock.requests.length, 1, "no request after a cut-off turn");
    });
  }

  test("a read-only tool starts while the turn streams; others once it has finished", async () => {
    const c = client(mock, "anthropic", { mockOptions: { chunk: 40, delay: 2 } });
    const run = c.run({
      messages: ask(QUESTION),
      tools: [weather({ readOnly: true }), convert()],
    });
    const { events, error } = await drain(run);
    assert.ifError(error);
    const at = (pred) => events.findIndex(pred);
    const finish = at((e) => e.type === "finish" && e.step === 1);
    const early = at((e) => e.type === "tool_start" && e.call.name === "get_weather");
    const late = at((e) => e.type === "tool_start" && e.call.name === "convert_units");
    assert.ok(early >= 0 && early < finish, "the read-only tool started before the turn ended");
    assert.ok(late > finish, "the other tool started after it");
  });

  test("each call's approval predicate is asked once", async () => {
    const asked = [];
    const needsApproval = (_args, call) => {
      asked.push(call.id);
      return false;
    };
    const c = client(mock, "anthropic", { mockOptions: { chunk: 40, delay: 2 } });
    const { result, error } = await drain(
      c.run({
        messages: ask(QUESTION),
        tools: [weather({ readOnly: true, needsApproval }), convert({ needsApproval })],
      }),
    );
    assert.ifError(error);
    assert.equal(result.stopReason, "done");
    assert.deepEqual(
      asked,
      callsOf(result.messages).map((p) => p.id),
    );
  });

  test("a cut-off turn discards a read-only tool's early result", async () => {
    let ran = 0;
    // Gemini hands out its whole calls before the finish that cuts the
    // turn off: the read-only one starts early.
    const c = client(mock, "gemini", { mockOptions: { cut_off: 1 } });
    const { result, error } = await drain(
      c.run({
        messages: ask(QUESTION),
        tools: [
          weather({
            readOnly: true,
            execute: () => {
              ran++;
              return "sunny";
            },
          }),
          convert(),
        ],
      }),
    );
    assert.ifError(error);
    assert.equal(result.stopReason, "truncated");
    assert.equal(ran, 1, "it started early");
    assert.ok(!results(result.messages).some(([, text]) => text === "sunny"));
  });

  test("bad calls become error results the model reads, and the loop goes on", async () => {
    const c = client(mock, "openai");
    const secret = "sk-test-key-0001";
    const run = c.run({
      messages: ask(QUESTION),
      tools: [
        // The model sends a string city: the schema asks for a number.
        weather({
          parameters: {
            type: "object",
            properties: { city: { type: "number" } },
            required: ["city"],
          },
        }),
        convert({
          execute: () => {
            throw new Error(`unit table offline (key ${secret})`);
          },
        }),
      ],
    });
    const { result, error } = await drain(run);
    assert.ifError(error);
    assert.equal(result.stopReason, "done");
    const [bad, threw] = results(result.messages);
    assert.equal(bad[2], true);
    assert.match(bad[1], /invalid arguments/);
    assert.match(bad[1], /city/);
    assert.equal(threw[2], true);
    assert.match(threw[1], /unit table offline/);
    assert.ok(!threw[1].includes(secret), "the key is scrubbed from a tool's message");
    assert.ok(!threw[1].includes("    at "), "no stack");
  });

  test("a result that is not JSON is an error result, and the run goes on", async () => {
    const c = client(mock, "anthropic");
    const cyclic = {};
    cyclic.self = cyclic;
    const run = c.run({
      messages: ask(QUESTION),
      tools: [weather({ execute: () => ({ big: 1n }) }), convert({ execute: () => cyclic })],
    });
    const { result, error } = await drain(run);
    assert.ifError(error);
    assert.equal(result.stopReason, "done");
    for (const [, text, isError] of results(result.messages)) {
      assert.equal(isError, true);
      assert.match(text, /the tool's result is not JSON/);
    }
  });

  test("a tool still running when the run ends is aborted, and a queued one never starts", async () => {
    const signals = [];
    const started = [];
    const slow =
      (name) =>
      (_, { signal }) => {
        started.push(name);
        signals.push(signal);
        return new Promise(() => {});
      };
    // Gemini hands out its whole calls before the finish that cuts the
    // turn off: both are read-only, so the first starts early.
    const c = client(mock, "gemini", { mockOptions: { cut_off: 1 } });
    const result = await c
      .run({
        messages: ask(QUESTION),
        tools: [
          weather({ readOnly: true, execute: slow("get_weather") }),
          convert({ readOnly: true, execute: slow("convert_units") }),
        ],
        maxConcurrency: 1,
      })
      .result();
    assert.equal(result.stopReason, "truncated");
    assert.deepEqual(started, ["get_weather"]);
    assert.equal(signals[0].aborted, true);
    await sleep(20);
    assert.deepEqual(started, ["get_weather"], "the queued call never starts");
  });

  test("a pause for approval waits for the calls already running, so none runs twice", async () => {
    let weatherRuns = 0;
    const c = client(mock, "responses");
    const tools = [
      weather({
        readOnly: true,
        execute: async ({ city }) => {
          weatherRuns++;
          await sleep(40);
          return { city, tempC: 21 };
        },
      }),
      convert({ needsApproval: true }),
    ];
    const first = await c.run({ messages: ask(QUESTION), tools }).result();
    assert.equal(first.stopReason, "approval_pending");
    assert.deepEqual(
      first.pending.map((p) => p.name),
      ["convert_units"],
    );
    // The weather's result is in the history: the resumed run does not run it again.
    assert.equal(results(first.messages).length, 1);
    const history = [...ask(QUESTION), ...first.messages];
    const resumed = await c
      .run({ messages: history, tools, approvals: { [first.pending[0].id]: true } })
      .result();
    assert.equal(resumed.stopReason, "done");
    assert.equal(weatherRuns, 1);
  });

  test("an unknown tool's result names the available tools", async () => {
    // The history asks for a tool the run does not declare.
    const messages = [
      ...ask("hi"),
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "call_x", name: "launch", arguments: "{}" }],
      },
    ];
    const c = client(mock, "openai");
    const run = c.run({ messages, tools: [weather(), convert()] });
    const { result, error } = await drain(run);
    assert.ifError(error);
    const [r] = results(result.messages);
    assert.equal(r[0], "call_x");
    assert.match(r[1], /no tool "launch"; the tools are: get_weather, convert_units/);
  });

  test("a tool timeout becomes an error result and aborts the tool's signal", async () => {
    let signal;
    const c = client(mock, "gemini");
    const run = c.run({
      messages: ask("What is the weather in Kampala?"),
      tools: [
        weather({
          timeout: 30,
          execute: (_, ctx) => {
            signal = ctx.signal;
            return new Promise(() => {});
          },
        }),
      ],
    });
    const { result, error } = await drain(run);
    assert.ifError(error);
    const [r] = results(result.messages);
    assert.equal(r[2], true);
    assert.match(r[1], /timed out after 30 ms/);
    assert.equal(signal.aborted, true);
  });
});
