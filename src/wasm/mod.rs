//! The JavaScript shell (wasm32 only): fetch + ReadableStream transport and
//! the JS API. The only module that may name wasm-bindgen, js-sys or
//! web-sys; reserved for the WebAssembly shell.
