// The targets of issue 16, per case, from one run's rows (bench/run.mjs):
// skyl's median CPU at most 0.5× the fastest official SDK's, at most 0.15×
// the AI SDK's, at most 1× the minimal JS parser's, and above the drain
// floor at most 2× the native core's on the same bytes; and, issue 17,
// skyl::web (the Rust driver) at most 2× the CPU of the npm package's JS
// driver on the same inputs.

const OFFICIAL = ["openai", "@anthropic-ai/sdk", "@google/genai"];
const LIMITS = { sdk: 0.5, ai: 0.15, minimal: 1, native: 2, web: 2 };

const f2 = (x) => (x === null || Number.isNaN(x) ? "-" : x.toFixed(2));
const ms = (x) =>
  x === null || Number.isNaN(x)
    ? "-"
    : Math.abs(x) >= 100
      ? x.toFixed(0)
      : Math.abs(x) >= 10
        ? x.toFixed(1)
        : x.toFixed(2);
/** A ratio, marked ✗ above its limit. */
const mark = (x, limit) => (x === null ? "-" : `${f2(x)}${x > limit ? " ✗" : ""}`);

/**
 * The ratios of one case: numbers, for the table and for comparisons. With
 * `before`, those of the "skyl before" row (another build, measured in the
 * same run) and its own native core ("native before").
 */
export function ratios(cell, before = false) {
  const cpu = (lib) => cell.find((r) => r.lib === lib)?.cpuMed ?? null;
  const skyl = cpu(before ? "skyl before" : "skyl");
  if (skyl === null) return null;
  const sdks = cell.filter((r) => OFFICIAL.includes(r.lib));
  const sdk = sdks.length ? sdks.reduce((a, b) => (a.cpuMed <= b.cpuMed ? a : b)) : null;
  const floor = cpu("drain floor");
  const native = cpu(before ? "native before" : "native Rust core");
  const decode = cpu("skyl decodeStream");
  const wasmOnly = cpu("skyl wasm only");
  const over = (x) => (x === null || floor === null ? null : x - floor);
  const per = (x, y) => (x === null || y === null ? null : x / y);
  return {
    skyl,
    sdkName: sdk?.lib ?? null,
    sdk: per(skyl, sdk?.cpuMed ?? null),
    ai: per(skyl, cpu("ai-sdk")),
    minimal: per(skyl, cpu("minimal-js")),
    floor,
    aboveFloor: over(skyl),
    decodeAboveFloor: over(decode),
    wasmAboveFloor: over(wasmOnly),
    nativeMs: native,
    native: per(over(skyl), native),
    decodeNative: per(over(decode), native),
  };
}

/** The markdown table of every case's ratios, misses marked ✗. */
export function targets(rows, wires, kinds, deliveries) {
  return (
    table(rows, wires, kinds, deliveries, false) +
    table(rows, wires, kinds, deliveries, true) +
    drivers(rows, wires, kinds, deliveries)
  );
}

/** The two drivers side by side: skyl::web (Rust) against the npm package's JS. */
function drivers(rows, wires, kinds, deliveries) {
  if (!rows.some((r) => r.lib === "skyl web")) return "";
  let md = `\n### The Rust driver\n\nPer case, the median CPU of *skyl web* (\`skyl::web::Client\` from a Rust function compiled to wasm32, bench/web-driver: fetch, the body's reader and the events driven from Rust, text and calls collected in Rust) over *skyl*'s (the npm package's \`Client\`, driven by its JS half), target ≤ ${LIMITS.web} on the tools and big cases (issue 17); and the same without the request: *skyl web decode_stream* over *skyl decodeStream*.\n\n| case | skyl web ms | skyl ms | web ÷ skyl | web decode_stream ms | decodeStream ms | ÷ |\n|---|---|---|---|---|---|---|\n`;
  for (const [name, cell] of cells(rows, wires, kinds, deliveries)) {
    const cpu = (lib) => cell.find((r) => r.lib === lib)?.cpuMed ?? null;
    const web = cpu("skyl web");
    if (web === null) continue;
    const per = (x, y) => (x === null || y === null ? null : x / y);
    const kind = name.split("/")[1];
    const limit = /^(tools|big)/.test(kind) ? LIMITS.web : Number.POSITIVE_INFINITY;
    md += `| ${name} | ${ms(web)} | ${ms(cpu("skyl"))} | ${mark(per(web, cpu("skyl")), limit)} | ${ms(cpu("skyl web decode_stream"))} | ${ms(cpu("skyl decodeStream"))} | ${mark(per(cpu("skyl web decode_stream"), cpu("skyl decodeStream")), limit)} |\n`;
  }
  return md;
}

