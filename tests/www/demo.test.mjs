// The demo's chat as a person uses it, in headless Chromium: each provider's
// tool loop via the Worker (workerd) answers the question asked, with the
// right tool and the arguments taken from the question; stop; the direct
// route; the Worker's API.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TOOLS } from "../js/fixtures.mjs";
import { startDemo, PROVIDERS, ask, cards, texts, shot, statusMatches } from "./page.mjs";

let demo;
before(async () => {
  demo = await startDemo();
});
after(() => demo?.stop());

/** A number as an answer quotes it: to two decimals at most. */
const rounded = (x) => String(Math.round(x * 100) / 100);

// Three questions in one conversation: each answer must come from its own
// question's tool result, never from an earlier one.
const QUESTIONS = [
  {
    text: "What's the weather in Kampala?",
    name: "get_weather",
    args: { city: "Kampala" },
    answer: (r) => [r.city, String(r.temperatureC), r.condition],
  },
  {
    text: "Convert 30 km to miles",
    name: "convert_units",
    args: { value: 30, from: "km", to: "mi" },
    answer: (r) => [rounded(r.result)],
  },
  {
    text: "Calculate 12*7+3",
    name: "calculate",
    args: { expression: "12*7+3" },
    answer: (r) => [rounded(r.result)],
  },
];

