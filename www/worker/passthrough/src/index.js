// The control Worker for scripts/worker-memory.mjs: no skyl. POST /v1/* is
// relayed to the mock provider (MOCK_URL) as it came, with its x-mock-*
// headers, and the provider's streamed body goes back to the caller
// unchanged. Under the same load as the demo Worker, it shows what workerd
// and a streaming Worker cost by themselves.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method !== "POST" || !url.pathname.startsWith("/v1/"))
      return new Response("passthrough Worker: POST /v1/...", { status: 404 });
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
