// skyl's JavaScript API: the JS half of the shell. It owns what belongs to
// the JS runtime (fetch, the body reader, timers, AbortSignal, the async
// iterator, Error classes); every protocol decision (encoding, decoding,
// error typing, retry policy) is made by the Rust core in WebAssembly.
//
// The runtime entries (node.js, browser.js, workerd.js) instantiate the
// WebAssembly module, then re-export this module: the public API, and
// nothing else, from the modules that hold it (each imports only those
// before it, no cycles):
//
//   errors.js    SkylError and its subclasses; ErrorInfo -> error, scrubbed
//   guard.js     ready(), wasmMemorySize(), and `call`: every call into the
//                wasm, panics typed
//   boundary.js  the format of what the wasm returns, and its decoder
//   run.js       Run: one request's attempts, retries, timeouts, aborts
//   result.js    StreamResult: the stream's iterator and response()
//   tool-run.js  RunResult: client.run, the tool loop the core decides
//   messages.js  toolResultMessage, toolErrorMessage
//   client.js    Client and its options, decodeStream, validate*

export {
  AbortError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  ContentFilterError,
  InternalServerError,
  InvalidRequestError,
  MalformedStreamError,
  NotFoundError,
  OverloadedError,
  PanicError,
  PermissionDeniedError,
  RateLimitError,
  SkylError,
  StreamEndedEarlyError,
  TimeoutError,
} from "./errors.js";
export { ready, wasmMemorySize } from "./guard.js";
export { StreamResult } from "./result.js";
export { RunResult } from "./tool-run.js";
export { toolErrorMessage, toolResultMessage } from "./messages.js";
export {
  Client,
  decodeStream,
  PROVIDERS,
  validateRequest,
  validateTool,
  validateToolCall,
} from "./client.js";
