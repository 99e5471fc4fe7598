// What the JS-side tests share as data, with no import of the package: the
// weather tool every tool loop declares.

/** The weather tool: the mock's model calls it for "the weather in <city>". */
export const TOOLS = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];
