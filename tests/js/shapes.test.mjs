// The model's JSON shape is written by Rust (src/model/to_json.rs, held to
// serde's output) and declared by hand in index.d.ts. This test holds the
// two together: every recorded case goes through the built package, and
// every field of every Response, Message, Part, ToolCall, Usage, event and
// error that comes out must be declared in index.d.ts (under the part's or
// event's own `type`); every required field declared must be there; and
// every optional field declared must come out of at least one case, unless
// it is listed below as one only callers write.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import ts from "typescript";
import { skyl, useMock, against, client, ask } from "./helpers.mjs";
import { listCases, readCase } from "./mock-server.mjs";

// index.d.ts and the files it re-exports.
const DTS = ["index.d.ts", "runner.d.ts", "error-types.d.ts"];

// Parts only a caller writes (requests, tool results): no response has them.
const INPUT_ONLY = new Set(["Part:image", "Part:tool_result", "Part:cache"]);
// Output fields no recording happens to have, each with where it is tested.
const NOT_RECORDED = new Map([
  // Anthropic's redacted_thinking: no recorded case has one; the Rust
  // writer's test (shell/to_json_tests.rs) writes it beside serde.
  ["Part:reasoning", ["redacted"]],
  // A file the model made comes as data, with no URL or name.
  ["Part:file", ["url", "filename"]],
]);

/** type alias name -> its TypeNode, and class name -> its node, from the typings. */
function aliases() {
  const out = new Map();
  const classes = new Map();
  for (const name of DTS) {
    const text = readFileSync(new URL(`../../src/shell/js/${name}`, import.meta.url), "utf8");
    const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
    file.forEachChild((node) => {
      if (ts.isTypeAliasDeclaration(node)) out.set(node.name.text, node.type);
      if (ts.isClassDeclaration(node) && node.name) classes.set(node.name.text, node);
    });
  }
  return { out, classes };
}

/** A type literal's members: name -> { optional, type }. */
function members(node) {
  const m = new Map();
  for (const member of node.members) {
    if (!ts.isPropertySignature(member)) continue;
    m.set(member.name.text, { optional: Boolean(member.questionToken), type: member.type });
  }
  return m;
}

/**
 * The declared shapes: kind -> members, where a kind is a type alias name
 * (`Response`) or a union alias and its discriminant (`Part:text`).
 */
function declaredShapes() {
  const { out, classes } = aliases();
  const shapes = new Map();
  const resolve = (node) => (ts.isTypeReferenceNode(node) ? out.get(node.typeName.text) : node);
  for (const [name, node] of out) {
    if (ts.isTypeLiteralNode(node)) shapes.set(name, members(node));
    if (ts.isUnionTypeNode(node)) {
      for (const t of node.types) {
        const lit = resolve(t);
        if (!lit || !ts.isTypeLiteralNode(lit)) continue;
        const m = members(lit);
        const tag = m.get("type")?.type;
        if (tag && ts.isLiteralTypeNode(tag)) shapes.set(`${name}:${tag.literal.text}`, m);
      }
    }
  }
  // The error classes: SkylError's readonly fields.
  const err = new Map();
  for (const member of classes.get("SkylError").members) {
    if (ts.isPropertyDeclaration(member)) {
      err.set(member.name.text, { optional: Boolean(member.questionToken) });
    }
  }
  // name and message come from Error itself.
  err.set("name", { optional: false });
  err.set("message", { optional: false });
  shapes.set("SkylError", err);
  return shapes;
}

const shapes = declaredShapes();
const seen = new Map(); // kind -> Set(field)
// problem -> the first place it was seen (one line per field, not per case).
const problems = new Map();
const problem = (where, what) => problems.has(what) || problems.set(what, where);

