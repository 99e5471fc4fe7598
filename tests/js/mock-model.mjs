// The mock provider's model: what it answers a request with, as a turn
// {reasoning, text, calls: [{name, args}]} that mock-wire.mjs writes in the
// wire format. It behaves like a model with tools, by rule, not by chance:
//
// - It reads the last user message and asks for the tools that message
//   needs, with arguments taken from its words (mock-model-intents.mjs);
//   for several things at once, several calls in one turn.
// - Once the results of those calls are in the request, it answers from
//   them in words ("It is 21 °C and sunny in Kampala."), honestly when a
//   result is an error.
// - Without a tool that fits, it says what it can do, from the declared
//   tools; it asks when the question lacks what a tool needs.
// - With a structured-output format, its answer is JSON of that schema
//   (mock-model-json.mjs); with a file attached, it answers about the file
//   (mock-model-files.mjs).
// - Asked to "draw a …" in a format that streams images (Gemini, Responses),
//   it answers with a drawing: the turn's `draw` names its subject, which
//   mock-wire-images.mjs turns into a PNG; in the other formats it says it
//   cannot draw.
// - `reasoning` is a short account of what it does and why, which the
//   formats that have reasoning stream first.
import { describeFile, fileFacts } from "./mock-model-files.mjs";
import { facts as factsOf, forcedArguments, planCalls, unitCode } from "./mock-model-intents.mjs";
import { structuredAnswer } from "./mock-model-json.mjs";
import { parseJSON } from "./mock-requests.mjs";

const list = (items) =>
  items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
const short = (v, max = 80) => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

/** What a tool does, from its name: get_weather → "look up the weather". */
export function capability(tool) {
  const words = tool.name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (/^(?:get|fetch|lookup|find|read|query|load)$/.test(words[0]) && words.length > 1)
    return `look up the ${words.slice(1).join(" ")}`;
  return words.join(" ");
}

/** A number as a person writes it: at most two decimals. */
export function formatNumber(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  return String(Math.abs(x) >= 0.01 ? Number(x.toFixed(2)) : Number(x.toPrecision(3)));
}

const UNIT_NAMES = {
  km: "km",
  m: ["metre", "metres"],
  cm: "cm",
  mm: "mm",
  mi: ["mile", "miles"],
  ft: ["foot", "feet"],
  in: ["inch", "inches"],
  yd: ["yard", "yards"],
  kg: "kg",
  g: "g",
  lb: ["pound", "pounds"],
  oz: ["ounce", "ounces"],
  l: ["litre", "litres"],
  ml: "ml",
  gal: ["gallon", "gallons"],
  C: "°C",
  F: "°F",
  K: "K",
};
const quantity = (value, unit) => {
  const name = UNIT_NAMES[unitCode(unit)] ?? unit;
  const word = Array.isArray(name) ? name[Math.abs(value) === 1 ? 0 : 1] : name;
  return `${formatNumber(value)} ${word}`;
};

/** A tool result's value: JSON parsed (twice for JSON in a string), else the text. */
const resultValue = (content) => {
  let v = content;
  for (let i = 0; i < 2 && typeof v === "string"; i++) v = parseJSON(v, v);
  return v;
};

const TEMP_C = ["temperatureC", "temperature_c", "tempC", "temp_c", "temperature", "temp"];
const TEMP_F = ["temperatureF", "temperature_f", "tempF", "temp_f"];
const PLACE_KEYS = ["city", "location", "place", "town", "name"];
const pick = (o, keys) => keys.map((k) => o?.[k]).find((v) => v !== undefined && v !== null);

/** The message of an error result. */
const errorMessage = (v) =>
  typeof v === "string"
    ? v
    : (pick(v, ["error", "message"])?.message ?? pick(v, ["error", "message"]) ?? short(v));

