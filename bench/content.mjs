// What the generated streams say, whatever their wire format: seeded text
// deltas and tool calls (bench/inputs.mjs, bench/real.mjs), and the JSON
// printers the providers' servers use.

const WORDS =
  "the of and to in is that for it as with was on be by this are from at or an not which have has but they their can more all one about also into other some time these than would only when may its new first over such after most make like between through".split(
    " ",
  );

/**
 * A small deterministic PRNG (mulberry32): the one the bench's generated
 * streams and the JS tests' random chunking (tests/js/reliability.test.mjs)
 * draw from. A function returning floats in [0, 1).
 */
export function prng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const pick = (rand, alphabet, n) => {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
  return s;
};

function textDeltas(rand, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const w = WORDS[Math.floor(rand() * WORDS.length)];
    out.push(i === 0 ? w[0].toUpperCase() + w.slice(1) : (rand() < 0.08 ? ". " : " ") + w);
  }
  return out;
}

/** A call's arguments: an object whose compact JSON is at least 2 KB. */
function toolArgs(rand, i) {
  const rows = [];
  let args;
  do {
    rows.push({
      id: `row-${i}-${rows.length}`,
      label: textDeltas(rand, 6).join("").trim(),
      value: Math.round(rand() * 1e6) / 100,
      tags: ["a", "b", "c"].slice(0, 1 + Math.floor(rand() * 3)),
    });
    args = { query: `lookup ${i}`, limit: 10 + i, rows };
  } while (JSON.stringify(args).length < 2000);
  return args;
}

function fragments(rand, s) {
  const out = [];
  for (let i = 0; i < s.length; ) {
    const n = 1 + Math.floor(rand() * 12);
    out.push(s.slice(i, i + n));
    i += n;
  }
  return out;
}

/** JSON with the given separators after a key and between members. */
function printer(colon, comma) {
  const write = (v) => {
    if (Array.isArray(v)) return `[${v.map(write).join(comma)}]`;
    if (v !== null && typeof v === "object")
      return `{${Object.entries(v)
        .map(([k, x]) => `${JSON.stringify(k)}${colon}${write(x)}`)
        .join(comma)}}`;
    return JSON.stringify(v);
  };
  return write;
}

/** JSON as JavaScript (and most servers' compact printers) write it. */
export const compact = JSON.stringify;
/** Python's `json.dumps` defaults (vLLM, DeepSeek, Mistral, Anthropic's tool input). */
export const python = printer(": ", ", ");
/** Google's JSON printer (the Gemini API): `"key": value`, members joined by `,`. */
export const google = printer(": ", ",");

/**
 * The neutral content of a case: { deltas, calls: [{id, name, args}],
 * frags } where each call's `args` is its arguments' text as `write`
 * prints them and `frags` that text cut in 1-12 character fragments.
 */
export function content(kind, write = compact) {
  const rand = prng(kind === "chat" ? 1 : kind === "tools" ? 2 : 3);
  if (kind === "chat") return { deltas: textDeltas(rand, 2000), calls: [] };
  const n = kind === "tools" ? 8 : 80;
  const calls = [];
  for (let i = 0; i < n; i++)
    calls.push({
      id: `call_${i.toString(36).padStart(6, "0")}abc`,
      name: ["search_rows", "fetch_page", "summarize"][i % 3],
      args: write(toolArgs(rand, i)),
    });
  return { deltas: textDeltas(rand, 20), calls, frags: calls.map((c) => fragments(rand, c.args)) };
}
