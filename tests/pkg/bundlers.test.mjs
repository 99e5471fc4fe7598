// The packed npm package (dist/skyl-*.tgz) in browser builds: the page
// tests/pkg/app/page.js, bundled by Vite in a scratch project, served on
// loopback and run in Debian's headless Chromium against the mock provider
// (tests/pkg/helpers.mjs, checkBrowserBuild). The build needs no
// configuration for skyl: it resolves the "browser" condition and emits
// each entry's .wasm, which the page fetches on first use.
import { test } from "node:test";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { root, scratch, useMock, checkBrowserBuild } from "./helpers.mjs";

const mock = useMock();

test("Browser: a Vite build in headless Chromium", async () => {
  const dir = scratch("vite");
  execFileSync(
    process.execPath,
    [path.join(root, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "error"],
    { cwd: dir, stdio: "pipe" },
  );
  await checkBrowserBuild(path.join(dir, "dist"), mock().url, "vite-chromium");
});
