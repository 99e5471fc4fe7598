// What the demo shows beyond the chat, in headless Chromium: a real recorded
// stream replayed through skyl in the page, faults shown safe (a cut-off
// call never run, in-band errors typed, retried only before the first
// event), structured output and a PDF, a phone-width screen and the
// keyboard.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readCase } from "../js/mock-server.mjs";
import {
  startDemo,
  PROVIDERS,
  PHONE,
  ask,
  cards,
  texts,
  shot,
  statusMatches,
  fitsWidth,
} from "./page.mjs";

let demo;
before(async () => {
  demo = await startDemo();
});
after(() => demo?.stop());

/** Replays a recording in the page; returns the rows of its event log. */
async function replay(page, id) {
  await page.click("#tab-replay");
  await page.click(`button.recording[data-id="${id}"]`);
  await page.waitForFunction(
    (id) => document.getElementById("replay-status").textContent.includes(` events from ${id} in `),
    id,
    { timeout: 30000 },
  );
  return page.$$eval("#replay-log .ev:not(.note)", (rows) =>
    rows.map((r) => ({
      type: r.querySelector(".type").textContent,
      sum: r.querySelector(".sum").textContent,
      raw: r.querySelector(".raw")?.textContent,
    })),
  );
}

test("a recorded Anthropic web search replays: text, citations, provider blocks, raw frames", async () => {
  const id = "anthropic/anthropic-web-search-tool.1.stream";
  const expected = readCase(id).expected;
  const { page, errors } = await demo.open("anthropic");
  const rows = await replay(page, id);
  const text = rows
    .filter((r) => r.type === "text")
    .map((r) => JSON.parse(r.sum))
    .join("");
  assert.equal(text, expected.text, "the text the recording's expectation derives");
  assert.equal(rows.at(-1).type, "finish");
  assert.match(rows.at(-1).sum, /finish: stop \(end_turn\)/);
  assert.ok(
    rows.every((r) => r.raw),
    "every event carries its raw frame",
  );
  assert.equal(await page.isVisible("#replay-log .raw"), false, "raw frames hidden by default");
  await page.check("#show-raw");
  assert.equal(await page.isVisible("#replay-log .raw >> nth=0"), true);
  assert.ok(
    (await page.$$eval(".sources li", (els) => els.length)) > 0,
    "the citations show as sources",
  );
  assert.match(await page.textContent("#replay-out"), /provider block\(s\) kept for replay/);
  await shot(page, "www-replay-anthropic");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a recorded Gemini stream with four parallel streamed calls: each call once, whole", async () => {
  const id = "gemini/google-stream-no-args-tool-call.stream";
  const expected = readCase(id).expected;
  const { page, errors } = await demo.open("gemini");
  const rows = await replay(page, id);
  const calls = rows.filter((r) => r.type === "tool_call").map((r) => r.sum);
  assert.deepEqual(
    calls,
    expected.tool_calls.map((c) => `${c.name}(${JSON.stringify(c.arguments)})`),
  );
  assert.ok(rows.some((r) => r.type === "reasoning"));
  assert.equal(
    await page
      .$$eval("#replay-out .card .state", (els) => els.map((e) => e.textContent))
      .then((s) => s.every((t) => t === "whole · a replay: not run")),
    true,
  );
  assert.deepEqual(errors, []);
  await page.close();
});

