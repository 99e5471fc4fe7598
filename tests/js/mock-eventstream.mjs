// AWS's event stream framing (`application/vnd.amazon.eventstream`), the
// body of a Bedrock ConverseStream answer. A body is binary messages, each
//
//   total length (u32 BE) | headers length (u32 BE) | CRC-32 of those 8 bytes
//   | headers | payload | CRC-32 of everything before it
//
// and a header is name length (u8), name, value type (7: string), value
// length (u16 BE), value. Bedrock sends only string headers, so the mock
// writes only those. CRC-32 is IEEE's (zlib's); Node has zlib.crc32 only
// from 22.2, so it is computed here from a table.
//
// Payloads are JSON with their keys in alphabetical order, as AWS writes
// them; real payloads also carry a padding field `p` ("abcdefgh..." cut to
// a varying length) that clients ignore: `padding(n)` makes one.

/** The CRC-32 of each byte value (IEEE polynomial, reflected). */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * The CRC-32 of `bytes`; given the CRC of what came before as `crc`, the
 * CRC of the whole (so a long message can be checksummed as it is sent).
 */
export function crc32(bytes, crc = 0) {
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The content type of an event stream body. */
export const EVENTSTREAM = "application/vnd.amazon.eventstream";

/** String headers in the given order: [[name, value], ...] (or an object). */
function encodeHeaders(headers) {
  const parts = [];
  for (const [name, value] of Array.isArray(headers) ? headers : Object.entries(headers)) {
    const n = Buffer.from(name, "utf8");
    const v = Buffer.from(String(value), "utf8");
    const head = Buffer.alloc(1 + n.length + 3);
    head.writeUInt8(n.length, 0);
    n.copy(head, 1);
    head.writeUInt8(7, 1 + n.length);
    head.writeUInt16BE(v.length, 2 + n.length);
    parts.push(head, v);
  }
  return Buffer.concat(parts);
}

/**
 * The start of a message whose payload is `payloadLength` bytes: prelude,
 * its CRC and the headers. The payload and the message CRC follow.
 */
function messageHead(headers, payloadLength) {
  const h = encodeHeaders(headers);
  const head = Buffer.alloc(12 + h.length);
  head.writeUInt32BE(12 + h.length + payloadLength + 4, 0);
  head.writeUInt32BE(h.length, 4);
  head.writeUInt32BE(crc32(head.subarray(0, 8)), 8);
  h.copy(head, 12);
  return head;
}

/** One message: `headers` ([[name, value], ...], in order) and the payload bytes. */
export function encodeMessage(headers, payload) {
  const body = Buffer.from(payload);
  const head = messageHead(headers, body.length);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(body, crc32(head)));
  return Buffer.concat([head, body, tail]);
}

/**
 * A message too long to build in memory: its bytes in pieces, the payload
 * being `prefix`, `size` bytes of `fill`, then `suffix`.
 */
export function* encodeLongMessage(headers, prefix, size, suffix, fill = "x") {
  const [pre, post] = [Buffer.from(prefix), Buffer.from(suffix)];
  const head = messageHead(headers, pre.length + size + post.length);
  let crc = crc32(pre, crc32(head));
  yield Buffer.concat([head, pre]);
  const block = Buffer.alloc(64 * 1024, fill);
  for (let sent = 0; sent < size; sent += block.length) {
    const piece = block.subarray(0, Math.min(block.length, size - sent));
    crc = crc32(piece, crc);
    yield piece;
  }
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(post, crc));
  yield Buffer.concat([post, tail]);
}

/** JSON with object keys in alphabetical order, as AWS writes its payloads. */
export function sortedJSON(value) {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** AWS's padding field's value: the first `n` letters (n at least 1). */
export const padding = (n) => LETTERS.slice(0, Math.max(1, n % (LETTERS.length + 1)));

/** The headers of an event, in the order AWS sends them. */
export const eventHeaders = (eventType) => [
  [":event-type", eventType],
  [":content-type", "application/json"],
  [":message-type", "event"],
];

/** An event message (`messageStart`, `contentBlockDelta`, ...) with a JSON payload. */
export const eventFrame = (eventType, payload) =>
  encodeMessage(eventHeaders(eventType), sortedJSON(payload));

/** An exception message (`throttlingException`, ...): how a stream fails after its start. */
export const exceptionFrame = (exceptionType, payload) =>
  encodeMessage(
    [
      [":exception-type", exceptionType],
      [":content-type", "application/json"],
      [":message-type", "exception"],
    ],
    sortedJSON(payload),
  );

/**
 * The messages of a body, read by their lengths (no CRC check: the mock
 * reads only what it wrote): [{bytes, headers: {name: value}, payload}].
 * A cut last message is left out.
 */
export function readMessages(body) {
  const out = [];
  for (let at = 0; at + 12 <= body.length; ) {
    const total = body.readUInt32BE(at);
    if (total < 16 || at + total > body.length) break;
    const bytes = body.subarray(at, at + total);
    const end = 12 + bytes.readUInt32BE(4);
    const headers = {};
    for (let h = 12; h < end; ) {
      const name = bytes.toString("utf8", h + 1, h + 1 + bytes[h]);
      h += 1 + bytes[h];
      const length = bytes.readUInt16BE(h + 1);
      headers[name] = bytes.toString("utf8", h + 3, h + 3 + length);
      h += 3 + length;
    }
    out.push({ bytes, headers, payload: bytes.subarray(end, total - 4) });
    at += total;
  }
  return out;
}
