// A streamed, tool-calling conversation in the terminal, with the built
// package: every event as it arrives, for each of the six wire formats.
// Each format gets its own questions: one that needs two tools at once (two
// calls in one turn, run, then answered from their results), then a
// follow-up that needs another tool. Against the mock provider (MOCK_URL),
// whose model reads the question (tests/js/mock-model.mjs), or a real
// provider when its key is in the environment (OPENAI_API_KEY for openai and
// responses, ANTHROPIC_API_KEY, GEMINI_API_KEY, AWS_BEARER_TOKEN_BEDROCK with
// AWS_REGION).
//   node examples/terminal.mjs [provider ...] [--ask "a question"]
import { Client, PROVIDERS } from "../pkg/node.js";
import { TOOLS, runTool } from "../www/tools.js";

const MOCK = process.env.MOCK_URL ?? "http://127.0.0.1:8788";
const REAL = {
  openai: ["OPENAI_API_KEY", "gpt-4.1-mini"],
  responses: ["OPENAI_API_KEY", "gpt-4.1-mini"],
  anthropic: ["ANTHROPIC_API_KEY", "claude-sonnet-4-5"],
  gemini: ["GEMINI_API_KEY", "gemini-2.5-flash"],
  bedrock: ["AWS_BEARER_TOKEN_BEDROCK", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"],
};
const QUESTIONS = {
  openai: ["What is the weather in Kampala, and convert 30 km to miles?", "Calculate 12*7+3"],
  openaicompat: ["What's the weather in Paris and in Rome?", "What is (3+4)*2?"],
  anthropic: ["How warm is it in Rio de Janeiro, and what is 2^10?", "Convert 100 F to C"],
  gemini: ["What is the weather in New York, and convert 5 kg to pounds?", "Tell me a joke"],
  responses: ["Convert 10 km to miles and 3 m to feet", "Is it raining in São Paulo?"],
  bedrock: ["What's the weather in Lisbon, and convert 20 C to F?", "What is 6*7?"],
};
// Every provider the package speaks needs its questions here.
const unasked = PROVIDERS.filter((p) => !Object.hasOwn(QUESTIONS, p));
if (unasked.length)
  throw new Error(`examples/terminal.mjs: no questions for ${unasked.join(", ")}`);
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);

// The demo's tools with what `client.run` needs: each runs here; the
// weather (demo data, it changes nothing) may start while a turn streams.
const RUN_TOOLS = TOOLS.map((t) => ({
  ...t,
  readOnly: t.name === "get_weather",
  execute: (args) => runTool(t.name, args),
}));

/** Runs the tool loop for one question, printing each event; returns the new messages. */
async function answer(client, messages) {
  const run = client.run({ messages, tools: RUN_TOOLS, maxTokens: 512, maxSteps: 4 });
  let line = null;
  for await (const ev of run) {
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
    if (ev.type === "step_start") console.log(dim(`step ${ev.step}`));
    if (ev.type === "tool_call")
      console.log(`tool_call  ${ev.call.name} ${ev.call.arguments} ${dim(`(id ${ev.call.id})`)}`);
    if (ev.type === "tool_result") {
      const said = ev.result.isError ? `error: ${ev.result.content}` : ev.result.content;
      console.log(`tool       ${ev.call.name} → ${said} ${dim(`(${ev.durationMs} ms)`)}`);
    }
    if (ev.type === "usage")
      console.log(dim(`usage      in ${ev.usage.input ?? "?"} out ${ev.usage.output ?? "?"}`));
    if (ev.type === "warning") console.log(`warning    ${ev.message}`);
    if (ev.type === "finish") console.log(dim(`finish     ${ev.response.finishReason}`));
  }
  const { messages: added, stopReason, usage } = await run.result();
  console.log(dim(`run        ${stopReason}, in ${usage.input ?? "?"} out ${usage.output ?? "?"}`));
  return added;
}

async function conversation(provider, questions) {
  const [keyVar, model] = REAL[provider] ?? [];
  // Bedrock's key goes to its region's endpoint: without the region, the mock.
  const region = provider === "bedrock" ? process.env.AWS_REGION : undefined;
  const key = keyVar && (provider !== "bedrock" || region) && process.env[keyVar];
  const client = new Client(
    key
      ? { provider, model, apiKey: key, region }
      : {
          provider,
          model: "mock-model",
          baseURL: provider.startsWith("openai") || provider === "responses" ? `${MOCK}/v1` : MOCK,
        },
  );
  console.log(
    bold(`\n━━ ${provider} ${key ? `(live, ${model})` : "(mock provider, real wire format)"}`),
  );
  const messages = [];
  for (const question of questions) {
    console.log(bold(`user       ${question}`));
    messages.push({ role: "user", parts: [{ type: "text", text: question }] });
    // The tool loop (client.run): the model's turns and the calls run here,
    // until it answers; the new messages extend the history.
    messages.push(...(await answer(client, messages)));
  }
}

const args = process.argv.slice(2);
const ask = args.indexOf("--ask");
const question = ask >= 0 ? args[ask + 1] : null;
const wanted = ask >= 0 ? args.filter((_, i) => i !== ask && i !== ask + 1) : args;
for (const p of PROVIDERS) {
  if (wanted.length === 0 || wanted.includes(p))
    await conversation(p, question ? [question] : QUESTIONS[p]);
}
