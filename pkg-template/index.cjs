// skyl is an ES module (its WebAssembly loads through import.meta.url and,
// in Workers, an imported .wasm module). CommonJS `require` cannot load it in
// Node 20, so say how to use it instead of failing obscurely.
"use strict";
const err = new Error(
  "skyl is an ES module and cannot be loaded with require(). " +
    'Use `import { Client } from "skyl"`, or from CommonJS: ' +
    '`const { Client } = await import("skyl")` (or a one-adapter entry: ' +
    '"skyl/openai", "skyl/anthropic", "skyl/gemini").',
);
err.code = "ERR_REQUIRE_ESM";
throw err;
