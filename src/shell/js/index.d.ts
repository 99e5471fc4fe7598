// Type declarations for skyl. Every object in and out is plain JSON: a
// history saved with JSON.stringify and loaded again replays identically.
// The tool runner's types are in runner.d.ts, the errors' in
// error-types.d.ts; this file exports them all.
import type { RunRequest, RunResult } from "./runner.js";
export * from "./runner.js";
export * from "./error-types.js";

export type Provider = "openai" | "openaicompat" | "anthropic" | "gemini" | "responses" | "bedrock";
/** The providers this entry speaks: all six from "skyl", fewer from "skyl/openai" (openai, openaicompat, responses), "skyl/anthropic", "skyl/gemini", "skyl/bedrock". */
export declare const PROVIDERS: readonly Provider[];

/** Opaque data a provider needs back on replay, keyed by adapter name. */
export type ProviderData = { [adapter: string]: unknown };

/** Anthropic keeps a text's sources (web search, documents) in `providerData.anthropic.citations`, as the API sent them. */
export type TextPart = { type: "text"; text: string; providerData?: ProviderData };
/**
 * A document (PDF; plain text where a provider takes it), by URL or base64
 * `data`. Chat Completions takes PDFs as base64 only; Anthropic PDFs and
 * base64 plain text; Gemini and the Responses API any media type they
 * accept. A form a provider cannot take is an InvalidRequestError naming
 * the part, and nothing is sent.
 *
 * In an assistant message, a file the model made (a generated image, with
 * `data` and its item in `providerData`): it replays to the provider that
 * made it, goes to Gemini as `inlineData`, and is left out (with a
 * `provider_parts_dropped` warning) where an assistant turn cannot hold it.
 */
export type FilePart = {
  type: "file";
  url?: string;
  data?: string;
  mediaType: string;
  filename?: string;
  providerData?: ProviderData;
};
export type ImagePart = {
  type: "image";
  url?: string;
  data?: string;
  mediaType?: string;
  providerData?: ProviderData;
};
export type ToolCallPart = {
  type: "tool_call";
  id: string;
  name: string;
  arguments: string;
  providerData?: ProviderData;
};
export type ToolResultPart = {
  type: "tool_result";
  callId: string;
  content: string;
  isError?: boolean;
  providerData?: ProviderData;
};
export type ReasoningPart = {
  type: "reasoning";
  text: string;
  signature?: string;
  redacted?: string;
  providerData?: ProviderData;
};
/** A provider block with no neutral equivalent (e.g. Anthropic server-tool calls), kept for replay. */
export type ProviderPart = { type: "provider"; provider: string; data: unknown };
/**
 * A cache breakpoint: the prompt up to the part before it (in its message;
 * in a system message, the system prompt so far) may be cached. Sent as
 * Anthropic's `cache_control` (at most four in a request, tools' marks
 * included); OpenAI and Gemini cache on their own and leave it out.
 */
export type CachePart = { type: "cache"; ttl?: "5m" | "1h" };
export type Part =
  | TextPart
  | ImagePart
  | FilePart
  | ToolCallPart
  | ToolResultPart
  | ReasoningPart
  | ProviderPart
  | CachePart;

export type Role = "system" | "user" | "assistant" | "tool";
export type Message = { role: Role; parts: Part[] };

/** A JSON Schema object. */
export type JsonSchema = { [keyword: string]: unknown };
export type Tool = {
  name: string;
  description?: string;
  parameters?: JsonSchema;
  /**
   * Fields added to this tool's declaration, as the provider's API names
   * them (they win over a field of the same name): Anthropic
   * `{ eager_input_streaming: true }` or `{ strict: true }`, OpenAI
   * `{ strict: true }`. Or keyed by provider, each merging only its own:
   * `{ anthropic: { eager_input_streaming: true }, openai: { strict: true } }`.
   */
  providerOptions?: { [key: string]: unknown };
  /** A cache breakpoint after this tool (Anthropic; see CachePart). */
  cache?: { ttl?: "5m" | "1h" };
};
/** A complete tool call; `arguments` is the whole JSON text of an object. */
export type ToolCall = { id: string; name: string; arguments: string };
/** A call that did not complete; never to be executed. */
export type IncompleteToolCall = { id?: string; name?: string; arguments: string; reason: string };
export type ResponseFormat =
  | { type: "json" }
  | {
      type: "json_schema";
      schema: JsonSchema;
      name?: string;
      description?: string;
      strict?: boolean;
    };
