// The mock's event stream encoder against recorded reality: every Bedrock
// stream of the corpus, read here by a reader that checks both CRCs with
// node:zlib's CRC-32, is reproduced byte for byte when each message's
// headers and payload are encoded again. And a turn the mock renders reads
// back in Bedrock's order, its tool input joining to the call's arguments.
// Then the mock's Bedrock wire end to end, without the package: a Converse
// request read, both paths, errors, in-band exceptions, faults.
import { beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { encodeMessage } from "./mock-eventstream.mjs";
import { readRequest } from "./mock-requests.mjs";
import { readCase } from "./mock-server.mjs";
import { renderBedrock } from "./mock-wire-bedrock.mjs";
import { useMock } from "./use-mock.mjs";

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
  // Runs of one event type, in order: reasoning (pieces, signature), text, two calls.
  const runs = types.filter((t, i) => t !== types[i - 1] || t !== "contentBlockDelta");
  assert.deepEqual(runs, [
    "messageStart",
    "contentBlockDelta",
    "contentBlockStop",
    "contentBlockDelta",
    "contentBlockStop",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
  ]);
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

// ------------------------------------------------ the mock server's bedrock

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const WEATHER = {
  toolSpec: {
    name: "get_weather",
    description: "Current weather for a city.",
    inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } },
  },
};

