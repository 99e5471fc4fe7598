// Type test: exercises the whole public API; compiled with
// `tsc --noEmit --strict -p tests/js`. Lines marked @ts-expect-error must
// stay errors: the types are exact, not `any`.
import {
  Client,
  decodeStream,
  toolResultMessage,
  toolErrorMessage,
  validateTool,
  validateToolCall,
  validateRequest,
  SkylError,
  RateLimitError,
  AbortError,
  TimeoutError,
  StreamEndedEarlyError,
  PROVIDERS,
  ready,
  wasmMemorySize,
  type Message,
  type StreamEvent,
  type Response,
  type Tool,
  type ToolCall,
  type Request,
  type Provider,
  type Part,
  type Usage,
  type FinishReason,
  type RunEvent,
  type RunOutcome,
  type RunTool,
  type StopReason,
  type FailedAttempt,
  type FallbackOptions,
} from "skyl";

const tools: Tool[] = [
  {
    name: "get_weather",
    description: "Weather",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
];
const client = new Client({
  provider: "anthropic",
  model: "claude",
  apiKey: "k",
  maxRetries: 3,
  timeout: { total: 60_000, idle: 30_000 },
});
const compat = new Client({
  provider: "openaicompat",
  baseURL: "http://127.0.0.1:11434/v1",
  timeout: 5000,
  includeUsage: true,
  fetch: (u, i) => fetch(u, i),
});
// @ts-expect-error: not a provider
new Client({ provider: "bard" });
const p: Provider = client.provider;
const all: readonly Provider[] = PROVIDERS;

async function loop(messages: Message[]): Promise<string> {
  const controller = new AbortController();
  const req: Request = {
    messages,
    tools,
    toolChoice: "auto",
    maxTokens: 512,
    partial: { tools: true },
    signal: controller.signal,
  };
  const stream = client.stream(req);
  for await (const ev of stream) {
    switch (ev.type) {
      case "text": {
        const t: string = ev.text;
        void t;
        break;
      }
      case "reasoning": {
        const t: string = ev.text;
        void t;
        break;
      }
      case "tool_call": {
        const c: ToolCall = ev.call;
        const args: string = c.arguments;
        void args;
        break;
      }
      case "usage": {
        const u: Usage = ev.usage;
        const n: number | undefined = u.input;
        void n;
        break;
      }
      case "warning": {
        const code: string = ev.code;
        void code;
        break;
      }
      case "tool_call_start": {
        const name: string = ev.name;
        const index: number = ev.index;
        void [name, index];
        // @ts-expect-error: a call's start is not a call
        const c: ToolCall = ev;
        void c;
        break;
      }
      case "tool_call_delta": {
        const piece: string = ev.argumentsDelta;
        const soFar: unknown = ev.partial;
        void [piece, soFar];
        // @ts-expect-error: a piece of a call is not a call
        const c: ToolCall = ev;
        void c;
        break;
      }
      case "output_delta": {
        const soFar: unknown = ev.partial;
        void soFar;
        break;
      }
      case "finish": {
        const r: Response = ev.response;
        void r;
        break;
      }
      case "file": {
        // A file the model made: its media type, and its bytes in base64.
        const kind: string = ev.file.mediaType;
        const data: string | undefined = ev.file.data;
        void [kind, data];
        break;
      }
      case "file_partial": {
        // A partial image to show while the file is made: which one, and
        // the image so far.
        const index: number = ev.index;
        const data: string | undefined = ev.file.data;
        void [index, data];
        break;
      }
      default: {
        const never: never = ev;
        void never;
      }
    }
    const raw: string = ev.raw;
    void raw;
    // @ts-expect-error: text events carry no call
    void (ev.type === "text" && ev.call);
  }
  const res = await stream.response();
  const reason: FinishReason = res.finishReason;
  void reason;
  messages.push(res.message);
  for (const call of res.toolCalls) {
    messages.push(
      call.name === "get_weather"
        ? toolResultMessage(call.id, { temp: 21 })
        : toolErrorMessage(call.id, new Error("unknown tool")),
    );
  }
  stream.abort("done");
  const again = await compat.complete({
    messages,
    toolChoice: { type: "tool", name: "get_weather" },
  });
  // @ts-expect-error: toolChoice is a mode or a named tool
  void compat.complete({ messages, toolChoice: "sometimes" });
  return again.text;
}

async function errors() {
  try {
    await client.complete({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] });
  } catch (e) {
    if (e instanceof RateLimitError) {
      const ms: number | undefined = e.retryAfterMs;
      void ms;
    }
    if (e instanceof StreamEndedEarlyError) {
      const partial: Response | undefined = e.partial;
      void partial;
    }
    if (e instanceof AbortError || e instanceof TimeoutError) {
      const r: boolean = e.retryable;
      void r;
    }
    if (e instanceof SkylError) {
      const code: string = e.code;
      const status: number | undefined = e.status;
      void code;
      void status;
    }
  }
}

