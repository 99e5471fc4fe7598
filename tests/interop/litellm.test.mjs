// LiteLLM's proxy as a real peer: the pinned `litellm[proxy]` from PyPI
// (scripts/litellm.sh installs it into .venv-litellm/), started on
// 127.0.0.1 with the models of litellm-config.yaml, and skyl's tool loop
// through it on each endpoint: `openaicompat` on /v1/chat/completions,
// `anthropic` on /v1/messages, `responses` on /v1/responses. The `mock-*`
// models are LiteLLM's own mocks (`mock_response`, `mock_tool_calls`);
// `relay` goes through LiteLLM to the project's mock provider, for a
// streamed tool call LiteLLM's mocks cannot make. Where LiteLLM is at fault,
// a comment says so and the test checks what skyl can. Nothing leaves
// loopback. Skips, with the script's reason, only where the install cannot
// run at all (exit status 77).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { skyl, useMock, collect, ask, answerCalls, TOOLS, sleep } from "../js/helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const CANNOT_INSTALL = 77;
const MOCK_TEXT = "Hello from LiteLLM's mock.";
const MOCK_TOOL_TEXT = "Checking the weather.";

let skipReason = null;
let proxy = null;
const mock = useMock();

/** Runs a command; resolves with { code, stdout, stderr } (stderr is also shown as it comes). */
function run(cmd, args, { timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    // The whole group: pip and its children too.
    const timer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (signal) reject(new Error(`${cmd} ${args.join(" ")}: ${signal} after ${timeoutMs} ms`));
      else resolve({ code, stdout, stderr });
    });
  });
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts `litellm` in its own process group; resolves once /health/liveliness answers. */
async function startLiteLLM(bin, { upstream, timeoutMs = 120000 }) {
  const port = await freePort();
  const key = `sk-skyl-interop-${crypto.randomBytes(16).toString("hex")}`;
  const config = path.join(here, "litellm-config.yaml");
  const proc = spawn(bin, ["--config", config, "--host", "127.0.0.1", "--port", String(port)], {
    cwd: here,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: "C.UTF-8",
      LITELLM_MASTER_KEY: key,
      SKYL_MOCK_PROVIDER: upstream,
      LITELLM_LOG: "ERROR",
      // No telemetry (it is opt-in in this version; this is its veto) and
      // the model cost map from the package, not fetched at startup.
      LITELLM_TELEMETRY_DISABLED: "true",
      LITELLM_LOCAL_MODEL_COST_MAP: "True",
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
    },
  });
  let log = "";
  proc.stdout.on("data", (d) => {
    log += d;
  });
  proc.stderr.on("data", (d) => {
    log += d;
  });
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  const kill = (signal) => {
    try {
      process.kill(-proc.pid, signal);
    } catch {
      /* gone */
    }
  };
  // Also when this process ends early: a crash, or node --test interrupted.
  const onExit = () => kill("SIGKILL");
  const onSignal = (signal) => {
    kill("SIGKILL");
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  };
  process.on("exit", onExit);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const stop = async () => {
    kill("SIGTERM");
    const gone = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
    if (!gone) kill("SIGKILL");
    process.off("exit", onExit);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    try {
      const r = await fetch(`${url}/health/liveliness`, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return { url, key, stop, log: () => log, startMs: Date.now() - started };
    } catch {
      /* not yet */
    }
    if (proc.exitCode !== null || proc.signalCode !== null || Date.now() - started > timeoutMs) {
      await stop();
      throw new Error(`LiteLLM did not start in ${Date.now() - started} ms:\n${log}`);
    }
    await sleep(250);
  }
}

before(
  async () => {
    const install = await run("bash", ["scripts/litellm.sh"], { timeoutMs: 15 * 60000 });
    if (install.code === CANNOT_INSTALL) {
      skipReason = install.stderr.trim().split("\n").at(-1);
      return;
    }
    assert.equal(install.code, 0, `scripts/litellm.sh failed:\n${install.stderr}`);
    const bin = install.stdout.trim().split("\n").at(-1);
    await mock.ready();
    proxy = await startLiteLLM(bin, { upstream: `${mock.url}/v1` });
    process.stderr.write(`LiteLLM answered after ${proxy.startMs} ms at ${proxy.url}\n`);
  },
  { timeout: 20 * 60000 },
);

