// The mock provider's model (mock-model.mjs and its parts): it answers the
// question asked, in every wire format, through skyl as a client would see
// it: the tools a question needs, in parallel, with arguments from its
// words; an answer from the results; an honest reply without a tool;
// structured output of the schema; an answer about an attached PDF.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { useMock, client, collect, ask, answerCalls, PROVIDERS } from "./helpers.mjs";
import { readPdf } from "./mock-model-files.mjs";
import { planCalls } from "./mock-model-intents.mjs";
import { modelTurn } from "./mock-model.mjs";
import { readRequest } from "./mock-requests.mjs";
import { makePdf } from "../../www/examples.js";
import { TOOLS, runTool } from "../../www/tools.js";

const KAMPALA = "What is the weather in Kampala, and convert 30 km to miles?";

const mock = useMock();
beforeEach(() => mock.reset());

/** One streamed turn: {events, response, calls: [{name, args}]}. */
async function turn(c, messages, extra = {}) {
  const { events, response, error } = await collect(c.stream({ messages, ...extra }));
  assert.ifError(error);
  const calls = events
    .filter((e) => e.type === "tool_call")
    .map((e) => ({ name: e.call.name, args: JSON.parse(e.call.arguments) }));
  return { events, response, calls };
}

/** Runs the calls of `response` with the demo's tools and appends the results. */
const runCalls = (messages, response) =>
  answerCalls(messages, response, (call) => runTool(call.name, JSON.parse(call.arguments)));

describe("the question decides the calls, and the results the answer", () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: two things asked, two calls in parallel, an answer quoting both`, async () => {
      const c = client(mock, provider);
      const messages = ask(KAMPALA);
      const first = await turn(c, messages, { tools: TOOLS });
      assert.deepEqual(first.calls, [
        { name: "get_weather", args: { city: "Kampala" } },
        { name: "convert_units", args: { value: 30, from: "km", to: "mi" } },
      ]);
      assert.equal(first.response.finishReason, "tool_calls");
      assert.equal(
        first.events.some((e) => e.type === "reasoning"),
        provider !== "openai",
        "a reasoning block where the format has one",
      );
      const [weather, converted] = runCalls(messages, first.response);
      const final = await turn(c, messages, { tools: TOOLS });
      assert.deepEqual(final.calls, []);
      assert.equal(final.response.finishReason, "stop");
      const joined = /y$|overcast/.test(weather.condition) ? "and" : "with";
      assert.equal(
        final.response.text,
        `It is ${weather.temperatureC} °C ${joined} ${weather.condition} in Kampala. 30 km is ${converted.result.toFixed(2)} miles.`,
      );
    });
  }

  test("Gemini sends parallel calls in one frame, the signature on the first", async () => {
    const c = client(mock, "gemini");
    await turn(c, ask(KAMPALA), { tools: TOOLS });
    const res = await fetch(`${mock.url}/v1beta/models/m:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify(mock.requests[0].body),
    });
    const frames = (await res.text()).split("\r\n\r\n").filter(Boolean);
    const withCalls = frames.filter((f) => f.includes('"functionCall"'));
    assert.equal(withCalls.length, 1, "Gemini: both functionCall parts in one frame");
    const parts = JSON.parse(withCalls[0].slice(6)).candidates[0].content.parts;
    assert.deepEqual(
      parts.map((p) => [p.functionCall.name, "thoughtSignature" in p]),
      [
        ["get_weather", true],
        ["convert_units", false],
      ],
    );
  });

  test("a second question gets its own tool, not the first one's result", async () => {
    const c = client(mock, "openai");
    const messages = ask("What's the weather in Paris?");
    runCalls(messages, (await turn(c, messages, { tools: TOOLS })).response);
    messages.push((await turn(c, messages, { tools: TOOLS })).response.message);
    messages.push(...ask("Calculate 12*7+3"));
    const second = await turn(c, messages, { tools: TOOLS });
    assert.deepEqual(second.calls, [{ name: "calculate", args: { expression: "12*7+3" } }]);
    runCalls(messages, second.response);
    assert.equal((await turn(c, messages, { tools: TOOLS })).response.text, "12*7+3 = 87.");
  });

  test("a tool error gets an honest answer", async () => {
    const c = client(mock, "anthropic");
    const messages = ask("Convert 30 km to kg");
    const first = await turn(c, messages, { tools: TOOLS });
    assert.deepEqual(first.calls, [
      { name: "convert_units", args: { value: 30, from: "km", to: "kg" } },
    ]);
    runCalls(messages, first.response);
    const final = await turn(c, messages, { tools: TOOLS });
    assert.equal(
      final.response.text,
      "I could not convert units (30 km to kg): cannot convert length to weight.",
    );
  });

  test("two calls of one tool and an error, answered together", () => {
    const view = readRequest("anthropic", {
      messages: [
        { role: "user", content: "The weather in Paris and in Rome, and 1/0?" },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "a", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "b", name: "get_weather", input: { city: "Rome" } },
            { type: "tool_use", id: "c", name: "calculate", input: { expression: "1/0" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: '{"temp":3}' },
            { type: "tool_result", tool_use_id: "b", content: '{"temp":4}' },
            { type: "tool_result", tool_use_id: "c", content: "not finite", is_error: true },
          ],
        },
      ],
    });
    assert.deepEqual(modelTurn(view), {
      reasoning:
        "I have the results of get_weather and an error from calculate; I will answer from them.",
      text: "It is 3 °C in Paris. It is 4 °C in Rome. I could not calculate 1/0: not finite.",
      calls: [],
    });
  });

  for (const provider of PROVIDERS) {
    test(`${provider}: without a fitting tool, an honest reply`, async () => {
      const c = client(mock, provider);
      const joke = await turn(c, ask("Tell me a joke"), { tools: TOOLS });
      assert.deepEqual(joke.calls, []);
      assert.equal(joke.response.finishReason, "stop");
      assert.equal(
        joke.response.text,
        "I can only look up the weather, convert units and calculate, so I cannot help with that.",
      );
      const vague = await turn(c, ask("What's the weather like?"), { tools: TOOLS });
      assert.deepEqual(vague.calls, []);
      assert.equal(
        vague.response.text,
        "I can look up the weather, but I need the city. Which city do you mean?",
      );
      const none = await turn(c, ask("hi"));
      assert.equal(
        none.response.text,
        "Hello! I am a mock model with no tools in this conversation, so I can only chat.",
      );
    });
  }

  test("reasoning=0 leaves the reasoning block out", async () => {
    const c = client(mock, "anthropic", { mockOptions: { reasoning: 0 } });
    const { events } = await turn(c, ask(KAMPALA), { tools: TOOLS });
    assert.equal(events.filter((e) => e.type === "reasoning").length, 0);
    assert.equal(events.filter((e) => e.type === "tool_call").length, 2);
  });
});

