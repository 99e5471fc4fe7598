// Realistic generated streams, deterministic (seeded), per wire format
// (OpenAI Chat Completions, Anthropic Messages, Gemini, OpenAI Responses):
//   chat:  ~2,000 text deltas
//   tools: 8 parallel tool calls with ~2 KB arguments each, streamed in
//          1-12 character fragments (Gemini sends each call whole)
//   big:   the tools case ten times over (80 calls)
//   chat-real, tools-real, big-real: the same content in frames shaped
//          field for field like the recorded streams (bench/real.mjs)
//   replay: a recorded stream, its text deltas repeated (bench/replay.mjs)
// Each comes with what a correct client assembles (text, calls), and is
// delivered either in 1-4 KB chunks or one SSE event per chunk.
import { PROVIDER_FEATURES } from "../src/shell/js/policy.js";
import { content, prng } from "./content.mjs";
import { realFrames } from "./real.mjs";
import { replayFrames } from "./replay.mjs";
import { responsesFrames } from "./responses.mjs";

/** The SSE frames of a case in a wire format. */
function frames(wire, kind) {
  if (kind === "replay") return replayFrames(wire);
  if (kind.endsWith("-real")) return realFrames(wire, kind.slice(0, -5));
  const c = content(kind);
  const out = [];
  if (wire === "openai") {
    const chunk = (delta, extra = {}) => ({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1767225600,
      model: "gpt-bench",
      system_fingerprint: "fp_bench",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
      usage: null,
      ...extra,
    });
    out.push(chunk({ role: "assistant", content: "", refusal: null }));
    for (const d of c.deltas) out.push(chunk({ content: d }));
    c.calls.forEach((call, index) => {
      out.push(
        chunk({
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        }),
      );
      for (const f of c.frags[index])
        out.push(chunk({ tool_calls: [{ index, function: { arguments: f } }] }));
    });
    const fin = chunk({});
    fin.choices[0].finish_reason = c.calls.length ? "tool_calls" : "stop";
    out.push(fin);
    out.push({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1767225600,
      model: "gpt-bench",
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: 2000, total_tokens: 2100 },
    });
    return {
      frames: out.map((f) => `data: ${JSON.stringify(f)}\n\n`).concat(["data: [DONE]\n\n"]),
      c,
    };
  }
  if (wire === "anthropic") {
    const ev = (e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    out.push(
      ev({
        type: "message_start",
        message: {
          id: "msg_bench",
          type: "message",
          role: "assistant",
          model: "claude-bench",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 1,
          },
        },
      }),
    );
    out.push(
      ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    );
    for (const d of c.deltas)
      out.push(
        ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: d } }),
      );
    out.push(ev({ type: "content_block_stop", index: 0 }));
    c.calls.forEach((call, i) => {
      const index = i + 1;
      out.push(
        ev({
          type: "content_block_start",
          index,
          content_block: {
            type: "tool_use",
            id: call.id.replace("call_", "toolu_"),
            name: call.name,
            input: {},
          },
        }),
      );
      for (const f of c.frags[i])
        out.push(
          ev({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: f },
          }),
        );
      out.push(ev({ type: "content_block_stop", index }));
    });
    out.push(
      ev({
        type: "message_delta",
        delta: { stop_reason: c.calls.length ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 2000 },
      }),
    );
    out.push(ev({ type: "message_stop" }));
    return { frames: out, c };
  }
  if (wire === "responses") return { frames: responsesFrames(c), c };
  if (wire !== "gemini") throw new Error(`bench/inputs.mjs: no generated frames for ${wire}`);
  const frame = (parts, extra = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    usageMetadata: { promptTokenCount: 100, totalTokenCount: 100 },
    modelVersion: "gemini-bench",
    responseId: "resp-bench",
  });
  for (const d of c.deltas) out.push(frame([{ text: d }]));
  for (const call of c.calls)
    out.push(frame([{ functionCall: { name: call.name, args: JSON.parse(call.args) } }]));
  const last = frame([{ text: "" }], { finishReason: "STOP" });
  last.usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 2000, totalTokenCount: 2100 };
  out.push(last);
  return { frames: out.map((f) => `data: ${JSON.stringify(f)}\r\n\r\n`), c };
}

/**
 * A benchmark input: { body: Uint8Array, chunks: Uint8Array[], events,
 * expected: { text, calls: [{name, args}] } }.
 */
export function makeInput(wire, kind, delivery) {
  const { frames: fr, c } = frames(wire, kind);
  const enc = new TextEncoder();
  const body = enc.encode(fr.join(""));
  const chunks = [];
  if (delivery === "event") {
    for (const f of fr) chunks.push(enc.encode(f));
  } else {
    const rand = prng(99);
    for (let i = 0; i < body.length; ) {
      const n = 1024 + Math.floor(rand() * 3072);
      chunks.push(body.subarray(i, i + n));
      i += n;
    }
  }
  return {
    body,
    chunks,
    events: fr.length,
    expected: {
      text: c.deltas.join(""),
      calls: c.calls.map((x) => ({ name: x.name, args: JSON.parse(x.args) })),
    },
  };
}

/**
 * The chunks of an input as examples/bench_native.rs reads them: a u32
 * count, then each chunk as a u32 length and its bytes (little endian).
 */
export function chunksFile(input) {
  const parts = [Buffer.alloc(4)];
  parts[0].writeUInt32LE(input.chunks.length);
  for (const c of input.chunks) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(c.length);
    parts.push(len, Buffer.from(c));
  }
  return Buffer.concat(parts);
}

/** A fetch whose Response streams `chunks` (one per pull). */
export function fakeFetch(chunks, contentType = "text/event-stream") {
  return async () => {
    let i = 0;
    const body = new ReadableStream({
      pull(ctl) {
        if (i < chunks.length) ctl.enqueue(chunks[i++]);
        else ctl.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": contentType } });
  };
}

/** Providers that speak another's wire format: openaicompat speaks Chat Completions. */
const SAME_WIRE = { openaicompat: "openai" };
/**
 * Wire formats the bench has no input for yet, and why: Bedrock's stream is
 * AWS's binary event stream, which these text frames cannot shape, and no
 * peer (@ai-sdk/amazon-bedrock) is set up beside it (issue 30's note).
 */
const NO_INPUT_YET = { bedrock: "a binary event stream: no input writer or peer yet" };
/** Each wire format once, from the providers the core generates (src/shell/js/policy.js). */
export const WIRES = Object.keys(PROVIDER_FEATURES).filter(
  (p) => !Object.hasOwn(SAME_WIRE, p) && !Object.hasOwn(NO_INPUT_YET, p),
);
export const KINDS = ["chat", "tools", "big", "chat-real", "tools-real", "big-real", "replay"];
export const DELIVERIES = ["chunks", "event"];
