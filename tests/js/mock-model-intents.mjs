// The mock model's reading of a question: which of the declared tools it
// needs and with what arguments, taken from the words. It works from any
// tools' names, descriptions and JSON Schemas; a place, numbers with units,
// an arithmetic expression and quoted text are what it can find in a
// question (the demo's get_weather, convert_units and calculate).

/** Units by code, with the words a question may use for them. */
const UNITS = {
  km: "km kms kilometre kilometres kilometer kilometers",
  m: "m metre metres meter meters",
  cm: "cm centimetre centimetres centimeter centimeters",
  mm: "mm millimetre millimetres millimeter millimeters",
  mi: "mi mile miles",
  ft: "ft foot feet",
  in: "inch inches",
  yd: "yd yard yards",
  kg: "kg kgs kilogram kilograms kilo kilos",
  g: "g gram grams",
  lb: "lb lbs pound pounds",
  oz: "oz ounce ounces",
  l: "l litre litres liter liters",
  ml: "ml millilitre millilitres milliliter milliliters",
  gal: "gal gallon gallons",
  C: "c °c celsius centigrade",
  F: "f °f fahrenheit",
  K: "k kelvin",
};
const ALIAS = new Map(
  Object.entries(UNITS).flatMap(([code, words]) => words.split(" ").map((w) => [w, code])),
);

/** The unit code a word or code stands for ("miles" → "mi"), or null. */
export function unitCode(word) {
  const w = String(word ?? "")
    .trim()
    .replace(/^degrees?\s+/i, "")
    .replace(/°\s*/, "°");
  if (w in UNITS) return w;
  return ALIAS.get(w.toLowerCase()) ?? null;
}

export const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const UNIT = `(?:degrees?\\s+)?(?:${[...ALIAS.keys()]
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join("|")})`;
const NUMBER = "-?\\d+(?:\\.\\d+)?";
const CONVERSION = new RegExp(
  `(${NUMBER})\\s*(${UNIT})\\s+(?:to|in|into|as)\\s+(${UNIT})(?![a-z])`,
  "i",
);
const HOW_MANY = new RegExp(
  `how\\s+many\\s+(${UNIT})\\s+(?:is|are|in|make|equals?)\\s+(${NUMBER})\\s*(${UNIT})(?![a-z])`,
  "i",
);

/** "convert 30 km to miles" → {value: 30, from: "km", to: "mi"}, or null. */
function conversion(text) {
  const t = text.replace(/°\s*/g, "°");
  let m = CONVERSION.exec(t);
  if (m) return { value: Number(m[1]), from: unitCode(m[2]), to: unitCode(m[3]) };
  m = HOW_MANY.exec(t);
  if (m) return { value: Number(m[2]), from: unitCode(m[3]), to: unitCode(m[1]) };
  return null;
}

/** The arithmetic expression in a question ("what is (3+4)*2" → "(3+4)*2"), or null. */
export function expression(text) {
  const s = ` ${text.toLowerCase()} `
    .replace(/\bto the power of\b/g, "^")
    .replace(/\bsquared\b/g, "^2")
    .replace(/\bcubed\b/g, "^3")
    .replace(/\bplus\b/g, "+")
    .replace(/\bminus\b/g, "-")
    .replace(/\b(?:times|multiplied by)\b/g, "*")
    .replace(/\bdivided by\b/g, "/")
    .replace(/(\d)\s*[x×]\s*(?=[\d(])/g, "$1*")
    .replace(/÷/g, "/")
    .replace(/[−–]/g, "-");
  let best = null;
  for (const run of s.match(/[\d.()+\-*/^\s]+/g) ?? []) {
    let e = run.replace(/\s+/g, "").replace(/\.+$/, "");
    // Drop parentheses the run cut in half: "(what is 2+2)".
    const depth = (x) => (x.match(/\(/g) ?? []).length - (x.match(/\)/g) ?? []).length;
    while (depth(e) > 0 && e.startsWith("(")) e = e.slice(1);
    while (depth(e) < 0 && e.endsWith(")")) e = e.slice(0, -1);
    if (depth(e) !== 0 || !/[\d)]\s*[-+*/^]\s*[-\d.(]/.test(e)) continue;
    if (!best || e.length > best.length) best = e;
  }
  return best;
}

/** Words that begin a question or command, never a place. */
const NOT_PLACE = new Set(
  `what whats what's where when which who how is are was were do does did can could would will
  should please tell give show find get check look convert calculate compute evaluate and or but
  the a an i it its it's hi hello hey thanks thank also then now today tomorrow yes no weather
  temperature forecast is it in at for of`.split(/\s+/),
);
const CAP_WORD = "\\p{Lu}[\\p{L}\\p{M}'’.-]*";
const PLACE = new RegExp(
  `${CAP_WORD}(?:\\s+(?:(?:de|da|do|del|della|di|la|le|el|al|of|upon|on|am|im|sur|en|y)\\s+)?${CAP_WORD})*`,
  "gu",
);
const tidy = (p) => p.replace(/['’]s$/u, "").replace(/[.'’-]+$/u, "");

/** The place a question names ("weather in New York" → "New York"), or null. */
export function place(text) {
  const found = [];
  for (const m of text.matchAll(PLACE)) {
    const words = m[0].split(/\s+/);
    let skip = 0;
    while (skip < words.length && NOT_PLACE.has(words[skip].toLowerCase().replace("’", "'")))
      skip++;
    const name = tidy(words.slice(skip).join(" "));
    if (name.length < 2 || unitCode(name)) continue;
    const before = text.slice(0, m.index + words.slice(0, skip).join(" ").length);
    found.push({ name, afterPreposition: /\b(?:in|for|at|near|around|of|from)\s*$/i.test(before) });
  }
  const hit = found.find((f) => f.afterPreposition) ?? found[0];
  if (hit) return hit.name;
  // A place typed in lower case: "weather in kampala".
  const m = /\b(?:in|for|at|near)\s+([a-z][a-z'’-]*(?:\s+[a-z][a-z'’-]*){0,2})/.exec(text);
  if (!m) return null;
  const words = [];
  for (const w of m[1].split(/\s+/)) {
    if (NOT_PLACE.has(w) || unitCode(w) || /^(?:the|my|this|that|right|please)$/.test(w)) break;
    words.push(w[0].toUpperCase() + w.slice(1));
  }
  return words.length ? tidy(words.join(" ")) : null;
}

