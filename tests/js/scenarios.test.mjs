// The run machine's scenario table (src/run/scenarios.json), run by the JS
// driver against the mock provider: each scenario must end as the table
// says, after as many requests as its steps have `send`s. The same table
// is run natively step by step (src/run/scenarios.rs) and by the web
// driver in Chromium (tests/web.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { client, collect, useMock } from "./helpers.mjs";
import { readCase } from "./mock-server.mjs";

const table = JSON.parse(
  readFileSync(new URL("../../src/run/scenarios.json", import.meta.url), "utf8"),
);
const mock = useMock();

for (const s of table.scenarios.filter((s) => s.mock)) {
  test(s.name, async () => {
    const mockOptions = Object.fromEntries(new URLSearchParams(s.mock));
    mockOptions.scenario = `js: ${s.name}`;
    const c = client(mock, s.provider, {
      mockOptions,
      maxRetries: s.maxRetries ?? 2,
      timeout: s.timeouts ?? {},
    });
    const request = { messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }] };
    const before = mock.requests.length;
    let response;
    let error;
    if (s.stream) ({ response, error } = await collect(c.stream(request)));
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
    } else {
      assert.ok(error, "it fails");
      assert.equal(error.code, want.error, `${error}`);
      assert.equal(error.eventsEmitted, want.eventsEmitted, "eventsEmitted");
      assert.equal(error.partial !== undefined, want.partial ?? false, "partial");
    }
  });
}
