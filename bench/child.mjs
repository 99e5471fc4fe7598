// One library, one input, in its own process: warm up, then time each run
// (wall and CPU) and track peak memory. Prints one JSON line.
//   node bench/child.mjs <library> <wire> <kind> <delivery> <runs> <warmup>
// (warmup: at least that many runs, and at least 0.5 s when it is above 1)
import { makeInput } from "./inputs.mjs";
import { LIBRARIES } from "./libs.mjs";

const [lib, wire, kind, delivery, runsArg, warmArg] = process.argv.slice(2);
const runs = Number(runsArg),
  warmup = Number(warmArg);
const input = makeInput(wire, kind, delivery);
const run = await LIBRARIES[lib].load();

const norm = (r) => ({
  text: r.text,
  calls: r.calls.map((c) => ({
    name: c.name,
    args: typeof c.args === "string" ? JSON.parse(c.args) : c.args,
  })),
});
const first = norm(await run(wire, input));
// (The drain floor decodes nothing: there is nothing to check.)
const same = LIBRARIES[lib].floor || JSON.stringify(first) === JSON.stringify(input.expected);
if (!same) {
  const diff =
    first.text !== input.expected.text
      ? `text differs (${first.text.length} vs ${input.expected.text.length} chars)`
      : `calls differ (${first.calls.length} vs ${input.expected.calls.length})`;
  console.log(
    JSON.stringify({
      lib,
      wire,
      kind,
      delivery,
      error: `${lib} assembled a different result: ${diff}`,
    }),
  );
  process.exit(0);
}
// Warm up for at least `warmup` runs and half a second, whichever is
// longer: JIT tiers (V8's TurboFan for JS and for wasm) need time as well as
// calls, and a fast library would otherwise be timed partly unoptimised.
const warmUntil = performance.now() + (warmup > 1 ? 500 : 0);
for (let i = 0; i < warmup || performance.now() < warmUntil; i++) await run(wire, input);
const wall = [],
  cpu = [];
let peak = process.memoryUsage().rss;
for (let i = 0; i < runs; i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run(wire, input);
  wall.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
  peak = Math.max(peak, process.memoryUsage().rss);
}
console.log(
  JSON.stringify({
    lib,
    wire,
    kind,
    delivery,
    bytes: input.body.length,
    events: input.events,
    wall,
    cpu,
    peakRss: peak,
  }),
);
