// What the JS-side tests share as data, with no import of the package:
// the providers and the one-adapter entries, read from the list the Rust
// core generates (src/shell/js/policy.js, `PROVIDER_FEATURES`), and the
// weather tool every tool loop declares.
import { PROVIDER_FEATURES } from "../../src/shell/js/policy.js";

/** Every provider, in the core's order (`Provider::ALL`). */
export const PROVIDERS = Object.freeze(Object.keys(PROVIDER_FEATURES));

/**
 * The one-adapter entries (skyl/openai, ...), each with the providers it
 * speaks: the providers grouped by the Cargo feature that builds them.
 */
export const ENTRIES = {};
for (const provider of PROVIDERS) {
  const feature = PROVIDER_FEATURES[provider];
  ENTRIES[feature] = [...(ENTRIES[feature] ?? []), provider];
}

/** The weather tool: the mock's model calls it for "the weather in <city>". */
export const TOOLS = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

/**
 * What a wasm module (`glue`: its `skyl_wasm.js`, initialised) encodes for
 * one request, through its run machine's first step: `{"ok": ...}`, a NUL
 * and the body, or `{"error": ...}` (nothing would be sent).
 */
export function encodeWith(glue, config, request, stream) {
  const run = new glue.Run(config, request, stream, 0, 0, 0, 0, 1);
  try {
    run.start();
    return run.takeOutput();
  } finally {
    run.free();
  }
}
