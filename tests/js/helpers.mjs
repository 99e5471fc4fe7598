// Shared by the JS tests: the package under test and the mock provider.
import { ENTRIES } from "./fixtures.mjs";

const entry = process.env.SKYL_ENTRY ?? new URL("../../pkg/node.js", import.meta.url).href;
export const skyl = await import(entry);

export { useMock } from "./use-mock.mjs";
export { PROVIDERS, TOOLS } from "./fixtures.mjs";

/** The base URL a client of `provider` uses against the mock: /v1 for the OpenAI adapter's. */
export const baseURL = (mock, provider) =>
  ENTRIES.openai.includes(provider) ? `${mock.url}/v1` : mock.url;

export const ask = (text) => [{ role: "user", parts: [{ type: "text", text }] }];

/**
 * One step of a tool loop: appends the assistant's turn `response` to
 * `messages` (through JSON, as an app that stores its history would keep
 * it), then the answer to each of its calls: a tool result with what
 * `run(call)` returns, or a tool error where it throws. Returns what each
 * call gave (its result, or the error).
 */
export function answerCalls(messages, response, run) {
  messages.push(JSON.parse(JSON.stringify(response.message)));
  const results = [];
  for (const call of response.toolCalls) {
    try {
      const r = run(call);
      results.push(r);
      messages.push(skyl.toolResultMessage(call.id, r));
    } catch (e) {
      results.push(e);
      messages.push(skyl.toolErrorMessage(call.id, e));
    }
  }
  return results;
}

/** A client against the mock; `mock` options become x-mock-* headers. */
export function client(mock, provider, options = {}) {
  return new skyl.Client(against(mock, provider, options));
}

/** The options of a client (or of a fallback entry) against the mock. */
export function against(mock, provider, { mockOptions = {}, ...options } = {}) {
  const headers = {};
  for (const [k, v] of Object.entries(mockOptions))
    headers[`x-mock-${k.replace(/_/g, "-")}`] = String(v);
  return {
    provider,
    model: "mock-model",
    apiKey: "sk-test-key-0001",
    baseURL: baseURL(mock, provider),
    headers,
    ...options,
  };
}

/** Collects a stream: { events, response, error }. */
export async function collect(stream) {
  const events = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events, response: await stream.response() };
  } catch (error) {
    return { events, error };
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until `predicate()` holds (the server may see a close a moment later). */
export async function eventually(predicate, ms = 2000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return true;
    await sleep(10);
  }
  return predicate();
}