async function decode(body: ReadableStream<Uint8Array>, res: globalThis.Response) {
  for await (const ev of decodeStream("gemini", body)) void ev;
  const r = await decodeStream("openai", res, { signal: AbortSignal.timeout(1000) }).response();
  const parts: Part[] = r.message.parts;
  await ready();
  const bytes: number = wasmMemorySize();
  void bytes;
  validateTool(tools[0]!);
  validateToolCall({ id: "c", name: "f", arguments: "{}" });
  validateRequest({ messages: [] });
  // @ts-expect-error: arguments is JSON text, not an object
  validateToolCall({ id: "c", name: "f", arguments: {} });
  return parts;
}

// The tool runner.
async function runner() {
  const runTools: RunTool[] = [
    {
      ...tools[0]!,
      readOnly: true,
      timeout: 5000,
      needsApproval: (args: { city: string }) => args.city !== "Oslo",
      execute: async ({ city }: { city: string }, { signal, step, call }) => {
        signal.throwIfAborted();
        return { city, step, id: call.id };
      },
    },
  ];
  const run = client.run({
    messages: [],
    tools: runTools,
    maxSteps: 5,
    finalAnswer: true,
    maxConcurrency: 2,
    approve: async (call) => (call.name === "get_weather" ? true : { deny: "no" }),
    approvals: { call_1: true },
  });
  for await (const ev of run) {
    const e: RunEvent = ev;
    if (e.type === "tool_result") {
      const ms: number = e.durationMs;
      const isError: boolean | undefined = e.result.isError;
      void ms;
      void isError;
    }
    if (e.type === "text") {
      const step: number = e.step;
      void step;
    }
  }
  const out: RunOutcome = await run.result();
  const why: StopReason = out.stopReason;
  const history: Message[] = out.messages;
  // A run's error keeps the new messages; an abort's partial too.
  await client
    .run({ messages: [] })
    .result()
    .catch((e: unknown) => {
      if (e instanceof SkylError) {
        const kept: Message[] | undefined = e.messages;
        const steps: number | undefined = e.steps?.length;
        if (e.partial && "steps" in e.partial) history.push(...e.partial.messages);
        void kept;
        void steps;
      }
    });
  run.abort("bye");
  // @ts-expect-error: maxSteps is a number
  client.run({ messages: [], maxSteps: "5" });
  return [why, history] as const;
}

async function embeddings() {
  try {
    const out = await client.embed({ values: ["a", "b"], dimensions: 8, maxConcurrency: 2 });
    const all: Float32Array[] = out.embeddings;
    const tokens: number | undefined = out.usage?.input;
    void all;
    void tokens;
  } catch (e) {
    if (e instanceof SkylError && e.partial && "failed" in e.partial) {
      const failed: number[] = e.partial.failed;
      void failed;
    }
  }
  // @ts-expect-error: values are strings
  await client.embed({ values: [1] });
}

void embeddings;
void runner;
void loop;
void errors;
void decode;
void p;
void all;
const events: StreamEvent[] = [];
void events;

// A one-adapter entry's types name only its providers.
import * as anthropicOnly from "skyl/anthropic";
const onlyAnthropic = new anthropicOnly.Client({ provider: "anthropic", model: "claude" });
// @ts-expect-error: skyl/anthropic has no gemini adapter
new anthropicOnly.Client({ provider: "gemini" });
const anthropicProviders: readonly "anthropic"[] = anthropicOnly.PROVIDERS;
void onlyAnthropic;
void anthropicProviders;

// Fallback: each entry a provider's own options; the response says who answered.
const entry: FallbackOptions = {
  provider: "anthropic",
  model: "claude",
  apiKey: "k",
  maxRetries: 1,
};
const chained = new Client({ provider: "openai", fallback: [entry], fallbackOn: [401, 404] });
// @ts-expect-error: the timeout is the client's, for the whole chain
new Client({ provider: "openai", fallback: [{ provider: "gemini", timeout: 5 }] });
async function whoAnswered(): Promise<string | undefined> {
  const r: Response = await chained.complete({ messages: [] });
  const failed: FailedAttempt[] = r.attempts ?? [];
  const codes: string[] = failed.map(
    (a) => `${a.provider} ${a.error.code} ${a.error.status ?? ""}`,
  );
  void codes;
  return r.provider;
}
void whoAnswered;