/** One result in words. */
function sentence(call, value, isError) {
  const name = call?.name ?? "the tool";
  const args = call?.args ?? {};
  const object = value && typeof value === "object" && !Array.isArray(value) ? value : null;
  if (isError || (object && Object.keys(object).length === 1 && "error" in object)) {
    const about =
      "value" in args && "from" in args && "to" in args
        ? ` (${args.value} ${args.from} to ${args.to})`
        : typeof args.expression === "string"
          ? ` ${args.expression}`
          : typeof pick(args, PLACE_KEYS) === "string"
            ? ` for ${pick(args, PLACE_KEYS)}`
            : "";
    return `I could not ${call ? capability(call) : "do that"}${about}: ${errorMessage(object ?? value)}.`;
  }
  const where = pick(object, PLACE_KEYS) ?? pick(args, PLACE_KEYS);
  const celsius = pick(object, TEMP_C);
  const fahrenheit = pick(object, TEMP_F);
  const condition = pick(object, ["condition", "conditions", "description", "summary", "weather"]);
  if (object && (celsius !== undefined || fahrenheit !== undefined)) {
    const t =
      celsius !== undefined ? `${formatNumber(celsius)} °C` : `${formatNumber(fahrenheit)} °F`;
    // "sunny", "overcast": an adjective ("and"); "light rain": a noun ("with").
    const joined =
      typeof condition !== "string"
        ? ""
        : /(?:y|overcast|clear|fair|hot|cold|mild|cool|warm|dry)$/i.test(condition)
          ? ` and ${condition}`
          : ` with ${condition}`;
    return `It is ${t}${joined}${where ? ` in ${where}` : ""}.`;
  }
  const result = object ? object.result : value;
  const from = pick(object, ["from"]) ?? args.from;
  const to = pick(object, ["to"]) ?? args.to;
  const amount = pick(object, ["value"]) ?? args.value;
  if (typeof result === "number" && from && to && typeof amount === "number")
    return `${quantity(amount, from)} is ${quantity(result, to)}.`;
  const expr = pick(object, ["expression"]) ?? args.expression;
  if (typeof result === "number" && typeof expr === "string")
    return `${expr} = ${formatNumber(result)}.`;
  if (typeof value === "string") return `The ${name} tool answered: "${short(value, 300)}".`;
  if (Array.isArray(value)) return `${name} returned ${value.length} items: ${short(value, 200)}.`;
  if (object)
    return `${name} returned ${Object.entries(object)
      .map(([k, x]) => `${k} ${typeof x === "object" ? JSON.stringify(x) : x}`)
      .join(", ")}.`;
  return `${name} returned ${short(value)}.`;
}

/** What a call is for, in words: "the weather in Kampala", "30 km in miles". */
function need(call) {
  const { args } = call;
  const where = pick(args, PLACE_KEYS);
  const what = capability(call);
  if (typeof where === "string" && what.startsWith("look up "))
    return `${what.slice("look up ".length)} in ${where}`;
  if (typeof args.value === "number" && args.from && args.to) {
    const to = UNIT_NAMES[unitCode(args.to)] ?? args.to;
    return `${quantity(args.value, args.from)} in ${Array.isArray(to) ? to[1] : to}`;
  }
  if (typeof args.expression === "string") return `the value of ${args.expression}`;
  return `what ${call.name} gives for ${JSON.stringify(args)}`;
}

/** The results that answer the calls made since the question, each with its call. */
function answered(after) {
  const calls = after.filter((e) => e.kind === "call");
  const taken = new Set();
  return after
    .filter((e) => e.kind === "result")
    .map((r) => {
      // By id; Gemini's calls may have none: then by name, in order.
      let call = r.id != null ? calls.find((c) => c.id === r.id) : undefined;
      call ??= calls.find(
        (c, i) => !taken.has(i) && c.name === r.name && (r.id == null || c.id == null),
      );
      if (call) taken.add(calls.indexOf(call));
      return {
        call: call ?? (r.name ? { name: r.name, args: {} } : null),
        value: resultValue(r.content),
        isError: r.isError === true,
      };
    });
}

/** What the question says, for structured answers. */
const questionFacts = (text) => ({ ...factsOf(text), question: text });

const GREETING = /^\s*(?:hi|hello|hey|howdy|greetings|good (?:morning|afternoon|evening))\b/i;

/** The answer once the tools have answered: from their results. */
function fromResults(q, results, format) {
  const words = results.map((r) => sentence(r.call, r.value, r.isError)).join(" ");
  // "the results of get_weather" once, for two calls of one tool.
  const heard = new Map();
  for (const r of results) {
    const key = `${r.isError ? "error" : "result"}:${r.call?.name ?? "a tool"}`;
    heard.set(key, (heard.get(key) ?? 0) + 1);
  }
  const said = [...heard].map(([key, n]) => {
    const [kind, name] = key.split(/:(.*)/);
    if (kind === "error") return `${n === 1 ? "an error" : "errors"} from ${name}`;
    return `the ${n === 1 ? "result" : "results"} of ${name}`;
  });
  const reasoning = `I have ${list(said)}; I will answer from ${results.length === 1 ? "it" : "them"}.`;
  if (!format) return { reasoning, text: words, calls: [] };
  const facts = {
    ...questionFacts(q),
    results: results.filter((r) => !r.isError).map((r) => r.value),
  };
  return {
    reasoning: `${reasoning} The answer must be JSON.`,
    text: structuredAnswer(format.schema, facts, words),
    calls: [],
  };
}