after(async () => {
  await proxy?.stop();
});

/** A test that skips with the install's reason where LiteLLM cannot be installed. */
function it(name, fn) {
  test(name, { timeout: 60000 }, async (t) => {
    if (skipReason) {
      t.skip(skipReason);
      return;
    }
    try {
      await fn(t);
    } catch (err) {
      err.message += `\n--- LiteLLM's log (tail) ---\n${(proxy?.log() ?? "").slice(-4000)}`;
      throw err;
    }
  });
}

/**
 * A client through the proxy, default retries on, counting the HTTP requests
 * it makes and the content-type of each answer.
 */
function through(provider, model, options = {}) {
  const seen = [];
  const client = new skyl.Client({
    provider,
    model,
    apiKey: proxy.key,
    // skyl appends /chat/completions and /responses to a base URL with the
    // version, /v1/messages to the root.
    baseURL: provider === "anthropic" ? proxy.url : `${proxy.url}/v1`,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      seen.push({ url, status: res.status, type: res.headers.get("content-type") });
      return res;
    },
    ...options,
  });
  return { client, seen };
}

const texts = (events) =>
  events
    .filter((e) => e.type === "text")
    .map((e) => e.text)
    .join("");

// ------------------------------------------------ openaicompat, /v1/chat/completions

it("openaicompat: complete() with LiteLLM's text mock", async () => {
  const { client, seen } = through("openaicompat", "mock-text");
  const r = await client.complete({ messages: ask("Say hello.") });
  assert.equal(r.text, MOCK_TEXT);
  assert.equal(r.finishReason, "stop");
  assert.equal(r.model, "mock-text");
  assert.ok(r.usage.output > 0, JSON.stringify(r.usage));
  assert.equal(seen.length, 1);
  assert.match(seen[0].url, /\/v1\/chat\/completions$/);
});

it("openaicompat: stream() with LiteLLM's text mock, usage included", async () => {
  const { client, seen } = through("openaicompat", "mock-text", { includeUsage: true });
  const { events, response, error } = await collect(client.stream({ messages: ask("Say hello.") }));
  assert.ifError(error);
  assert.match(seen[0].type, /^text\/event-stream/);
  // LiteLLM's mock streams three characters a chunk.
  assert.ok(events.filter((e) => e.type === "text").length > 3);
  assert.equal(texts(events), MOCK_TEXT);
  assert.equal(response.text, MOCK_TEXT);
  assert.equal(response.finishReason, "stop");
  assert.ok(response.usage.output > 0, JSON.stringify(response.usage));
  assert.equal(events.at(-1).type, "finish");
  assert.equal(seen.length, 1);
});

it("openaicompat: complete() tool loop with LiteLLM's mock_tool_calls", async () => {
  const { client, seen } = through("openaicompat", "mock-tool");
  const messages = ask("What is the weather in Paris?");
  const first = await client.complete({ messages, tools: TOOLS });
  assert.equal(first.toolCalls.length, 1);
  assert.equal(first.toolCalls[0].id, "call_litellm_mock_1");
  assert.equal(first.toolCalls[0].name, "get_weather");
  assert.deepEqual(JSON.parse(first.toolCalls[0].arguments), { city: "Paris" });
  assert.equal(first.text, MOCK_TOOL_TEXT);
  // LiteLLM's fault: its mock answers a tool call with finish_reason "stop"
  // (`{"finish_reason":"stop",...,"tool_calls":[...]}`), where OpenAI says
  // "tool_calls". skyl reports what came; the call is there either way.
  assert.equal(first.rawFinishReason, "stop");

  // The second turn: the call and its result, replayed through JSON, to the
  // text mock. LiteLLM validates the history before it answers.
  const history = [...messages];
  answerCalls(history, first, () => ({ temp: 21 }));
  const final = await client.complete({ model: "mock-text", messages: history, tools: TOOLS });
  assert.equal(final.text, MOCK_TEXT);
  assert.equal(final.finishReason, "stop");
  assert.deepEqual(
    seen.map((s) => s.status),
    [200, 200],
  );
});

