// The mock provider's Bedrock wire (Converse / ConverseStream): a turn as
// an event stream (mock-eventstream.mjs) or a Converse body, Bedrock's
// error bodies and headers, its in-band exceptions, and the resource-bound
// streams in its framing. mock-wire.mjs dispatches here; the shapes follow
// the recordings in tests/fixtures/conformance/bedrock (the live capture
// issue-18994-live-converse-stream.stream.eventstream above all).
//
// (This module and mock-wire.mjs import each other; each uses the other's
// functions only when called, never while loading.)

import { REASONING_PIECE, pieces, signature } from "./mock-wire.mjs";
import {
  EVENTSTREAM,
  encodeLongMessage,
  eventFrame,
  eventHeaders,
  exceptionFrame,
  padding,
  readMessages,
} from "./mock-eventstream.mjs";

/**
 * A turn as ConverseStream sends it: `messageStart`; reasoning deltas, its
 * signature as a delta of its own, `contentBlockStop`; text deltas and a
 * stop; per call a `contentBlockStart` (only tool blocks have one), its
 * input as JSON fragments, a stop; `messageStop`; `metadata` with usage.
 * Every payload carries a padding `p` of varying length, as live streams
 * do. The body form is the Converse response. `stream` is a Buffer.
 */
export function renderBedrock(turn) {
  const { usage } = turn;
  const frames = [];
  const ev = (type, payload) =>
    frames.push(eventFrame(type, { ...payload, p: padding(7 + frames.length * 23) }));
  ev("messageStart", { role: "assistant" });
  const content = [];
  const block = (deltas, whole) => {
    const contentBlockIndex = content.length;
    for (const delta of deltas) ev("contentBlockDelta", { contentBlockIndex, delta });
    ev("contentBlockStop", { contentBlockIndex });
    content.push(whole);
  };
  if (turn.reasoning) {
    const sig = signature("reasoning", turn.reasoning);
    block(
      [
        ...pieces(turn.reasoning, REASONING_PIECE).map((text) => ({ reasoningContent: { text } })),
        { reasoningContent: { signature: sig } },
      ],
      { reasoningContent: { reasoningText: { text: turn.reasoning, signature: sig } } },
    );
  }
  if (turn.text)
    block(
      pieces(turn.text).map((text) => ({ text })),
      { text: turn.text },
    );
  for (const c of turn.calls) {
    const start = { toolUse: { toolUseId: c.id, name: c.name } };
    ev("contentBlockStart", { contentBlockIndex: content.length, start });
    block(
      pieces(JSON.stringify(c.args), 4).map((input) => ({ toolUse: { input } })),
      { toolUse: { toolUseId: c.id, name: c.name, input: c.args } },
    );
  }
  const stopReason = turn.cutOff ? "max_tokens" : turn.calls.length ? "tool_use" : "end_turn";
  ev("messageStop", { stopReason });
  const counts = {
    inputTokens: usage.input,
    outputTokens: usage.output,
    totalTokens: usage.input + usage.output,
  };
  // A latency that grows with the answer, deterministic like the rest.
  const metrics = { latencyMs: 200 + 10 * usage.output };
  ev("metadata", { usage: counts, metrics });
  return {
    stream: Buffer.concat(frames),
    json: {
      output: { message: { role: "assistant", content } },
      stopReason,
      usage: counts,
      metrics,
    },
  };
}

/** The exception each status stands for (Converse's documented errors). */
const EXCEPTIONS = {
  400: ["ValidationException", "The provided request is not valid"],
  401: ["UnrecognizedClientException", "The security token included in the request is invalid."],
  403: ["AccessDeniedException", "You don't have access to the model with the specified model ID."],
  404: ["ResourceNotFoundException", "The provided model identifier is invalid."],
  408: ["ModelTimeoutException", "Model has timed out in processing the request."],
  424: ["ModelErrorException", "The model returned an error."],
  429: ["ThrottlingException", "Too many requests, please wait before trying again."],
  500: ["InternalServerException", "The server encountered an internal error."],
  503: ["ServiceUnavailableException", "Bedrock is unable to process your request."],
  529: ["ServiceUnavailableException", "Bedrock is unable to process your request."],
};
const exceptionOf = (status) =>
  EXCEPTIONS[status] ??
  (status >= 500
    ? ["InternalServerException", `mock error ${status}`]
    : ["ValidationException", `mock error ${status}`]);