/** The answer about files that came with the question. */
function aboutFiles(q, attached, format) {
  const files = attached.map(fileFacts);
  const words = files.map(describeFile).join(" ");
  const named = files.map(
    (f) => `${f.filename ?? "a file"} (${f.mediaType}${f.size != null ? `, ${f.size} bytes` : ""})`,
  );
  const reasoning = `The message carries ${list(named)}; I describe what I can read of ${files.length === 1 ? "it" : "them"}.`;
  if (!format) return { reasoning, text: words, calls: [] };
  const facts = { ...questionFacts(q), file: files[0] };
  return { reasoning, text: structuredAnswer(format.schema, facts, words), calls: [] };
}

/** The turn for a question: the calls it needs, or a reply in words. */
function toQuestion(q, tools, choice, format) {
  const plan = planCalls(q, tools);
  if (!plan.calls.length && choice && choice !== "none") {
    const forced =
      typeof choice === "object" ? tools.find((t) => t.name === choice.name) : tools[0];
    if (forced) plan.calls.push({ name: forced.name, args: forcedArguments(forced, q) });
  }
  if (plan.calls.length) {
    const lookup = plan.calls.some((c) => capability({ name: c.name }).startsWith("look up"));
    return {
      reasoning: `The user wants ${list(plan.calls.map(need))}. I will call ${list(
        plan.calls.map((c) => `${c.name} ${JSON.stringify(c.args)}`),
      )}${plan.calls.length > 1 ? " in parallel" : ""}.`,
      text: format ? "" : lookup ? "Let me look that up." : "Let me work that out.",
      calls: plan.calls,
    };
  }
  if (format)
    return {
      reasoning:
        "The answer must be JSON of the given schema; I fill what the question says and leave the rest to the schema's defaults.",
      // No result to say anything from: free-text fields stay unknown.
      text: structuredAnswer(format.schema, questionFacts(q), ""),
      calls: [],
    };
  if (plan.missing.length) {
    const { tool, keys } = plan.missing[0];
    return {
      reasoning: `"${short(q, 120)}" needs ${tool.name}, but it does not give the ${list(keys)}; I should ask.`,
      text: `I can ${capability(tool)}, but I need the ${list(keys)}. Which ${keys[0]} do you mean?`,
      calls: [],
    };
  }
  if (!tools.length)
    return {
      reasoning: "There are no tools in this request, so I can only answer in words.",
      text: GREETING.test(q)
        ? "Hello! I am a mock model with no tools in this conversation, so I can only chat."
        : "I am a mock model with no tools in this conversation, so I cannot look that up or work it out.",
      calls: [],
    };
  const can = list(tools.map(capability));
  return {
    reasoning: `No tool fits "${short(q, 120)}" (the tools: ${tools.map((t) => t.name).join(", ")}); I should say what I can do.`,
    text: GREETING.test(q)
      ? `Hello! I can ${can}. What would you like to know?`
      : `I can only ${can}, so I cannot help with that.`,
    calls: [],
  };
}

/** What "draw a cat", "Please draw me a red house." ask for ("a cat"); null for anything else. */
export function drawSubject(text) {
  const m = /^\s*(?:please\s+)?draw\s+(?:me\s+)?(.+?)[\s.!?]*$/is.exec(text);
  return m ? m[1].trim() : null;
}

/** The turn for "draw …": a drawing where the format has images, else words. */
function drawTurn(subject, draws) {
  if (!draws)
    return {
      reasoning: `The user wants a picture of ${short(subject, 80)}, but this format has no image output.`,
      text: "I cannot draw here: this wire format has no generated images. The mock draws in the Gemini and Responses formats.",
      calls: [],
    };
  const named = /^(?:a|an|the|some)\s/i.test(subject) ? subject : `a drawing of ${subject}`;
  return {
    reasoning: `The user wants a picture of ${short(subject, 80)}; I will draw it.`,
    text: `Here is ${named}.`,
    calls: [],
    draw: subject,
  };
}

/**
 * The turn for a request read by mock-requests.mjs's readRequest;
 * `draws`: whether the wire format can carry a drawing.
 */
export function modelTurn(view, { draws = false } = {}) {
  const { tools, entries, format, choice } = view;
  const at = entries.findLastIndex((e) => e.kind === "user");
  const question = at < 0 ? { text: "", files: [] } : entries[at];
  const q = question.text.trim();
  const results = answered(entries.slice(at + 1));
  if (results.length) return fromResults(q, results, format);
  if (question.files.length) return aboutFiles(q, question.files, format);
  const subject = format ? null : drawSubject(q);
  if (subject) return drawTurn(subject, draws);
  return toQuestion(q, choice === "none" ? [] : tools, choice, format);
}