it("openaicompat: stream() with mock_tool_calls (LiteLLM's streamed mock drops the call)", async () => {
  // LiteLLM's fault: its streamed mock (mock_completion_streaming_obj) sends
  // only mock_response's text, in three-character chunks, then
  // finish_reason "stop": mock_tool_calls are not streamed. skyl must decode
  // that as the plain text answer it is, with no call and no error.
  const { client, seen } = through("openaicompat", "mock-tool");
  const { events, response, error } = await collect(
    client.stream({ messages: ask("What is the weather in Paris?"), tools: TOOLS }),
  );
  assert.ifError(error);
  assert.equal(texts(events), MOCK_TOOL_TEXT);
  assert.equal(events.filter((e) => e.type === "tool_call").length, 0);
  assert.deepEqual(response.toolCalls, []);
  assert.equal(response.incompleteToolCalls?.length ?? 0, 0);
  assert.equal(response.finishReason, "stop");
  assert.equal(seen.length, 1);
});

/**
 * skyl's streamed tool loop with `provider` through LiteLLM's `relay` model
 * to the project's mock: the first turn streams one get_weather call for
 * Paris, once whole, the second answers from the result, and the upstream
 * got the call and its result, relayed by LiteLLM. `checkFirst(first,
 * seen)` checks what the endpoint adds to the first turn.
 */
async function relayLoop(provider, checkFirst = () => {}) {
  mock.reset();
  const { client, seen } = through(provider, "relay");
  const messages = ask("What is the weather in Paris?");
  const first = await collect(client.stream({ messages, tools: TOOLS }));
  assert.ifError(first.error);
  checkFirst(first, seen);
  const calls = first.events.filter((e) => e.type === "tool_call");
  assert.equal(calls.length, 1, "one tool_call event, once whole");
  assert.equal(calls[0].call.name, "get_weather");
  assert.deepEqual(JSON.parse(calls[0].call.arguments), { city: "Paris" });
  assert.equal(first.response.finishReason, "tool_calls");
  assert.equal(first.response.text, "Let me look that up.");

  const history = [...messages];
  answerCalls(history, first.response, () => ({ temp: 21 }));
  const final = await collect(client.stream({ messages: history, tools: TOOLS }));
  assert.ifError(final.error);
  // The upstream mock answers from the result it was relayed.
  assert.equal(final.response.text, "It is 21 °C in Paris.");
  assert.equal(final.response.finishReason, "stop");
  assert.equal(seen.length, 2);

  // The upstream got the call and its result, relayed by LiteLLM.
  const sent = mock.requests.filter((r) => r.path === "/v1/chat/completions").at(-1).body;
  const tool = sent.messages.find((m) => m.role === "tool");
  assert.equal(tool.tool_call_id, calls[0].call.id);
  assert.match(String(tool.content), /temp/);
}

it("openaicompat: streamed tool loop through LiteLLM to an upstream server", () =>
  relayLoop("openaicompat"));

// ------------------------------------------------ anthropic, /v1/messages

