// The mock's event stream encoder against recorded reality: every Bedrock
// stream of the corpus, read here by a reader that checks both CRCs with
// node:zlib's CRC-32, is reproduced byte for byte when each message's
// headers and payload are encoded again. And a turn the mock renders reads
// back in Bedrock's order, its tool input joining to the call's arguments.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { encodeMessage } from "./mock-eventstream.mjs";
import { renderBedrock } from "./mock-wire-bedrock.mjs";

const dir = new URL("../fixtures/conformance/bedrock/", import.meta.url).pathname;

/** Messages as [{headers: [[name, value]], payload}], both CRCs checked. */
function read(body) {
  const out = [];
  for (let at = 0; at < body.length; ) {
    const total = body.readUInt32BE(at);
    const headersLength = body.readUInt32BE(at + 4);
    const m = body.subarray(at, at + total);
    assert.equal(m.readUInt32BE(8), zlib.crc32(m.subarray(0, 8)), "prelude CRC");
    assert.equal(m.readUInt32BE(total - 4), zlib.crc32(m.subarray(0, total - 4)), "message CRC");
    const headers = [];
    for (let h = 12; h < 12 + headersLength; ) {
      const name = m.toString("utf8", h + 1, h + 1 + m[h]);
      h += 1 + m[h];
      assert.equal(m[h], 7, `${name}: a string header`);
      const length = m.readUInt16BE(h + 1);
      headers.push([name, m.toString("utf8", h + 3, h + 3 + length)]);
      h += 3 + length;
    }
    out.push({ headers, payload: m.subarray(12 + headersLength, total - 4) });
    at += total;
  }
  return out;
}

test("the encoder frames every recorded Bedrock stream byte for byte", () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".eventstream"));
  assert.equal(files.length, 30);
  let messages = 0;
  for (const f of files) {
    const body = fs.readFileSync(path.join(dir, f));
    const again = read(body).map((m) => encodeMessage(m.headers, m.payload));
    messages += again.length;
    assert.ok(Buffer.concat(again).equals(body), f);
  }
  assert.ok(messages > 500, `${messages} messages`);
});

test("a rendered turn reads back in Bedrock's order", () => {
  const calls = [
    { id: "tooluse_1", name: "get_weather", args: { city: "Paris" } },
    { id: "tooluse_2", name: "get_weather", args: { city: "Oslo" } },
  ];
  const turn = {
    reasoning: "Two cities, two calls.",
    text: "Checking both.",
    calls,
    usage: { input: 12, output: 34, reasoning: 5 },
  };
  const { stream } = renderBedrock(turn);
  const events = read(stream).map((m) => ({
    type: Object.fromEntries(m.headers)[":event-type"],
    body: JSON.parse(m.payload.toString("utf8")),
  }));
  const types = events.map((e) => e.type);
  assert.equal(types[0], "messageStart");
  assert.deepEqual(types.slice(-2), ["messageStop", "metadata"]);
  assert.equal(events.at(-2).body.stopReason, "tool_use");
  assert.equal(types.filter((t) => t === "contentBlockStart").length, 2, "only tool blocks start");
  assert.ok(
    events.every((e) => typeof e.body.p === "string"),
    "padding on every payload",
  );
  const deltas = (i) =>
    events.filter((e) => e.type === "contentBlockDelta" && e.body.contentBlockIndex === i);
  const sig = deltas(0).at(-1).body.delta.reasoningContent.signature;
  assert.ok(sig, "the signature is the reasoning block's last delta");
  assert.equal(
    deltas(1)
      .map((e) => e.body.delta.text)
      .join(""),
    turn.text,
  );
  calls.forEach((c, n) => {
    const input = deltas(2 + n)
      .map((e) => e.body.delta.toolUse.input)
      .join("");
    assert.deepEqual(JSON.parse(input), c.args);
  });
});
