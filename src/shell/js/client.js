// The entry points that start a request: Client (its options checked here,
// before anything is sent), decodeStream, and the validate* helpers.
//
// The constructor is synchronous and, in a browser, runs before the
// WebAssembly module has loaded; the core's rules it needs (the providers,
// which need a baseURL, the defaults) come from policy.js, generated from
// the Rust (src/shell/policy_js.rs). Everything else it checks is about JS
// values: their types, and what fetch would refuse.

import * as wasm from "./skyl_wasm.js";
// Written by scripts/build beside each entry's wasm: the adapters it has.
import { ADAPTERS, ENTRY } from "./adapters.js";
import {
  BASE_URL_REQUIRED,
  REGION_REQUIRED,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TOTAL_TIMEOUT_MS,
  HEADER_NAME_SYMBOLS,
  NO_EMBEDDINGS,
  PROVIDER_FEATURES,
  SECRET_HEADERS,
} from "./policy.js";
import { makeError, optionError, requestError } from "./errors.js";
import { call } from "./guard.js";
import { parse } from "./boundary.js";
import { Run } from "./run.js";
import { StreamResult } from "./result.js";
import { RunResult } from "./tool-run.js";
import { Embed } from "./embed.js";
import { awsFields, CredentialSource } from "./credentials.js";
import { checkVertex, notOnVertex, tokenSources, vertexSecrets } from "./vertex.js";

// SKYL_VERTEX, SKYL_AWS and SKYL_EMBED: whether this entry's WebAssembly
// has Vertex AI's tokens, AWS credentials and an embed machine. scripts/build
// sets them per entry (esbuild --define, from the wasm's exports), so that
// an entry without one ships none of its JS.

/** The providers this entry speaks (all six from "skyl"; one adapter's from "skyl/openai", ...). */
export const PROVIDERS = Object.freeze([...ADAPTERS]);

/** The option error for a provider this entry does not speak. */
function providerError(provider) {
  const known = Object.keys(PROVIDER_FEATURES).includes(provider);
  const hint =
    known && ENTRY !== "skyl"
      ? `; ${ENTRY} is built without the ${provider} adapter: import "skyl" for every provider`
      : "";
  return optionError(
    "provider",
    `must be one of ${PROVIDERS.join(", ")}; got ${JSON.stringify(provider)}${hint}`,
  );
}

function validateAs(kind, value) {
  const out = call(() => wasm.validate(kind, JSON.stringify(value ?? null)));
  if (out) throw makeError(parse(out).error);
}
/** Throws InvalidRequestError unless `tool` has a non-empty name (and an object schema). */
export const validateTool = (tool) => validateAs("tool", tool);
/** Throws InvalidRequestError unless `call` has an id and a name. */
export const validateToolCall = (call) => validateAs("toolCall", call);
/** Throws InvalidRequestError for an invalid request (tools, calls, results answering unknown ids). */
export const validateRequest = (request) => validateAs("request", request);

const isBrowser = () => typeof window !== "undefined" && typeof document !== "undefined";

/**
 * Why `value` cannot be sent as an HTTP header value, or null: fetch
 * refuses it (before sending anything) after trimming outer whitespace.
 */
function headerValueProblem(value) {
  const bad = /[\0\r\n]|[^\0-\xff]/.exec(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""));
  if (!bad) return null;
  const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `has a character that cannot be sent in an HTTP header (U+${code} at position ${bad.index + 1}; a pasted quote or line break?)`;
}

/** A header name: one or more of RFC 9110's `tchar` (the core's rule, from policy.js). */
const HEADER_NAME = new RegExp(`^[0-9A-Za-z${HEADER_NAME_SYMBOLS.replace(/[\\\]^-]/g, "\\$&")}]+$`);

function checkTimeout(name, v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v))
    throw optionError(name, "must be a positive number of milliseconds");
  return v;
}
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks one provider's options (the client's, or a fallback entry's at
 * `at`, "fallback[0]."): provider, model, apiKey, baseURL, headers,
 * maxRetries.
 */
