// The mock provider's model: what it answers a request with, as a turn
// ({ text, calls }) that mock-wire.mjs writes in the wire format.
import { declaredTools, lastUserText, toolResults } from "./mock-requests.mjs";

/** A tool result as a phrase: JSON objects become "key: value" lists (Gemini's {output} unwrapped). */
function describe(content) {
  let v = content;
  for (let i = 0; i < 3 && typeof v === "string"; i++) {
    try {
      v = JSON.parse(v);
    } catch {
      break;
    }
  }
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (Object.keys(v).length === 1 && ("output" in v || "error" in v))
      return describe(
        typeof v.output === "string" ? v.output : JSON.stringify(v.output ?? v.error),
      );
    return Object.entries(v)
      .map(([k, x]) => `${k} ${typeof x === "object" ? JSON.stringify(x) : x}`)
      .join(", ");
  }
  return String(v);
}

/** The tool the user's words point at (its name or description), else the first. */
function chooseTool(wire, req) {
  const tools = declaredTools(wire, req);
  const words =
    lastUserText(wire, req)
      .toLowerCase()
      .match(/[a-z]{3,}/g) ?? [];
  const score = (t) =>
    words.filter((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)).length;
  return [...tools].sort((a, b) => score(b) - score(a))[0] ?? { name: "get_weather", schema: null };
}

/** Arguments for the scripted call: each property's example or default, else a plausible value. */
function scriptedArgs(tool) {
  const { name, schema } = tool;
  const args = {};
  const props = schema?.properties ?? {};
  for (const [k, v] of Object.entries(props)) {
    if (Array.isArray(v?.examples) && v.examples.length) args[k] = v.examples[0];
    else if (v?.default !== undefined) args[k] = v.default;
    else if (v?.type === "number" || v?.type === "integer") args[k] = 42;
    else if (v?.type === "boolean") args[k] = true;
    else if (Array.isArray(v?.enum)) args[k] = v.enum[0];
    else args[k] = k === "city" || k === "location" ? "Paris" : `${k} value`;
  }
  if (Object.keys(args).length === 0 && name === "get_weather") args.city = "Paris";
  return args;
}

/** The scripted turn: { text, calls: [{id, name, args}] }. */
export function scriptedTurn(wire, req) {
  const results = toolResults(wire, req);
  if (results.length > 0) {
    return {
      text: `Here is what I found: ${results.map((r) => describe(r.content)).join("; ")}.`,
      calls: [],
    };
  }
  const declared =
    wire === "gemini"
      ? req.tools?.[0]?.functionDeclarations?.length
      : wire === "responses"
        ? declaredTools(wire, req).length
        : req.tools?.length;
  if (!declared) return { text: "Hello from the mock provider.", calls: [] };
  const tool = chooseTool(wire, req);
  return {
    text: "Let me look that up.",
    calls: [
      {
        id: wire === "gemini" ? null : `call_${tool.name}_1`,
        name: tool.name,
        args: scriptedArgs(tool),
      },
    ],
  };
}
