// Browser entry (bundlers such as Vite, or native ES modules). Nothing is
// fetched at import: the WebAssembly file next to this module is loaded on
// first use (or by `await ready()`).
import init from "./skyl_wasm.js";
import { setLoader } from "./load.js";

setLoader(() => init({ module_or_path: new URL("./skyl_wasm_bg.wasm", import.meta.url) }));

export * from "./api.js";
