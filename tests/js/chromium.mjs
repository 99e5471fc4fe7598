// Headless Chromium for the browser tests: Debian's /usr/bin/chromium
// (scripts/tools.sh, ensure_chromium) driven by playwright-core, with
// nothing that reaches past loopback (no QUIC, no background networking,
// no component updates, no sync).
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless browser context with its profile in `profileDir`; `options` as playwright's. */
export async function launchChromium(profileDir, options = {}) {
  const { chromium } = await import("playwright-core");
  return chromium.launchPersistentContext(profileDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    ...options,
  });
}

/** Collects a page's uncaught exceptions and console errors (a 404 shows there too). */
export function watchErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  return errors;
}
