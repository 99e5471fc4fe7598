// The mock provider's drawings: a small PNG made from the words of a
// prompt ("draw a cat"), real and deterministic: the same words give the
// same bytes. A 64x64 RGB picture (a sky, the ground, a sun and one shape
// per word, each placed and coloured by a hash of the words), encoded by
// hand: the signature, IHDR, one IDAT (node:zlib's deflate of the filtered
// rows) and IEND, each chunk with its CRC-32. `drawing` also gives the
// lower-detail versions a model streams first (the Responses API's
// `partial_image` events): the same picture in blocks of 16, then 4 pixels.
import zlib from "node:zlib";

/** The side of a drawing, in pixels. */
export const SIDE = 64;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (ISO 3309, as PNG uses it) of `bytes`. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** A PNG of `width` x `height` RGB pixels (`rgb`: 3 bytes a pixel, row by row). */
export function encodePng(width, height, rgb) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = 2; // colour type: RGB
  // (compression 0, filter 0, interlace 0)
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const at = y * (1 + width * 3);
    rows[at] = 0; // filter: none
    rgb.copy(rows, at + 1, y * width * 3, (y + 1) * width * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The width and height a PNG's IHDR gives; null if `bytes` is not a PNG. */
export function pngSize(bytes) {
  const b = Buffer.from(bytes);
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString("latin1", 12, 16) !== "IHDR")
    return null;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** FNV-1a of a string, for colours and places. */
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

const colour = (h) => [64 + (h & 0x7f) + 32, 64 + ((h >>> 8) & 0x7f), 64 + ((h >>> 16) & 0x7f)];
const mix = (a, b, t) => a.map((x, i) => Math.round(x + (b[i] - x) * t));

/** The words a picture is made of: "draw a small cat" → ["small", "cat"]. */
const wordsOf = (subject) =>
  subject
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !/^(?:a|an|the|of|me|some|please|and|with|in|on)$/.test(w))
    .slice(0, 5);

/** The picture for `subject`: SIDE x SIDE RGB pixels. */
export function picture(subject) {
  const words = wordsOf(subject);
  const seed = hash(words.join(" ") || "nothing");
  const rgb = Buffer.alloc(SIDE * SIDE * 3);
  const top = colour(seed);
  const low = mix(colour(seed >>> 3), [255, 255, 255], 0.5);
  const ground = mix(colour(hash(`${seed}ground`)), [40, 90, 40], 0.6);
  const horizon = 46 + (seed % 6);
  const set = (x, y, c) => rgb.set(c, (y * SIDE + x) * 3);
  for (let y = 0; y < SIDE; y++)
    for (let x = 0; x < SIDE; x++) set(x, y, y < horizon ? mix(top, low, y / horizon) : ground);
  const shapes = [
    { word: "sun", h: hash(`${seed}sun`), sun: true },
    ...words.map((w, i) => ({ word: w, h: hash(`${w}${i}`) })),
  ];
  shapes.forEach((s, i) => {
    const r = s.sun ? 6 : 5 + (s.h % 8);
    const cx = s.sun ? 10 + (s.h % 44) : 8 + ((s.h >>> 4) % 48);
    const cy = s.sun ? 8 + ((s.h >>> 6) % 6) : horizon - r + 3 + ((s.h >>> 9) % 4) - i;
    const c = s.sun ? [250, 220, 80] : colour(s.h >>> 5);
    const square = !s.sun && s.h & 1;
    for (let y = Math.max(0, cy - r); y <= Math.min(SIDE - 1, cy + r); y++)
      for (let x = Math.max(0, cx - r); x <= Math.min(SIDE - 1, cx + r); x++)
        if (square || (x - cx) ** 2 + (y - cy) ** 2 <= r * r) set(x, y, c);
  });
  return rgb;
}

/** `rgb` in blocks of `n` pixels, each the colour of its middle pixel. */
function blocky(rgb, n) {
  const out = Buffer.alloc(rgb.length);
  for (let y = 0; y < SIDE; y++)
    for (let x = 0; x < SIDE; x++) {
      const from =
        ((Math.floor(y / n) * n + (n >> 1)) * SIDE + Math.floor(x / n) * n + (n >> 1)) * 3;
      rgb.copy(out, (y * SIDE + x) * 3, from, from + 3);
    }
  return out;
}

/**
 * The drawing of `subject`: { png, partials } as base64, `partials` the
 * lower-detail versions streamed before it (16-pixel, then 4-pixel blocks).
 */
export function drawing(subject) {
  const rgb = picture(subject);
  const b64 = (pixels) => encodePng(SIDE, SIDE, pixels).toString("base64");
  return { png: b64(rgb), partials: [b64(blocky(rgb, 16)), b64(blocky(rgb, 4))] };
}
