// The OpenAI Responses API's events for a case (bench/inputs.mjs), today's
// shape and the real-shaped one; see bench/README.md for where each field
// comes from.
import { ALNUM, pick, prng } from "./content.mjs";

/**
 * The OpenAI Responses API's events, shaped like the recorded streams in
 * tests/fixtures/conformance/responses/ (OpenAI's field order and every
 * field a real frame carries; see bench/README.md): the whole response in
 * response.created and response.in_progress, a message item (added,
 * content_part.added, output_text deltas, output_text.done,
 * content_part.done, done), then each function call as its own output item
 * one after another, as OpenAI streams parallel calls (added, argument
 * deltas, function_call_arguments.done, done), each keyed by its
 * output_index, and response.completed repeating the whole response with
 * its output and usage. Deltas carry `obfuscation` padding as on the wire.
 *
 * `real`: as OpenAI's 2026 recordings (`openai-client-tool-search.2`,
 * `open-responses-openai-pdf-input-file.1`) write them, each event's
 * fields after `type` in alphabetical order; and a reasoning item first,
 * as a reasoning model sends it with `store: false`
 * (`openai-reasoning-encrypted-content.1`): its `encrypted_content` in
 * the added and done items and a summary streamed in deltas.
 */
export function responsesFrames(c, real = false) {
  const rand = prng(7);
  const hex = (n) => pick(rand, "0123456789abcdef", n);
  const prefix = hex(16);
  const itemId = (kind) => `${kind}_${prefix}${hex(34)}`;
  // Short deltas are padded to 16 characters, longer ones get 1-15 more.
  const obfuscation = (delta) =>
    pick(rand, ALNUM, delta.length < 16 ? 16 - delta.length : 1 + Math.floor(rand() * 15));
  const created = 1767225600;
  const response = (status, output, usage) => ({
    id: `resp_${prefix}${hex(34)}`,
    object: "response",
    created_at: created,
    status,
    background: false,
    completed_at: status === "completed" ? created + 9 : null,
    error: null,
    frequency_penalty: 0,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: "gpt-bench-2026-01-01",
    output,
    parallel_tool_calls: true,
    presence_penalty: 0,
    previous_response_id: null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: real ? "medium" : "none", summary: real ? "detailed" : null },
    safety_identifier: null,
    service_tier: status === "completed" ? "default" : "auto",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: ["search_rows", "fetch_page", "summarize"].map((name) => ({
      type: "function",
      description: null,
      name,
      parameters: { type: "object", properties: {} },
      strict: false,
    })),
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  });
  const respId = response("in_progress", [], null).id;
  const whole = (status, output, usage) => ({ ...response(status, output, usage), id: respId });
  const out = [];
  const ev = (type, fields) => {
    const e = { type, sequence_number: out.length, ...fields };
    if (!real) return out.push(e);
    const sorted = { type };
    for (const k of Object.keys(e).sort()) if (k !== "type") sorted[k] = e[k];
    out.push(sorted);
  };
  ev("response.created", { response: whole("in_progress", [], null) });
  ev("response.in_progress", { response: whole("in_progress", [], null) });
  const output = [];
  let next = 0;
  if (real) {
    const output_index = next++;
    const id = itemId("rs");
    const encrypted_content = `gAAAAAB${pick(rand, `${ALNUM}-_`, 1076)}`;
    const summary =
      "**Planning the lookups**\n\nI'll call the tools for each query, then sum up the rows they return.";
    const item = (s) => ({ id, type: "reasoning", encrypted_content, summary: s });
    ev("response.output_item.added", { output_index, item: item([]) });
    const at = { item_id: id, output_index, summary_index: 0 };
    ev("response.reasoning_summary_part.added", {
      ...at,
      part: { type: "summary_text", text: "" },
    });
    for (const delta of summary.match(/\S*\s*/g).filter(Boolean))
      ev("response.reasoning_summary_text.delta", {
        ...at,
        delta,
        obfuscation: obfuscation(delta),
      });
    ev("response.reasoning_summary_text.done", { ...at, text: summary });
    const part = { type: "summary_text", text: summary };
    ev("response.reasoning_summary_part.done", { ...at, part });
    const done = item([part]);
    ev("response.output_item.done", { output_index, item: done });
    output.push(done);
  }
  // The message.
  const msgId = itemId("msg");
  const text = c.deltas.join("");
  const part = (t) => ({ type: "output_text", annotations: [], logprobs: [], text: t });
  const message = (status, content) => ({
    id: msgId,
    type: "message",
    status,
    content,
    role: "assistant",
  });
  const msgIndex = next++;
  const at = { item_id: msgId, output_index: msgIndex, content_index: 0 };
  ev("response.output_item.added", { output_index: msgIndex, item: message("in_progress", []) });
  ev("response.content_part.added", { ...at, part: part("") });
  for (const delta of c.deltas)
    ev("response.output_text.delta", {
      ...at,
      delta,
      logprobs: [],
      obfuscation: obfuscation(delta),
    });
  ev("response.output_text.done", { ...at, text, logprobs: [] });
  ev("response.content_part.done", { ...at, part: part(text) });
  const done = message("completed", [part(text)]);
  ev("response.output_item.done", { output_index: msgIndex, item: done });
  output.push(done);
  // The calls, one output item each.
  c.calls.forEach((call, i) => {
    const output_index = next++;
    const id = itemId("fc");
    const item = (status, args) => ({
      id,
      type: "function_call",
      status,
      arguments: args,
      call_id: `call_${pick(rand, ALNUM, 24)}`,
      name: call.name,
    });
    const added = item("in_progress", "");
    ev("response.output_item.added", { output_index, item: added });
    for (const delta of c.frags[i])
      ev("response.function_call_arguments.delta", {
        item_id: id,
        output_index,
        delta,
        obfuscation: obfuscation(delta),
      });
    ev("response.function_call_arguments.done", {
      item_id: id,
      output_index,
      arguments: call.args,
    });
    const finished = { ...item("completed", call.args), call_id: added.call_id };
    ev("response.output_item.done", { output_index, item: finished });
    output.push(finished);
  });
  const outputTokens = 2000;
  const reasoningTokens = real ? 320 : 0;
  ev("response.completed", {
    response: whole("completed", output, {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens + reasoningTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: 100 + outputTokens + reasoningTokens,
    }),
  });
  return out.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`);
}
