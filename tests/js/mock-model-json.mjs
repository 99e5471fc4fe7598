// The mock model's structured output: a JSON value that conforms to the
// schema a request gives, filled from what it knows (the question's place,
// numbers, units and expression; tool results; an attached file), and
// otherwise from the schema's own default, examples or bounds.

import { escapeRegExp } from "./mock-model-intents.mjs";

const MAX_DEPTH = 8;

/** The schema `s` points at through a local $ref, with allOf merged; bounded. */
function resolve(root, s, depth = 0) {
  let schema = s && typeof s === "object" ? s : {};
  for (let i = 0; i < 8 && typeof schema.$ref === "string"; i++) {
    const path = schema.$ref.replace(/^#\/?/, "").split("/").filter(Boolean);
    let target = root;
    for (const key of path) target = target?.[key.replace(/~1/g, "/").replace(/~0/g, "~")];
    schema = { ...(target ?? {}), ...schema, $ref: undefined };
  }
  if (Array.isArray(schema.allOf) && depth < MAX_DEPTH) {
    const merged = { ...schema, allOf: undefined };
    for (const part of schema.allOf) {
      const r = resolve(root, part, depth + 1);
      merged.properties = { ...merged.properties, ...r.properties };
      merged.required = [...(merged.required ?? []), ...(r.required ?? [])];
      merged.type ??= r.type;
    }
    schema = merged;
  }
  const choice = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choice) && choice.length && depth < MAX_DEPTH) {
    const pick = choice.find((c) => c?.type !== "null") ?? choice[0];
    schema = { ...schema, anyOf: undefined, oneOf: undefined, ...resolve(root, pick, depth + 1) };
  }
  return schema;
}

const typeOf = (s) => {
  const t = Array.isArray(s.type) ? (s.type.find((x) => x !== "null") ?? s.type[0]) : s.type;
  if (t) return t;
  if (s.properties) return "object";
  if (s.items) return "array";
  return "string";
};

const norm = (k) =>
  String(k)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");

/** A fact by key: the tool results' fields first, then the question's. */
function known(facts, key) {
  const k = norm(key);
  for (const r of facts.results ?? [])
    if (r && typeof r === "object" && !Array.isArray(r))
      for (const [rk, v] of Object.entries(r)) if (norm(rk) === k) return v;
  if (/city|location|place|town|where|country|region/.test(k) && facts.place) return facts.place;
  if (/expr|formula|equation/.test(k) && facts.expression) return facts.expression;
  const c = facts.conversion;
  if (c && /^(value|amount|quantity)$/.test(k)) return c.value;
  if (c && /^(from|fromunit|unitfrom|source)$/.test(k)) return c.from;
  if (c && /^(to|tounit|unitto|target)$/.test(k)) return c.to;
  const file = facts.file;
  if (file && /^(filename|file|name|title)$/.test(k) && file.filename) return file.filename;
  if (file && /^(pages|pagecount|numpages)$/.test(k) && file.pages != null) return file.pages;
  if (file && /^(text|content|contents|summary)$/.test(k) && file.text) return file.text;
  if (file && /^(mediatype|mimetype|type)$/.test(k) && file.mediaType) return file.mediaType;
  if (file && /^(size|bytes|sizebytes)$/.test(k) && file.size != null) return file.size;
  // Free text: what the model would have said in words, when it knows.
  const freeText =
    /answer|summary|description|advice|comment|note|explanation|message|reply|details/;
  if (facts.words && freeText.test(k)) return facts.words;
  return undefined;
}

/** A value of `schema` for `key`. */
function fill(root, schema, key, facts, depth) {
  const s = resolve(root, schema, depth);
  if ("const" in s) return s.const;
  const type = typeOf(s);
  const fact = key == null ? undefined : known(facts, key);
  if (Array.isArray(s.enum) && s.enum.length) {
    const said = s.enum.find(
      (v) =>
        (fact !== undefined && norm(v) === norm(fact)) ||
        new RegExp(`\\b${escapeRegExp(String(v))}\\b`, "i").test(facts.question ?? ""),
    );
    return said ?? s.enum[0];
  }
  if (type === "object" && depth < MAX_DEPTH) {
    const out = {};
    for (const [k, p] of Object.entries(s.properties ?? {}))
      out[k] = fill(root, p, k, facts, depth + 1);
    return out;
  }
  if (type === "array") {
    const n = Math.max(s.minItems ?? 0, Array.isArray(fact) ? 0 : fact !== undefined ? 1 : 0);
    if (Array.isArray(fact)) return fact.slice(0, s.maxItems ?? fact.length);
    return Array.from({ length: Math.min(n, s.maxItems ?? n) }, () =>
      fill(root, s.items ?? {}, key, facts, depth + 1),
    );
  }
  const fallback = s.default ?? (Array.isArray(s.examples) ? s.examples[0] : undefined);
  if (type === "number" || type === "integer") {
    let v = Number(typeof fact === "number" || typeof fact === "string" ? fact : fallback);
    if (!Number.isFinite(v)) v = s.minimum ?? s.exclusiveMinimum ?? 0;
    if (s.minimum != null) v = Math.max(v, s.minimum);
    if (s.maximum != null) v = Math.min(v, s.maximum);
    return type === "integer" ? Math.round(v) : v;
  }
  if (type === "boolean") return typeof fact === "boolean" ? fact : (fallback ?? false);
  if (type === "null") return null;
  let str =
    fact !== undefined && typeof fact !== "object"
      ? String(fact)
      : s.format === "date"
        ? new Date().toISOString().slice(0, 10)
        : s.format === "date-time"
          ? new Date().toISOString()
          : String(fallback ?? "unknown");
  if (s.maxLength != null) str = str.slice(0, s.maxLength);
  if (s.minLength != null) str = str.padEnd(s.minLength, ".");
  return str;
}

/**
 * The JSON text of a structured answer. With a schema, a value of it;
 * without one (plain JSON mode), an object of what is known plus `answer`,
 * the words the model would have said (which also fill a schema's free-text
 * fields, such as `summary` or `advice`, when it has them).
 */
export function structuredAnswer(schema, facts, words) {
  if (schema && typeof schema === "object")
    return JSON.stringify(fill(schema, schema, null, { ...facts, words }, 0));
  const out = {};
  if (facts.place) out.city = facts.place;
  for (const r of facts.results ?? [])
    if (r && typeof r === "object" && !Array.isArray(r)) Object.assign(out, r);
  if (facts.conversion && !("result" in out)) Object.assign(out, facts.conversion);
  if (facts.expression && !("expression" in out)) out.expression = facts.expression;
  if (words) out.answer = words;
  return JSON.stringify(out);
}