/** What a question offers as argument values: {text, place, conversion, expression, numbers, quoted}. */
export function facts(text) {
  const clean = text.replace(/(\d),(\d{3})\b/g, "$1$2");
  return {
    text: clean,
    place: place(clean),
    conversion: conversion(clean),
    expression: expression(clean),
    numbers: (clean.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number),
    quoted: /["“']([^"”']+)["”']/.exec(clean)?.[1] ?? null,
  };
}

/** Words of the question that tie it to a tool, beyond the tool's own. */
const RELATED = {
  weather:
    "weather temperature forecast rain raining rainy sunny snow snowing wind windy hot cold warm humid humidity cloudy climate umbrella",
  convert: "convert conversion converted converting",
  calculate:
    "calculate calculation compute evaluate arithmetic math sum plus minus times multiply multiplied divide divided product solve",
  search: "search find look lookup",
};
const STOP = new Set(
  "with from that this into between than about over under your their when where what which the and for"
    .split(" ")
    .concat(["demo", "data", "value", "values", "given", "return", "returns", "current"]),
);
const stem = (w) => w.replace(/(?:ing|ed|es|s)$/, "");
const wordsOf = (s) => s.toLowerCase().match(/[a-z]+/g) ?? [];

/** A tool's vocabulary: stem → weight (its name's words and related words 2, description 1). */
function vocabulary(tool) {
  const vocab = new Map();
  const add = (w, weight) => {
    if (w.length < 3 || STOP.has(w)) return;
    const s = stem(w);
    vocab.set(s, Math.max(vocab.get(s) ?? 0, weight));
  };
  const nameWords = wordsOf(tool.name.replace(/([a-z])([A-Z])/g, "$1 $2"));
  for (const w of nameWords) for (const r of [w, ...(RELATED[w]?.split(" ") ?? [])]) add(r, 2);
  for (const w of wordsOf(tool.description)) add(w, 1);
  return vocab;
}

const props = (tool) => {
  const p = tool.schema?.properties;
  return p && typeof p === "object" && !Array.isArray(p) ? Object.entries(p) : [];
};
const required = (tool) =>
  Array.isArray(tool.schema?.required) ? tool.schema.required : props(tool).map(([k]) => k);
const is = (re, key, p) => re.test(`${key} ${p?.description ?? ""}`);
const PLACE_KEY = /city|location|place|town|where|country|region/i;
const EXPRESSION_KEY = /expr|formula|equation|calculation|arithmetic/i;
const VALUE_KEY = /^(?:value|amount|quantity|number|n|x|input)$/i;
const FROM_KEY = /^(?:from|from_?unit|unit_?from|source(?:_?unit)?)$/i;
const TO_KEY = /^(?:to|to_?unit|unit_?to|target(?:_?unit)?)$/i;

/** The unit codes a tool takes for `key`: its enum, else the codes its descriptions list. */
function unitCodes(tool, p) {
  if (Array.isArray(p?.enum)) return p.enum.map(String);
  return `${tool.description} ${p?.description ?? ""}`
    .split(/[\s,:;()/]+/)
    .filter((w) => w && unitCode(w) === w);
}

/** The tool's own code for a unit ("mi" for miles), else the standard code. */
function unitFor(tool, p, code) {
  return unitCodes(tool, p).find((c) => unitCode(c) === code) ?? code;
}

