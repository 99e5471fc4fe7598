// The app every runtime test of tests/pkg/ runs, in each runtime and
// browser build: a streamed tool loop against the mock provider for every
// provider the imported entry speaks (`skyl.PROVIDERS`). It returns what it
// assembled, so the test can check it against the list the core generates
// (tests/pkg/helpers.mjs, checkResults).

const tools = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

export async function toolLoop(skyl, provider, mockURL, more = {}) {
  const baseURL =
    provider.startsWith("openai") || provider === "responses" ? `${mockURL}/v1` : mockURL;
  const client = new skyl.Client({
    provider,
    model: "mock-model",
    baseURL,
    maxRetries: 0,
    ...more,
  });
  const messages = [
    { role: "user", parts: [{ type: "text", text: "What is the weather in Paris?" }] },
  ];
  const turns = [];
  for (let turn = 0; turn < 4; turn++) {
    const stream = client.stream({ messages, tools });
    let text = "";
    const calls = [];
    for await (const ev of stream) {
      if (ev.type === "text") text += ev.text;
      if (ev.type === "tool_call") calls.push(ev.call);
    }
    const res = await stream.response();
    turns.push({ text, calls, finishReason: res.finishReason });
    messages.push(JSON.parse(JSON.stringify(res.message)));
    if (res.toolCalls.length === 0) break;
    for (const call of res.toolCalls) {
      const args = JSON.parse(call.arguments);
      messages.push(skyl.toolResultMessage(call.id, { city: args.city, temp: 21 }));
    }
  }
  return { provider, turns };
}

/**
 * Claude on Vertex AI with a service account (the mock's test key, its
 * token endpoint the mock's): the JWT signed with this runtime's WebCrypto.
 */
async function vertexLoop(skyl, mockURL) {
  const serviceAccount = await (await fetch(`${mockURL}/oauth2/_test-key`)).json();
  const vertex = { project: "skyl-test", location: "us-east5" };
  const more = { vertex, serviceAccount, dangerouslyAllowBrowser: true };
  return { ...(await toolLoop(skyl, "anthropic", mockURL, more)), provider: "vertex" };
}

/**
 * The tool loop for each of `providers` (all the entry speaks by default),
 * one after another; then Claude on Vertex AI, where the entry speaks
 * anthropic.
 */
export async function runAll(skyl, mockURL, providers = skyl.PROVIDERS) {
  const results = [];
  for (const provider of providers) results.push(await toolLoop(skyl, provider, mockURL));
  if (providers.includes("anthropic")) results.push(await vertexLoop(skyl, mockURL));
  return results;
}

/** The tool loop for each provider a one-adapter entry (skyl/openai, ...) speaks. */
export const runEntry = (skyl, mockURL) => runAll(skyl, mockURL, skyl.PROVIDERS);

/**
 * What a one-adapter entry (`name`: "openai", "anthropic", "gemini") speaks,
 * its tool loops, and how it refuses a provider it was built without.
 */
export async function entryReport(skyl, name, mockURL) {
  let refused = null;
  try {
    new skyl.Client({ provider: name === "gemini" ? "openai" : "gemini", model: "m" });
  } catch (e) {
    refused = { invalid: e instanceof skyl.InvalidRequestError, path: e.path, message: e.message };
  }
  return { providers: skyl.PROVIDERS, results: await runEntry(skyl, mockURL), refused };
}