function checkProvider(o, at = "") {
  if (!PROVIDERS.includes(o.provider)) {
    const e = providerError(o.provider);
    if (!at) throw e;
    throw optionError(`${at}provider`, e.message.replace(/^skyl: option provider: /, ""));
  }
  for (const k of ["model", "apiKey", "baseURL"]) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== "string")
      throw optionError(at + k, "must be a string");
  }
  const needsBaseURL = BASE_URL_REQUIRED[o.provider];
  if (needsBaseURL && !o.baseURL) throw optionError(`${at}baseURL`, needsBaseURL);
  if (o.region !== undefined && o.region !== null && typeof o.region !== "string")
    throw optionError(`${at}region`, "must be a string");
  const needsRegion = REGION_REQUIRED[o.provider];
  if (needsRegion && !o.region && !o.baseURL) throw optionError(`${at}region`, needsRegion);
  checkCredentials(o, at);
  if (SKYL_VERTEX) checkVertex(o, at);
  else notOnVertex(o, at);
  if (o.baseURL) {
    try {
      new URL(o.baseURL);
    } catch {
      throw optionError(`${at}baseURL`, `is not a URL: ${JSON.stringify(o.baseURL)}`);
    }
  }
  if (o.headers !== undefined && !isObject(o.headers))
    throw optionError(`${at}headers`, "must be an object of header names to strings");
  // A Headers or a Map, as fetch takes them, is read as that object.
  if (typeof o.headers?.entries === "function") o.headers = Object.fromEntries(o.headers.entries());
  if (o.includeUsage != null && typeof o.includeUsage !== "boolean")
    throw optionError(`${at}includeUsage`, "must be true or false");
  // Checked here: fetch would refuse them only when sending, as if the
  // network had failed (and the key's position, not the key, is shown).
  if (o.apiKey) {
    const problem = headerValueProblem(o.apiKey);
    if (problem) throw optionError(`${at}apiKey`, problem);
  }
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    if (!HEADER_NAME.test(name))
      throw optionError(`${at}headers`, `${JSON.stringify(name)} is not a header name`);
    const problem = typeof value === "string" ? headerValueProblem(value) : "must be a string";
    if (problem) throw optionError(`${at}headers.${name}`, problem);
  }
  if (o.maxRetries !== undefined && !(Number.isInteger(o.maxRetries) && o.maxRetries >= 0))
    throw optionError(`${at}maxRetries`, "must be a whole number, 0 or more");
}

/**
 * AWS credentials (Bedrock): `{ accessKeyId, secretAccessKey, sessionToken? }`,
 * signed into each attempt by the core; with them the region is needed, and
 * an apiKey (a Bedrock API key) is not taken as well.
 */
function checkCredentials(o, at) {
  const c = o.credentials;
  if (c === undefined || c === null) return;
  // (An entry without Bedrock: the core's reader has no such option, so it
  // would go unused; the full entry's core says the same when it encodes.)
  if (!SKYL_AWS)
    throw optionError(
      `${at}credentials`,
      `${o.provider} takes no AWS credentials (a bedrock option)`,
    );
  if (typeof c !== "function") {
    if (!isObject(c))
      throw optionError(
        `${at}credentials`,
        "must be an object { accessKeyId, secretAccessKey, sessionToken? }, or an async function returning one (with expiration)",
      );
    awsFields(c, `${at}credentials.`);
  }
  if (o.apiKey)
    throw optionError(`${at}apiKey`, "give a Bedrock API key or AWS credentials, not both");
  if (!o.region)
    throw optionError(
      `${at}region`,
      "signing with AWS credentials needs the region (e.g. us-east-1)",
    );
}

/** The options of the whole chain that one client alone sets. */
const CHAIN_WIDE = [
  "fallback",
  "fallbackOn",
  "timeout",
  "fetch",
  "dangerouslyAllowBrowser",
  "maxEventBytes",
];