/** An HTTP error body: only `message`; the exception is named in a header. */
export const bedrockErrorBody = (status) => ({ message: exceptionOf(status)[1] });

/** The header that names an HTTP error's exception, with AWS's Coral suffix. */
export const bedrockErrorHeaders = (status) => ({
  "x-amzn-ErrorType": `${exceptionOf(status)[0]}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
});

/** The payload of each in-band exception, as AWS words it. */
const STREAM_EXCEPTIONS = {
  throttlingException: { message: "Too many tokens, please wait before trying again." },
  serviceUnavailableException: { message: "Bedrock is unable to process your request." },
  internalServerException: { message: "The server encountered an internal error." },
  modelStreamErrorException: {
    message: "Model Stream Error",
    originalStatusCode: 424,
    originalMessage: "Upstream model failed",
  },
  validationException: { message: "Input is too long for requested model." },
};

/** Whether an event message carries answer text (not reasoning). */
function carriesText(m) {
  if (m.headers[":event-type"] !== "contentBlockDelta") return false;
  try {
    const text = JSON.parse(m.payload.toString("utf8")).delta?.text;
    return typeof text === "string" && text !== "";
  } catch {
    return false;
  }
}

/**
 * A stream cut by an exception message: `start`, before any content (after
 * `messageStart`, which carries none), or `after_text`, after the first
 * message with answer text. `exception` picks the type; the default,
 * serviceUnavailableException, is Bedrock's "overloaded".
 */
export function bedrockWithInbandError(stream, when, exception) {
  const type = exception in STREAM_EXCEPTIONS ? exception : "serviceUnavailableException";
  const messages = readMessages(Buffer.from(stream));
  const cut = when === "start" ? 1 : messages.findIndex(carriesText) + 1;
  return Buffer.concat([
    ...messages.slice(0, Math.max(cut, 1)).map((m) => m.bytes),
    exceptionFrame(type, STREAM_EXCEPTIONS[type]),
  ]);
}

const TEXT_PREFIX = '{"contentBlockIndex":0,"delta":{"text":"';

/**
 * The resource-bound streams (see mock-server.mjs) as event streams: one
 * text delta `huge` bytes long; keep-alives (an event stream has no
 * comments: `messageStart` messages, which carry nothing); `n` one-letter
 * text deltas and a whole ending.
 */
export const BEDROCK_RESOURCES = {
  contentType: EVENTSTREAM,
  *huge(bytes) {
    yield eventFrame("messageStart", { role: "assistant" });
    yield* encodeLongMessage(eventHeaders("contentBlockDelta"), TEXT_PREFIX, bytes, '"}}');
  },
  keepAlive: Buffer.concat(Array(64).fill(eventFrame("messageStart", { role: "assistant" }))),
  *tiny(n) {
    yield eventFrame("messageStart", { role: "assistant" });
    const one = eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } });
    const batch = Buffer.concat(Array(1000).fill(one));
    for (let i = 0; i < n; i += 1000)
      yield i + 1000 <= n ? batch : Buffer.concat(Array(n - i).fill(one));
    yield Buffer.concat([
      eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
      eventFrame("messageStop", { stopReason: "end_turn" }),
      eventFrame("metadata", {
        metrics: { latencyMs: 1000 },
        usage: { inputTokens: 1, outputTokens: n, totalTokens: n + 1 },
      }),
    ]);
  },
};