/** A value for one argument from the question's facts, or undefined. */
function valueFor(tool, key, p, f, used) {
  const type = Array.isArray(p?.type) ? p.type.find((t) => t !== "null") : p?.type;
  if (f.conversion && VALUE_KEY.test(key) && type !== "string") return f.conversion.value;
  if (f.conversion && FROM_KEY.test(key)) return unitFor(tool, p, f.conversion.from);
  if (f.conversion && TO_KEY.test(key)) return unitFor(tool, p, f.conversion.to);
  if (Array.isArray(p?.enum))
    return p.enum.find((v) => new RegExp(`\\b${escapeRegExp(String(v))}\\b`, "i").test(f.text));
  if (is(PLACE_KEY, key, p)) return f.place ?? undefined;
  if (is(EXPRESSION_KEY, key, p)) return f.expression ?? undefined;
  if (type === "number" || type === "integer") {
    const n = f.numbers.find((x, i) => !used.has(i) && (type === "number" || Number.isInteger(x)));
    if (n === undefined) return undefined;
    used.add(f.numbers.indexOf(n));
    return n;
  }
  if (type === "string" && f.quoted) return f.quoted;
  if (type === "string" && /query|search|text|topic|term|keyword|question|prompt/i.test(key))
    return f.text.replace(
      /^\s*(?:please\s+)?(?:search|find|look up|tell me)\s+(?:for|about)?\s*/i,
      "",
    );
  return undefined;
}

/** The arguments a question gives a tool: {args, missing: [keys]}. */
export function argumentsFor(tool, text) {
  const f = typeof text === "string" ? facts(text) : text;
  const args = {};
  const missing = [];
  const used = new Set();
  for (const [key, p] of props(tool)) {
    const v = valueFor(tool, key, p, f, used);
    if (v !== undefined) args[key] = v;
    else if (p?.default !== undefined && required(tool).includes(key)) args[key] = p.default;
    else if (required(tool).includes(key)) missing.push(key);
  }
  return { args, missing };
}

/** How strongly one clause asks for a tool: {score, specific}. */
function fit(tool, f) {
  const vocab = vocabulary(tool);
  let score = 0;
  for (const w of new Set(wordsOf(f.text))) score += vocab.get(stem(w)) ?? 0;
  const keys = props(tool).map(([k, p]) => [k, p]);
  // Evidence a question carries that only some tools can take.
  const takesConversion =
    keys.some(([k]) => FROM_KEY.test(k)) && keys.some(([k]) => TO_KEY.test(k));
  const specific =
    (f.conversion && takesConversion) ||
    (f.expression && keys.some(([k, p]) => is(EXPRESSION_KEY, k, p)));
  return { score, specific: Boolean(specific) };
}

/** A question split into the things it asks. */
function clauses(question) {
  return question
    .split(
      /[?!;\n]+|\.(?=\s|$)|,?\s+and\s+(?:then\s+|also\s+)?|,\s+(?=(?:then|also|plus|what|how|convert|calculate|compute|get|tell|give|find|check|look|is|are|can|could|please)\b)/i,
    )
    .map((c) => c.trim())
    .filter(Boolean);
}

/**
 * The calls a question needs: {calls: [{name, args}], missing: [{tool,
 * keys}]}. A clause goes to the tool it fits best (its words, or evidence
 * such as "30 km to miles" that only one tool takes); a clause that fits
 * none but names what the previous one's tool takes ("and in Rome") goes to
 * that tool too. A tool whose required arguments the clause lacks is
 * listed in `missing` rather than called.
 */
export function planCalls(question, tools) {
  const calls = [];
  const missing = [];
  let previous = null;
  for (const clause of clauses(question)) {
    const f = facts(clause);
    const ranked = tools
      .map((tool) => ({ tool, ...fit(tool, f), ...argumentsFor(tool, f) }))
      .filter((r) => r.specific || r.score >= 2)
      .sort(
        (a, b) =>
          a.missing.length - b.missing.length ||
          Number(b.specific) - Number(a.specific) ||
          b.score - a.score,
      );
    let pick = ranked[0];
    if (!pick && previous) {
      const again = { tool: previous, ...argumentsFor(previous, f) };
      if (again.missing.length === 0 && Object.keys(again.args).length > 0) pick = again;
    }
    if (!pick) continue;
    previous = pick.tool;
    if (pick.missing.length) {
      missing.push({ tool: pick.tool, keys: pick.missing });
      continue;
    }
    const same = (c) =>
      c.name === pick.tool.name && JSON.stringify(c.args) === JSON.stringify(pick.args);
    if (!calls.some(same)) calls.push({ name: pick.tool.name, args: pick.args });
  }
  return { calls, missing };
}

/** Arguments when a tool must be called whatever was asked: the question's, else examples. */
export function forcedArguments(tool, question) {
  const { args } = argumentsFor(tool, question);
  for (const [key, p] of props(tool)) {
    if (key in args) continue;
    if (Array.isArray(p?.examples) && p.examples.length) args[key] = p.examples[0];
    else if (p?.default !== undefined) args[key] = p.default;
    else if (Array.isArray(p?.enum)) args[key] = p.enum[0];
    else if (required(tool).includes(key))
      args[key] = { number: 0, integer: 0, boolean: false, string: "" }[p?.type] ?? null;
  }
  return args;
}
