// The adapters this entry's WebAssembly module was built with. scripts/build
// writes its own copy beside each one-adapter build (skyl/openai,
// skyl/anthropic, skyl/gemini); this one is the full package's.
export const ADAPTERS = ["openai", "openaicompat", "anthropic", "gemini"];
export const ENTRY = "skyl";
