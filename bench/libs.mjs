// One function per library: stream an input through it, the way its users
// would, and return what it assembled: { text, calls: [{name, args}] }
// (`args` may be a JSON string or an object; the harness normalises it
// outside the timed region). Every library gets its body from `fetch`,
// a fake whose Response streams the input's chunks.
//   SKYL_PKG=<dir>  load skyl from that built package (a directory holding
//                   node.js, e.g. an older build for an A/B); ../pkg if unset
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fakeFetch, WIRES } from "./inputs.mjs";
import { INPUT, STEP } from "../src/shell/js/policy.js";

/** The built package skyl's rows load: $SKYL_PKG, else ../pkg. */
export const SKYL_PKG = process.env.SKYL_PKG
  ? path.resolve(process.env.SKYL_PKG)
  : path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../pkg");
const skylModule = (pkg = SKYL_PKG) => import(pathToFileURL(path.join(pkg, "node.js")).href);
/** Another built package, measured beside this one as "skyl before" ($SKYL_BEFORE). */
export const SKYL_BEFORE = process.env.SKYL_BEFORE ? path.resolve(process.env.SKYL_BEFORE) : null;

const PROMPT = "hi";
// (`json` is the tool the replayed Anthropic recording calls.)
const TOOL_NAMES = ["search_rows", "fetch_page", "summarize", "json"];
const MODEL = {
  openai: "gpt-bench",
  anthropic: "claude-bench",
  gemini: "gemini-bench",
  responses: "gpt-bench",
};
const ALL = WIRES;

export const LIBRARIES = {
  skyl: { wires: ALL, load: loadSkyl },
  // The same decoder without the client (no request is encoded or sent):
  // the work minimal-js does, for a like-for-like comparison with it.
  "skyl decodeStream": { wires: ALL, load: loadSkylDecode },
  "ai-sdk": { wires: ALL, load: loadAiSdk },
  // chat.completions.stream on the openai wire, responses.create on responses.
  openai: { wires: ["openai", "responses"], load: loadOpenAI },
  "@anthropic-ai/sdk": { wires: ["anthropic"], load: loadAnthropic },
  "@google/genai": { wires: ["gemini"], load: loadGenAI },
  "minimal-js": { wires: ALL, load: loadMinimal },
  // No library: the body drained and each chunk copied into skyl's wasm
  // memory, where its decoder would read it, and nothing decoded. What
  // any reader of this body pays (the runtime's stream, one copy), which
  // no decoder goes below; its result is not checked.
  "drain floor": { wires: ALL, load: loadFloor, floor: true },
  // The floor plus skyl's wasm decoding each chunk (feedInput) and the
  // result crossing into JS as one string (takeOutput), which is not read:
  // skyl without the JS that builds and hands out its events. Not checked.
  "skyl wasm only": { wires: ALL, load: () => loadFloor(true), floor: true },
  // skyl::web, the Rust driver a Rust app on wasm32 uses (bench/web-driver,
  // built by scripts/bench): fetch, the body's reader, timers and the
  // events all driven from Rust, text and calls collected in Rust. The
  // client (request encoded and sent through the custom fetch), and
  // decode_stream on a Response it is handed, beside skyl and skyl
  // decodeStream, the npm package's JS driver on the same bytes.
  "skyl web": { wires: ALL, load: () => loadWeb(false), optional: true },
  "skyl web decode_stream": { wires: ALL, load: () => loadWeb(true), optional: true },
};
if (SKYL_BEFORE) LIBRARIES["skyl before"] = { wires: ALL, load: () => loadSkyl(SKYL_BEFORE) };

async function loadSkyl(pkg = SKYL_PKG) {
  const skyl = await skylModule(pkg);
  const tools = TOOL_NAMES.map((name) => ({ name, parameters: { type: "object" } }));
  return async (wire, input) => {
    const client = new skyl.Client({
      provider: wire,
      model: MODEL[wire],
      apiKey: "bench",
      maxRetries: 0,
      fetch: fakeFetch(input.chunks),
    });
    let text = "";
    const calls = [];
    for await (const ev of client.stream({
      messages: [{ role: "user", parts: [{ type: "text", text: PROMPT }] }],
      tools,
    })) {
      if (ev.type === "text") text += ev.text;
      else if (ev.type === "tool_call") calls.push({ name: ev.call.name, args: ev.call.arguments });
    }
    return { text, calls };
  };
}

