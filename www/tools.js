// The demo's tools. They run in the browser: the model asks, the page
// executes, the result goes back into the conversation.

/** Tool declarations, as skyl's `Tool` (name, description, JSON Schema). */
export const TOOLS = [
  {
    name: "get_weather",
    description: "Current weather for a city (demo data).",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name", examples: ["Paris"] } },
      required: ["city"],
    },
  },
  {
    name: "convert_units",
    description:
      "Convert a value between units of length, weight or temperature: km, mi, m, ft, kg, lb, C, F.",
    parameters: {
      type: "object",
      properties: {
        value: { type: "number", examples: [10] },
        from: { type: "string", examples: ["km"] },
        to: { type: "string", examples: ["mi"] },
      },
      required: ["value", "from", "to"],
    },
  },
  {
    name: "calculate",
    description: "Evaluate an arithmetic expression with + - * / ^ and parentheses.",
    parameters: {
      type: "object",
      properties: { expression: { type: "string", examples: ["12*7+3"] } },
      required: ["expression"],
    },
  },
];

/** Runs a tool call; throws on bad input (the page sends it back as a tool error). */
export function runTool(name, args) {
  if (name === "get_weather") return weather(String(args.city ?? ""));
  if (name === "convert_units")
    return convert(Number(args.value), String(args.from), String(args.to));
  if (name === "calculate")
    return { expression: args.expression, result: calculate(String(args.expression ?? "")) };
  throw new Error(`unknown tool ${name}`);
}

function weather(city) {
  if (!city.trim()) throw new Error("no city given");
  let h = 0;
  for (const c of city.toLowerCase()) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  const conditions = ["sunny", "partly cloudy", "overcast", "light rain", "windy"];
  return {
    city,
    temperatureC: 8 + (h % 20),
    condition: conditions[h % conditions.length],
    source: "demo data",
  };
}

const LINEAR = {
  km: ["length", 1000],
  m: ["length", 1],
  mi: ["length", 1609.344],
  ft: ["length", 0.3048],
  kg: ["weight", 1],
  lb: ["weight", 0.45359237],
};

function convert(value, from, to) {
  if (!Number.isFinite(value)) throw new Error("value must be a number");
  const f = from.trim(),
    t = to.trim();
  const temp = { C: (v) => v, F: (v) => ((v - 32) * 5) / 9 };
  const fromC = { C: (v) => v, F: (v) => (v * 9) / 5 + 32 };
  if (f in temp && t in fromC)
    return { value, from: f, to: t, result: round(fromC[t](temp[f](value))) };
  const a = LINEAR[f.toLowerCase()],
    b = LINEAR[t.toLowerCase()];
  if (!a || !b) throw new Error(`unknown unit: ${!a ? f : t}`);
  if (a[0] !== b[0]) throw new Error(`cannot convert ${a[0]} to ${b[0]}`);
  return { value, from: f, to: t, result: round((value * a[1]) / b[1]) };
}

const round = (x) => Math.round(x * 1e6) / 1e6;

/** A recursive-descent evaluator: numbers, + - * / ^, unary minus, parentheses. No eval. */
export function calculate(src) {
  const tokens = src.match(/\d+(?:\.\d+)?|\.\d+|[-+*/^()]|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = (t) => {
    if (tokens[i] !== t) throw new Error(`expected ${t} at "${tokens.slice(i).join("") || "end"}"`);
    i++;
  };
  const primary = () => {
    const t = tokens[i++];
    if (t === undefined) throw new Error("unexpected end of expression");
    if (t === "(") {
      const v = sum();
      take(")");
      return v;
    }
    if (t === "-") return -power();
    if (t === "+") return power();
    if (/^[\d.]/.test(t)) return Number(t);
    throw new Error(`unexpected "${t}"`);
  };
  const power = () => {
    const b = primary();
    if (peek() === "^") {
      i++;
      return b ** power();
    }
    return b;
  };
  const product = () => {
    let v = power();
    while (peek() === "*" || peek() === "/") {
      const op = tokens[i++];
      const r = power();
      v = op === "*" ? v * r : v / r;
    }
    return v;
  };
  const sum = () => {
    let v = product();
    while (peek() === "+" || peek() === "-") {
      const op = tokens[i++];
      const r = product();
      v = op === "+" ? v + r : v - r;
    }
    return v;
  };
  if (tokens.length === 0) throw new Error("empty expression");
  const v = sum();
  if (i !== tokens.length) throw new Error(`unexpected "${tokens[i]}"`);
  if (!Number.isFinite(v)) throw new Error("the result is not a finite number");
  return round(v);
}
