// The CommonJS app: `require("skyl")` and the one-adapter entries, where the
// runtime can require() an ES module (Node 20.19+ and 22.12+, Deno, Bun).
// Run as `<runtime> require.cjs <mock URL> <entry>...` (openai, anthropic,
// ...); prints what it assembled as JSON, or, where require() refuses, the
// error's code and message.
"use strict";
let skyl;
try {
  skyl = require("skyl");
} catch (e) {
  console.log(JSON.stringify({ refused: { code: e.code, message: e.message } }));
  process.exit(0);
}
const [mock, ...names] = process.argv.slice(2);
const entries = {};
for (const name of names) entries[name] = require(`skyl/${name}`);
(async () => {
  const { runAll, entryReport } = await import("./toolloop.js");
  const out = { all: await runAll(skyl, mock), entries: {} };
  for (const [name, mod] of Object.entries(entries)) {
    out.entries[name] = await entryReport(mod, name, mock);
  }
  // One module instance for require() and import: the same classes.
  out.sameAsImport = (await import("skyl")).Client === skyl.Client;
  console.log(JSON.stringify(out));
})();