export type ToolChoice = "auto" | "none" | "required" | { type: "tool"; name: string };

export type Request = {
  /** Overrides the client's model. */
  model?: string;
  system?: string;
  messages: Message[];
  tools?: Tool[];
  /** Sent only with `tools` (providers refuse a tool choice without them). */
  toolChoice?: ToolChoice;
  /** Anthropic requires it: 4096 by default, on top of a `thinking` budget given in providerOptions. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /**
   * Deep-merged into the provider's request body last; its values win. A
   * `tools` list adds to the request's tools (a provider's server or
   * built-in tools, e.g. Anthropic web search, Gemini googleSearch, the
   * Responses API's `{ type: "web_search" }`). For `responses`, e.g.
   * `{ reasoning: { effort: "low" }, text: { verbosity: "low" } }`, or
   * `{ store: true, previous_response_id }` to use server state instead
   * of the stateless default (`store: false`, encrypted reasoning
   * replayed). Or keyed by provider (`{ anthropic: {...}, openai: {...} }`):
   * each provider merges only its own entry.
   */
  providerOptions?: { [key: string]: unknown };
  /**
   * Structured output, in each provider's own form. The answer's text is
   * the JSON; it is whole only when `finishReason` is "stop" (a cut-off
   * answer finishes "length"). Anthropic has no plain JSON mode: give it
   * a schema. The schema is sent as given; a keyword a provider refuses
   * comes back as its typed 400.
   */
  responseFormat?: ResponseFormat;
  /**
   * Progress events while the answer streams, besides the usual ones (none
   * unless asked for). `tools`: `tool_call_start` and `tool_call_delta`
   * while a call's arguments stream (with Anthropic, tool input then
   * streams in small pieces: `eager_input_streaming`, unless a tool's
   * `providerOptions` sets it). `output`: `output_delta` while a
   * `responseFormat` answer streams. `files`: `file_partial` with each
   * partial image before its file. A call still runs only at its
   * `tool_call` event; one cut off has none.
   */
  partial?: { tools?: boolean; output?: boolean; files?: boolean };
  /** Cancels the request. */
  signal?: AbortSignal;
};

/**
 * Token counts, the same on every provider (as the OpenTelemetry GenAI
 * conventions count them): `input` is every input token, cache reads and
 * writes included (Anthropic reports them apart: they are added); `output`
 * every output token, reasoning included (Gemini reports its thoughts
 * apart: they are added); `total` their sum. `raw` is the provider's own
 * object.
 */
export type Usage = {
  input?: number;
  output?: number;
  total?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
  raw?: unknown;
};

export type FinishReason =
  | "stop"
  | "length"
  | "tool_calls"
  | "content_filter"
  | "refusal"
  | "pause"
  | "error"
  | "other";

export type Response = {
  id?: string;
  model?: string;
  /** The assistant turn, ready to push onto the history and replay. */
  message: Message;
  text: string;
  reasoning?: string;
  toolCalls: ToolCall[];
  /**
   * The files the model made (generated images: the Responses API's image
   * generation tool), in order: the message's `file` parts, each with
   * `data` in base64, its `mediaType`, and in `providerData` what replays it.
   */
  files?: FilePart[];
  incompleteToolCalls?: IncompleteToolCall[];
  refusal?: string;
  usage: Usage;
  finishReason: FinishReason;
  rawFinishReason?: string;
  /** The provider that answered (with a `fallback` chain, maybe not the client's own). */
  provider?: Provider;
  /** The providers of the `fallback` chain that failed before this one answered, in order. */
  attempts?: FailedAttempt[];
};

/** A provider of a `fallback` chain that failed before another answered. Its message is scrubbed of every key of the chain. */
export type FailedAttempt = {
  provider: Provider;
  /** The model asked for. */
  model?: string;
  /** Its last attempt's error. */
  error: AttemptError;
};

/** How a `FailedAttempt` failed: `code` as a `SkylError`'s, `status` for an error the provider sent. */
export type AttemptError = { code: string; status?: number; message: string };

