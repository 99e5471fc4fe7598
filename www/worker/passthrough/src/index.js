// The control Worker for scripts/worker-memory.mjs: no skyl. POST /v1/* and
// /v1beta/* (Gemini's) are relayed to the mock provider (MOCK_URL) as they
// came, with their x-mock-* headers, and the provider's streamed body goes
// back to the caller unchanged. Under the same load as the demo Worker, it shows what workerd
// and a streaming Worker cost by themselves.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method !== "POST" || !/^\/v1(?:beta)?\//.test(url.pathname))
      return new Response("passthrough Worker: POST /v1/... or /v1beta/...", { status: 404 });
    const headers = new Headers({ "content-type": "application/json" });
    for (const [name, value] of request.headers)
      if (name.startsWith("x-mock-")) headers.set(name, value);
    const upstream = await fetch(`${env.MOCK_URL}${url.pathname}`, {
      method: "POST",
      headers,
      body: request.body,
    });
    return new Response(upstream.body, {
      status: upstream.status,
      headers: { "content-type": upstream.headers.get("content-type") ?? "text/event-stream" },
    });
  },
};
