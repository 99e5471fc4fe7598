// One library on one case in its own Node process (child.mjs), for the
// scripts that compare runs: run.mjs, ab.mjs, driver.mjs.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * child.mjs's JSON line for `lib` on wire/kind/delivery (`{ cpu, wall,
 * ... }`), or `{ error }` with what went wrong; `env` is added to this
 * process's environment (e.g. SKYL_PKG).
 */
export function childRun(lib, wire, kind, delivery, runs, warmup, env = {}) {
  const p = spawnSync(
    process.execPath,
    [path.join(here, "child.mjs"), lib, wire, kind, delivery, String(runs), String(warmup)],
    { encoding: "utf8", cwd: here, maxBuffer: 1 << 24, env: { ...process.env, ...env } },
  );
  const line = p.stdout
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .at(-1);
  if (!line) return { error: `${lib} ${wire}/${kind}/${delivery} failed:\n${p.stderr}` };
  return JSON.parse(line);
}

/** The median of numbers. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Writes `section` between the markers `begin` and `end` of
 * bench/RESULTS.md (at its end the first time): a script's own block,
 * which run.mjs keeps when it rewrites the file.
 */
export function writeBlock(begin, end, section) {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "RESULTS.md");
  const old = fs.readFileSync(file, "utf8");
  const at = old.indexOf(begin);
  const block = `${begin}\n${section}${end}`;
  const after = at < 0 ? "\n" : old.slice(old.indexOf(end) + end.length);
  fs.writeFileSync(file, `${at < 0 ? `${old.trimEnd()}\n\n` : old.slice(0, at)}${block}${after}`);
  console.log("wrote its block of bench/RESULTS.md");
}
