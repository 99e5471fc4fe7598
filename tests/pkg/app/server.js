// The app of the server runtime tests (runtimes.test.mjs): the tool loop for
// all five providers through "skyl", then through each one-adapter entry.
// Run as `<runtime> server.js <mock URL>`; prints what it assembled as JSON.
import * as skyl from "skyl";
import { runAll, entryReport } from "./toolloop.js";

const mock = process.argv[2];
const entries = {};
for (const name of ["openai", "anthropic", "gemini"]) {
  entries[name] = await entryReport(await import(`skyl/${name}`), name, mock);
}
console.log(JSON.stringify({ all: await runAll(skyl, mock), entries }));
