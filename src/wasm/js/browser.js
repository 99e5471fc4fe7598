// Browser entry (bundlers such as Vite, or native ES modules): fetches and
// instantiates the WebAssembly module next to this file, then exposes the API.
import init from "./skyl_wasm.js";

await init({ module_or_path: new URL("./skyl_wasm_bg.wasm", import.meta.url) });

export * from "./api.js";
