// Reliability through the real JS transport (fetch + ReadableStream from the
// loopback mock): chunk boundaries, fault injection at every frame boundary
// and inside frames, resource bounds, the driver policy (retries, timeouts,
// broken connections: decided by the core, src/policy.rs) with key safety
// on every error path, and objects built from hostile provider JSON.
// Bounded for the test command; scripts/reliability runs the full sizes and
// reports the figures.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { skyl, useMock, client, collect, ask } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";
import { prng } from "../../bench/content.mjs";

const mock = useMock();

const streamCases = listCases().filter((id) => readCase(id).stream);
const strip = (events) => events;

/** A fetch that hands the body to skyl in the chunk sizes `next()` gives. */
function rechunking(next) {
  return async (url, init) => {
    const res = await fetch(url, init);
    const reader = res.body.getReader();
    let pending = new Uint8Array(0);
    const body = new ReadableStream({
      async pull(ctl) {
        while (pending.length === 0) {
          const { value, done } = await reader.read();
          if (done) return ctl.close();
          pending = value;
        }
        const n = Math.min(next(), pending.length);
        ctl.enqueue(pending.slice(0, n));
        pending = pending.subarray(n);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

async function run(id, options = {}) {
  const provider = id.split("/")[0];
  return collect(
    client(mock, provider, {
      maxRetries: 0,
      ...options,
      mockOptions: { fixture: id, ...options.mockOptions },
    }).stream({ messages: ask("hi") }),
  );
}

const outcome = (r) =>
  r.error ? { error: r.error.code, partial: r.error.partial } : { response: r.response };

describe("chunk boundaries through fetch + ReadableStream", () => {
  for (const id of streamCases) {
    test(id, async () => {
      const whole = await run(id);
      const oneByte = await run(id, { fetch: rechunking(() => 1) });
      assert.deepEqual(strip(oneByte.events), strip(whole.events), "one byte per chunk");
      assert.deepEqual(outcome(oneByte), outcome(whole));
      for (const seed of [1, 2, 3]) {
        const rand = prng(seed);
        const random = await run(id, { fetch: rechunking(() => 1 + Math.floor(rand() * 300)) });
        assert.deepEqual(
          strip(random.events),
          strip(whole.events),
          `random chunking, seed ${seed}`,
        );
        assert.deepEqual(outcome(random), outcome(whole));
      }
    });
  }
});

// Frame boundaries of a body: the offsets just after each blank line.
function boundaries(body) {
  const text = body.toString("latin1");
  const out = [];
  const re = /\r\n\r\n|\n\n|\r\r/g;
  for (const m of text.matchAll(re)) out.push(m.index + m[0].length);
  return out;
}

export const faultFigures = { runs: 0, cases: 0 };

describe("fault injection: a disconnect at every frame boundary and inside frames", () => {
  // Streams with calls that succeed whole (a recorded stream that itself
  // ends early, as two Responses cases do, has no complete run to cut).
  const toolStreams = streamCases.filter((id) => {
    const { expected } = readCase(id);
    return expected.tool_calls.length > 0 && !expected.error;
  });
  for (const id of toolStreams) {
    test(id, async () => {
      const { body } = readCase(id);
      const full = await run(id);
      assert.ifError(full.error);
      const wholeCalls = full.events
        .filter((e) => e.type === "tool_call")
        .map((e) => JSON.stringify(e.call));
      const bounds = boundaries(body);
      // Every boundary and the middle of every frame, thinned to 150 cuts
      // for the longest streams.
      let cuts = [];
      bounds.forEach((b, i) => {
        cuts.push(b, Math.floor(((bounds[i - 1] ?? 0) + b) / 2));
      });
      cuts = [...new Set(cuts)].filter((c) => c > 0 && c < body.length).sort((a, b) => a - b);
      const step = Math.max(1, Math.ceil(cuts.length / 150));
      cuts = cuts.filter((_, i) => i % step === 0);
      for (const cut of cuts) {
        const r = await run(id, { mockOptions: { disconnect_after: cut } });
        faultFigures.runs++;
        // The content events before the fault are exactly a prefix of the
        // full run's. (usage/finish may come early: a cut after the
        // terminal frame, e.g. between finish_reason and the usage chunk,
        // or after the first message of a recorded multi-message body, is
        // a complete stream.)
        const content = (evs) => evs.filter((e) => e.type !== "usage" && e.type !== "finish");
        const got = content(r.events);
        assert.deepEqual(
          got,
          content(full.events).slice(0, got.length),
          `cut at ${cut}: not a prefix`,
        );
        for (const ev of r.events.filter((e) => e.type === "tool_call")) {
          assert.ok(
            wholeCalls.includes(JSON.stringify(ev.call)),
            `cut at ${cut}: a tool call that is not whole`,
          );
        }
        if (r.error) {
          assert.ok(
            r.error instanceof skyl.ConnectionError ||
              r.error instanceof skyl.StreamEndedEarlyError,
            `cut at ${cut}: ${r.error}`,
          );
          assert.ok(r.error.partial, `cut at ${cut}: no partial response`);
          assert.equal(r.error.eventsEmitted, r.events.length > 0);
          for (const c of r.error.partial.toolCalls)
            assert.ok(
              wholeCalls.includes(JSON.stringify(c)),
              `cut at ${cut}: a partial call in the partial response`,
            );
        } else {
          // A success is consistent with what was handed out.
          const fin = r.events.at(-1);
          assert.equal(fin.type, "finish", `cut at ${cut}: success without a finish event`);
          assert.deepEqual(fin.response, r.response);
          assert.deepEqual(
            r.response.toolCalls,
            r.events.filter((e) => e.type === "tool_call").map((e) => e.call),
          );
          assert.equal(
            r.response.text,
            r.events
              .filter((e) => e.type === "text")
              .map((e) => e.text)
              .join(""),
          );
          assert.ok(r.response.rawFinishReason, `cut at ${cut}: success without a finish reason`);
        }
      }
      faultFigures.cases++;
    });
  }
  after(() => {
    fs.mkdirSync("target", { recursive: true });
    fs.writeFileSync("target/fault-figures.json", JSON.stringify(faultFigures));
  });
});

describe("resource bounds", () => {
  test("one event larger than the limit is a clear error, and the client still works", async () => {
    const c = client(mock, "openai", {
      maxRetries: 0,
      mockOptions: { huge_event: 40 * 1024 * 1024 },
    });
    const { error } = await collect(c.stream({ messages: ask("hi") }));
    assert.ok(error instanceof skyl.MalformedStreamError, String(error));
    assert.equal(error.code, "event_too_large");
    assert.match(error.message, /33554432 bytes/);
    const ok = await client(mock, "openai").complete({ messages: ask("hi") });
    assert.equal(ok.finishReason, "stop", "the same instance answers the next call");
  });

  test("maxEventBytes sets the limit for the whole chain, and is checked", async () => {
    const c = client(mock, "openai", {
      maxRetries: 0,
      maxEventBytes: 1024 * 1024,
      mockOptions: { huge_event: 2 * 1024 * 1024 },
    });
    const { error } = await collect(c.stream({ messages: ask("hi") }));
    assert.equal(error.code, "event_too_large");
    assert.match(error.message, /1048576 bytes/);
    // Under the limit, the same event is read (and skipped: it is not JSON).
    const roomy = client(mock, "openai", {
      maxRetries: 0,
      maxEventBytes: 4 * 1024 * 1024,
      mockOptions: { huge_event: 2 * 1024 * 1024, tiny_events: 1 },
    });
    const read = await collect(roomy.stream({ messages: ask("hi") }));
    assert.ifError(read.error);
    for (const [options, path] of [
      [{ maxEventBytes: 0 }, "maxEventBytes"],
      [{ maxEventBytes: 1.5 }, "maxEventBytes"],
      [{ maxEventBytes: "1MB" }, "maxEventBytes"],
      [
        { fallback: [{ provider: "openai", apiKey: "k", maxEventBytes: 9 }] },
        "fallback[0].maxEventBytes",
      ],
    ]) {
      assert.throws(
        () => client(mock, "openai", options),
        (e) => e instanceof skyl.InvalidRequestError && e.path === path,
        path,
      );
    }
  });

  test("an endless stream of comments ends at the total timeout", async () => {
    const c = client(mock, "openai", {
      maxRetries: 0,
      timeout: { total: 700, idle: 300 },
      mockOptions: { comments_ms: 5000 },
    });
    const started = Date.now();
    const { events, error } = await collect(c.stream({ messages: ask("hi") }));
    assert.ok(error instanceof skyl.TimeoutError, String(error));
    assert.match(error.message, /total/);
    assert.equal(events.length, 0);
    assert.ok(Date.now() - started < 2500);
  });

  test("a body of 100,000 tiny events", async () => {
    const c = client(mock, "openai", { maxRetries: 0, mockOptions: { tiny_events: 100_000 } });
    let texts = 0;
    const stream = c.stream({ messages: ask("hi") });
    for await (const ev of stream) if (ev.type === "text") texts++;
    const r = await stream.response();
    assert.equal(texts, 100_000);
    assert.equal(r.text.length, 100_000);
  });
});

const KEY = "sk-live-RECOGNISABLE-7q2w9e8r";
/** Everything an error shows: text, stack, JSON, every property, and its causes'. */
const everything = (e) => {
  const seen = [];
  for (let x = e; x; x = x.cause)
    seen.push(
      String(x),
      x.stack ?? "",
      JSON.stringify(x),
      JSON.stringify(Object.getOwnPropertyDescriptors(x)),
    );
  return seen.join("\n");
};

describe("the driver policy, through fetch and timers", () => {
  const utf8 = new TextEncoder();
  const data = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const HI = data({ id: "c", model: "m", choices: [{ index: 0, delta: { content: "Hi" } }] });
  const END = data({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  const INBAND = data({ error: { message: "busy", type: "server_error" } });
  // What the transport throws echoes the key: it must not reach the error.
  const broken = () => new TypeError(`terminated (key ${KEY})`);

  /**
   * A fetch answering attempt n as `plans[n]` (the last repeats): `throw`,
   * `hang` (until aborted), `{ status, headers }`, or frames then `stall`
   * (no more data), `break` (the connection fails) or the end.
   */
  function planned(plans, log) {
    return (_url, init) => {
      const plan = plans[Math.min(log.length, plans.length - 1)];
      log.push(Date.now());
      if (plan === "throw") return Promise.reject(new TypeError(`fetch failed for ${KEY}`));
      if (plan === "hang")
        return new Promise((_, reject) =>
          init.signal.addEventListener("abort", () => reject(init.signal.reason)),
        );
      if (plan.status) return Promise.resolve(new Response("{}", plan));
      const chunks = [...plan];
      const body = new ReadableStream(
        {
          pull(c) {
            const next = chunks.shift();
            if (next === undefined) return c.close();
            if (next === "stall") return new Promise(() => {});
            if (next === "break") return c.error(broken());
            if (next === "junk") return c.enqueue(42); // a chunk that is not bytes
            c.enqueue(utf8.encode(next));
          },
        },
        { highWaterMark: 0 },
      );
      return Promise.resolve(new Response(body, { status: 200 }));
    };
  }

  // [name, per-attempt plans, timeout, what happens: the attempts made, and
  // the error's class, retryable, eventsEmitted, or the text of a success]
  const cases = [
    ["stall before any event", [["stall"]], { idle: 80 }, [2, "TimeoutError", true, false]],
    ["stall after an event", [[HI, "stall"]], { idle: 80 }, [1, "TimeoutError", false, true]],
    ["stall after the terminal frame", [[HI, END, "stall"]], { idle: 80 }, [1, "Hi"]],
    ["break before any event", [["break"]], {}, [2, "ConnectionError", true, false]],
    ["break after an event", [[HI, "break"]], {}, [1, "ConnectionError", false, true]],
    ["break after the terminal frame", [[HI, END, "break"]], {}, [1, "Hi"]],
    ["a chunk not bytes before any event", [["junk"]], {}, [2, "ConnectionError", true, false]],
    ["a chunk not bytes after an event", [[HI, "junk"]], {}, [1, "ConnectionError", false, true]],
    ["fetch throws", ["throw"], {}, [2, "ConnectionError", true, false]],
    ["no response", ["hang"], { firstByte: 80 }, [2, "TimeoutError", true, false]],
    ["the total timeout", ["hang"], { total: 150 }, [1, "TimeoutError", false, false]],
    ["in-band before any event, then fine", [[INBAND], [HI, END]], {}, [2, "Hi"]],
    ["in-band after an event", [[HI, INBAND]], {}, [1, "InternalServerError", false, true]],
    ["401", [{ status: 401 }], {}, [1, "AuthenticationError", false, false]],
    ["503, then fine", [{ status: 503 }, [HI, END]], {}, [2, "Hi"]],
  ];
  for (const [name, plans, timeout, [attempts, ...want]] of cases) {
    test(name, async () => {
      const log = [];
      const c = new skyl.Client({
        provider: "openai",
        model: "m",
        apiKey: KEY,
        fetch: planned(plans, log),
        maxRetries: 1,
        timeout,
      });
      const { events, error, response } = await collect(c.stream({ messages: ask("hi") }));
      assert.equal(log.length, attempts, `${name}: attempts`);
      if (want.length === 1) {
        assert.ifError(error);
        assert.equal(response.text, want[0]);
        return;
      }
      const [cls, retryable, eventsEmitted] = want;
      assert.ok(error instanceof skyl[cls], `${name}: ${error}`);
      assert.equal(error.name, cls);
      assert.equal(error.retryable, retryable, `${name}: retryable`);
      assert.equal(error.eventsEmitted, eventsEmitted, `${name}: eventsEmitted`);
      assert.equal(events.length > 0, eventsEmitted);
      if (eventsEmitted) assert.equal(error.partial?.text, "Hi", `${name}: partial`);
      assert.ok(!everything(error).includes(KEY), `${name}: the key leaked`);
    });
  }

  test("a retry-after given as an HTTP date is waited for", async () => {
    const log = [];
    // Two seconds ahead, to the second: a wait of 1 to 2 seconds.
    const date = new Date(Date.now() + 2000).toUTCString();
    const c = new skyl.Client({
      provider: "openai",
      model: "m",
      fetch: planned([{ status: 429, headers: { "retry-after": date } }, [HI, END]], log),
    });
    const { error, response } = await collect(c.stream({ messages: ask("hi") }));
    assert.ifError(error);
    assert.equal(response.text, "Hi");
    assert.equal(log.length, 2);
    assert.ok(log[1] - log[0] >= 900, `waited ${log[1] - log[0]} ms`);
  });
});

describe("secrets and hostile input", () => {
  test("the key appears in no error, on every error path", async () => {
    const opts = (extra) => ({ apiKey: KEY, maxRetries: 0, ...extra });
    const paths = {
      "401 echoed": () =>
        client(
          mock,
          "anthropic",
          opts({ mockOptions: { fail: "401", echo_key: 1, scenario: "secret-401" } }),
        ).complete({ messages: ask("hi") }),
      "429 echoed": () =>
        client(
          mock,
          "gemini",
          opts({ mockOptions: { fail: "429", echo_key: 1, scenario: "secret-429" } }),
        ).complete({ messages: ask("hi") }),
      network: () =>
        new skyl.Client({
          provider: "openai",
          model: "m",
          apiKey: KEY,
          baseURL: "http://127.0.0.1:9/v1",
          maxRetries: 0,
        }).complete({ messages: ask("hi") }),
      timeout: () =>
        client(
          mock,
          "openai",
          opts({ timeout: { firstByte: 50 }, mockOptions: { first_byte_delay: 400 } }),
        ).complete({ messages: ask("hi") }),
      abort: () =>
        client(mock, "openai", opts()).complete({
          messages: ask("hi"),
          signal: AbortSignal.abort(new Error(`abort ${KEY}`)),
        }),
      "in-band": async () => {
        const r = await collect(
          client(mock, "anthropic", opts({ mockOptions: { inband_error: "start" } })).stream({
            messages: ask("hi"),
          }),
        );
        throw r.error;
      },
      "ended early": async () => {
        const r = await collect(
          client(mock, "openai", opts({ mockOptions: { disconnect_after: 300 } })).stream({
            messages: ask("hi"),
          }),
        );
        throw r.error;
      },
      malformed: async () => {
        const r = await collect(
          client(
            mock,
            "anthropic",
            opts({ mockOptions: { fixture: "anthropic/spliced-message-start.stream" } }),
          ).stream({ messages: ask("hi") }),
        );
        throw r.error;
      },
      "invalid request": () =>
        client(mock, "openai", opts()).complete({ messages: ask("hi"), tools: [{ name: "" }] }),
      "too large": async () => {
        const r = await collect(
          client(mock, "openai", opts({ mockOptions: { huge_event: 20 * 1024 * 1024 } })).stream({
            messages: ask("hi"),
          }),
        );
        throw r.error;
      },
    };
    for (const [name, path] of Object.entries(paths)) {
      const err = await path().then(
        () => null,
        (e) => e,
      );
      assert.ok(err instanceof skyl.SkylError, `${name}: ${err}`);
      assert.ok(!everything(err).includes(KEY), `${name}: the key leaked:\n${everything(err)}`);
    }
  });

  test("__proto__ keys in provider frames cannot pollute prototypes", async () => {
    const frame = (o) => `data: ${JSON.stringify(o)}\n\n`;
    const body =
      [
        '{"__proto__":{"polluted":1},"choices":[{"index":0,"delta":{"content":"a","__proto__":{"polluted":2}}}]}',
        JSON.stringify({
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index: 0,
                    id: "c",
                    function: {
                      name: "f",
                      arguments:
                        '{"__proto__":{"polluted":3},"constructor":{"prototype":{"polluted":4}}}',
                    },
                  },
                ],
              },
              finish_reason: "tool_calls",
            },
          ],
          usage: JSON.parse('{"prompt_tokens":1,"__proto__":{"polluted":5}}'),
        }),
      ]
        .map((f) => `data: ${f}\n\n`)
        .join("") + "data: [DONE]\n\n";
    void frame;
    const { events, response } = await collect(skyl.decodeStream("openai", new Response(body)));
    assert.equal({}.polluted, undefined);
    assert.equal(Object.prototype.polluted, undefined);
    assert.equal(response.text, "a");
    assert.equal(Object.getPrototypeOf(response.usage.raw), Object.prototype);
    const call = events.find((e) => e.type === "tool_call").call;
    const args = JSON.parse(call.arguments);
    assert.equal(Object.getPrototypeOf(args), Object.prototype);
    assert.equal(args.polluted, undefined, "JSON.parse keeps __proto__ as an own key");
  });

  test("the package uses no eval or Function", () => {
    for (const f of fs.readdirSync("pkg").filter((f) => f.endsWith(".js"))) {
      const text = fs.readFileSync(`pkg/${f}`, "utf8");
      assert.ok(
        !/\beval\s*\(|\bnew\s+Function\b|\bFunction\s*\(/.test(text),
        `${f} uses eval or Function`,
      );
    }
  });
});
