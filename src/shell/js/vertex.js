// Vertex AI's options, checked when the client is made: `vertex: { project,
// location }` on gemini or anthropic, with one of `apiKey` (Gemini's
// express mode), `accessToken` (a string, or an async function resolving
// to { token, expiresAt }) or `serviceAccount` (the key file's JSON, as an
// object or text). Which combinations the endpoint takes (a project with a
// location, express mode's global endpoint) is the core's rule
// (src/providers/vertex.rs), checked before anything is sent.
import { optionError } from "./errors.js";
import { TokenSource } from "./tokens.js";

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** The providers Vertex AI serves through skyl. */
const ON_VERTEX = ["gemini", "anthropic"];

/**
 * In an entry none of whose providers Vertex AI serves (skyl/openai,
 * skyl/bedrock): its options are refused by name, as checkVertex would.
 */
export function notOnVertex(o, at) {
  for (const k of ["vertex", "accessToken", "serviceAccount"])
    if (o[k] !== undefined && o[k] !== null)
      throw optionError(
        at + k,
        `is Vertex AI's, which serves ${ON_VERTEX.join(" and ")}, not ${o.provider}`,
      );
}

/**
 * Checks one entry's Vertex options (`at`: "" or "fallback[0]."): the
 * shapes, one way to authenticate, and vertex for the token options.
 */
export function checkVertex(o, at) {
  const v = o.vertex;
  const given = ["apiKey", "accessToken", "serviceAccount"].filter((k) => o[k]);
  if (v === undefined || v === null) {
    for (const k of ["accessToken", "serviceAccount"])
      if (o[k] !== undefined && o[k] !== null)
        throw optionError(at + k, "is Vertex AI's: set vertex: { project, location } as well");
    return;
  }
  if (!ON_VERTEX.includes(o.provider))
    throw optionError(`${at}vertex`, `Vertex AI serves gemini and anthropic, not ${o.provider}`);
  if (!isObject(v)) throw optionError(`${at}vertex`, "must be an object { project, location }");
  for (const k of ["project", "location"])
    if (v[k] !== undefined && v[k] !== null && typeof v[k] !== "string")
      throw optionError(`${at}vertex.${k}`, "must be a string");
  if (given.length > 1)
    throw optionError(
      at + given[1],
      `give one of apiKey (express mode), accessToken or serviceAccount, not ${given.join(" and ")}`,
    );
  const t = o.accessToken;
  if (t !== undefined && t !== null && typeof t !== "string" && typeof t !== "function")
    throw optionError(
      `${at}accessToken`,
      "must be a string, or an async function resolving to { token, expiresAt }",
    );
  const sa = o.serviceAccount;
  if (sa !== undefined && sa !== null && typeof sa !== "string" && !isObject(sa))
    throw optionError(`${at}serviceAccount`, "must be the key file's JSON (an object or its text)");
}

/** A service account's private key, to scrub (its PEM), if `o` has one. */
export function vertexSecrets(o) {
  let sa = o.serviceAccount;
  if (typeof sa === "string") {
    try {
      sa = JSON.parse(sa);
    } catch {
      return [sa];
    }
  }
  const pem = isObject(sa) && typeof sa.private_key === "string" ? sa.private_key : null;
  return [pem, typeof o.accessToken === "string" ? o.accessToken : null].filter(Boolean);
}

/** The token sources of a chain's entries: callbacks and service accounts. */
export function tokenSources(entries, fetchFn) {
  const out = [];
  entries.forEach((e, i) => {
    const path = (k) => (i ? `fallback[${i - 1}].${k}` : k);
    if (typeof e.accessToken === "function")
      out.push(new TokenSource(i, { fn: e.accessToken }, path("accessToken")));
    else if (e.serviceAccount) {
      const keyFile =
        typeof e.serviceAccount === "string" ? e.serviceAccount : JSON.stringify(e.serviceAccount);
      out.push(new TokenSource(i, { keyFile, fetchFn }, path("serviceAccount")));
    }
  });
  return out;
}
