// The app of the server runtime tests (runtimes.test.mjs): the tool loop for
// every provider through "skyl", then through each one-adapter entry named.
// Run as `<runtime> server.js <mock URL> <entry>...` (openai, anthropic,
// ...); prints what it assembled as JSON.
import * as skyl from "skyl";
import { runAll, entryReport } from "./toolloop.js";

const [mock, ...names] = process.argv.slice(2);
const entries = {};
for (const name of names) {
  entries[name] = await entryReport(await import(`skyl/${name}`), name, mock);
}
console.log(JSON.stringify({ all: await runAll(skyl, mock), entries }));