test("every recording the page lists replays to its finish, with the calls its expectation lists", async () => {
  const { page, errors } = await demo.open("openai");
  await page.click("#tab-replay");
  await page.selectOption("#speed", "whole");
  const ids = await page.$$eval("button.recording", (bs) => bs.map((b) => b.dataset.id));
  assert.ok(ids.length >= 10);
  for (const id of ids) {
    const rows = await replay(page, id);
    assert.equal(rows.at(-1)?.type, "finish", id);
    const calls = rows.filter((r) => r.type === "tool_call").length;
    assert.equal(calls, readCase(id).expected.tool_calls.length, id);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

for (const provider of PROVIDERS) {
  test(`${provider}: a stream cut mid-tool-call is an error that keeps what came, and nothing runs`, async () => {
    const { page, errors } = await demo.open(provider);
    await page.selectOption("#fault", "cut");
    assert.equal(await page.isVisible("#fault-note"), true);
    await page.fill("#input", "What's the weather in Kampala?");
    await page.press("#input", "Enter");
    await page.waitForSelector("#chat .failure", { timeout: 15000 });
    assert.match(await page.textContent("#error"), /StreamEndedEarlyError/);
    const failure = await page.textContent("#chat .failure");
    assert.match(failure, /code stream_ended_early/);
    assert.ok(
      !(await cards(page)).some((c) => c.state === "done"),
      "no tool ran, and no result went back",
    );
    if (provider === "gemini") {
      // Gemini sends a call whole in one frame: it was handed out whole, but
      // the turn never finished, so the page does not run it.
      const handed = await cards(page);
      assert.deepEqual(
        handed.map((c) => [c.name, c.state]),
        [["get_weather", "not run: the turn did not finish"]],
      );
    } else {
      const incomplete = await page.$$eval("#chat .card.incomplete", (els) =>
        els.map((e) => ({
          name: e.querySelector(".name").textContent,
          state: e.querySelector(".state").textContent,
          args: e.querySelector(".args").textContent,
        })),
      );
      assert.equal(incomplete.length, 1);
      assert.equal(incomplete[0].name, "get_weather");
      assert.equal(incomplete[0].state, "incomplete · not run");
      assert.ok(
        '{"city":"Kampala"}'.startsWith(incomplete[0].args) || incomplete[0].args === "(none)",
        `a prefix of the arguments arrived: ${incomplete[0].args}`,
      );
    }
    await shot(page, `www-fault-cut-${provider}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("an in-band overload before the first event is retried, and the turn completes", async () => {
  const { page, errors } = await demo.open("anthropic");
  await page.selectOption("#fault", "overload-start");
  await ask(page, "Calculate 12*7+3");
  await statusMatches(page, /^finish: stop/);
  assert.match(await page.textContent("#chat"), /attempt 2: skyl retried/);
  assert.equal((await cards(page))[0].state, "done");
  assert.equal(await page.isVisible("#error"), false);
  await shot(page, "www-fault-retried");
  assert.deepEqual(errors, []);
  await page.close();
});

test("an overloaded provider: skyl goes on to the fallback, and says so first", async () => {
  const { page, errors } = await demo.open("openai");
  await page.selectOption("#fault", "fallback");
  await ask(page, "Calculate 12*7+3");
  await statusMatches(page, /^finish: stop.* · answered by anthropic$/);
  const chat = await page.textContent("#chat");
  assert.match(chat, /warning fallback: openai failed \(overloaded: /);
  assert.match(chat, /anthropic \(mock-model\) answers instead/);
  // Its own retry first, then the switch.
  assert.match(chat, /attempt 2: skyl retried/);
  assert.equal((await cards(page))[0].state, "done");
  assert.equal(await page.isVisible("#error"), false);
  await shot(page, "www-fault-fallback");
  // The browser logs each 529 it received; nothing else went wrong.
  assert.ok(errors.length >= 2, `${errors}`);
  assert.deepEqual(
    errors.filter((e) => !/responded with a status of 529/.test(e)),
    [],
  );
  await page.close();
});

test("an in-band overload after text is typed, not retried, and the text is kept", async () => {
  const { page, errors } = await demo.open("openai");
  await page.selectOption("#fault", "overload-text");
  await page.fill("#input", "Calculate 12*7+3");
  await page.press("#input", "Enter");
  await page.waitForSelector("#chat .failure", { timeout: 15000 });
  const failure = await page.textContent("#chat .failure");
  assert.match(failure, /in-band/);
  assert.match(failure, /events had been handed out/);
  assert.match(failure, /text kept/);
  assert.doesNotMatch(await page.textContent("#chat"), /attempt 2/);
  assert.ok((await texts(page)).join("").length > 0, "the text stays on screen");
  assert.deepEqual(errors, []);
  await page.close();
});

for (const provider of PROVIDERS) {
  test(`${provider}: structured output and a PDF, against the mock`, async () => {
    const { page, errors } = await demo.open(provider);
    await page.click("[data-example='structured']");
    await page.waitForSelector("#chat .card.structured", { timeout: 15000 });
    assert.equal(await page.textContent("#chat .card.structured .state"), "whole JSON");
    const value = JSON.parse(await page.textContent("#chat .card.structured .result"));
    assert.equal(value.city, "Oslo");
    assert.equal(typeof value.temperatureC, "number");
    await page.click("#reset");
    await page.click("[data-example='pdf']");
    await statusMatches(page, /^finish: stop/);
    const answer = (await texts(page)).at(-1);
    // Gemini's inlineData has no file name: the others send it.
    if (provider !== "gemini") assert.match(answer, /invoice\.pdf/);
    assert.match(answer, /application\/pdf/);
    assert.match(answer, /42\.00 EUR/, "the answer quotes the PDF's text");
    if (provider === "openai") await shot(page, "www-pdf");
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("a phone-width screen: chat and recordings fit, nothing scrolls sideways", async () => {
  const { page, errors } = await demo.open("responses", { viewport: PHONE });
  assert.equal(await fitsWidth(page), true, "the empty chat fits");
  await ask(page, "What is the weather in Lima, and convert 72 F to C?");
  await statusMatches(page, /^finish: stop/);
  assert.equal(await fitsWidth(page), true, "the chat with cards fits");
  await shot(page, "www-phone-chat");
  await replay(page, "responses/openai-web-search-tool.1.stream");
  await page.check("#show-raw");
  assert.equal(await fitsWidth(page), true, "the replay with raw frames fits");
  await shot(page, "www-phone-replay");
  assert.deepEqual(errors, []);
  await page.close();
});

test("the keyboard alone: tabs with arrow keys, a recording with Enter, a question with Enter", async () => {
  const { page, errors } = await demo.open("openai");
  await page.focus("#tab-chat");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.isVisible("#panel-replay"), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), "tab-replay");
  await page.keyboard.press("Tab"); // the speed select
  await page.keyboard.press("Tab"); // the raw toggle
  await page.keyboard.press("Tab"); // the first recording
  await page.keyboard.press("Enter");
  await page.waitForFunction(
    () => /^\d+ events from /.test(document.getElementById("replay-status").textContent),
    null,
    { timeout: 30000 },
  );
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await page.isVisible("#panel-chat"), true);
  await page.focus("#input");
  await page.keyboard.type("Convert 30 km to miles");
  await page.keyboard.press("Enter");
  await statusMatches(page, /^finish: stop/);
  assert.equal((await cards(page))[0].name, "convert_units");
  assert.deepEqual(errors, []);
  await page.close();
});
