// How the WebAssembly module gets instantiated, set by the runtime entry.
// Node and Workers instantiate synchronously at import (from a file / a
// precompiled module, no network); the browser entry loads on first use.
export const wasmState = { done: false, loader: null, promise: null };

/** Marks the module as instantiated. */
export function markReady() {
  wasmState.done = true;
}

/** Sets the function that instantiates the module on first use. */
export function setLoader(loader) {
  wasmState.loader = loader;
}
