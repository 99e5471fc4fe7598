// The `replay` case of each format: one recorded conformance stream
// (tests/fixtures/conformance/), byte for byte, scaled up by repeating its
// text-delta frames until there are about 2,000 of them: after the last
// one come its text-delta frames again, in recorded order, as many times
// as it takes (so neighbouring frames differ as on the wire: a Gemini
// frame's usage changes from one to the next). Every other frame (usage
// chunks, pings, content filter results, tool calls, the terminal frames
// with the recorded text) stays as recorded, once.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../tests/fixtures/conformance",
);

/** The recording replayed per format; bench/README.md says why each. */
export const REPLAYED = {
  openai: "openai/azure-model-router.1.stream",
  anthropic: "anthropic/anthropic-json-tool.2.stream",
  gemini: "gemini/google-text.stream",
  responses: "responses/open-responses-openai-pdf-input-file.1.stream",
};

const TARGET = 2000;

/** The text a frame adds, if it is a text delta and nothing else; else null. */
function textOf(wire, f) {
  if (wire === "openai") {
    const choice = f.choices?.[0];
    const d = choice?.delta;
    return f.choices?.length === 1 &&
      !choice.finish_reason &&
      typeof d?.content === "string" &&
      d.content &&
      !d.tool_calls
      ? d.content
      : null;
  }
  if (wire === "anthropic")
    return f.type === "content_block_delta" && f.delta.type === "text_delta" ? f.delta.text : null;
  if (wire === "responses") return f.type === "response.output_text.delta" ? f.delta : null;
  const cand = f.candidates?.[0];
  const parts = cand?.content?.parts ?? [];
  return f.candidates?.length === 1 &&
    !cand.finishReason &&
    parts.length > 0 &&
    parts.every((p) => Object.keys(p).length === 1 && typeof p.text === "string" && p.text)
    ? parts.map((p) => p.text).join("")
    : null;
}

/**
 * The frames of the replayed recording and its content ({ deltas, calls }
 * as bench/inputs.mjs has them), checked against the recording's
 * expected file: the text its deltas make and its tool calls.
 */
export function replayFrames(wire) {
  const name = REPLAYED[wire];
  if (!name) throw new Error(`bench/replay.mjs: no recording replayed for ${wire}`);
  const body = fs.readFileSync(path.join(FIXTURES, `${name}.sse`), "utf8");
  const expected = JSON.parse(
    fs.readFileSync(path.join(FIXTURES, `${name}.expected.json`), "utf8"),
  );
  const sep = body.includes("\r\n\r\n") ? "\r\n\r\n" : "\n\n";
  const events = body
    .split(sep)
    .filter((e) => e.trim())
    .map((e) => e + sep);
  const texts = events.map((e) => {
    const data = e.split(/\r?\n/).find((l) => l.startsWith("data: "));
    return data && data !== "data: [DONE]" ? textOf(wire, JSON.parse(data.slice(6))) : null;
  });
  const recorded = texts.filter((t) => t !== null);
  if (recorded.join("") !== expected.text)
    throw new Error(`${name}: its text deltas do not make the expected text`);
  const times = Math.ceil(TARGET / recorded.length);
  const last = texts.findLastIndex((t) => t !== null);
  const again = events.filter((_, i) => texts[i] !== null);
  const frames = [];
  const deltas = [];
  events.forEach((e, i) => {
    frames.push(e);
    if (texts[i] !== null) deltas.push(texts[i]);
    if (i === last)
      for (let k = 1; k < times; k++) {
        frames.push(...again);
        deltas.push(...recorded);
      }
  });
  const calls = expected.tool_calls.map((t) => ({
    id: t.id,
    name: t.name,
    args: JSON.stringify(t.arguments),
  }));
  return { frames, c: { deltas, calls } };
}
