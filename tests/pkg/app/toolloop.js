// The app every runtime test runs (Node, a Vite build in Chromium, a
// Worker in workerd): a streamed tool loop against the mock provider for
// all five providers. It returns what it assembled, so the test can check it.
export const PROVIDERS = ["openai", "openaicompat", "anthropic", "gemini", "responses"];

const tools = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

export async function toolLoop(skyl, provider, mockURL) {
  const baseURL =
    provider.startsWith("openai") || provider === "responses" ? `${mockURL}/v1` : mockURL;
  const client = new skyl.Client({ provider, model: "mock-model", baseURL, maxRetries: 0 });
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

export async function runAll(skyl, mockURL) {
  const results = [];
  for (const provider of PROVIDERS) results.push(await toolLoop(skyl, provider, mockURL));
  return results;
}