/**
 * A value read from JSON that is still streaming: each string a prefix of
 * its final text; numbers, `true`, `false`, `null` and keys only once
 * whole; open objects and arrays closed. A new value whenever it changed,
 * sharing the parts that did not change with the one before; the same
 * value when a piece changed nothing (half an escape, a `:`). Never
 * changed after it is handed out.
 */
export type PartialJson = unknown;

/**
 * A tool call began (with `partial: { tools: true }`): for showing
 * progress, never for running. It is not a `ToolCall`.
 */
export type ToolCallStartEvent = {
  type: "tool_call_start";
  /** The id its `tool_call` will have. */
  id: string;
  name: string;
  /** Its place among this response's calls, from 0. */
  index: number;
  raw: string;
};

/**
 * A piece of a call's arguments (with `partial: { tools: true }`). The
 * pieces of a call concatenate to exactly the `arguments` of its
 * `tool_call`. The pieces that arrive in one read of the body make one
 * event (`raw` then holds their frames, one per line). It is not a
 * `ToolCall`.
 */
export type ToolCallDeltaEvent = {
  type: "tool_call_delta";
  id: string;
  index: number;
  argumentsDelta: string;
  /** The arguments read so far (absent until a value begins). */
  partial?: PartialJson;
  raw: string;
};

/** The `responseFormat` answer read so far (with `partial: { output: true }`), after a text event that changed it. */
export type OutputDeltaEvent = { type: "output_delta"; partial?: PartialJson; raw: string };

/**
 * A partial image streamed before its file (with `partial: { files: true }`;
 * the Responses API's image generation tool given `partial_images`): the
 * `index`-th of its file, to show while the image is made. Never a part of
 * the message: the `file` event follows with the whole image.
 */
export type FilePartialEvent = { type: "file_partial"; index: number; file: FilePart; raw: string };

/** Every event carries `raw`: the provider frame (SSE data text) it came from. */
export type StreamEvent =
  | { type: "text"; text: string; raw: string }
  | { type: "reasoning"; text: string; raw: string }
  | { type: "tool_call"; call: ToolCall; raw: string }
  | ToolCallStartEvent
  | ToolCallDeltaEvent
  | OutputDeltaEvent
  | { type: "usage"; usage: Usage; raw: string }
  /** A file the model made, once whole (also in `response.files`). */
  | { type: "file"; file: FilePart; raw: string }
  | FilePartialEvent
  /**
   * Something odd that did not stop the stream. Codes include `fallback`
   * (before the first event of a fallback provider that took over),
   * `provider_parts_dropped` (the history holds another provider's
   * `provider` parts, which this one cannot read: left out),
   * `tool_call_incomplete` and `non_json_data`.
   */
  | { type: "warning"; code: string; message: string; raw: string }
  | { type: "finish"; response: Response; raw: string };

export type Timeouts = {
  /** The whole request, retries included (default 600000 ms). */
  total?: number;
  /** Until the response headers arrive, per attempt. */
  firstByte?: number;
  /** Between two body chunks (streamed or not). After a stream's terminal frame it ends the body instead of failing. */
  idle?: number;
};

