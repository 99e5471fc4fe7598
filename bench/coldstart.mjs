// Cold start of the built package: import + instantiate in a fresh Node
// process, and in workerd (a fresh Miniflare per run: time to the first
// response of a Worker that imports skyl, minus the same for an empty one).
// Usage: node bench/coldstart.mjs [runs]   (after scripts/build: the packed
// package in dist/; SKYL_PKG=<dir> installs that built package instead)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] ?? 9);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

// A scratch project with the packed package.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skyl-cold-"));
fs.writeFileSync(path.join(dir, "package.json"), '{"private":true,"type":"module"}');
const source = process.env.SKYL_PKG
  ? path.resolve(process.env.SKYL_PKG)
  : path.join(
      root,
      "dist",
      fs.readdirSync(path.join(root, "dist")).find((f) => f.endsWith(".tgz")),
    );
execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", source], {
  cwd: dir,
});

// Node
fs.writeFileSync(
  path.join(dir, "node.mjs"),
  `const t0 = performance.now(); await import("skyl"); console.log(performance.now() - t0);`,
);
const node = [];
for (let i = 0; i < runs; i++)
  node.push(Number(execFileSync(process.execPath, ["node.mjs"], { cwd: dir, encoding: "utf8" })));

// workerd
const esbuild = path.join(root, "node_modules/.bin/esbuild");
fs.writeFileSync(
  path.join(dir, "with.js"),
  `import { Client } from "skyl";\nexport default { fetch() { return new Response(typeof Client); } };`,
);
fs.writeFileSync(
  path.join(dir, "without.js"),
  `export default { fetch() { return new Response("function"); } };`,
);
for (const name of ["with", "without"]) {
  execFileSync(
    esbuild,
    [
      `${name}.js`,
      "--bundle",
      "--format=esm",
      "--conditions=workerd,worker,browser",
      "--loader:.wasm=copy",
      "--minify",
      `--outdir=out-${name}`,
    ],
    { cwd: dir, stdio: "pipe" },
  );
}
const { Miniflare } = await import(path.join(root, "node_modules/miniflare/dist/src/index.js"));
async function workerd(name) {
  const out = path.join(dir, `out-${name}`);
  const modules = fs
    .readdirSync(out)
    .sort((a, b) => a.endsWith(".wasm") - b.endsWith(".wasm"))
    .map((f) => ({
      type: f.endsWith(".wasm") ? "CompiledWasm" : "ESModule",
      path: path.join(out, f),
    }));
  const t0 = performance.now();
  const mf = new Miniflare({ modules, modulesRoot: out, compatibilityDate: "2026-04-01" });
  const res = await mf.dispatchFetch("http://localhost/");
  const text = await res.text();
  const ms = performance.now() - t0;
  await mf.dispose();
  if (text !== "function") throw new Error(`unexpected worker answer: ${text}`);
  return ms;
}
const withSkyl = [],
  without = [];
for (let i = 0; i < runs; i++) {
  without.push(await workerd("without"));
  withSkyl.push(await workerd("with"));
}
const bundle = fs
  .readdirSync(path.join(dir, "out-with"))
  .map((f) => `${f} ${fs.statSync(path.join(dir, "out-with", f)).size} B`)
  .join(", ");
console.log(
  `node: import + instantiate, median of ${runs}: ${median(node).toFixed(1)} ms (min ${Math.min(...node).toFixed(1)})`,
);
console.log(
  `workerd: first response with skyl ${median(withSkyl).toFixed(0)} ms, empty worker ${median(without).toFixed(0)} ms: skyl adds ${(median(withSkyl) - median(without)).toFixed(1)} ms (median of ${runs})`,
);
console.log(`worker bundle: ${bundle}`);
fs.rmSync(dir, { recursive: true, force: true });
