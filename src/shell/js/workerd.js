// Cloudflare Workers entry: workerd cannot compile WebAssembly from bytes at
// run time, so the module is imported precompiled and instantiated from it.
import wasmModule from "./skyl_wasm_bg.wasm";
import { initSync } from "./skyl_wasm.js";
import { markReady } from "./load.js";

initSync({ module: wasmModule });
markReady();

export * from "./api.js";