for (const provider of PROVIDERS) {
  test(`${provider}: three questions, each answered from its own tool call (via the Worker)`, async () => {
    const { page, errors } = await demo.open(provider);
    assert.match(await page.textContent("#mode"), /mock provider/);
    for (const [i, q] of QUESTIONS.entries()) {
      await ask(page, q.text);
      await statusMatches(page, /^finish: stop/);
      const all = await cards(page);
      assert.equal(all.length, i + 1, `one call per question (${q.text})`);
      const card = all[i];
      assert.equal(card.name, q.name, q.text);
      assert.deepEqual(card.args, q.args, q.text);
      assert.equal(card.state, "done");
      const result = JSON.parse(card.result);
      const answer = (await texts(page)).at(-1);
      for (const fact of q.answer(result))
        assert.ok(answer.includes(fact), `the answer ${JSON.stringify(answer)} quotes ${fact}`);
    }
    assert.equal(await page.isVisible("#error"), false);
    await shot(page, `www-${provider}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("two things asked at once: two calls in parallel, one answer from both", async () => {
  const { page, errors } = await demo.open("gemini");
  await page.click("text=What is the weather in Lima, and convert 72 F to C?");
  await statusMatches(page, /^finish: stop/);
  const all = await cards(page);
  assert.deepEqual(
    all.map((c) => [c.name, c.args]),
    [
      ["get_weather", { city: "Lima" }],
      ["convert_units", { value: 72, from: "F", to: "C" }],
    ],
  );
  const [weather, conversion] = all.map((c) => JSON.parse(c.result));
  const answer = (await texts(page)).at(-1);
  assert.ok(answer.includes("Lima") && answer.includes(String(weather.temperatureC)), answer);
  assert.ok(answer.includes(rounded(conversion.result)), answer);
  await shot(page, "www-parallel");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a question no tool answers gets an honest reply, and no call", async () => {
  const { page, errors } = await demo.open("anthropic");
  await ask(page, "Write me a poem about the sea");
  await statusMatches(page, /^finish: stop/);
  assert.deepEqual(await cards(page), []);
  assert.match((await texts(page)).at(-1), /I can only/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the stop button aborts a slow stream, and the Worker cancels the upstream call", async () => {
  const { page } = await demo.open("anthropic");
  await page.check("#slow");
  demo.mock.reset();
  await page.click("text=Convert 30 km to miles");
  await page.waitForSelector(".msg.assistant.streaming, .reasoning", { timeout: 15000 });
  await page.click("#stop");
  await statusMatches(page, /^stopped$/, 5000);
  const before = (await texts(page)).join("");
  await page.waitForTimeout(600);
  assert.equal((await texts(page)).join(""), before, "no more text after stop");
  assert.equal(await page.$(".card"), null, "no tool card: the call never completed");
  assert.equal(await page.isEnabled("#send"), true);
  const end = Date.now() + 3000;
  while (!demo.mock.requests.some((r) => r.closedEarly) && Date.now() < end)
    await page.waitForTimeout(50);
  assert.ok(
    demo.mock.requests.some((r) => r.closedEarly),
    "the mock saw the upstream connection close",
  );
  await shot(page, "www-stopped");
  await page.close();
});

test("direct route: skyl in the page against the mock; a real key needs the opt-in", async () => {
  const { page, errors } = await demo.open("gemini");
  await page.selectOption("#route", "direct");
  await page.click("text=Calculate 12*7+3");
  await statusMatches(page, /^finish: stop/);
  assert.equal(JSON.parse(await page.textContent(".card .result")).result, 87);
  await page.fill("#apikey", "sk-not-a-real-key");
  await page.fill("#input", "hello");
  await page.click("#send");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.textContent("#error"), /opt-in/);
  assert.equal(await page.inputValue("#input"), "hello", "the message is kept for another try");
  assert.equal(await page.$$eval(".msg.user", (els) => els.length), 1, "nothing was sent");
  await shot(page, "www-direct");
  assert.deepEqual(errors, []);
  await page.close();
});

test("direct route: client.run draws each step, and each tool's result with its duration", async () => {
  const { page, errors } = await demo.open("anthropic");
  await page.selectOption("#route", "direct");
  await ask(page, "What is the weather in Lima, and calculate 2^10?");
  await statusMatches(page, /^finish: stop/);
  assert.deepEqual(await page.$$eval("#chat .step-line", (els) => els.map((e) => e.textContent)), [
    "step 1",
    "step 2",
  ]);
  const all = await cards(page);
  assert.deepEqual(
    all.map((c) => [c.name, c.state]),
    [
      ["get_weather", "done"],
      ["calculate", "done"],
    ],
  );
  assert.equal(JSON.parse(all[1].result).result, 1024);
  const labels = await page.$$eval("#chat .card .label", (els) => els.map((e) => e.textContent));
  assert.equal(labels.filter((l) => /^result · \d+ ms$/.test(l)).length, 2, labels.join(" | "));
  assert.match((await texts(page)).at(-1), /1024/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("direct route: a call's card streams its arguments, and is runnable only once whole", async () => {
  const { page, errors } = await demo.open("anthropic");
  await page.selectOption("#route", "direct");
  // Every state and arguments text each card shows, in order.
  await page.evaluate(() => {
    window.seen = [];
    new MutationObserver(() => {
      for (const card of document.querySelectorAll("#chat .card[data-call]"))
        window.seen.push([
          card.dataset.call,
          card.querySelector(".state").textContent,
          card.querySelector("pre.args").textContent,
          card.classList.contains("partial"),
        ]);
    }).observe(document.getElementById("chat"), {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  await ask(page, "What is the weather in Lima?");
  await statusMatches(page, /^finish: stop/);
  const seen = await page.evaluate(() => window.seen);
  const [{ name, state, args }] = await cards(page);
  assert.deepEqual([name, state], ["get_weather", "done"]);
  const id = await page.$eval("#chat .card[data-call]", (c) => c.dataset.call);
  const mine = seen.filter(([call]) => call === id);
  const streaming = mine.filter(([, , , s]) => s);
  assert.ok(streaming.length > 0, "the card was drawn while the call streamed");
  assert.ok(streaming.every(([, st]) => st === "streaming · not runnable yet"));
  const firstWhole = mine.findIndex(([, st]) => st === "whole · not run yet");
  const firstRun = mine.findIndex(([, st]) => st === "running…");
  assert.ok(
    mine.findIndex(([, , , s]) => s) < firstWhole && firstWhole < firstRun,
    "streaming, whole, then run",
  );
  assert.ok(mine.slice(firstRun).every(([, , , s]) => !s));
  assert.equal(args.city, "Lima");
  assert.deepEqual(errors, []);
  await page.close();
});

test("direct route: convert_units asks first; Approve runs it, Deny answers the model", async () => {
  const { page, errors } = await demo.open("openai");
  await page.selectOption("#route", "direct");
  await page.fill("#input", "Convert 30 km to miles");
  await page.press("#input", "Enter");
  await page.waitForSelector("#chat .approval button.approve", { timeout: 15000 });
  assert.equal((await cards(page))[0].state, "waiting for approval");
  await shot(page, "www-approval");
  await page.click("#chat .approval button.approve");
  await statusMatches(page, /^finish: stop/);
  const [approved] = await cards(page);
  assert.equal(approved.state, "done");
  assert.equal(rounded(JSON.parse(approved.result).result), "18.64");
  assert.match((await texts(page)).at(-1), /18\.64/);

  await page.waitForFunction(() => !document.getElementById("send").disabled);
  await page.fill("#input", "Convert 5 kg to pounds");
  await page.press("#input", "Enter");
  await page.waitForSelector("#chat .approval button.deny", { timeout: 15000 });
  await page.click("#chat .approval button.deny");
  await statusMatches(page, /^finish: stop/);
  const denied = (await cards(page))[1];
  assert.equal(denied.state, "denied");
  assert.equal(denied.result, undefined, "the tool never ran");
  assert.equal(await page.$("#chat .approval"), null);
  assert.equal(await page.isVisible("#error"), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the Worker API in workerd: config and a streamed chat as skyl events", async () => {
  const { worker } = demo;
  const config = await (await fetch(`${worker.url}/api/config`)).json();
  assert.deepEqual(Object.keys(config.providers), PROVIDERS);
  assert.ok(Object.values(config.providers).every((p) => p.live === false));
  const res = await fetch(`${worker.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      provider: "openai",
      request: {
        messages: [{ role: "user", parts: [{ type: "text", text: "weather in Paris" }] }],
        tools: TOOLS,
      },
    }),
  });
  assert.equal(res.headers.get("x-skyl-mode"), "mock");
  const events = (await res.text())
    .split("\n\n")
    .filter(Boolean)
    .map((f) => JSON.parse(f.replace(/^data: /, "")));
  assert.deepEqual(
    events.filter((e) => e.type === "tool_call").map((e) => [e.call.name, e.call.arguments]),
    [["get_weather", '{"city":"Paris"}']],
  );
  assert.equal(events.at(-1).type, "finish");
  assert.ok(
    events.every((e) => !("raw" in e)),
    "provider frames stay in the Worker",
  );
  const bad = await fetch(`${worker.url}/api/chat`, { method: "POST", body: "{" });
  assert.equal(bad.status, 400);
});

