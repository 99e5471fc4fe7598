// OAuth access tokens for Vertex AI, from an `accessToken` callback or a
// service account's key file (`serviceAccount`). The core reads the key
// file, builds the JWT's signing input and reads the token endpoint's
// answer (src/google_auth.rs); this module signs it with WebCrypto (RS256)
// and makes the one fetch. A token is kept until CREDENTIALS_REFRESH_MS
// before it expires, one fetch at a time however many requests wait; a
// token the provider refused (a 401: the run machine's `entry`, negative) is
// dropped, and the machine tries once more with a new one.
import * as wasm from "./skyl_wasm.js";
import {
  asked,
  ConnectionError,
  localError,
  makeError,
  optionError as invalid,
  scrub,
} from "./errors.js";
import { call } from "./guard.js";
import { parse } from "./boundary.js";
import { TOKEN_EXCHANGE_TIMEOUT_MS } from "./policy.js";
import { expiry, keep, Kept } from "./credentials.js";

/** A callback's `{ token, expiresAt }`, checked: the token and its expiry in ms (or null). */
function checked(t, path) {
  if (typeof t === "string" && t) return { value: t, expires: null };
  if (typeof t !== "object" || t === null || typeof t.token !== "string" || !t.token)
    throw invalid(`${path}()`, "must resolve to { token, expiresAt? } or a token string");
  return { value: t.token, expires: expiry(t.expiresAt, `${path}().expiresAt`) };
}

/** base64url (or base64) to bytes. */
function bytes(b64) {
  const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** Bytes to base64url without padding. */
function base64url(buf) {
  let s = "";
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * A token for a service account's key file (`keyFile`: its JSON text): the
 * JWT signed with WebCrypto, exchanged with `fetchFn` at the key file's
 * token_uri. Rejects with a typed error; never with the key or a token.
 */
async function exchange(keyFile, fetchFn, secrets) {
  if (!wasm.Run.serviceAccountJwt)
    throw invalid("serviceAccount", 'this entry\'s build has no Vertex AI: import "skyl"');
  const out = parse(call(() => wasm.Run.serviceAccountJwt(keyFile, Math.floor(Date.now() / 1000))));
  if (out.error) throw makeError(out.error, secrets);
  const { input, key, tokenUri, form } = out.ok;
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw invalid("serviceAccount", "signing its JWT needs WebCrypto (globalThis.crypto.subtle)");
  let signature;
  try {
    const rsa = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const k = await subtle.importKey("pkcs8", bytes(key), rsa, false, ["sign"]);
    signature = await subtle.sign(rsa.name, k, new TextEncoder().encode(input));
  } catch {
    // (WebCrypto's message may name the key's bytes: not passed on.)
    throw invalid("serviceAccount.private_key", "WebCrypto refused it as an RSA PKCS#8 key");
  }
  const jwt = `${input}.${base64url(signature)}`;
  let res;
  let body;
  try {
    // (Shared by every request that waits for it: its own time limit, so
    // that an endpoint that hangs fails them and the next one tries again.)
    res = await fetchFn(tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `${form}${jwt}`,
      signal: AbortSignal.timeout(TOKEN_EXCHANGE_TIMEOUT_MS),
    });
    body = await res.text();
  } catch (cause) {
    // The JWT is a credential for an hour: never in the message.
    const why = scrub(scrub(String(cause?.message ?? cause), jwt), secrets);
    throw new ConnectionError(
      localError(
        "ConnectionError",
        "network",
        `skyl: the service account's token exchange at ${tokenUri} failed: ${why}`,
        { retryable: true },
      ),
    );
  }
  const answer = parse(call(() => wasm.Run.tokenAnswer(res.status, body, Date.now())));
  if (answer.error) throw makeError(answer.error, secrets);
  return { value: answer.ok.token, expires: answer.ok.expiresAt };
}

/**
 * One chain entry's token source (`entry`: 0 the client's, then each
 * fallback's): `fn` a callback, or `keyFile` a service account's key file
 * (JSON text) exchanged with `fetchFn`. `get(secrets)` scrubs the run's
 * secrets from an exchange's error.
 */
export class TokenSource extends Kept {
  constructor(entry, { fn, keyFile, fetchFn }, path) {
    super(async (secrets) =>
      keyFile ? exchange(keyFile, fetchFn, secrets) : checked(await asked(fn, path, secrets), path),
    );
    this.entry = entry;
  }

  /** Gives run `m` (a wasm Run) token `t`; adds it to `key`. */
  give(m, key, t) {
    call(() => m.accessToken(this.entry, t));
    keep(key, t);
  }
}