describe("structured output", () => {
  const schema = {
    type: "object",
    properties: {
      city: { type: "string" },
      temperatureC: { type: "number" },
      condition: { type: "string" },
    },
    required: ["city", "temperatureC", "condition"],
    additionalProperties: false,
  };
  const responseFormat = { type: "json_schema", name: "weather", schema };
  const conforms = (value) => {
    assert.deepEqual(Object.keys(value).sort(), ["city", "condition", "temperatureC"]);
    assert.equal(typeof value.city, "string");
    assert.equal(typeof value.temperatureC, "number");
    assert.equal(typeof value.condition, "string");
  };

  for (const provider of PROVIDERS) {
    test(`${provider}: JSON of the schema, values from the question, streamed in pieces`, async () => {
      const c = client(mock, provider);
      const { events, response } = await turn(c, ask("What is the weather in Lima?"), {
        responseFormat,
      });
      const value = JSON.parse(response.text);
      conforms(value);
      assert.equal(value.city, "Lima");
      assert.ok(events.filter((e) => e.type === "text").length > 3, "streamed in pieces");
    });
  }

  test("with tools: the call first, then JSON from its result", async () => {
    const c = client(mock, "responses");
    const messages = ask("What is the weather in Lima?");
    const first = await turn(c, messages, { tools: TOOLS, responseFormat });
    assert.deepEqual(first.calls, [{ name: "get_weather", args: { city: "Lima" } }]);
    const [weather] = runCalls(messages, first.response);
    const final = await turn(c, messages, { tools: TOOLS, responseFormat });
    const value = JSON.parse(final.response.text);
    conforms(value);
    assert.deepEqual(value, {
      city: "Lima",
      temperatureC: weather.temperatureC,
      condition: weather.condition,
    });
  });

  test("JSON mode without a schema: an object with what is known", async () => {
    const c = client(mock, "openai");
    const { response } = await turn(c, ask("What is (3+4)*2?"), {
      responseFormat: { type: "json" },
    });
    assert.equal(JSON.parse(response.text).expression, "(3+4)*2");
  });
});