/** The fallback entries, checked, each with its retries (the client's by default). */
function checkFallback(list, maxRetries) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw optionError("fallback", "must be an array of client options");
  return list.map((entry, i) => {
    const at = `fallback[${i}].`;
    if (!isObject(entry))
      throw optionError(
        `fallback[${i}]`,
        'pass an object such as { provider: "anthropic", model, apiKey }',
      );
    const e = { ...entry };
    checkProvider(e, at);
    for (const k of CHAIN_WIDE)
      if (e[k] !== undefined)
        throw optionError(at + k, "is the client's, for the whole chain: set it on the client");
    e.maxRetries ??= maxRetries;
    return e;
  });
}

/** The statuses that switch besides the default ones. */
function checkFallbackOn(list) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list) || !list.every((s) => Number.isInteger(s) && s >= 100 && s <= 599))
    throw optionError("fallbackOn", "must be an array of HTTP statuses, such as [401, 404]");
  return list;
}

/**
 * Every secret `entries` send (their keys; their credential headers' values,
 * a bearer token also without its scheme: the core's rule), the longest
 * first, so that a key that begins another leaves none of the other behind.
 */
function secretsOf(entries) {
  const out = [];
  for (const o of entries) {
    if (o.apiKey) out.push(o.apiKey);
    if (SKYL_VERTEX) out.push(...vertexSecrets(o));
    if (isObject(o.credentials)) {
      if (o.credentials.secretAccessKey) out.push(o.credentials.secretAccessKey);
      if (o.credentials.sessionToken) out.push(o.credentials.sessionToken);
    }
    for (const [name, value] of Object.entries(o.headers ?? {})) {
      if (!SECRET_HEADERS.includes(name.toLowerCase())) continue;
      out.push(value);
      if (value.startsWith("Bearer ")) out.push(value.slice(7));
    }
  }
  return out.sort((a, b) => b.length - a.length);
}

/** What the core reads of one provider's options (shell/mod.rs, ConfigInput). */
const wire = (o, browser) => ({
  provider: o.provider,
  apiKey: o.apiKey ?? "",
  baseURL: o.baseURL,
  model: o.model,
  headers: o.headers,
  browser,
  includeUsage: o.includeUsage,
  maxRetries: o.maxRetries,
  region: o.region ?? undefined,
  credentials: isObject(o.credentials) ? o.credentials : undefined,
  vertex: o.vertex ?? undefined,
  accessToken: typeof o.accessToken === "string" ? o.accessToken : undefined,
});

/** A client for one provider (and its fallback chain). See the README for every option. */
export class Client {
  #o;
  #key;
  #fetch;

  constructor(options) {
    if (!options || typeof options !== "object")
      throw optionError("options", 'pass an object such as { provider: "openai", model, apiKey }');
    const o = { ...options };
    checkProvider(o);
    if (o.fetch !== undefined && typeof o.fetch !== "function")
      throw optionError("fetch", "must be a function with the signature of the global fetch");
    const maxRetries = o.maxRetries ?? DEFAULT_MAX_RETRIES;
    const fallback = checkFallback(o.fallback, maxRetries);
    const fallbackOn = checkFallbackOn(o.fallbackOn);
    const max = o.maxEventBytes;
    if (max != null && !(Number.isInteger(max) && max > 0 && max <= 2 ** 32 - 1))
      throw optionError("maxEventBytes", "must be a whole number of bytes, 1 to 4294967295");
    const t = o.timeout;
    let timeouts;
    if (typeof t === "object" && t !== null) {
      timeouts = {
        total: checkTimeout("timeout.total", t.total) ?? DEFAULT_TOTAL_TIMEOUT_MS,
        firstByte: checkTimeout("timeout.firstByte", t.firstByte),
        idle: checkTimeout("timeout.idle", t.idle),
      };
    } else {
      timeouts = { total: checkTimeout("timeout", t) ?? DEFAULT_TOTAL_TIMEOUT_MS };
    }
    const keyed = (e) => e.apiKey || e.credentials || e.accessToken || e.serviceAccount;
    if ((keyed(o) || fallback.some(keyed)) && isBrowser() && !o.dangerouslyAllowBrowser) {
      throw optionError(
        "dangerouslyAllowBrowser",
        "an API key in a browser is visible to every user of the page. Call the provider from a server (see www/worker/) or pass dangerouslyAllowBrowser: true if you accept that.",
      );
    }
    // Every secret of the chain is scrubbed from what a request reports;
    // each request gets a copy, to which it adds the tokens and session
    // credentials it is given (so that the client's list does not grow
    // with every renewal for as long as it lives).
    this.#key = secretsOf([o, ...fallback]);
    this.#fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const browser = Boolean(o.dangerouslyAllowBrowser && isBrowser());
    this.#o = {
      provider: o.provider,
      model: o.model,
      baseURL: o.baseURL,
      headers: o.headers,
      maxRetries,
      timeouts,
      fallback: fallback.map((f) => ({ provider: f.provider, model: f.model, baseURL: f.baseURL })),
      // Credentials from callbacks, fetched before each attempt (run.js).
      aws: !SKYL_AWS
        ? []
        : [o, ...fallback]
            .map((e, i) => [e.credentials, i])
            .filter(([c]) => typeof c === "function")
            .map(
              ([c, i]) =>
                new CredentialSource(i, c, i ? `fallback[${i - 1}].credentials` : "credentials"),
            ),
      // Vertex AI's tokens, from callbacks and service accounts (tokens.js).
      tokens: SKYL_VERTEX ? tokenSources([o, ...fallback], this.#fetch) : [],
      config: JSON.stringify({
        ...wire(o, browser),
        maxRetries: undefined,
        fallback: fallback.map((f) => wire(f, browser)),
        fallbackOn,
        maxEventBytes: max ?? undefined,
      }),
    };
  }

