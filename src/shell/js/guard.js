// Calling into WebAssembly safely: every call goes through `call`, which
// refuses before the module is instantiated and turns a trap after a Rust
// panic into a PanicError (and every later call too: a panicked instance is
// unusable).

import * as wasm from "./skyl_wasm.js";
import { wasmState } from "./load.js";
import { localError, PanicError, SkylError } from "./errors.js";

let panicMessage = null;
let hookInstalled = false;

/**
 * Resolves once the WebAssembly module is instantiated. Node and Workers
 * are ready at import; in a browser the module loads on first use, and the
 * synchronous helpers (validate*) need this awaited first.
 */
export function ready() {
  if (wasmState.done) return Promise.resolve();
  wasmState.promise ??= Promise.resolve()
    .then(() => wasmState.loader?.())
    .then(() => {
      wasmState.done = true;
    });
  return wasmState.promise;
}

/**
 * The size in bytes of this instance's WebAssembly memory, for diagnostics:
 * the most skyl has held at once (plus the module's static data and stack),
 * since WebAssembly memory grows and never shrinks; memory freed inside it
 * is reused. 0 until the module is instantiated.
 */
export function wasmMemorySize() {
  return wasmState.done ? wasm.wasmMemory().buffer.byteLength : 0;
}

/** Calls into WebAssembly; a trap after a panic becomes a PanicError. */
export function call(fn) {
  if (panicMessage !== null) throw panicError();
  if (!wasmState.done) {
    throw new SkylError(
      localError(
        "SkylError",
        "not_ready",
        "skyl's WebAssembly module is still loading: await ready() before calling this synchronously",
      ),
    );
  }
  if (!hookInstalled) {
    hookInstalled = true;
    wasm.setPanicHook((msg) => {
      panicMessage = String(msg);
    });
  }
  try {
    return fn();
  } catch (e) {
    if (panicMessage !== null || e instanceof WebAssembly.RuntimeError) {
      panicMessage ??= String(e?.message ?? e);
      throw panicError(e);
    }
    throw e;
  }
}

/** The error for the panic that made the instance unusable. */
function panicError(cause) {
  return new PanicError(
    localError(
      "PanicError",
      "panic",
      `skyl panicked: ${panicMessage}. This is a bug; the WebAssembly instance is unusable: load the module again.`,
    ),
    cause === undefined ? undefined : { cause },
  );
}
