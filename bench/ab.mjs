// An interleaved A/B of two built packages on the `skyl` row: each round
// runs every case on A, then on B (each run its own child.mjs process, as
// in run.mjs, with SKYL_PKG pointing at the package), so that the drift of
// a shared machine falls on both alike. Prints, per case, the median over
// rounds of each package's median CPU, and B/A per round (median, min-max);
// then the same for each run's fastest (min) CPU, which load from other
// processes inflates less.
//   node bench/ab.mjs <pkg-A> <pkg-B> [rounds=5] [case ...]
// A case is wire/kind/delivery; the default three are the re-layout's A/B:
// openai/tools/chunks, anthropic/tools/chunks, gemini/big/chunks.
import path from "node:path";
import { childRun, median } from "./spawn.mjs";

const [a, b, roundsArg, ...caseArgs] = process.argv.slice(2);
if (!a || !b) {
  console.error("usage: node bench/ab.mjs <pkg-A> <pkg-B> [rounds] [wire/kind/delivery ...]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 5);
const cases = caseArgs.length
  ? caseArgs
  : ["openai/tools/chunks", "anthropic/tools/chunks", "gemini/big/chunks"];
const pkgs = { A: path.resolve(a), B: path.resolve(b) };
const RUNS = 15;
const WARMUP = 10;

/** One child process: the `skyl` row on one case with one package; its median and min CPU ms. */
function measure(pkg, c) {
  const [wire, kind, delivery] = c.split("/");
  const r = childRun("skyl", wire, kind, delivery, RUNS, WARMUP, { SKYL_PKG: pkg });
  if (r.error) throw new Error(`${c} with ${pkg}: ${r.error}`);
  return { med: median(r.cpu), min: Math.min(...r.cpu) };
}

const cpu = Object.fromEntries(cases.map((c) => [c, { A: [], B: [] }]));
for (let round = 1; round <= rounds; round++) {
  for (const c of cases)
    for (const side of ["A", "B"]) {
      const m = measure(pkgs[side], c);
      cpu[c][side].push(m);
      console.log(
        `round ${round} ${c} ${side} median ${m.med.toFixed(2)} ms, min ${m.min.toFixed(2)} ms`,
      );
    }
}

console.log(`\nA = ${pkgs.A}\nB = ${pkgs.B}\n${rounds} rounds of ${RUNS} timed runs each`);
for (const stat of ["med", "min"]) {
  const what = stat === "med" ? "median" : "min";
  console.log(`\n| case | A CPU ${what} ms | B CPU ${what} ms | B/A | B/A per round, min-max |`);
  console.log("|---|---|---|---|---|");
  for (const c of cases) {
    const A = cpu[c].A.map((m) => m[stat]);
    const B = cpu[c].B.map((m) => m[stat]);
    const ratios = A.map((x, i) => B[i] / x);
    console.log(
      `| ${c} | ${median(A).toFixed(2)} | ${median(B).toFixed(2)} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)} |`,
    );
  }
}