test("the embeddings tab ranks the passage that answers the question first", async () => {
  const { page, errors } = await demo.open("openai");
  await page.click("#tab-embed");
  const cases = [
    ["When will my parcel arrive?", /parcel will arrive/],
    ["How do I reset my password?", /reset your password/],
    ["Can I pay with gift cards?", /Gift cards/],
    ["Where are my invoices?", /Invoices/],
  ];
  for (const [question, top] of cases) {
    await page.fill("#embed-question", question);
    await page.click("#embed-form button[type=submit]");
    await page.waitForFunction(
      (q) =>
        document.querySelector("#embed-status")?.textContent.startsWith("7 texts") &&
        document.querySelector("#embed-question").value === q,
      question,
      { timeout: 15000 },
    );
    const ranked = await page.$$eval("#embed-results .text", (ns) => ns.map((n) => n.textContent));
    assert.equal(ranked.length, 6);
    assert.match(ranked[0], top, `${question} → ${ranked.join(" | ")}`);
    const scores = await page.$$eval("#embed-results .score", (ns) =>
      ns.map((n) => Number(n.textContent)),
    );
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
      "most similar first",
    );
  }
  assert.match(await page.textContent("#embed-status"), /256 dimensions, 1 request/);
  assert.deepEqual(errors, []);
});
