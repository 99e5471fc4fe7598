// Generated images in the demo, in headless Chromium: "draw a cat" to the
// mock in the Gemini and Responses formats (via the Worker in workerd, and
// skyl in the page), the image shown as it arrives (the Responses API's two
// partial images first, then the image in their place), its bytes the
// ones the mock served, and the turn replayed in the next request; a
// recorded image stream in the Recorded streams tab.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { drawing, pngSize, SIDE } from "../js/mock-png.mjs";
import { startDemo, ask, shot, statusMatches, texts } from "./page.mjs";

let demo;
before(async () => {
  demo = await startDemo();
});
after(() => demo?.stop());

/**
 * Records every state the generated images of `root` go through, in order:
 * window.shown() is [[state, src]] per figure. The observer keeps each
 * attribute's old value, so no state is missed however fast they follow.
 */
async function watchImages(page, root = "#chat") {
  await page.evaluate((selector) => {
    const changes = new Map(); // figure → { state: [...], src: [...] }
    const of = (figure) => {
      if (!changes.has(figure)) changes.set(figure, { state: [], src: [] });
      return changes.get(figure);
    };
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type !== "attributes" || r.oldValue === null) continue;
        const figure = r.target.closest("figure.generated");
        if (!figure) continue;
        if (r.attributeName === "data-state") of(figure).state.push(r.oldValue);
        if (r.attributeName === "src") of(figure).src.push(r.oldValue);
      }
    }).observe(document.querySelector(selector), {
      subtree: true,
      attributes: true,
      attributeOldValue: true,
      attributeFilter: ["data-state", "src"],
    });
    window.shown = () =>
      [...document.querySelectorAll(`${selector} figure.generated`)].map((figure) => {
        const { state, src } = of(figure);
        const states = [...state, figure.dataset.state];
        const srcs = [...src, figure.querySelector("img").getAttribute("src")];
        return states.map((s, i) => [s, srcs[i]]);
      });
  }, root);
}

/** The final image as the page decoded it: its natural size. */
const decoded = (page, root = "#chat") =>
  page.$eval(`${root} figure.generated[data-state='final'] img`, async (img) => {
    await img.decode();
    return { width: img.naturalWidth, height: img.naturalHeight };
  });

const dataURL = (b64) => `data:image/png;base64,${b64}`;

/** Checks the page showed the drawing of "a cat": `partials` first, then the image. */
async function checkShown(page, { partials }) {
  const shown = await page.evaluate(() => window.shown());
  assert.equal(shown.length, 1, "one image");
  const { png, partials: served } = drawing("a cat");
  const expected = [
    ...(partials ? served.map((p, i) => [`partial ${i + 1}`, dataURL(p)]) : []),
    ["final", dataURL(png)],
  ];
  assert.deepEqual(
    shown[0].map(([state]) => state),
    expected.map(([state]) => state),
  );
  // The bytes: the ones the mock served, base64 for base64.
  for (const [i, [, src]] of shown[0].entries()) assert.equal(src, expected[i][1], `state ${i}`);
  const final = Buffer.from(shown[0].at(-1)[1].split(",")[1], "base64");
  assert.deepEqual(pngSize(final), { width: SIDE, height: SIDE });
  assert.deepEqual(await decoded(page), { width: SIDE, height: SIDE });
}

for (const [provider, partials] of [
  ["gemini", false],
  ["responses", true],
]) {
  test(`${provider}: draw a cat via the Worker: the image as it arrives, then a follow-up`, async () => {
    const { page, errors } = await demo.open(provider);
    await watchImages(page);
    await ask(page, "draw a cat");
    await statusMatches(page, /^finish: stop/);
    await checkShown(page, { partials });
    await shot(page, `images-${provider}-worker`);
    // The turn with its image goes back in the history, and the chat goes on.
    await ask(page, "What's the weather in Kampala?");
    await statusMatches(page, /^finish: stop/);
    assert.match((await texts(page)).at(-1), /Kampala/);
    assert.equal(await page.isVisible("#error"), false);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("responses, direct: client.run in the page shows the partial images, then the image", async () => {
  const { page, errors } = await demo.open("responses");
  await page.selectOption("#route", "direct");
  await watchImages(page);
  await ask(page, "Draw a cat.");
  await statusMatches(page, /^finish: stop/);
  await checkShown(page, { partials: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the draw example switches a format without images to Responses; others say they cannot draw", async () => {
  const { page, errors } = await demo.open("anthropic");
  await ask(page, "draw a cat");
  await statusMatches(page, /^finish: stop/);
  assert.match((await texts(page)).at(-1), /cannot draw/);
  assert.equal(await page.$$eval("#chat figure.generated", (f) => f.length), 0);
  await page.click("#reset");
  await watchImages(page);
  await page.click(".chip[data-example='draw']");
  await page.waitForSelector("#chat figure.generated[data-state='final']", { timeout: 20000 });
  await statusMatches(page, /^finish: stop/);
  assert.equal(await page.inputValue("#provider"), "responses");
  await checkShown(page, { partials: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("recorded streams: Azure's generated image, its partial image first", async () => {
  const { page, errors } = await demo.open("anthropic");
  await page.click("#tab-replay");
  await watchImages(page, "#replay-out");
  await page.click('button.recording[data-id="responses/azure-image-generation-tool.1.stream"]');
  await page.waitForFunction(
    () => /^\d+ events from/.test(document.getElementById("replay-status").textContent),
    null,
    { timeout: 20000 },
  );
  const [shown] = await page.evaluate(() => window.shown());
  assert.deepEqual(
    shown.map(([state]) => state),
    ["partial 1", "final"],
  );
  assert.deepEqual(await decoded(page, "#replay-out"), { width: 1, height: 1 });
  const log = await page.$$eval("#replay-log .type", (els) => els.map((e) => e.textContent));
  assert.deepEqual(
    log.filter((t) => t.startsWith("file")),
    ["file_partial", "file"],
  );
  assert.deepEqual(errors, []);
  await page.close();
});
