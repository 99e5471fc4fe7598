// The demo as a person uses it: the chat page in headless Chromium
// (playwright-core, Debian's /usr/bin/chromium), the Worker in workerd
// (wrangler dev) and the mock provider, all on loopback. Screenshots go to
// target/test-artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { startMock } from "../js/mock-server.mjs";
import { startStatic } from "../../www/serve.mjs";
import { startWorker } from "../../www/worker/start.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = path.join(root, "target/test-artifacts");
fs.mkdirSync(artifacts, { recursive: true });

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

let mock, worker, site, context;
before(async () => {
  mock = await startMock();
  // No keys: the Worker must use the mock for every provider.
  worker = await startWorker({ port: await freePort(), mockURL: mock.url, env: {} });
  site = await startStatic();
  const { chromium } = await import("playwright-core");
  context = await chromium.launchPersistentContext(
    fs.mkdtempSync(path.join(os.tmpdir(), "skyl-www-")),
    {
      executablePath: "/usr/bin/chromium",
      headless: true,
      viewport: { width: 1100, height: 900 },
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  );
});
after(async () => {
  await context?.close();
  worker?.stop();
  await site?.close();
  await mock?.close();
});

async function open(provider, extra = "") {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(
    `${site.url}/?worker=${encodeURIComponent(worker.url)}&provider=${provider}${extra}`,
  );
  await page.waitForSelector("body[data-ready='1']", { timeout: 15000 });
  return { page, errors };
}

const finalText = (page) => page.$$eval(".msg.assistant", (els) => els.map((e) => e.textContent));

for (const provider of ["openai", "openaicompat", "anthropic", "gemini", "responses"]) {
  test(`${provider}: a question, a tool card, the final answer (via the Worker)`, async () => {
    const { page, errors } = await open(provider);
    assert.match(await page.textContent("#mode"), /mock provider/);
    await page.click("text=What's the weather in Paris?");
    await page.waitForSelector(".card .state.ok", { timeout: 15000 });
    await page.waitForFunction(
      () => document.getElementById("status").textContent.startsWith("finish: stop"),
      null,
      { timeout: 15000 },
    );
    assert.equal(await page.textContent(".card .name"), "get_weather");
    assert.deepEqual(JSON.parse(await page.textContent(".card .args")), { city: "Paris" });
    const result = JSON.parse(await page.textContent(".card .result"));
    assert.equal(result.city, "Paris");
    const texts = await finalText(page);
    assert.equal(texts[0], "Let me look that up.");
    assert.match(
      texts.at(-1),
      new RegExp(`temperatureC ${result.temperatureC}, condition ${result.condition}`),
    );
    assert.equal(await page.isVisible("#error"), false);
    await page.screenshot({ path: path.join(artifacts, `www-${provider}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("the stop button aborts a slow stream, and the Worker cancels the upstream call", async () => {
  const { page } = await open("anthropic");
  await page.check("#slow");
  mock.reset();
  await page.click("text=Convert 10 km to miles");
  await page.waitForSelector(".msg.assistant.streaming", { timeout: 15000 });
  await page.click("#stop");
  await page.waitForFunction(
    () => document.getElementById("status").textContent === "stopped",
    null,
    { timeout: 5000 },
  );
  const before = (await finalText(page)).join("");
  await page.waitForTimeout(600);
  assert.equal((await finalText(page)).join(""), before, "no more text after stop");
  assert.ok(before.length < "Let me look that up.".length, "stopped mid-stream");
  assert.equal(await page.$(".card"), null, "no tool card: the call never completed");
  assert.equal(await page.isEnabled("#send"), true);
  const end = Date.now() + 3000;
  while (!mock.requests.some((r) => r.closedEarly) && Date.now() < end)
    await page.waitForTimeout(50);
  assert.ok(
    mock.requests.some((r) => r.closedEarly),
    "the mock saw the upstream connection close",
  );
  await page.screenshot({ path: path.join(artifacts, "www-stopped.png"), fullPage: true });
  await page.close();
});

test("direct route: skyl in the page against the mock; a real key needs the opt-in", async () => {
  const { page, errors } = await open("gemini");
  await page.selectOption("#route", "direct");
  await page.click("text=Calculate 12*7+3");
  await page.waitForFunction(
    () => document.getElementById("status").textContent.startsWith("finish: stop"),
    null,
    { timeout: 15000 },
  );
  assert.equal(JSON.parse(await page.textContent(".card .result")).result, 87);
  await page.fill("#apikey", "sk-not-a-real-key");
  await page.fill("#input", "hello");
  await page.click("#send");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.textContent("#error"), /opt-in/);
  assert.equal(await page.inputValue("#input"), "hello", "the message is kept for another try");
  assert.equal(await page.$$eval(".msg.user", (els) => els.length), 1, "nothing was sent");
  await page.screenshot({ path: path.join(artifacts, "www-direct.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the Worker API in workerd: config and a streamed chat as skyl events", async () => {
  const config = await (await fetch(`${worker.url}/api/config`)).json();
  assert.deepEqual(Object.keys(config.providers), [
    "openai",
    "openaicompat",
    "anthropic",
    "gemini",
    "responses",
  ]);
  assert.ok(Object.values(config.providers).every((p) => p.live === false));
  const res = await fetch(`${worker.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      provider: "openai",
      request: {
        messages: [{ role: "user", parts: [{ type: "text", text: "weather in Paris" }] }],
        tools: [
          {
            name: "get_weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        ],
      },
    }),
  });
  assert.equal(res.headers.get("x-skyl-mode"), "mock");
  const events = (await res.text())
    .split("\n\n")
    .filter(Boolean)
    .map((f) => JSON.parse(f.replace(/^data: /, "")));
  assert.deepEqual(
    events.filter((e) => e.type === "tool_call").map((e) => e.call.name),
    ["get_weather"],
  );
  assert.equal(events.at(-1).type, "finish");
  assert.ok(
    events.every((e) => !("raw" in e)),
    "provider frames stay in the Worker",
  );
  const bad = await fetch(`${worker.url}/api/chat`, { method: "POST", body: "{" });
  assert.equal(bad.status, 400);
});