/** Checks one object of `kind` against its declaration and walks into it. */
function check(kind, value, where) {
  const declared = shapes.get(kind);
  if (!declared) {
    problem(where, `${kind} is not declared in index.d.ts`);
    return;
  }
  const keys = Object.keys(value);
  if (!seen.has(kind)) seen.set(kind, new Set());
  for (const k of keys) {
    seen.get(kind).add(k);
    if (!declared.has(k)) problem(where, `${kind}.${k} is written but not declared`);
  }
  for (const [k, d] of declared) {
    if (!d.optional && !(k in value))
      problem(where, `${kind}.${k} is declared required but missing`);
  }
  const walk = {
    Response: () => {
      check("Message", value.message, `${where}.message`);
      for (const [i, c] of value.toolCalls.entries()) {
        check("ToolCall", c, `${where}.toolCalls[${i}]`);
      }
      for (const [i, c] of (value.incompleteToolCalls ?? []).entries()) {
        check("IncompleteToolCall", c, `${where}.incompleteToolCalls[${i}]`);
      }
      check("Usage", value.usage, `${where}.usage`);
      for (const [i, a] of (value.attempts ?? []).entries()) {
        check("FailedAttempt", a, `${where}.attempts[${i}]`);
      }
    },
    FailedAttempt: () => check("AttemptError", value.error, `${where}.error`),
    Message: () => {
      for (const [i, p] of value.parts.entries())
        check(`Part:${p.type}`, p, `${where}.parts[${i}]`);
    },
    "StreamEvent:tool_call": () => check("ToolCall", value.call, `${where}.call`),
    "StreamEvent:usage": () => check("Usage", value.usage, `${where}.usage`),
    "StreamEvent:finish": () => check("Response", value.response, `${where}.response`),
    SkylError: () => {
      if (value.partial) check("Response", value.partial, `${where}.partial`);
      for (const [i, a] of (value.attempts ?? []).entries()) {
        check("FailedAttempt", a, `${where}.attempts[${i}]`);
      }
    },
  }[kind];
  walk?.();
}

/** An error's own fields, as a plain object (its cause and stack aside). */
function errorFields(err) {
  const out = { name: err.name, message: err.message };
  for (const k of Object.keys(err)) if (!["cause", "stack"].includes(k)) out[k] = err[k];
  return out;
}

const mock = useMock();

test("every field the package writes is declared in index.d.ts, and every declared field is written", async () => {
  for (const id of listCases()) {
    const { expected: want } = readCase(id);
    const provider = id.split("/")[0];
    const c = client(mock, provider, { maxRetries: 0, mockOptions: { fixture: id, chunk: 997 } });
    if (want.kind === "stream") {
      // (With every progress event asked for, so their shapes are checked too.)
      const stream = c.stream({
        messages: ask("hi"),
        partial: { tools: true, output: true, files: true },
        responseFormat: { type: "json_schema", schema: { type: "object" } },
      });
      try {
        let i = 0;
        for await (const ev of stream) check(`StreamEvent:${ev.type}`, ev, `${id} event ${i++}`);
        check("Response", await stream.response(), `${id} response`);
      } catch (err) {
        check("SkylError", errorFields(err), `${id} error`);
      }
    } else if (want.kind === "response") {
      check("Response", await c.complete({ messages: ask("hi") }), `${id} response`);
    } else {
      const err = await c.complete({ messages: ask("hi") }).then(
        () => assert.fail(`${id}: expected an error`),
        (e) => e,
      );
      check("SkylError", errorFields(err), `${id} error`);
    }
  }
  // A fallback chain's response names who answered, and who failed before
  // (issue 32): one provider's error status, one's timeout without any.
  const chain = client(mock, "openai", {
    maxRetries: 0,
    timeout: { firstByte: 300 },
    mockOptions: { fail: "529", scenario: "shapes: fallback" },
    fallback: [
      against(mock, "gemini", { mockOptions: { first_byte_delay: 2000 } }),
      against(mock, "anthropic", { mockOptions: { fixture: "anthropic/anthropic-text" } }),
    ],
  });
  check("Response", await chain.complete({ messages: ask("hi") }), "fallback response");
  // And one that fails for good: the error lists who failed before.
  const failing = client(mock, "openai", {
    maxRetries: 0,
    mockOptions: { fail: "503", scenario: "shapes: failing chain 1" },
    fallback: [
      against(mock, "gemini", {
        mockOptions: { fail: "503", scenario: "shapes: failing chain 2" },
      }),
    ],
  });
  const err = await failing.complete({ messages: ask("hi") }).then(
    () => assert.fail("the chain fails"),
    (e) => e,
  );
  check("SkylError", errorFields(err), "failed chain error");

  // A validation error carries its path.
  const invalid = (() => {
    try {
      skyl.validateTool({ name: "" });
    } catch (e) {
      return e;
    }
  })();
  check("SkylError", errorFields(invalid), "validateTool error");

  const OUTPUTS = [
    "Response",
    "Message",
    "ToolCall",
    "IncompleteToolCall",
    "Usage",
    "FailedAttempt",
    "AttemptError",
  ];
  for (const [kind, declared] of shapes) {
    if (!OUTPUTS.includes(kind) && !/^(Part|StreamEvent):/.test(kind)) continue;
    if (INPUT_ONLY.has(kind)) continue;
    const notRecorded = NOT_RECORDED.get(kind) ?? [];
    for (const k of declared.keys()) {
      if (notRecorded.includes(k)) continue;
      if (!seen.get(kind)?.has(k))
        problem("all cases", `${kind}.${k} is declared but never written`);
    }
  }
  assert.deepEqual(
    [...problems].map(([what, where]) => `${what} (${where})`),
    [],
  );
});