export type ClientOptions = {
  provider: Provider;
  /** The default model; a request may name another. */
  model?: string;
  apiKey?: string;
  /**
   * Required for `openaicompat`, e.g. "http://127.0.0.1:11434/v1"; for the
   * others, a proxy in their place. The form of the defaults: the path
   * before `/chat/completions` for OpenAI and before `/responses` for the
   * Responses API ("https://api.openai.com/v1"; any Open Responses server,
   * e.g. "http://127.0.0.1:1234/v1" for LM Studio),
   * the root without a version for Anthropic ("https://api.anthropic.com")
   * and Gemini ("https://generativelanguage.googleapis.com"). A query
   * string (Azure's `?api-version=`) is kept at the end.
   */
  baseURL?: string;
  headers?: { [name: string]: string };
  /** A fetch to use instead of the global one. */
  fetch?: (input: string, init: RequestInit) => Promise<globalThis.Response>;
  /** Retries of retryable failures before any event was handed out (default 2). */
  maxRetries?: number;
  /** Milliseconds for the whole request, or each timeout separately. */
  timeout?: number | Timeouts;
  /**
   * The most bytes one streamed event may hold (default 33554432, 32 MiB: a
   * 4K image's base64); a larger one fails the request with a
   * `MalformedStreamError` of code `event_too_large`. A large event takes
   * at most about 3 times its size in WebAssembly memory while it is read
   * (RELIABILITY.md, "One large event"). For the whole fallback chain.
   */
  maxEventBytes?: number;
  /** Allows an API key in a browser page, where every user can read it. */
  dangerouslyAllowBrowser?: boolean;
  /** `openaicompat`: ask for usage in streams (`stream_options`). */
  includeUsage?: boolean;
  /** `bedrock`: the AWS region of the endpoint, e.g. "us-east-1" (needed with `credentials`; with an API key, a baseURL may take its place). */
  region?: string;
  /**
   * `bedrock`: AWS credentials; each attempt is signed with SigV4. Or an
   * async function returning them (STS, an IAM role): called when a request
   * needs them, once however many wait, again 5 minutes before their
   * `expiration`, and once more when AWS refuses them (an
   * `AuthenticationError`: expired, unrecognized). Without them, `apiKey` is a Bedrock API key, sent as a
   * bearer token. A callback that throws fails the request with a
   * `SkylError` of code `callback` (path `credentials()`, or
   * `fallback[0].credentials()` for a fallback entry's), its error as the
   * `cause`.
   */
  credentials?:
    | AwsCredentials
    | (() => Promise<AwsCredentials & { expiration?: Date | string | number }>);
  /**
   * `gemini` and `anthropic`: send to Google Vertex AI, in this project and
   * location (a region such as "us-central1", "global", or the
   * multi-regions "eu" and "us"), with `accessToken` or `serviceAccount`;
   * or `{}` with an `apiKey` for Gemini's express mode.
   */
  vertex?: VertexOptions;
  /**
   * Vertex AI: an OAuth access token, or an async function returning one
   * with its expiry (`google-auth-library`'s `getAccessToken`): called when
   * a request needs one, once however many wait, again 5 minutes before
   * `expiresAt`, and once more after a 401. A callback that throws fails
   * the request with a `SkylError` of code `callback` (path
   * `accessToken()`, or `fallback[0].accessToken()` for a fallback
   * entry's), its error as the `cause`.
   */
  accessToken?:
    | string
    | (() => Promise<{ token: string; expiresAt?: Date | string | number } | string>);
  /**
   * Vertex AI: a service account's JSON key file (the object, or its text).
   * Its JWT is signed with WebCrypto and exchanged at its `token_uri`; the
   * token is kept until 5 minutes before it expires, and renewed once after
   * a 401. An exchange that fails for a reason that is retried (the
   * endpoint unreachable, its 429 or 5xx) is retried like the request's
   * own attempt, then goes on to a fallback provider. The private key never
   * appears in an error.
   */
  serviceAccount?: ServiceAccountKey | string;
  /**
   * Providers to go on to, in order, when this one fails before its first
   * event with a 429, a 5xx, an overload, a connection error or a
   * first-byte or idle timeout, after its own retries. Each entry's `model`
   * is the one its requests ask for (a request's `model` is the first
   * provider's). `timeout` and `fetch` are the client's, for the whole chain.
   */
  fallback?: FallbackOptions[];
  /** Statuses that also go on to the next provider, e.g. `[401, 403, 404]`. */
  fallbackOn?: number[];
};

/** One provider of a `fallback` chain: its own provider, model, key, endpoint, headers and credentials. Only `maxRetries` defaults to the client's: an entry without `apiKey` or `headers` sends none. */
export type FallbackOptions = Pick<
  ClientOptions,
  | "provider"
  | "model"
  | "apiKey"
  | "baseURL"
  | "headers"
  | "maxRetries"
  | "includeUsage"
  | "region"
  | "credentials"
  | "vertex"
  | "accessToken"
  | "serviceAccount"
>;

/** Where on Vertex AI a client sends its requests. */
export type VertexOptions = {
  /** The Google Cloud project id (none for express mode). */
  project?: string;
  /** "us-central1" (a region), "global", "eu" or "us" (multi-regions). */
  location?: string;
};