function table(rows, wires, kinds, deliveries, before) {
  if (before && !rows.some((r) => r.lib === "skyl before")) return "";
  if (before) {
    let md =
      "\n### Before\n\nThe same ratios for *skyl before* (`SKYL_BEFORE`: an earlier build, named in bench/README.md), measured in this run, next to its own native core (*native before*), and the ratio of this build's skyl CPU to it.\n\n| case | skyl before ms | ÷ fastest SDK | ÷ ai-sdk | ÷ minimal-js | (before − floor) ÷ native before | skyl ÷ skyl before |\n|---|---|---|---|---|---|---|\n";
    for (const [name, cell] of cells(rows, wires, kinds, deliveries)) {
      const r = ratios(cell, true);
      const now = ratios(cell);
      if (!r) continue;
      md += `| ${name} | ${ms(r.skyl)} | ${mark(r.sdk, LIMITS.sdk)} | ${mark(r.ai, LIMITS.ai)} | ${mark(r.minimal, LIMITS.minimal)} | ${mark(r.native, LIMITS.native)} | ${f2(now ? now.skyl / r.skyl : null)} |\n`;
    }
    return md;
  }
  let md = `## Targets\n\nPer case, from the medians above: skyl's CPU over the fastest official SDK's (target ≤ ${LIMITS.sdk}), over the AI SDK's (≤ ${LIMITS.ai}) and over minimal-js's (≤ ${LIMITS.minimal}); the drain floor; skyl's CPU above that floor (and that of skyl decodeStream, the same decoder without the client's request, and of skyl wasm only, its WebAssembly without the JS that builds the events), next to the native core's on the same bytes, and their ratio (≤ ${LIMITS.native}). ✗ marks a miss.\n\n`;
  md +=
    "| case | skyl ms | ÷ fastest SDK | ÷ ai-sdk | ÷ minimal-js | floor ms | skyl − floor ms | decodeStream − floor ms | wasm only − floor ms | native ms | (skyl − floor) ÷ native | (decodeStream − floor) ÷ native |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const [name, cell] of cells(rows, wires, kinds, deliveries)) {
    const r = ratios(cell);
    if (!r) continue;
    md += `| ${name} | ${ms(r.skyl)} | ${mark(r.sdk, LIMITS.sdk)} | ${mark(r.ai, LIMITS.ai)} | ${mark(r.minimal, LIMITS.minimal)} | ${ms(r.floor)} | ${ms(r.aboveFloor)} | ${ms(r.decodeAboveFloor)} | ${ms(r.wasmAboveFloor)} | ${ms(r.nativeMs)} | ${mark(r.native, LIMITS.native)} | ${mark(r.decodeNative, LIMITS.native)} |\n`;
  }
  return md;
}

/** Each case's name and rows, in order. */
function* cells(rows, wires, kinds, deliveries) {
  for (const wire of wires)
    for (const kind of kinds)
      for (const delivery of deliveries)
        yield [
          `${wire}/${kind}/${delivery}`,
          rows.filter((x) => x.wire === wire && x.kind === kind && x.delivery === delivery),
        ];
}
