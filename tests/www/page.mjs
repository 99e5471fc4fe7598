// What the demo's browser tests share: the mock provider, the Worker in
// workerd (wrangler dev), the static server and headless Chromium
// (tests/js/chromium.mjs), all on loopback, and a page opener that records
// every console error and uncaught exception.
// Screenshots go to target/test-artifacts/.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startMock } from "../js/mock-server.mjs";
import { startStatic } from "../../www/serve.mjs";
import { startWorker } from "../../www/worker/start.mjs";
import { launchChromium, watchErrors } from "../js/chromium.mjs";
import { ALL, artifacts, freePort } from "../pkg/helpers.mjs";

export const PROVIDERS = ALL;
export const PHONE = { width: 390, height: 844 };

/** Starts everything; `stop()` ends it. */
export async function startDemo() {
  const mock = await startMock();
  // No keys: the Worker must use the mock for every provider.
  const worker = await startWorker({ port: await freePort(), mockURL: mock.url, env: {} });
  const site = await startStatic();
  const context = await launchChromium(fs.mkdtempSync(path.join(os.tmpdir(), "skyl-www-")), {
    viewport: { width: 1100, height: 900 },
  });
  /**
   * Opens the page for a provider; `errors` collects console errors and
   * uncaught exceptions (a 404 shows there too).
   */
  async function open(provider, { viewport } = {}) {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    const errors = watchErrors(page);
    await page.goto(`${site.url}/?worker=${encodeURIComponent(worker.url)}&provider=${provider}`);
    await page.waitForSelector("body[data-ready='1']", { timeout: 15000 });
    return { page, errors };
  }
  async function stop() {
    await context?.close();
    worker?.stop();
    await site?.close();
    await mock?.close();
  }
  return { mock, worker, site, open, stop };
}

/** Waits until the chat's status line matches `re`. */
export const statusMatches = (page, re, timeout = 15000) =>
  page.waitForFunction(
    (source) => new RegExp(source).test(document.getElementById("status").textContent),
    re.source,
    { timeout },
  );

/** Sends one message from the chat box and waits for the turn to end. */
export async function ask(page, text) {
  const before = await page.$$eval("#chat .meta", (els) => els.length);
  await page.fill("#input", text);
  await page.press("#input", "Enter");
  await page.waitForFunction(
    (n) =>
      !document.getElementById("send").disabled &&
      document.querySelectorAll("#chat .meta").length > n,
    before,
    { timeout: 20000 },
  );
}

/** The cards of the chat: [{ name, state, args, result }]. */
export const cards = (page) =>
  page.$$eval("#chat .card[data-call]", (els) =>
    els.map((c) => ({
      name: c.querySelector(".name")?.textContent,
      state: c.querySelector(".state")?.textContent,
      args: JSON.parse(c.querySelector(".args")?.textContent ?? "null"),
      result: c.querySelector(".result")?.textContent,
    })),
  );

export const texts = (page) =>
  page.$$eval("#chat .msg.assistant", (els) => els.map((e) => e.textContent));

export const shot = (page, name) =>
  page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });

/** No horizontal scrolling: the page fits its viewport's width. */
export const fitsWidth = (page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
