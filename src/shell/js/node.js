// Node entry: instantiates the WebAssembly module from the file beside this
// one, synchronously, then exposes the API.
import { readFileSync } from "node:fs";
import { initSync } from "./skyl_wasm.js";
import { markReady } from "./load.js";

initSync({ module: readFileSync(new URL("./skyl_wasm_bg.wasm", import.meta.url)) });
markReady();

export * from "./api.js";
