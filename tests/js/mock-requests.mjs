// The mock provider's request readers: what a request body of any wire
// format says, read the same way for all five (see mock-server.mjs).

/** Tool results found in a request body of any format: [{name?, content}]. */
export function toolResults(wire, req) {
  const out = [];
  if (wire === "openai") {
    for (const m of req.messages ?? [])
      if (m.role === "tool") out.push({ id: m.tool_call_id, content: String(m.content) });
  } else if (wire === "responses") {
    for (const item of Array.isArray(req.input) ? req.input : [])
      if (item.type === "function_call_output" || item.type === "custom_tool_call_output")
        out.push({
          id: item.call_id,
          content: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
        });
  } else if (wire === "anthropic") {
    for (const m of req.messages ?? [])
      for (const b of Array.isArray(m.content) ? m.content : [])
        if (b.type === "tool_result")
          out.push({
            id: b.tool_use_id,
            content: typeof b.content === "string" ? b.content : JSON.stringify(b.content),
          });
  } else {
    for (const c of req.contents ?? [])
      for (const p of c.parts ?? [])
        if (p.functionResponse)
          out.push({
            id: p.functionResponse.name,
            content: JSON.stringify(p.functionResponse.response),
          });
  }
  return out;
}

/** The declared tools in any format: [{name, description, schema}]. */
export function declaredTools(wire, req) {
  if (wire === "gemini")
    return (req.tools ?? [])
      .flatMap((t) => t.functionDeclarations ?? [])
      .map((d) => ({
        name: d.name,
        description: d.description ?? "",
        schema: d.parametersJsonSchema ?? d.parameters,
      }));
  if (wire === "anthropic")
    return (req.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? "",
      schema: t.input_schema,
    }));
  if (wire === "responses")
    // Flat function tools; hosted tools ({type: "web_search"}, ...) are not the client's.
    return (req.tools ?? [])
      .filter((t) => t.type === "function")
      .map((t) => ({ name: t.name, description: t.description ?? "", schema: t.parameters }));
  return (req.tools ?? []).map((t) => ({
    name: t.function?.name,
    description: t.function?.description ?? "",
    schema: t.function?.parameters,
  }));
}

/** The last user text of a request in any format. */
export function lastUserText(wire, req) {
  const texts = [];
  if (wire === "gemini") {
    for (const c of req.contents ?? [])
      if (c.role === "user") for (const p of c.parts ?? []) if (p.text) texts.push(p.text);
  } else if (wire === "responses") {
    for (const item of Array.isArray(req.input) ? req.input : []) {
      if (item.role !== "user") continue;
      if (typeof item.content === "string") texts.push(item.content);
      else for (const c of item.content ?? []) if (c.type === "input_text") texts.push(c.text);
    }
    if (typeof req.input === "string") texts.push(req.input);
  } else {
    for (const m of req.messages ?? []) {
      if (m.role !== "user") continue;
      if (typeof m.content === "string") texts.push(m.content);
      else for (const b of m.content ?? []) if (b.type === "text") texts.push(b.text);
    }
  }
  return texts.at(-1) ?? "";
}
