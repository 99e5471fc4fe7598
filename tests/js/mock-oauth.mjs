// The mock's Google token endpoint (POST /oauth2/token): a service
// account's JWT bearer grant (RFC 7523), its RS256 signature verified with
// the test key's public half (tests/fixtures/google/public.pem) and its
// claims checked as Google checks them; the answer a numbered token
// (`ya29.mock-token-<n>`, an hour long), or Google's `invalid_grant`.
// GET /oauth2/_test-key serves the test key file with its token_uri set to
// this endpoint, for apps that cannot read a file (a page, a Worker).
import fs from "node:fs";
import { createPublicKey, createVerify } from "node:crypto";

const PUBLIC = createPublicKey(
  fs.readFileSync(new URL("../fixtures/google/public.pem", import.meta.url)),
);
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** Why `jwt` would be refused for `audience`, or null. */
export function jwtProblem(jwt, audience) {
  const [h, c, s] = (jwt ?? "").split(".");
  if (!h || !c || !s) return "Invalid JWT: not three parts.";
  const ok = createVerify("RSA-SHA256")
    .update(`${h}.${c}`)
    .verify(PUBLIC, Buffer.from(s, "base64url"));
  if (!ok) return "Invalid JWT Signature.";
  let header;
  let claims;
  try {
    header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
    claims = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
  } catch {
    return "Invalid JWT: not JSON.";
  }
  if (header.alg !== "RS256") return "Invalid JWT: alg must be RS256.";
  if (claims.scope !== SCOPE) return "Invalid JWT: bad scope.";
  if (claims.aud !== audience) return `Invalid JWT: aud must be ${audience}.`;
  const now = Date.now() / 1000;
  if (!(claims.iat <= now + 60 && claims.exp > now && claims.exp - claims.iat <= 3600))
    return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.";
  return null;
}

/** Answers one exchange; `state.exchanges` counts those that succeeded. */
export function oauthAnswer(req, res, raw, state) {
  const form = new URLSearchParams(raw);
  const audience = `http://${req.headers.host}/oauth2/token`;
  const grant = form.get("grant_type") === "urn:ietf:params:oauth:grant-type:jwt-bearer";
  const problem = grant ? jwtProblem(form.get("assertion"), audience) : "Invalid grant_type.";
  res.setHeader("content-type", "application/json");
  if (problem)
    return res
      .writeHead(400)
      .end(JSON.stringify({ error: "invalid_grant", error_description: problem }));
  state.exchanges += 1;
  res.writeHead(200).end(
    JSON.stringify({
      access_token: `ya29.mock-token-${state.exchanges}`,
      expires_in: 3599,
      token_type: "Bearer",
    }),
  );
}

const KEY_FILE = fs.readFileSync(
  new URL("../fixtures/google/service-account.json", import.meta.url),
  "utf8",
);

/** The test key file, exchanged at this mock's token endpoint. */
export function testKey(req, res) {
  const file = { ...JSON.parse(KEY_FILE), token_uri: `http://${req.headers.host}/oauth2/token` };
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(file));
}

/**
 * Why a Vertex AI request's credentials are refused, or null. A request to
 * a project's path needs a bearer token, and a token this mock issued
 * (`ya29.mock-token-N`) must be one it has issued; express mode's
 * publishers path takes a key instead. Other paths: null.
 */
export function vertexProblem(url, headers, state) {
  const path = url.pathname;
  if (!/^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/)?publishers\//.test(path)) return null;
  const auth = headers.authorization ?? "";
  if (!auth && headers["x-goog-api-key"] && !path.includes("/projects/")) return null;
  const bearer = /^Bearer (\S+)$/.exec(auth);
  if (!bearer) return "Request is missing required authentication credential.";
  const issued = /^ya29\.mock-token-(\d+)$/.exec(bearer[1]);
  if (issued && Number(issued[1]) > state.exchanges)
    return "Request had invalid authentication credentials.";
  return null;
}