  /** The provider this client speaks. */
  get provider() {
    return this.#o.provider;
  }

  /** Sends `request` and resolves with the whole response. */
  async complete(request) {
    const run = new Run(this.#o, [...this.#key], this.#fetch, request, false);
    return run.complete();
  }

  /** Sends `request` and streams the answer: `for await (const ev of client.stream(req))`. */
  stream(request) {
    return new StreamResult(new Run(this.#o, [...this.#key], this.#fetch, request, true));
  }

  /**
   * Runs the tool loop: streams each step, runs the tools' `execute`, sends
   * the results back, until the model answers or a limit, a cut-off turn, an
   * approval or a client tool stops it. Every decision is the core's.
   */
  run(request) {
    return new RunResult(this.#o, [...this.#key], this.#fetch, request);
  }

  /**
   * Embeds `values` (strings), in batches the core sizes for the provider,
   * at most `maxConcurrency` at once; resolves to `{ embeddings, usage,
   * model, batches }`, the embeddings in the values' order. A batch that
   * fails for good rejects with its typed error, whose `partial` keeps
   * every vector that came.
   */
  async embed(request) {
    if (!request || typeof request !== "object" || !Array.isArray(request.values))
      throw requestError("values", "pass an array of strings");
    // A provider without embeddings is the embed machine's error (the
    // core's table); an entry without the machine answers from policy.js.
    // (One branch each, so that esbuild drops the other from each entry.)
    if (SKYL_EMBED) return new Embed(this.#o, [...this.#key], this.#fetch, request).run();
    else {
      const why = NO_EMBEDDINGS[this.#o.provider] ?? "this entry's build has no embeddings";
      throw requestError("provider", why);
    }
  }

  toJSON() {
    const { provider, model, baseURL, fallback } = this.#o;
    return fallback.length ? { provider, model, baseURL, fallback } : { provider, model, baseURL };
  }
}

/** Decodes a body you already have (your own fetch, a Workers binding, a proxy, a cache). */
export function decodeStream(provider, body, options = {}) {
  if (!PROVIDERS.includes(provider)) throw providerError(provider);
  const source =
    typeof Response !== "undefined" && body instanceof Response
      ? body
      : { ok: true, status: 200, headers: new Headers(), body };
  if (!source.body || typeof source.body.getReader !== "function")
    throw optionError("body", "must be a ReadableStream or a Response with a body");
  return new StreamResult(
    new Run(
      { provider, maxRetries: 0, timeouts: {}, config: "" },
      "",
      null,
      { signal: options.signal },
      true,
      source,
    ),
  );
}
