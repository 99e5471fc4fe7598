// Generated from the Rust core by src/shell/policy_js.rs: do not edit.
// `BLESS=1 cargo test --lib policy_js` rewrites it, and `cargo test`
// fails while it differs from the core. These are the rules the JS half
// needs synchronously, before the WebAssembly module has loaded (a
// browser loads it on first use; `new Client` checks its options at
// once); every other decision is asked of the module.

/** Every provider, and the Cargo feature that builds its adapter (`Provider::feature`). */
export const PROVIDER_FEATURES = /* @__PURE__ */ Object.freeze({
  openai: "openai",
  openaicompat: "openai",
  anthropic: "anthropic",
  gemini: "gemini",
  responses: "openai",
  bedrock: "bedrock",
});

/** The providers with no default endpoint, and why a baseURL is needed. */
export const BASE_URL_REQUIRED = /* @__PURE__ */ Object.freeze({
  openaicompat: "an OpenAI-compatible server needs its base URL (e.g. http://127.0.0.1:11434/v1)",
});

/** The providers whose endpoint is their region's, and why a region (or a baseURL) is needed. */
export const REGION_REQUIRED = /* @__PURE__ */ Object.freeze({
  bedrock: "Bedrock needs the AWS region of its endpoint (e.g. us-east-1), or a baseURL",
});

/** The providers with no embeddings API, and where to go instead (`Adapter::embed`). */
export const NO_EMBEDDINGS = /* @__PURE__ */ Object.freeze({
  anthropic:
    "Anthropic has no embeddings API; it recommends Voyage AI, which skyl reaches as provider openaicompat with baseURL https://api.voyageai.com/v1 and a Voyage model (e.g. voyage-3.5)",
  bedrock:
    "skyl does not reach Bedrock's embeddings models (InvokeModel) yet; Cohere's and OpenAI-compatible embeddings APIs are reached with provider openaicompat",
});

/** Retries after the first attempt, unless maxRetries says otherwise (`RetryPolicy`). */
export const DEFAULT_MAX_RETRIES = 2;

/** The total timeout in milliseconds, unless one is given (`Timeout::DEFAULT_TOTAL_MS`). */
export const DEFAULT_TOTAL_TIMEOUT_MS = 600000;

/** How long before their expiration a `credentials()` callback's credentials are fetched again (`CREDENTIALS_REFRESH_MS`). */
export const CREDENTIALS_REFRESH_MS = 300000;

/** How long a service account's token exchange may take (`TOKEN_EXCHANGE_TIMEOUT_MS`). */
export const TOKEN_EXCHANGE_TIMEOUT_MS = 30000;

/** The fewest characters (code points) a secret must have to be scrubbed (`scrub`). */
export const MIN_SECRET_CHARS = 4;

/** What replaces a secret in scrubbed text. */
export const REDACTED = "[redacted]";

/** The characters a header name may have besides ASCII letters and digits (RFC 9110 `tchar`). */
export const HEADER_NAME_SYMBOLS = "!#$%&'*+-.^_`|~";

/** The headers whose values are credentials, scrubbed from errors as keys are (`SECRET_HEADERS`). */
export const SECRET_HEADERS = [
  "authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "x-amz-security-token",
];

/** The step codes of the run machine's wasm class (`shell/run.rs`). */
export const STEP = /* @__PURE__ */ Object.freeze({
  READ: 0,
  SEND: 1,
  TAKE: 2,
  WAIT: 3,
  DELIVER: 4,
  DONE: 5,
  FAIL: 6,
});

/** What a fired timer or an abort cancels (`shell/run.rs`, `Cancel`). */
export const CANCEL = /* @__PURE__ */ Object.freeze({
  NOTHING: 0,
  BODY: 1,
  ATTEMPT: 2,
  RUN: 3,
});

/** What a driver tells a machine's `input` (`shell/run.rs`); the last three take a cause. */
export const INPUT = /* @__PURE__ */ Object.freeze({
  ENDED: 0,
  DELIVERED: 1,
  WAITED: 2,
  NEXT: 3,
  UNREACHABLE: 4,
  LOST: 5,
  UNSIGNED: 6,
});

/** What `client.run` does next, as the tool loop's wasm class says (`shell/tool_loop.rs`). */
export const LOOP = /* @__PURE__ */ Object.freeze({
  REQUEST: 0,
  RUN: 1,
  APPROVE: 2,
  WAIT: 3,
  STOP: 4,
  FAIL: 5,
});