describe("files", () => {
  // The demo page's own PDF maker: a real one-page document.
  const pdf = Buffer.from(makePdf(["Invoice 42 (paid)", "Total: 99 EUR"]));
  const part = {
    type: "file",
    data: pdf.toString("base64"),
    mediaType: "application/pdf",
    filename: "invoice.pdf",
  };
  for (const provider of PROVIDERS) {
    test(`${provider}: an attached PDF is described and quoted`, async () => {
      const c = client(mock, provider);
      const messages = [
        { role: "user", parts: [{ type: "text", text: "What does this say?" }, part] },
      ];
      const { response } = await turn(c, messages, { tools: TOOLS });
      // Gemini's inlineData has no file name.
      const name = provider === "gemini" ? "The attached file" : "invoice.pdf";
      assert.equal(
        response.text,
        `${name} (application/pdf, ${pdf.length} bytes) is a PDF with 1 page. Its text reads: "Invoice 42 (paid) Total: 99 EUR".`,
      );
    });
  }

  test("the PDF reader: escapes, TJ arrays, hex strings, pages; any bytes without throwing", () => {
    const body =
      "BT (a\\(b\\)c\\101) Tj 0 -20 Td [(Hel) -20 (lo) -300 (world)] TJ T* <48692e> Tj ET";
    const doc = Buffer.from(
      `%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj\n3 0 obj << /Length ${body.length} >>\nstream\n${body}\nendstream endobj\n4 0 obj << /Filter /FlateDecode /Length 3 >>\nstream\nxyz\nendstream endobj\n%%EOF`,
      "latin1",
    );
    assert.deepEqual(readPdf(doc), {
      pdf: true,
      pages: 2,
      text: "a(b)cA Hello world Hi.",
      compressed: true,
    });
    for (const junk of [
      Buffer.alloc(0),
      Buffer.from("%PDF-1.7 stream (unclosed [ <4"),
      Buffer.from("not a pdf"),
      Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256)),
    ])
      assert.doesNotThrow(() => readPdf(junk));
  });

  test("a URL file is named, not fetched", () => {
    const view = readRequest("anthropic", {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Summarise this" },
            { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
          ],
        },
      ],
    });
    assert.match(modelTurn(view).text, /https:\/\/example\.com\/a\.pdf; I cannot fetch it/);
  });
});

describe("the question reader works from any declared tools", () => {
  const tool = (name, description, properties, required = Object.keys(properties)) => ({
    name,
    description,
    schema: { type: "object", properties, required },
  });
  const tools = [
    tool("get_time", "The time in a time zone.", {
      zone: { type: "string", enum: ["UTC", "CET"] },
    }),
    tool("lookup_stock", "Share price of a ticker symbol.", { symbol: { type: "string" } }),
    tool("set_alarm", "Set an alarm.", { hour: { type: "integer" }, minute: { type: "integer" } }),
  ];
  test("enums, quoted text and numbers", () => {
    assert.deepEqual(planCalls("What time is it in CET?", tools).calls, [
      { name: "get_time", args: { zone: "CET" } },
    ]);
    assert.deepEqual(planCalls('Look up the stock price of "ACME"', tools).calls, [
      { name: "lookup_stock", args: { symbol: "ACME" } },
    ]);
    assert.deepEqual(planCalls("Set an alarm for 7 30", tools).calls, [
      { name: "set_alarm", args: { hour: 7, minute: 30 } },
    ]);
  });

  test("a forced tool is called even when the question does not fit", () => {
    const view = readRequest("openai", {
      messages: [{ role: "user", content: "hello" }],
      tools: [
        { type: "function", function: { name: "get_weather", parameters: TOOLS[0].parameters } },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    assert.deepEqual(modelTurn(view).calls, [{ name: "get_weather", args: { city: "Paris" } }]);
  });
});

test("a malformed request still gets an answer, never a hang", async () => {
  const bodies = [
    "[1,2]",
    '"text"',
    JSON.stringify({ messages: [null, { role: "user", content: [null, 5] }], tools: [null, {}] }),
    JSON.stringify({
      contents: [{ role: "user", parts: [{ functionResponse: { response: "x" } }] }],
    }),
    JSON.stringify({ input: [{ type: "function_call", name: 5, arguments: "{" }], tools: "x" }),
  ];
  for (const path of ["/v1/chat/completions", "/v1/messages", "/v1beta/models/m:generateContent"])
    for (const body of bodies) {
      const res = await fetch(`${mock.url}${path}`, {
        method: "POST",
        body,
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(res.status, 200, `${path} ${body}`);
      assert.ok(JSON.parse(await res.text()), "a whole JSON body");
    }
});
