// The two drivers' cost per chunk and per event: the npm package's JS
// driver (skyl, skyl decodeStream) and skyl::web, the Rust one
// (bench/web-driver: skyl web, skyl web decode_stream), beside the drain
// floor (the body read, each chunk copied into wasm memory) and minimal-js.
// Each library runs the text stream of a wire (`chat-real`: ~2,000 text
// events) delivered two ways, one event per chunk and in 1-4 KB chunks:
// the same events over different numbers of chunks, so that its median CPU
// splits into a cost per chunk and a cost per event (two equations, two
// unknowns). Rounds interleave the libraries, each run its own child.mjs
// process as in run.mjs; the figures are medians over rounds.
//   node bench/driver.mjs [rounds=3] [wire ...]
// scripts/bench builds what it needs (pkg/, bench/web-driver/pkg/).
import { makeInput, WIRES } from "./inputs.mjs";
import { hasWebDriver, WEB_DRIVER } from "./libs.mjs";
import { childRun, median } from "./spawn.mjs";

const [roundsArg, ...wireArgs] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 3);
const wires = wireArgs.length ? wireArgs : WIRES;
const LIBS = [
  "drain floor",
  "minimal-js",
  "skyl decodeStream",
  "skyl web decode_stream",
  "skyl",
  "skyl web",
];
const KIND = "chat-real";
const RUNS = 15;
const WARMUP = 10;
if (!hasWebDriver()) {
  console.error(`${WEB_DRIVER} is not built: run scripts/bench first (it builds it)`);
  process.exit(2);
}

/** One child process: a library's median CPU ms on one case. */
function measure(lib, wire, delivery) {
  const r = childRun(lib, wire, KIND, delivery, RUNS, WARMUP);
  if (r.error) throw new Error(`${lib} ${wire}/${delivery}: ${r.error}`);
  return median(r.cpu);
}

const us = (x) => (x * 1000).toFixed(2);
console.log(
  `per chunk and per event, µs of CPU (median of ${rounds} rounds; ${KIND}, one event per chunk and 1-4 KB chunks)\n`,
);
console.log(
  "| wire | library | per chunk µs | per event µs | ms, event per chunk | ms, 1-4 KB chunks |",
);
console.log("|---|---|---|---|---|---|");
for (const wire of wires) {
  const one = makeInput(wire, KIND, "event");
  const many = makeInput(wire, KIND, "chunks");
  // One event per chunk: chunks = events (E); 1-4 KB: C chunks, E events.
  const E = one.chunks.length;
  const C = many.chunks.length;
  const cpu = Object.fromEntries(LIBS.map((l) => [l, { event: [], chunks: [] }]));
  for (let r = 0; r < rounds; r++)
    for (const lib of LIBS)
      for (const delivery of ["event", "chunks"])
        cpu[lib][delivery].push(measure(lib, wire, delivery));
  for (const lib of LIBS) {
    const a = median(cpu[lib].event);
    const b = median(cpu[lib].chunks);
    // a = E·chunk + E·event, b = C·chunk + E·event.
    const chunk = (a - b) / (E - C);
    const event = (b - C * chunk) / E;
    const perEvent = lib === "drain floor" ? "-" : us(event);
    console.log(
      `| ${wire} (${E} events; ${C} chunks of 1-4 KB) | ${lib} | ${us(chunk)} | ${perEvent} | ${a.toFixed(2)} | ${b.toFixed(2)} |`,
    );
  }
}