async function loadSkylDecode() {
  const skyl = await skylModule();
  return async (wire, input) => {
    const res = await fakeFetch(input.chunks)();
    let text = "";
    const calls = [];
    for await (const ev of skyl.decodeStream(wire, res)) {
      if (ev.type === "text") text += ev.text;
      else if (ev.type === "tool_call") calls.push({ name: ev.call.name, args: ev.call.arguments });
    }
    return { text, calls };
  };
}

/** bench/web-driver's build for Node (scripts/bench builds it). */
export const WEB_DRIVER = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "web-driver/pkg/skyl_bench_web.js",
);
/** Whether the Rust driver's rows can run (its build exists). */
export const hasWebDriver = () => fs.existsSync(WEB_DRIVER);

async function loadWeb(decodeOnly) {
  const web = createRequire(import.meta.url)(WEB_DRIVER);
  return async (wire, input) => {
    const fetch = fakeFetch(input.chunks);
    return decodeOnly ? web.decode(wire, await fetch()) : web.stream(wire, MODEL[wire], fetch);
  };
}

async function loadFloor(decode = false) {
  await skylModule();
  const wasm = await import(pathToFileURL(path.join(SKYL_PKG, "skyl_wasm.js")).href);
  return async (wire, input) => {
    const res = await fakeFetch(input.chunks)();
    const reader = res.body.getReader();
    // The run the package makes for a body it is given (decodeStream):
    // start, the response, then the chunks.
    const run = wasm.Run.given(wire, 0, 0);
    run.start();
    run.responded(200, "[]", 0);
    // (A package built before `input` folded the inputs: an A/B runs both.)
    const delivered = run.input ? () => run.input(INPUT.DELIVERED) : () => run.delivered();
    const ended = run.input ? () => run.input(INPUT.ENDED) : () => run.ended();
    let at = 0;
    let capacity = 0;
    let memory = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.length > capacity) {
        at = run.inputBuffer(value.length);
        capacity = value.length;
      }
      if (memory === null || memory.byteLength === 0)
        memory = new Uint8Array(wasm.wasmMemory().buffer);
      memory.set(value, at);
      if (decode && run.feedInput(value.length) === STEP.DELIVER) {
        run.takeOutput();
        delivered();
      }
    }
    if (decode && ended() === STEP.DELIVER) run.takeOutput();
    run.free();
    return { text: "", calls: [] };
  };
}

async function loadAiSdk() {
  const { streamText, tool, jsonSchema } = await import("ai");
  const { createOpenAI } = await import("@ai-sdk/openai");
  const { createAnthropic } = await import("@ai-sdk/anthropic");
  const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
  const tools = Object.fromEntries(
    TOOL_NAMES.map((n) => [
      n,
      tool({ description: n, inputSchema: jsonSchema({ type: "object" }) }),
    ]),
  );
  return async (wire, input) => {
    const fetch = fakeFetch(input.chunks);
    const model =
      wire === "openai"
        ? createOpenAI({ apiKey: "bench", fetch }).chat(MODEL.openai)
        : wire === "responses"
          ? createOpenAI({ apiKey: "bench", fetch }).responses(MODEL.responses)
          : wire === "anthropic"
            ? createAnthropic({ apiKey: "bench", fetch })(MODEL.anthropic)
            : createGoogleGenerativeAI({ apiKey: "bench", fetch })(MODEL.gemini);
    const result = streamText({ model, prompt: PROMPT, tools, maxRetries: 0 });
    let text = "";
    const calls = [];
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text;
      else if (part.type === "tool-call") calls.push({ name: part.toolName, args: part.input });
      else if (part.type === "error") throw part.error;
    }
    return { text, calls };
  };
}

