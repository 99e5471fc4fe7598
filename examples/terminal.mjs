// A streamed, tool-calling conversation in the terminal, with the built
// package: every event as it arrives, for each of the five wire formats.
// Against the mock provider (MOCK_URL), or a real provider when its key is
// in the environment (OPENAI_API_KEY for openai and responses,
// ANTHROPIC_API_KEY, GEMINI_API_KEY).
//   node examples/terminal.mjs [provider ...]
import { Client, toolResultMessage } from "../pkg/node.js";
import { TOOLS, runTool } from "../www/tools.js";

const MOCK = process.env.MOCK_URL ?? "http://127.0.0.1:8788";
const REAL = {
  openai: ["OPENAI_API_KEY", "gpt-4.1-mini"],
  responses: ["OPENAI_API_KEY", "gpt-4.1-mini"],
  anthropic: ["ANTHROPIC_API_KEY", "claude-sonnet-4-5"],
  gemini: ["GEMINI_API_KEY", "gemini-2.5-flash"],
};
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);

async function conversation(provider) {
  const [keyVar, model] = REAL[provider] ?? [];
  const key = keyVar && process.env[keyVar];
  const client = new Client(
    key
      ? { provider, model, apiKey: key }
      : {
          provider,
          model: "mock-model",
          baseURL: provider.startsWith("openai") || provider === "responses" ? `${MOCK}/v1` : MOCK,
        },
  );
  console.log(
    bold(`\n━━ ${provider} ${key ? `(live, ${model})` : "(mock provider, real wire format)"}`),
  );
  const messages = [
    { role: "user", parts: [{ type: "text", text: "What's the weather in Paris?" }] },
  ];
  console.log(`user       What's the weather in Paris?`);
  for (let turn = 0; turn < 4; turn++) {
    const stream = client.stream({ messages, tools: TOOLS, maxTokens: 512 });
    let line = null;
    for await (const ev of stream) {
      if (ev.type === "text" || ev.type === "reasoning") {
        if (line !== ev.type) {
          if (line) process.stdout.write("\n");
          process.stdout.write(`${ev.type.padEnd(10)} `);
          line = ev.type;
        }
        process.stdout.write(ev.type === "text" ? ev.text : dim(ev.text));
        continue;
      }
      if (line) {
        process.stdout.write("\n");
        line = null;
      }
      if (ev.type === "tool_call")
        console.log(`tool_call  ${ev.call.name} ${ev.call.arguments} ${dim(`(id ${ev.call.id})`)}`);
      if (ev.type === "usage")
        console.log(dim(`usage      in ${ev.usage.input ?? "?"} out ${ev.usage.output ?? "?"}`));
      if (ev.type === "warning") console.log(`warning    ${ev.message}`);
      if (ev.type === "finish") console.log(dim(`finish     ${ev.response.finishReason}`));
    }
    const res = await stream.response();
    messages.push(res.message);
    if (res.toolCalls.length === 0) return;
    for (const call of res.toolCalls) {
      const result = runTool(call.name, JSON.parse(call.arguments));
      console.log(`tool       ${call.name} → ${JSON.stringify(result)}`);
      messages.push(toolResultMessage(call.id, result));
    }
  }
}

const wanted = process.argv.slice(2);
for (const p of ["openai", "openaicompat", "anthropic", "gemini", "responses"]) {
  if (wanted.length === 0 || wanted.includes(p)) await conversation(p);
}
