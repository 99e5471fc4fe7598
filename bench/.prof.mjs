import { makeInput, fakeFetch } from "/work/main/bench/inputs.mjs";
import { LIBRARIES } from "/work/main/bench/libs.mjs";
const input = makeInput("anthropic", "big", "event");
const run = await LIBRARIES.skyl.load();
for (let i = 0; i < 3; i++) await run("anthropic", input);
const t0 = performance.now();
for (let i = 0; i < 5; i++) await run("anthropic", input);
console.log("per run", (performance.now() - t0) / 5, "ms", input.body.length, "bytes", input.events, "events");
