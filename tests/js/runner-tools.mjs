// The tools and readers the tests of client.run share (runner.test.mjs,
// runner-stop.test.mjs).

export const QUESTION = "What is the weather in Kampala, and convert 30 km to miles?";

export const weather = (extra = {}) => ({
  name: "get_weather",
  description: "Current weather for a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  execute: ({ city }) => ({ city, tempC: 21 }),
  ...extra,
});

export const convert = (extra = {}) => ({
  name: "convert_units",
  description: "Convert a value between units.",
  parameters: {
    type: "object",
    properties: { value: { type: "number" }, from: { type: "string" }, to: { type: "string" } },
    required: ["value", "from", "to"],
  },
  execute: ({ value }) => ({ value: Math.round(value * 0.621371 * 100) / 100 }),
  ...extra,
});

/** Every event of a run, and its result or error. */
export async function drain(run) {
  const events = [];
  try {
    for await (const ev of run) events.push(ev);
    return { events, result: await run.result() };
  } catch (error) {
    return { events, error };
  }
}

/** The tool results of a run's messages: [callId, content, isError]. */
export const results = (messages) =>
  messages
    .filter((m) => m.role === "tool")
    .flatMap((m) => m.parts)
    .map((p) => [p.callId, p.content, Boolean(p.isError)]);

/** The calls of the first assistant turn. */
export const callsOf = (messages) =>
  messages.find((m) => m.role === "assistant").parts.filter((p) => p.type === "tool_call");