it("anthropic: stream() answered by one whole message finishes normally, not retried", async () => {
  // LiteLLM's fault: asked for a stream (`"stream": true`) on /v1/messages,
  // its mock answers with one whole Messages JSON body (content-type
  // application/json, no SSE framing). skyl decodes it as that message; it
  // once failed with StreamEndedEarlyError after two retries.
  const { client, seen } = through("anthropic", "mock-text");
  const { events, response, error } = await collect(client.stream({ messages: ask("Say hello.") }));
  assert.ifError(error);
  assert.equal(seen.length, 1, "one request: not retried (maxRetries is the default, 2)");
  assert.equal(seen[0].status, 200);
  // If an upgrade makes LiteLLM stream here, this case no longer covers the
  // unframed body: keep it on a LiteLLM that answers this way.
  assert.match(seen[0].type, /^application\/json/);
  assert.equal(texts(events), MOCK_TEXT);
  assert.equal(events.at(-1).type, "finish");
  assert.equal(response.text, MOCK_TEXT);
  assert.equal(response.finishReason, "stop");
  assert.equal(response.rawFinishReason, "end_turn");
  // The body's own id and usage: LiteLLM's canned mock message.
  assert.equal(response.id, "msg_013Zva2CMHLNnXjNJJKqJ2EF");
  assert.equal(response.usage.input, 2095);
  assert.equal(response.usage.output, 503);
});

it("anthropic: complete() with LiteLLM's text mock", async () => {
  const { client, seen } = through("anthropic", "mock-text");
  const r = await client.complete({ messages: ask("Say hello.") });
  assert.equal(r.text, MOCK_TEXT);
  assert.equal(r.finishReason, "stop");
  assert.equal(seen.length, 1);
  assert.match(seen[0].url, /\/v1\/messages$/);
});

it("anthropic: mock_tool_calls on /v1/messages (LiteLLM's mock ignores them)", async () => {
  // LiteLLM's fault: its /v1/messages mock builds a text-only message from
  // mock_response and ignores mock_tool_calls, streamed or not. skyl gets a
  // plain text answer and must report it as one, with no call.
  const { client } = through("anthropic", "mock-tool");
  const done = await client.complete({ messages: ask("Weather in Paris?"), tools: TOOLS });
  const streamed = await collect(
    client.stream({ messages: ask("Weather in Paris?"), tools: TOOLS }),
  );
  assert.ifError(streamed.error);
  for (const r of [done, streamed.response]) {
    assert.equal(r.text, MOCK_TOOL_TEXT);
    assert.deepEqual(r.toolCalls, []);
    assert.equal(r.finishReason, "stop");
  }
});

it("anthropic: streamed tool loop through LiteLLM's translation to an upstream server", () =>
  // LiteLLM turns the Messages request into a Chat Completions one for the
  // upstream, and the upstream's stream into Anthropic's SSE events.
  relayLoop("anthropic", (first, seen) => {
    assert.match(seen[0].type, /^text\/event-stream/);
    assert.equal(first.response.rawFinishReason, "tool_use");
  }));

// ------------------------------------------------ responses, /v1/responses

it("responses: complete() with LiteLLM's text mock", async () => {
  const { client, seen } = through("responses", "mock-text");
  const r = await client.complete({ messages: ask("Say hello.") });
  assert.equal(r.text, MOCK_TEXT);
  assert.equal(r.finishReason, "stop");
  assert.equal(r.rawFinishReason, "completed");
  assert.ok(r.usage.output > 0, JSON.stringify(r.usage));
  assert.equal(seen.length, 1);
  assert.match(seen[0].url, /\/v1\/responses$/);
});

it("responses: stream() with LiteLLM's mock is LiteLLM's 500, a typed error", async () => {
  // LiteLLM's fault: its /v1/responses mock builds a whole response object
  // and its stream handler then iterates it ("'ResponsesAPIResponse' object
  // has no attribute '__aiter__'" in its log): it answers HTTP 500 with an
  // SSE-framed error body, `data: {"error": {"message": "Error processing
  // stream start", ...}}`. Its non-streamed mock also ignores
  // mock_tool_calls. skyl must report the 500 as InternalServerError,
  // retryable, having handed out nothing.
  const { client, seen } = through("responses", "mock-text", { maxRetries: 0 });
  const { events, error } = await collect(client.stream({ messages: ask("Say hello.") }));
  assert.ok(error instanceof skyl.InternalServerError, `${error?.name}: ${error?.message}`);
  assert.equal(error.status, 500);
  assert.equal(error.retryable, true);
  assert.match(error.message, /Error processing stream start/);
  assert.deepEqual(events, []);
  assert.equal(seen.length, 1);
});
