// The demo's Worker: the pattern to follow in production. The API keys live
// in the Worker's environment, never in the page. The page posts the
// conversation; the Worker calls the provider with skyl and streams skyl's
// events back as server-sent events (`data: <event JSON>`), ending with the
// `finish` event or an `event: error`.
//
// Without a key for a provider, it talks to the local mock provider
// (MOCK_URL), which answers in that provider's real wire format.
//
// GET /api/_memory is a diagnostic for scripts/worker-memory.mjs, served
// only when the variable DIAGNOSTICS is "1" (it is "0" in wrangler.toml,
// so the demo answers 404 there).
import { Client, SkylError, wasmMemorySize } from "skyl";

const PROVIDERS = {
  openai: { key: "OPENAI_API_KEY", model: "gpt-4.1-mini" },
  openaicompat: {
    key: "OPENAICOMPAT_API_KEY",
    model: "llama-3.3-70b-versatile",
    baseURL: "OPENAICOMPAT_BASE_URL",
  },
  anthropic: { key: "ANTHROPIC_API_KEY", model: "claude-sonnet-4-5" },
  gemini: { key: "GEMINI_API_KEY", model: "gemini-2.5-flash" },
  // OpenAI's Responses API (/v1/responses), with the same key.
  responses: { key: "OPENAI_API_KEY", model: "gpt-4.1-mini" },
  // Amazon Bedrock: a Bedrock API key, or AWS credentials (signed per
  // attempt), and the region either way.
  bedrock: {
    key: "AWS_BEARER_TOKEN_BEDROCK",
    model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    region: "AWS_REGION",
  },
};

/** AWS credentials from the Worker's secrets, if both halves are set. */
function awsCredentials(env) {
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    sessionToken: env.AWS_SESSION_TOKEN || undefined,
  };
}

const cors = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "content-type",
};

/** Whether `provider` is live (a key is configured) and where it goes. */
function route(env, provider) {
  const p = PROVIDERS[provider];
  const key = env[p.key];
  const credentials = p.region && !key ? awsCredentials(env) : undefined;
  const live =
    Boolean(key || credentials) &&
    (!p.baseURL || Boolean(env[p.baseURL])) &&
    (!p.region || Boolean(env[p.region]));
  const mock = env.MOCK_URL ?? "http://127.0.0.1:8788";
  const baseURL = live
    ? p.baseURL
      ? env[p.baseURL]
      : undefined
    : provider.startsWith("openai") || provider === "responses"
      ? `${mock}/v1`
      : mock;
  return {
    live,
    key: live ? key : undefined,
    credentials: live ? credentials : undefined,
    region: live && p.region ? env[p.region] : undefined,
    baseURL,
    model: p.model,
  };
}

function config(env) {
  const providers = {};
  for (const name of Object.keys(PROVIDERS)) {
    const r = route(env, name);
    providers[name] = { live: r.live, model: r.live ? r.model : "mock-model" };
  }
  return { providers, mockURL: env.MOCK_URL ?? "http://127.0.0.1:8788" };
}

/** Chats this isolate is streaming now, and has streamed since it started. */
const streams = { active: 0, served: 0 };

/**
 * What skyl holds in this isolate: the size of its WebAssembly memory (the
 * most it has held at once; it never shrinks), and the chats in flight.
 */
function memory() {
  return {
    wasmMemoryBytes: wasmMemorySize(),
    activeStreams: streams.active,
    streamsServed: streams.served,
  };
}

const encoder = new TextEncoder();
const sse = (event, data) =>
  encoder.encode(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);

/** A string this long, and base64 (a file's data), is written apart. */
const APART = 64 * 1024;
const BASE64 = /^[A-Za-z0-9+/=_-]*$/;

/**
 * Writes one event as SSE. A long base64 string in it (a generated image,
 * megabytes) needs no JSON escaping: it goes out as it is, apart from the
 * JSON text around it, instead of being copied into that text and again
 * into its bytes while every other stream of the isolate does the same.
 */
async function writeEvent(writer, event) {
  const apart = [];
  // The marker holds a token of this event's own, so that no string of the
  // event (a model's text may hold NULs) can pass for one.
  let tag = "";
  const json = JSON.stringify(event, (_, v) => {
    if (typeof v !== "string" || v.length <= APART || !BASE64.test(v)) return v;
    tag ||= crypto.randomUUID();
    return `\u0000${tag}:${apart.push(v) - 1}\u0000`;
  });
  if (!apart.length) return writer.write(encoder.encode(`data: ${json}\n\n`));
  // [JSON text, index, JSON text, index, ..., JSON text]
  const pieces = json.split(new RegExp(`"\\\\u0000${tag}:(\\d+)\\\\u0000"`));
  await writer.write(encoder.encode(`data: ${pieces[0]}"`));
  for (let i = 1; i < pieces.length; i += 2) {
    await writer.write(encoder.encode(apart[Number(pieces[i])]));
    const last = i + 2 >= pieces.length;
    await writer.write(encoder.encode(`"${pieces[i + 1]}${last ? "\n\n" : '"'}`));
  }
}

async function chat(request, env) {
  let body;
  try {
    body = await request.json();
  } catch {
    return Response.json({ error: "the body must be JSON" }, { status: 400, headers: cors });
  }
  const { provider, model, request: req, mock = {} } = body ?? {};
  if (!PROVIDERS[provider])
    return Response.json({ error: `unknown provider ${provider}` }, { status: 400, headers: cors });
  const r = route(env, provider);
  const headers = {};
  if (!r.live) for (const [k, v] of Object.entries(mock)) headers[`x-mock-${k}`] = String(v);
  const client = new Client({
    provider,
    model: model || r.model,
    apiKey: r.key,
    credentials: r.credentials,
    region: r.region,
    baseURL: r.baseURL,
    headers,
    maxRetries: 2,
  });

  const { readable, writable } = new TransformStream();
  const writer = writable.getWriter();
  const stream = client.stream(req);
  streams.active++;
  (async () => {
    try {
      for await (const ev of stream) {
        const { raw, ...event } = ev; // the page needs the event, not the provider frame
        // `response.files` repeats the message's file parts (a generated
        // image's base64, megabytes): the page reads them from the parts.
        if (event.type === "finish" && event.response.files)
          event.response = { ...event.response, files: undefined };
        await writeEvent(writer, event);
      }
    } catch (e) {
      if (e instanceof SkylError && e.code === "abort") return; // the page went away
      const info =
        e instanceof SkylError
          ? {
              name: e.name,
              code: e.code,
              message: e.message,
              status: e.status,
              retryable: e.retryable,
            }
          : { name: "Error", code: "error", message: String(e?.message ?? e) };
      await writer.write(sse("error", info)).catch(() => {});
    } finally {
      streams.active--;
      streams.served++;
      await writer.close().catch(() => {});
    }
  })();
  // When the page disconnects (its stop button), cancel the upstream call.
  request.signal?.addEventListener?.("abort", () => stream.abort("the page disconnected"));
  return new Response(readable, {
    headers: {
      ...cors,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-skyl-mode": r.live ? "live" : "mock",
    },
  });
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
    if (url.pathname === "/api/config") return Response.json(config(env), { headers: cors });
    if (url.pathname === "/api/chat" && request.method === "POST") return chat(request, env);
    if (url.pathname === "/api/_memory" && env.DIAGNOSTICS === "1")
      return Response.json(memory(), { headers: cors });
    return new Response("skyl demo worker: POST /api/chat, GET /api/config", {
      status: 404,
      headers: cors,
    });
  },
};