test("readRequest reads a Converse request into the neutral view", () => {
  const pdf = Buffer.from("%PDF-1.4 test");
  const view = readRequest("bedrock", {
    messages: [
      {
        role: "user",
        content: [
          { text: "Weather in Paris?" },
          {
            document: { format: "pdf", name: "report", source: { bytes: pdf.toString("base64") } },
          },
          { image: { format: "png", source: { s3Location: { uri: "s3://b/a.png" } } } },
          { cachePoint: { type: "default" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { reasoningContent: { reasoningText: { text: "call it", signature: "s" } } },
          { toolUse: { toolUseId: "tooluse_a", name: "get_weather", input: { city: "Paris" } } },
        ],
      },
      {
        role: "user",
        content: [
          { toolResult: { toolUseId: "tooluse_a", content: [{ json: { temp: 3 } }] } },
          { toolResult: { toolUseId: "tooluse_b", content: [{ text: "down" }], status: "error" } },
        ],
      },
    ],
    system: [{ text: "Be brief." }, { cachePoint: { type: "default" } }],
    toolConfig: { tools: [WEATHER, { cachePoint: { type: "default" } }], toolChoice: { any: {} } },
    outputConfig: {
      textFormat: {
        type: "json_schema",
        structure: { jsonSchema: { schema: '{"type":"object"}', name: "x" } },
      },
    },
    additionalModelRequestFields: { thinking: { type: "disabled" } },
  });
  assert.deepEqual(
    view.tools.map((t) => t.name),
    ["get_weather"],
  );
  const [user, call, ok, failed] = view.entries;
  assert.equal(user.text, "Weather in Paris?");
  assert.deepEqual(
    user.files.map((f) => [f.filename, f.mediaType, f.data?.length ?? f.url]),
    [
      ["report.pdf", "application/pdf", pdf.length],
      [null, "image/png", "s3://b/a.png"],
    ],
  );
  assert.deepEqual(call, {
    kind: "call",
    id: "tooluse_a",
    name: "get_weather",
    args: { city: "Paris" },
  });
  assert.deepEqual(ok, { kind: "result", id: "tooluse_a", content: '{"temp":3}', isError: false });
  assert.equal(failed.isError, true);
  assert.deepEqual(view.format, { schema: { type: "object" } });
  assert.equal(view.thinking, false);
  assert.equal(view.choice, "required");
  const named = readRequest("bedrock", { toolConfig: { toolChoice: { tool: { name: "f" } } } });
  assert.deepEqual(named.choice, { name: "f" });
  assert.equal(readRequest("bedrock", {}).thinking, null, "reasoning unless turned off");
});

describe("the mock server speaks Bedrock", () => {
  const mock = useMock();
  beforeEach(() => mock.reset());
  const path = (op) => `/model/${encodeURIComponent(MODEL)}/${op}`;
  const post = (op, body, headers = {}) =>
    fetch(`${mock.url}${path(op)}`, {
      method: "POST",
      headers: { authorization: "Bearer bedrock-api-key", ...headers },
      body: JSON.stringify(body),
    });
  const ask = (text, extra = {}) => ({
    messages: [{ role: "user", content: [{ text }] }],
    ...extra,
  });
  const eventsOf = async (res) =>
    read(Buffer.from(await res.arrayBuffer())).map((m) => {
      const h = Object.fromEntries(m.headers);
      return {
        type: h[":event-type"] ?? h[":exception-type"],
        body: JSON.parse(m.payload.toString("utf8")),
      };
    });

  test("ConverseStream: the path decides, an event stream with tooluse_ ids", async () => {
    const res = await post(
      "converse-stream",
      ask("The weather in Kampala?", {
        toolConfig: { tools: [WEATHER] },
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/vnd.amazon.eventstream");
    const events = await eventsOf(res);
    const start = events.find((e) => e.type === "contentBlockStart").body.start.toolUse;
    assert.deepEqual(start, { name: "get_weather", toolUseId: "tooluse_get_weather_1" });
    assert.equal(events.at(-2).body.stopReason, "tool_use");
    assert.equal(mock.requests[0].path, path("converse-stream"));
  });

  test("Converse: the whole response", async () => {
    const res = await post("converse", ask("hi"));
    assert.equal(res.headers.get("content-type"), "application/json");
    const body = await res.json();
    assert.equal(body.stopReason, "end_turn");
    const [reasoning, text] = body.output.message.content;
    assert.ok(reasoning.reasoningContent.reasoningText.signature);
    assert.match(text.text, /^Hello! I am a mock model/);
    const u = body.usage;
    assert.equal(u.totalTokens, u.inputTokens + u.outputTokens);
  });

  test("an HTTP error: {message}, the exception in x-amzn-ErrorType", async () => {
    const res = await post("converse", ask("hi"), {
      "x-mock-fail": "429",
      "x-mock-echo-key": "1",
    });
    assert.equal(res.status, 429);
    assert.equal(
      res.headers.get("x-amzn-errortype"),
      "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
    );
    const body = await res.json();
    assert.deepEqual(Object.keys(body), ["message"]);
    assert.match(body.message, /Bearer bedrock-api-key was rejected/);
  });

  test("in-band errors: an exception message at the start or after text", async () => {
    const start = await eventsOf(
      await post("converse-stream", ask("hi"), { "x-mock-inband-error": "start" }),
    );
    assert.deepEqual(
      start.map((e) => e.type),
      ["messageStart", "serviceUnavailableException"],
    );
    const after = await eventsOf(
      await post("converse-stream", ask("hi"), {
        "x-mock-inband-error": "after_text",
        "x-mock-inband-exception": "throttlingException",
        "x-mock-reasoning": "0",
      }),
    );
    assert.deepEqual(
      after.map((e) => e.type),
      ["messageStart", "contentBlockDelta", "throttlingException"],
    );
    assert.ok(after[1].body.delta.text);
  });

  test("resource streams in Bedrock's framing, every CRC valid", async () => {
    const huge = await eventsOf(
      await post("converse-stream", ask("hi"), { "x-mock-huge-event": "200000" }),
    );
    assert.equal(huge[1].body.delta.text.length, 200_000);
    const tiny = await eventsOf(
      await post("converse-stream", ask("hi"), { "x-mock-tiny-events": "2500" }),
    );
    assert.equal(tiny.filter((e) => e.type === "contentBlockDelta").length, 2500);
    assert.equal(tiny.at(-1).type, "metadata");
  });

  test("a recorded case is served as recorded", async () => {
    const id = "bedrock/issue-18994-live-converse-stream.stream";
    const res = await post("converse-stream", ask("hi"), { "x-mock-fixture": id });
    assert.equal(res.headers.get("content-type"), "application/vnd.amazon.eventstream");
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(readCase(id).body));
  });

  test("a disconnect mid-frame ends the body early", async () => {
    const res = await post("converse-stream", ask("hi"), { "x-mock-disconnect-after": "100" });
    const got = await res.arrayBuffer().then(
      (b) => Buffer.from(b),
      () => null,
    );
    assert.ok(got === null || got.length <= 100);
  });
});