/** A service account's JSON key file, as Google Cloud writes it. */
export type ServiceAccountKey = {
  type?: "service_account";
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
  [field: string]: unknown;
};

/** AWS credentials: long-term, or temporary (STS) with their session token. */
export type AwsCredentials = {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
};

/** What `client.stream()` returns. */
export declare class StreamResult implements AsyncIterable<StreamEvent> {
  private constructor();
  [Symbol.asyncIterator](): AsyncIterator<StreamEvent>;
  /** The final response; reads the stream to the end if nobody iterates it. Settles before the `finish` event is handed out. */
  response(): Promise<Response>;
  /** Cancels the request; the iterator and response() reject with AbortError. */
  abort(reason?: unknown): void;
}

export declare class Client {
  constructor(options: ClientOptions);
  readonly provider: Provider;
  complete(request: Request): Promise<Response>;
  stream(request: Request): StreamResult;
  /** Runs the tool loop: streams each step, runs the tools, sends the results back. */
  run(request: RunRequest): RunResult;
  /**
   * Embeds `values` in batches sized for the provider, at most
   * `maxConcurrency` at once. Rejects with the typed error of a batch that
   * failed for good; its `partial` (an {@link EmbedPartial}) keeps every
   * vector that came.
   */
  embed(request: EmbedRequest): Promise<EmbedResult>;
}

/** What `client.embed` takes. */
export type EmbedRequest = {
  /** The texts to embed (each non-empty). */
  values: string[];
  /** The embedding model; defaults: openai and responses `text-embedding-3-small`, gemini `gemini-embedding-001` (openaicompat needs one). */
  model?: string;
  /** The vectors' length: OpenAI's `dimensions`, Gemini's `outputDimensionality`. */
  dimensions?: number;
  /** Gemini's `taskType` (e.g. "RETRIEVAL_QUERY"), passed as is; refused elsewhere. */
  taskType?: string;
  /** "base64" (the default: a third of the bytes) or "float", for a server that refuses base64. */
  encodingFormat?: "base64" | "float";
  /** At most this many values per request (default: 2048 for OpenAI, 100 for Gemini). */
  maxBatchSize?: number;
  /** At most this many requests in flight (default 4). */
  maxConcurrency?: number;
  signal?: AbortSignal;
};

/** What `client.embed` resolves to. */
export type EmbedResult = {
  /** One vector per value, in the values' order: views of one buffer. */
  embeddings: Float32Array[];
  /** Every batch's tokens summed; null when the provider reports none (Gemini). */
  usage: { input?: number; total?: number } | null;
  /** The model that answered (else the one asked for). */
  model: string;
  /** How many requests the values went in. */
  batches: number;
};

/** An embeddings error's `partial`: every vector that came, by index, and the indices without one. */
export type EmbedPartial = {
  embeddings: (Float32Array | undefined)[];
  failed: number[];
};

/** Decodes a body you already have (your own fetch, a Workers binding, a proxy, a cache). */
export declare function decodeStream(
  provider: Provider,
  body: ReadableStream<Uint8Array> | globalThis.Response,
  options?: { signal?: AbortSignal },
): StreamResult;

/**
 * Resolves once the WebAssembly module is instantiated. Node and Workers are
 * ready at import; in a browser it loads on first use, and the synchronous
 * validate* helpers need `await ready()` first.
 */
export declare function ready(): Promise<void>;

/**
 * Diagnostics: the size in bytes of this instance's WebAssembly memory (one
 * per loaded module, shared by every Client). WebAssembly memory grows and
 * never shrinks, so this is the most skyl has held at once, plus about
 * 1.1 MiB of static data and stack; memory freed inside it is reused. In a
 * Worker it counts toward the isolate's memory limit. 0 until the module is
 * instantiated.
 */
export declare function wasmMemorySize(): number;

export declare function toolResultMessage(callId: string, content: string | object): Message;
export declare function toolErrorMessage(callId: string, error: unknown): Message;
/** Throw InvalidRequestError when invalid. */
export declare function validateTool(tool: Tool): void;
export declare function validateToolCall(call: ToolCall): void;
export declare function validateRequest(request: Request): void;
