// The run machine's scenario table (src/run/scenarios.json), run by the JS
// driver against the mock provider: each scenario must end as the table
// says, after as many requests as its steps have `send`s. The same table
// is run natively step by step (src/run/scenarios.rs) and by the web
// driver in Chromium (tests/web.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { against, client, collect, useMock } from "./helpers.mjs";
import { readCase } from "./mock-server.mjs";

const table = JSON.parse(
  readFileSync(new URL("../../src/run/scenarios.json", import.meta.url), "utf8"),
);
const mock = useMock();

/** Failed attempts as the table lists them: `"<provider> <code>"`. */
const listed = (attempts) => (attempts ?? []).map((a) => `${a.provider} ${a.error.code}`);

for (const s of table.scenarios.filter((s) => s.mock)) {
  test(s.name, async () => {
    const mockOptions = Object.fromEntries(new URLSearchParams(s.mock));
    mockOptions.scenario = `js: ${s.name}`;
    // Each fallback entry's requests are counted under a name of its own.
    const fallback = (s.fallback ?? []).map((f, i) =>
      against(mock, f.provider, {
        mockOptions: {
          ...Object.fromEntries(new URLSearchParams(f.mock)),
          scenario: `js: ${s.name}#${i + 1}`,
        },
        maxRetries: f.maxRetries ?? 2,
      }),
    );
    const c = client(mock, s.provider, {
      mockOptions,
      maxRetries: s.maxRetries ?? 2,
      timeout: s.timeouts ?? {},
      fallback,
      fallbackOn: s.fallbackOn,
    });
    const request = { messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }] };
    const before = mock.requests.length;
    let response;
    let error;
    let events = [];
    if (s.stream) ({ events, response, error } = await collect(c.stream(request)));
    else {
      try {
        response = await c.complete(request);
      } catch (e) {
        error = e;
      }
    }
    const sends = s.steps.filter(([, step]) => step === "send").length;
    assert.equal(mock.requests.length - before, sends, "requests");
    const want = s.outcome;
    if (want.text) {
      assert.equal(error, undefined, `${error}`);
      assert.equal(response.text, readCase(want.text).expected.text);
      assert.equal(response.provider, want.provider ?? s.provider, "provider");
      assert.deepEqual(listed(response.attempts), want.attempts ?? [], "attempts");
      const first = events[0]?.type === "warning" ? events[0].code : undefined;
      assert.equal(first, want.warning, "the first event's warning");
    } else {
      assert.ok(error, "it fails");
      assert.equal(error.code, want.error, `${error}`);
      assert.equal(error.eventsEmitted, want.eventsEmitted, "eventsEmitted");
      assert.equal(error.partial !== undefined, want.partial ?? false, "partial");
      assert.deepEqual(listed(error.attempts), want.attempts ?? [], "attempts");
    }
  });
}
