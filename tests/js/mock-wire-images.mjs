// The mock provider's generated images (a turn with `image`, the model's
// answer to "draw a …"), in the two wire formats that stream images, each
// in the shape of its recordings:
//
// - Gemini: an `inlineData` part with a `thoughtSignature` beside it, in a
//   frame with the image's usage, then a last frame with an empty text part
//   and the finishReason (the frames of the AI SDK's recorded
//   gemini-3-pro-image-preview stream, issue-10660-image-thought-signature;
//   its fields, their order and compact JSON, as Google writes it, with
//   the `\r\n\r\n` separators of the conformance recordings).
// - Responses: an `image_generation_call` item: added, in_progress,
//   generating, `partial_image` frames (two lower-detail versions), completed,
//   then output_item.done with the image in `result`, and the image again
//   in response.completed's output (tests/fixtures/conformance/responses/
//   openai-image-generation-tool.1 and azure-image-generation-tool.1).
//
// The image is a real PNG (mock-png.mjs), the same bytes for the same words.
// With `image_bytes` (a mock option), its PNG carries a private ancillary
// chunk of filler that brings its base64 to about that many bytes: the same
// picture, as large as a real generated image.
import { crc32, drawing, SIDE } from "./mock-png.mjs";

/** The image_generation tool as the recorded responses echo it. */
export const IMAGE_TOOL = {
  type: "image_generation",
  background: "auto",
  moderation: "auto",
  n: 1,
  output_compression: 100,
  output_format: "png",
  quality: "low",
  size: "auto",
};

/** What an image costs in Gemini's usage (the recorded 1K image's count). */
const IMAGE_TOKENS = 1120;

/** Deterministic filler bytes (xorshift32 seeded by `seed`). */
function filler(n, seed) {
  const out = Buffer.alloc(n);
  let x = seed || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A PNG with a private ancillary chunk (`skYl`) of `n` filler bytes before IEND. */
function padded(png, n, seed) {
  const data = filler(n, seed);
  const chunk = Buffer.alloc(12 + n);
  chunk.writeUInt32BE(n, 0);
  chunk.write("skYl", 4, "latin1");
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + n)), 8 + n);
  return Buffer.concat([png.subarray(0, png.length - 12), chunk, png.subarray(png.length - 12)]);
}

/**
 * The image a "draw …" turn carries: { subject, mediaType, data (base64),
 * partials (base64), signature, revisedPrompt }. `bytes`: about this many
 * bytes of base64 (the `image_bytes` option); the picture's own size if less.
 */
export function imageFor(subject, bytes = 0) {
  const drawn = drawing(subject);
  let data = drawn.png;
  const want = Math.floor((Number(bytes) || 0) / 4) * 3;
  const png = Buffer.from(data, "base64");
  if (want > png.length + 12) {
    let seed = 0;
    for (const c of subject) seed = (Math.imul(seed, 31) + c.charCodeAt(0)) >>> 0;
    data = padded(png, want - png.length - 12, seed).toString("base64");
  }
  return {
    subject,
    mediaType: "image/png",
    data,
    partials: drawn.partials,
    // Opaque and deterministic, like the mock's other signatures.
    signature: Buffer.from(`skyl-mock-image:${crc32(Buffer.from(subject)).toString(16)}`).toString(
      "base64",
    ),
    revisedPrompt: `A simple ${SIDE}x${SIDE} picture of ${subject}: a sky, the ground, a sun and a shape for each word.`,
  };
}

/** A Gemini image turn: { stream, json }, as gemini-3-pro-image-preview sends it. */
export function renderGeminiImage(model, turn) {
  const { usage, image } = turn;
  const usageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: IMAGE_TOKENS,
    totalTokenCount: usage.input + IMAGE_TOKENS + usage.reasoning,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.input }],
    candidatesTokensDetails: [{ modality: "IMAGE", tokenCount: IMAGE_TOKENS }],
    ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
    serviceTier: "standard",
  };
  const frame = (parts, finishReason) => ({
    candidates: [
      {
        content: { parts, role: "model" },
        ...(finishReason ? { finishReason } : {}),
        index: 0,
      },
    ],
    usageMetadata,
    modelVersion: model,
    responseId: "resp-mock",
  });
  const part = {
    inlineData: { mimeType: image.mediaType, data: image.data },
    thoughtSignature: image.signature,
  };
  const thoughts = turn.reasoning ? [{ text: turn.reasoning, thought: true }] : [];
  const frames = [...thoughts.map((t) => frame([t])), frame([part]), frame([{ text: "" }], "STOP")];
  return {
    stream: frames.map((f) => `data: ${JSON.stringify(f)}\r\n\r\n`).join(""),
    json: frame([...thoughts, part], "STOP"),
  };
}

/**
 * Writes a Responses `image_generation_call` item through `ev(type,
 * fields)` at `output_index`, its partial images first; returns the done
 * item (for response.completed's output).
 */
export function responsesImageItem(ev, output_index, image) {
  const item_id = "ig_mock";
  const at = { output_index, item_id };
  const settings = { quality: "low", background: "opaque", output_format: "png" };
  ev("response.output_item.added", {
    output_index,
    item: { id: item_id, type: "image_generation_call", status: "in_progress" },
  });
  ev("response.image_generation_call.in_progress", at);
  ev("response.image_generation_call.generating", at);
  for (const [i, b64] of image.partials.entries())
    ev("response.image_generation_call.partial_image", {
      ...at,
      partial_image_index: i,
      partial_image_b64: b64,
      size: `${SIDE}x${SIDE}`,
      ...settings,
    });
  ev("response.image_generation_call.completed", at);
  const done = {
    id: item_id,
    type: "image_generation_call",
    status: "completed",
    background: "opaque",
    output_format: "png",
    quality: "low",
    result: image.data,
    revised_prompt: image.revisedPrompt,
    size: `${SIDE}x${SIDE}`,
  };
  ev("response.output_item.done", { output_index, item: done });
  return done;
}
