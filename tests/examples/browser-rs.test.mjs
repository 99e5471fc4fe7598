// The Rust browser example (examples/browser-rs/) in headless Chromium
// against the mock provider: a page whose Rust code streams a
// tool-calling chat through skyl::web. scripts/test builds it first (cargo,
// then wasm-bindgen --target web into examples/browser-rs/pkg/).
// The screenshot goes to target/test-artifacts/browser-rs.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { useMock } from "../js/use-mock.mjs";
import { launchChromium, watchErrors } from "../js/chromium.mjs";
import { root, artifacts, serve } from "../pkg/helpers.mjs";

const dir = path.join(root, "examples/browser-rs");

const mock = useMock();
let site;
let context;
let profile;

before(async () => {
  assert.ok(
    fs.existsSync(path.join(dir, "pkg/skyl_example_browser_rs_bg.wasm")),
    "build the page first: scripts/test does (cargo build, then wasm-bindgen into examples/browser-rs/pkg)",
  );
  site = await serve(dir);
  profile = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-browser-rs-"));
  context = await launchChromium(profile, { viewport: { width: 800, height: 700 } });
});

after(async () => {
  await context?.close();
  await new Promise((r) => (site ? site.close(r) : r()));
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
});

test("the Rust page streams the tool loop and shows the call as a card once whole", async () => {
  const page = await context.newPage();
  const errors = watchErrors(page);
  // The mock writes each answer in 32-byte pieces 20 ms apart: the answer
  // streams for a while after the call's card appears.
  const base = `${mock.url}?chunk=32&delay=20`;
  await page.goto(
    `http://127.0.0.1:${site.address().port}/?provider=anthropic&base=${encodeURIComponent(base)}`,
  );
  await page.waitForFunction(() => document.getElementById("status").textContent === "ready");
  await page.click("#send");

  // The card appears when the call is whole, while the answer is still to come.
  await page.waitForSelector(".card .result", { timeout: 15000 });
  assert.notEqual(await page.textContent("#status"), "finish: stop", "the card came first");

  await page.waitForFunction(
    () => document.getElementById("status").textContent === "finish: stop",
    null,
    { timeout: 15000 },
  );
  const cards = await page.$$eval(".card", (els) =>
    els.map((el) => ({
      name: el.querySelector(".name").textContent,
      args: el.querySelector(".args").textContent,
      result: el.querySelector(".result").textContent,
    })),
  );
  assert.equal(cards.length, 1, JSON.stringify(cards));
  assert.equal(cards[0].name, "get_weather");
  assert.deepEqual(JSON.parse(cards[0].args), { city: "Paris" });
  assert.match(cards[0].result, /"temperature_c":21/);
  const answers = await page.$$eval(".msg.assistant", (els) => els.map((el) => el.textContent));
  assert.match(answers.at(-1), /21 °C.*Paris|Paris.*21 °C/);
  assert.equal(await page.isEnabled("#send"), true);
  await page.screenshot({ path: path.join(artifacts, "browser-rs.png"), fullPage: true });
  assert.deepEqual(errors, [], "no console errors");
  assert.equal(mock.requests.length, 2, "two turns");
});
