// The loopback Google token endpoint the Vertex AI tests share
// (vertex.test.mjs, vertex-failures.test.mjs): it verifies each JWT with
// the key's public half (node:crypto, independent of skyl's signing
// through WebCrypto) and answers a numbered token, or what a test asks.
// useTokenEndpoint(mock) starts it for the test file and returns its
// state and helpers.
import { before, after } from "node:test";
import fs from "node:fs";
import http from "node:http";
import { createPublicKey, createVerify } from "node:crypto";

/** Starts the endpoint for this test file; its state, and helpers against it and `mock`. */
export function useTokenEndpoint(mock) {
  const fixtures = new URL("../fixtures/google/", import.meta.url);
  const KEY_FILE = JSON.parse(fs.readFileSync(new URL("service-account.json", fixtures), "utf8"));
  const PUBLIC = createPublicKey(fs.readFileSync(new URL("public.pem", fixtures)));
  const PRIVATE_BODY = KEY_FILE.private_key.split("\n")[1]; // one line of the key's base64

  /** The loopback token endpoint: verifies each JWT, answers a numbered token. */
  const tokens = {
    exchanges: [], // the verified claims and header of each exchange
    expiresIn: 3600,
    delayMs: 0,
    answer: null, // { status, body } to answer instead
  };
  let server;
  let tokenURI;
  before(async () => {
    server = http.createServer((req, res) => {
      let form = "";
      req.on("data", (c) => {
        form += c;
      });
      req.on("end", async () => {
        const params = new URLSearchParams(form);
        const jwt = params.get("assertion") ?? "";
        const [h, c, s] = jwt.split(".");
        const verified = createVerify("RSA-SHA256")
          .update(`${h}.${c}`)
          .verify(PUBLIC, Buffer.from(s ?? "", "base64url"));
        const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
        if (
          req.headers["content-type"] !== "application/x-www-form-urlencoded" ||
          params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
          !verified
        ) {
          res.writeHead(400, { "content-type": "application/json" });
          return res.end(
            JSON.stringify({ error: "invalid_grant", error_description: "Invalid JWT Signature." }),
          );
        }
        tokens.exchanges.push({ header: decode(h), claims: decode(c), at: Date.now() });
        if (tokens.delayMs) await new Promise((r) => setTimeout(r, tokens.delayMs));
        if (tokens.answer) {
          res.writeHead(tokens.answer.status, { "content-type": "application/json" });
          res.end(tokens.answer.body);
          if (tokens.answer.once) tokens.answer = null;
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            access_token: `ya29.loopback-token-${tokens.exchanges.length}`,
            expires_in: tokens.expiresIn,
            token_type: "Bearer",
          }),
        );
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    tokenURI = `http://127.0.0.1:${server.address().port}/token`;
  });
  after(() => server?.close());

  /** A fresh state for one test: no exchanges, hour-long tokens. */
  function reset() {
    tokens.exchanges = [];
    tokens.expiresIn = 3600;
    tokens.delayMs = 0;
    tokens.answer = null;
  }

  const account = () => ({ ...KEY_FILE, token_uri: tokenURI });

  /** A fetch that records each request (URL, headers, body), then sends it to the mock. */
  function recorder() {
    const sent = [];
    const fetchFn = async (url, init) => {
      const headers = Object.fromEntries(new Headers(init.headers));
      sent.push({ url: String(url), headers, body: init.body });
      if (String(url).startsWith(tokenURI)) return globalThis.fetch(url, init);
      const u = new URL(url);
      return globalThis.fetch(`${mock.url}${u.pathname}${u.search}`, init);
    };
    return { sent, fetchFn };
  }

  const gemini = (extra) => ({
    provider: "gemini",
    model: "gemini-2.5-flash",
    vertex: { project: "skyl-test", location: "us-central1" },
    baseURL: mock.url,
    ...extra,
  });

  return {
    KEY_FILE,
    PRIVATE_BODY,
    tokens,
    reset,
    account,
    recorder,
    gemini,
    tokenURI: () => tokenURI,
  };
}
