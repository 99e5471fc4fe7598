// skyl is an ES module (its WebAssembly loads through import.meta.url and,
// in Workers, an imported .wasm module). Node 20.19+ and 22.12+ load it with
// require() too: the exports' "module-sync" condition, which only a Node
// that can require() an ES module resolves, points require("skyl") at the
// ES module itself. This file is what require() finds elsewhere (older Node,
// or require(esm) turned off), so it says how to use skyl instead of failing
// obscurely.
"use strict";
const err = new Error(
  "skyl is an ES module and this runtime cannot load it with require() " +
    "(Node 20.19+ and 22.12+ can). " +
    'Use `import { Client } from "skyl"`, or from CommonJS: ' +
    '`const { Client } = await import("skyl")` (or a one-adapter entry: ' +
    '"skyl/openai", "skyl/anthropic", "skyl/gemini").',
);
err.code = "ERR_REQUIRE_ESM";
throw err;
