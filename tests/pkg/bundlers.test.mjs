// The packed npm package (dist/skyl-*.tgz) in browser builds: the page
// tests/pkg/app/page.js, bundled by Vite and by webpack 5 in a scratch
// project, served on loopback and run in Debian's headless Chromium against
// the mock provider (tests/pkg/helpers.mjs, checkBrowserBuild). Neither
// build needs any configuration for skyl: both resolve the "browser"
// condition and emit each entry's .wasm, which the page fetches on first use.
import { test } from "node:test";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { root, run, scratch, useMock, checkBrowserBuild } from "./helpers.mjs";

const mock = useMock();

test("Browser: a Vite build in headless Chromium", async () => {
  const dir = scratch("vite");
  execFileSync(
    process.execPath,
    [path.join(root, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "error"],
    { cwd: dir, stdio: "pipe" },
  );
  await checkBrowserBuild(path.join(dir, "dist"), mock.url, "vite-chromium");
});

test("Browser: a webpack 5 build in headless Chromium", async () => {
  const dir = scratch("webpack", {
    // An app's usual configuration, nothing for skyl. (Without the last
    // line, webpack warns that the full entry's wasm is above its 244 KiB
    // size hint.)
    "webpack.config.mjs": `export default {
  mode: "production",
  entry: "./page.js",
  output: { filename: "page.js" },
  performance: { hints: false },
};
`,
    // What webpack-cli would do with it.
    "build.mjs": `import webpack from ${JSON.stringify(path.join(root, "node_modules/webpack/lib/index.js"))};
import config from "./webpack.config.mjs";
webpack(config, (err, stats) => {
  if (err || stats.hasErrors() || stats.hasWarnings()) {
    console.error(err ?? stats.toString({ all: false, errors: true, warnings: true }));
    process.exitCode = 1;
  }
});
`,
  });
  await run(process.execPath, ["build.mjs"], { cwd: dir, timeout: 120000 });
  const dist = path.join(dir, "dist");
  fs.copyFileSync(path.join(dir, "index.html"), path.join(dist, "index.html"));
  await checkBrowserBuild(dist, mock.url, "webpack-chromium");
});
