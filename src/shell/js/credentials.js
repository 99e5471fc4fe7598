// AWS credentials from a `credentials()` callback (Bedrock with STS, an
// IAM role, SSO): fetched when a request needs them, kept until
// CREDENTIALS_REFRESH_MS before their `expiration` (the core's margin), one
// fetch at a time however many requests wait, and fetched again when AWS
// refuses them. The run machine signs each attempt with what `fresh()`
// gives it.
import { asked, optionError as invalid } from "./errors.js";
import { call } from "./guard.js";
import { CREDENTIALS_REFRESH_MS } from "./policy.js";

/** `e` (a Date, a date string, ms, or null: never) in ms since the epoch. */
export function expiry(e, path) {
  const expires = e == null ? null : e instanceof Date ? e.getTime() : new Date(e).getTime();
  if (expires !== null && Number.isNaN(expires))
    throw invalid(path, "must be a Date, a date string or milliseconds");
  return expires;
}

/**
 * Throws unless `c` has the fields of AWS credentials (`at`: the path
 * before a field's name, "credentials." or "credentials().").
 */
export function awsFields(c, at) {
  for (const k of ["accessKeyId", "secretAccessKey"])
    if (typeof c[k] !== "string" || !c[k]) throw invalid(at + k, "must be a string");
  if (c.sessionToken != null && typeof c.sessionToken !== "string")
    throw invalid(`${at}sessionToken`, "must be a string");
}

/** A callback's credentials, checked, with their expiry in ms (or null). */
function checked(c, path) {
  const shape = "must resolve to { accessKeyId, secretAccessKey, sessionToken?, expiration? }";
  if (typeof c !== "object" || c === null) throw invalid(path, shape);
  awsFields(c, `${path}().`);
  const expires = expiry(c.expiration, `${path}().expiration`);
  const value = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey };
  if (c.sessionToken) value.sessionToken = c.sessionToken;
  return { value, expires };
}

/**
 * A secret that expires (AWS credentials, an OAuth token), from `load(arg)`
 * resolving to `{ value, expires }` (ms, or null: never): kept until
 * CREDENTIALS_REFRESH_MS before it expires, one load at a time however many
 * requests wait.
 */
export class Kept {
  constructor(load) {
    this.load = load;
    this.value = null;
    this.expires = null;
    this.pending = null;
    // Loads started, and the one whose value is kept.
    this.loads = this.kept = 0;
  }

  /** The kept value while it is valid for longer than the margin, or one load's. */
  get(arg) {
    const fresh =
      this.value && (this.expires === null || this.expires - Date.now() > CREDENTIALS_REFRESH_MS);
    if (fresh) return this.value;
    if (this.pending) return this.pending;
    const n = ++this.loads;
    const p = Promise.resolve(arg)
      .then(this.load)
      .then(({ value, expires }) => {
        // (A load let go by a run that stopped may end after a newer one:
        // its value is the older.)
        if (n > this.kept) {
          this.kept = n;
          this.value = value;
          this.expires = expires;
        }
        return value;
      })
      .finally(() => this.forget(p));
    this.pending = p;
    return p;
  }

  /**
   * The value for `run` (a Run), unless it stops first. A run that stops
   * while the load hangs (a callback that never settles) lets it go: the
   * next request loads anew instead of waiting on it until its own timeout.
   */
  async take(run, arg) {
    const p = this.get(arg);
    try {
      return await run.until(p);
    } catch (e) {
      if (run.stopped) this.forget(p);
      throw e;
    }
  }

  /** No longer shares load `p` (ended, or left by a run that stopped). */
  forget(p) {
    if (this.pending === p) this.pending = null;
  }

  /** Forgets `value` if it is the kept one (the provider refused it). */
  drop(value) {
    if (this.value === value) this.value = null;
  }
}

/** One chain entry's callback (`entry`: 0 the client's, then each fallback's). */
export class CredentialSource extends Kept {
  constructor(entry, fn, path) {
    super(async (secrets) => checked(await asked(fn, path, secrets), path));
    this.entry = entry;
  }

  /** Gives run `m` (a wasm Run) credentials `c`; adds their secrets to `key`. */
  give(m, key, c) {
    call(() => m.credentials(this.entry, JSON.stringify(c)));
    keep(key, c.secretAccessKey);
    keep(key, c.sessionToken);
  }
}

/**
 * Gives the machine of `run` (a Run) each source's fresh credentials or
 * token (`stale`: the provider refused the last ones, renewed first), and
 * adds their secrets to `run.key` (the run's secrets, scrubbed from its
 * errors); a run that stops ends its wait for a callback. `run.gave` holds
 * what the run gave each entry: a refused value is dropped only if it is
 * still the kept one (another run may have renewed it).
 */
export async function fresh(sources, run, stale) {
  const { gave } = run;
  for (const s of sources) {
    if (stale) s.drop(gave[s.entry]);
    gave[s.entry] = await s.take(run, run.key);
    s.give(run.m, run.key, gave[s.entry]);
  }
}

/** Adds `secret` to `key` (a run's secrets, the longest first), once. */
export function keep(key, secret) {
  if (secret && !key.includes(secret)) {
    key.push(secret);
    key.sort((a, b) => b.length - a.length);
  }
}