async function loadOpenAI() {
  const { default: OpenAI } = await import("openai");
  const tools = TOOL_NAMES.map((name) => ({
    type: "function",
    function: { name, parameters: { type: "object" } },
  }));
  const flatTools = TOOL_NAMES.map((name) => ({
    type: "function",
    name,
    parameters: { type: "object" },
    strict: false,
  }));
  return async (wire, input) => {
    const client = new OpenAI({ apiKey: "bench", maxRetries: 0, fetch: fakeFetch(input.chunks) });
    if (wire === "responses") {
      // The raw event stream, as the SDK's docs iterate it: text from the
      // text deltas, each call whole from its item's output_item.done.
      const stream = await client.responses.create({
        model: MODEL.responses,
        input: PROMPT,
        tools: flatTools,
        stream: true,
      });
      let text = "";
      const calls = [];
      for await (const ev of stream) {
        if (ev.type === "response.output_text.delta") text += ev.delta;
        else if (ev.type === "response.output_item.done" && ev.item.type === "function_call")
          calls.push({ name: ev.item.name, args: ev.item.arguments });
      }
      return { text, calls };
    }
    const stream = client.chat.completions.stream({
      model: MODEL.openai,
      messages: [{ role: "user", content: PROMPT }],
      tools,
    });
    const done = await stream.finalChatCompletion();
    const m = done.choices[0].message;
    return {
      text: m.content ?? "",
      calls: (m.tool_calls ?? []).map((c) => ({
        name: c.function.name,
        args: c.function.arguments,
      })),
    };
  };
}

async function loadAnthropic() {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const tools = TOOL_NAMES.map((name) => ({ name, input_schema: { type: "object" } }));
  return async (_wire, input) => {
    const client = new Anthropic({
      apiKey: "bench",
      maxRetries: 0,
      fetch: fakeFetch(input.chunks),
    });
    const msg = await client.messages
      .stream({
        model: MODEL.anthropic,
        max_tokens: 4096,
        messages: [{ role: "user", content: PROMPT }],
        tools,
      })
      .finalMessage();
    let text = "";
    const calls = [];
    for (const b of msg.content) {
      if (b.type === "text") text += b.text;
      else if (b.type === "tool_use") calls.push({ name: b.name, args: b.input });
    }
    return { text, calls };
  };
}

async function loadGenAI() {
  const { GoogleGenAI } = await import("@google/genai");
  return async (_wire, input) => {
    // @google/genai takes no fetch option: it calls the global one.
    globalThis.fetch = fakeFetch(input.chunks);
    const ai = new GoogleGenAI({ apiKey: "bench" });
    const stream = await ai.models.generateContentStream({ model: MODEL.gemini, contents: PROMPT });
    let text = "";
    const calls = [];
    for await (const chunk of stream) {
      for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (typeof p.text === "string" && !p.thought) text += p.text;
        if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args });
      }
    }
    return { text, calls };
  };
}

/**
 * The floor for JavaScript that parses every frame: split SSE lines,
 * JSON.parse each data payload, join the argument fragments (Responses:
 * join the text deltas, take each call whole at its output_item.done). No
 * error handling, no quirks, no validation.
 */
async function loadMinimal() {
  return async (wire, input) => {
    const res = await fakeFetch(input.chunks)();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let text = "";
    const calls = [];
    const onData = (data) => {
      if (data === "[DONE]") return;
      const f = JSON.parse(data);
      if (wire === "openai") {
        const d = f.choices?.[0]?.delta;
        if (!d) return;
        if (d.content) text += d.content;
        for (const tc of d.tool_calls ?? []) {
          if (tc.id) calls[tc.index] = { name: tc.function.name, args: "" };
          if (tc.function?.arguments) calls[tc.index].args += tc.function.arguments;
        }
      } else if (wire === "anthropic") {
        if (f.type === "content_block_start" && f.content_block.type === "tool_use")
          calls[f.index] = { name: f.content_block.name, args: "" };
        else if (f.type === "content_block_delta") {
          if (f.delta.type === "text_delta") text += f.delta.text;
          else if (f.delta.type === "input_json_delta") calls[f.index].args += f.delta.partial_json;
        }
      } else if (wire === "responses") {
        if (f.type === "response.output_text.delta") text += f.delta;
        else if (f.type === "response.output_item.done" && f.item.type === "function_call")
          calls.push({ name: f.item.name, args: f.item.arguments });
      } else {
        for (const p of f.candidates?.[0]?.content?.parts ?? []) {
          if (p.text) text += p.text;
          if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args });
        }
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i).replace(/\r$/, "");
        buf = buf.slice(i + 1);
        if (line.startsWith("data: ")) onData(line.slice(6));
      }
    }
    return { text, calls: calls.filter(Boolean) };
  };
}
