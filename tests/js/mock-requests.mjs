// The mock provider's request readers: what a request body of any wire
// format says, read the same way for all six (see mock-server.mjs).
//
// `readRequest(wire, body)` gives the model one view of any request:
//   tools    [{name, description, schema}]   the client's function tools
//   entries  the conversation, in order:
//            {kind: "user", text, files}     a user turn with words or files
//            {kind: "call", id, name, args}  a call the assistant made
//            {kind: "result", id, name, content, isError}
//   format   null, or {schema} for structured output (schema null: any JSON)
//   thinking false when the request turns reasoning off, else null
//   choice   null (auto), "none", "required", or {name} (that tool)
// A file is {filename, mediaType, data (a Buffer) or url or fileId}.

/** Parses JSON, or gives `fallback`; never throws. */
export function parseJSON(text, fallback = null) {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

// A malformed request may hold anything: the readers keep what has the
// right type and drop the rest.
const str = (v) => (typeof v === "string" ? v : "");
const obj = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : null);

/** The objects of an array. */
const asArray = (v) => (Array.isArray(v) ? v.filter((x) => x && typeof x === "object") : []);

/** Text of a tool result's content: a string, or text blocks joined. */
const contentText = (c) =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
      ? c.map((b) => (typeof b?.text === "string" ? b.text : JSON.stringify(b))).join("")
      : JSON.stringify(c ?? "");

/** A data: URL as {mediaType, data}; null when it is not one. */
function dataURL(url) {
  const m = /^data:([^;,]*)((?:;[^;,]*)*),/.exec(typeof url === "string" ? url : "");
  if (!m) return null;
  const body = url.slice(m[0].length);
  const base64 = /;base64/i.test(m[2]);
  let data;
  try {
    data = base64 ? Buffer.from(body, "base64") : Buffer.from(decodeURIComponent(body), "utf8");
  } catch {
    data = Buffer.from(body, "utf8");
  }
  return { mediaType: m[1] || "application/octet-stream", data };
}

/** A file given as a data: URL, a URL or a stored file id. */
function fileFrom({ filename, mediaType, dataUrl, base64, text, url, fileId }) {
  const fromURL = dataURL(dataUrl);
  const file = {
    filename: str(filename) || null,
    mediaType: str(mediaType) || fromURL?.mediaType || null,
  };
  if (fromURL) file.data = fromURL.data;
  else if (typeof base64 === "string") file.data = Buffer.from(base64, "base64");
  else if (typeof text === "string") file.data = Buffer.from(text, "utf8");
  else if (str(url)) file.url = url;
  else file.fileId = fileId ?? null;
  return file;
}

/** One user message's text and files, from parts of any format. */
function userTurn(texts, files) {
  const text = texts.filter((t) => typeof t === "string").join("\n");
  return text.trim() || files.length ? [{ kind: "user", text, files }] : [];
}

function openaiEntries(req) {
  const out = [];
  for (const m of asArray(req.messages)) {
    if (m.role === "user") {
      const parts = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
      const files = asArray(parts)
        .filter((p) => p.type === "file")
        .map((p) =>
          fileFrom({
            filename: p.file?.filename,
            dataUrl: p.file?.file_data,
            fileId: p.file?.file_id,
          }),
        );
      out.push(
        ...userTurn(
          asArray(parts).map((p) => p.type === "text" && p.text),
          files,
        ),
      );
    } else if (m.role === "assistant") {
      for (const c of asArray(m.tool_calls))
        out.push({
          kind: "call",
          id: c.id,
          name: str(c.function?.name),
          args: obj(parseJSON(c.function?.arguments, {})) ?? {},
        });
    } else if (m.role === "tool") {
      out.push({ kind: "result", id: m.tool_call_id, content: contentText(m.content) });
    }
  }
  return out;
}

function responsesEntries(req) {
  if (typeof req.input === "string") return userTurn([req.input], []);
  const out = [];
  for (const item of asArray(req.input)) {
    const type = item.type ?? "message";
    if (type === "message" && item.role === "user") {
      const parts =
        typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : [];
      parts.push(...asArray(item.content));
      const files = parts
        .filter((p) => p.type === "input_file")
        .map((p) =>
          fileFrom({
            filename: p.filename,
            dataUrl: p.file_data,
            url: p.file_url,
            fileId: p.file_id,
          }),
        );
      out.push(
        ...userTurn(
          parts.map((p) => p.type === "input_text" && p.text),
          files,
        ),
      );
    } else if (type === "function_call" || type === "custom_tool_call") {
      const args = type === "custom_tool_call" ? { input: item.input } : parseJSON(item.arguments);
      out.push({ kind: "call", id: item.call_id, name: str(item.name), args: obj(args) ?? {} });
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      // No error flag in this API: skyl says "Error: …" in the output.
      const text = contentText(item.output);
      const isError = /^Error\b:?\s*/.test(text);
      out.push({
        kind: "result",
        id: item.call_id,
        content: isError ? text.replace(/^Error\b:?\s*/, "") : text,
        isError,
      });
    }
  }
  return out;
}

function anthropicEntries(req) {
  const out = [];
  for (const m of asArray(req.messages)) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "user") {
      const files = [];
      for (const b of asArray(blocks)) {
        if (b.type === "tool_result")
          out.push({
            kind: "result",
            id: b.tool_use_id,
            content: contentText(b.content),
            isError: b.is_error === true,
          });
        if (b.type !== "document") continue;
        const s = b.source ?? {};
        files.push(
          fileFrom({
            filename: b.title,
            mediaType: s.media_type,
            base64: s.type === "base64" ? s.data : undefined,
            text: s.type === "text" ? s.data : undefined,
            url: s.url,
            fileId: s.file_id,
          }),
        );
      }
      out.push(
        ...userTurn(
          asArray(blocks).map((b) => b.type === "text" && b.text),
          files,
        ),
      );
    } else if (m.role === "assistant") {
      for (const b of asArray(blocks))
        if (b.type === "tool_use")
          out.push({ kind: "call", id: b.id, name: str(b.name), args: obj(b.input) ?? {} });
    }
  }
  return out;
}

function geminiEntries(req) {
  const out = [];
  for (const c of asArray(req.contents)) {
    const parts = asArray(c.parts);
    if (c.role === "model") {
      for (const p of parts)
        if (p.functionCall)
          out.push({
            kind: "call",
            id: p.functionCall.id ?? null,
            name: str(p.functionCall.name),
            args: obj(p.functionCall.args) ?? {},
          });
      continue;
    }
    const files = [];
    for (const p of parts) {
      const r = p.functionResponse;
      if (r) {
        const response = obj(r.response) ?? { output: r.response ?? "" };
        const isError = "error" in response && !("output" in response);
        const value = isError ? response.error : "output" in response ? response.output : response;
        out.push({
          kind: "result",
          id: r.id ?? null,
          name: str(r.name),
          content: contentText(value),
          isError,
        });
      }
      if (p.inlineData)
        files.push(fileFrom({ mediaType: p.inlineData.mimeType, base64: p.inlineData.data }));
      if (p.fileData)
        files.push(fileFrom({ mediaType: p.fileData.mimeType, url: p.fileData.fileUri }));
    }
    out.push(
      ...userTurn(
        parts.map((p) => !p.thought && p.text),
        files,
      ),
    );
  }
  return out;
}

/** A Converse `format` as a media type: images, then documents. */
const BEDROCK_TYPES = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  csv: "text/csv",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  html: "text/html",
  txt: "text/plain",
  md: "text/markdown",
};

/**
 * The file of an `image` or `document` block, null for other blocks. A
 * document's `name` has no extension (Converse allows none): the format's
 * is put back, so the model names the file as the client did.
 */
function bedrockFile(b) {
  const f = obj(b.image) ?? obj(b.document);
  if (!f) return null;
  const format = str(f.format).toLowerCase();
  const name = str(f.name);
  const source = obj(f.source) ?? {};
  return fileFrom({
    filename: name && format && !name.includes(".") ? `${name}.${format}` : name,
    mediaType: BEDROCK_TYPES[format] ?? (format ? `application/${format}` : ""),
    base64: source.bytes,
    text: source.text,
    url: source.s3Location?.uri,
  });
}

/** A `toolResult`'s content: its text blocks, and its json blocks as JSON text. */
const toolResultText = (content) =>
  Array.isArray(content)
    ? asArray(content)
        .map((b) =>
          typeof b.text === "string" ? b.text : JSON.stringify("json" in b ? b.json : b),
        )
        .join("")
    : contentText(content);

/** Converse: `messages[].content` blocks; results come in user messages. */
function bedrockEntries(req) {
  const out = [];
  for (const m of asArray(req.messages)) {
    const blocks = asArray(m.content);
    if (m.role === "assistant") {
      for (const u of blocks.map((b) => obj(b.toolUse)).filter(Boolean))
        out.push({ kind: "call", id: u.toolUseId, name: str(u.name), args: obj(u.input) ?? {} });
    } else if (m.role === "user") {
      for (const r of blocks.map((b) => obj(b.toolResult)).filter(Boolean))
        out.push({
          kind: "result",
          id: r.toolUseId,
          content: toolResultText(r.content),
          isError: r.status === "error",
        });
      out.push(
        ...userTurn(
          blocks.map((b) => b.text),
          blocks.map(bedrockFile).filter(Boolean),
        ),
      );
    }
  }
  return out;
}

/** The declared tools in any format: [{name, description, schema}]. */
export function declaredTools(wire, req) {
  const tool = (name, description, schema) => ({
    name: str(name),
    description: str(description),
    schema: obj(schema),
  });
  if (wire === "bedrock")
    // `toolSpec` entries; the cache points between them declare nothing.
    return asArray(obj(req.toolConfig)?.tools)
      .map((t) => obj(t.toolSpec))
      .filter(Boolean)
      .map((s) => tool(s.name, s.description, s.inputSchema?.json));
  if (wire === "gemini")
    return asArray(req.tools)
      .flatMap((t) => asArray(t.functionDeclarations))
      .map((d) => tool(d.name, d.description, d.parametersJsonSchema ?? d.parameters));
  if (wire === "anthropic")
    return (
      asArray(req.tools)
        // Client tools; server tools ({type: "web_search_20250305", ...}) run at Anthropic.
        .filter((t) => !t.type || t.type === "custom")
        .map((t) => tool(t.name, t.description, t.input_schema))
    );
  if (wire === "responses")
    // Flat function tools; hosted tools ({type: "web_search"}, ...) are not the client's.
    return asArray(req.tools)
      .filter((t) => t.type === "function")
      .map((t) => tool(t.name, t.description, t.parameters));
  return asArray(req.tools).map((t) =>
    tool(t.function?.name, t.function?.description, t.function?.parameters),
  );
}

/** The structured output a request asks for: null, or {schema} (null: any JSON object). */
export function responseFormat(wire, req) {
  const f =
    wire === "openai"
      ? req.response_format
      : wire === "responses"
        ? req.text?.format
        : wire === "anthropic"
          ? req.output_config?.format
          : null;
  if (wire === "bedrock") {
    // outputConfig.textFormat; the schema is JSON text (an object is taken too).
    const t = obj(req.outputConfig)?.textFormat;
    if (t?.type !== "json_schema") return null;
    const schema = t.structure?.jsonSchema?.schema;
    return { schema: obj(typeof schema === "string" ? parseJSON(schema) : schema) };
  }
  if (wire === "gemini") {
    const g = req.generationConfig ?? {};
    if (g.responseMimeType !== "application/json") return null;
    return { schema: g.responseJsonSchema ?? g.responseSchema ?? null };
  }
  if (!f || (f.type !== "json_object" && f.type !== "json_schema")) return null;
  return { schema: f.type === "json_schema" ? (f.json_schema?.schema ?? f.schema ?? null) : null };
}

/** False when the request turns reasoning off in its own terms, else null. */
function thinkingSetting(wire, req) {
  if (wire === "anthropic") return req.thinking?.type === "disabled" ? false : null;
  if (wire === "gemini") {
    const t = req.generationConfig?.thinkingConfig ?? {};
    return t.includeThoughts === false || t.thinkingBudget === 0 ? false : null;
  }
  if (wire === "responses") return req.reasoning?.effort === "none" ? false : null;
  if (wire === "bedrock") {
    // The model's own fields: Claude's `thinking`, Nova's and others' reasoning config.
    const f = obj(req.additionalModelRequestFields) ?? {};
    const off = [f.thinking, f.reasoning_config, f.reasoningConfig].some(
      (t) => t?.type === "disabled",
    );
    return off ? false : null;
  }
  return null;
}

/**
 * Whether a Chat Completions request comes from an OpenAI-compatible
 * client rather than one for OpenAI itself: the two share the endpoint, and
 * only a compatible server (DeepSeek and others) streams reasoning_content.
 * skyl's `openaicompat` says `max_tokens` (OpenAI: `max_completion_tokens`)
 * and streams without `stream_options` unless asked for usage.
 */
export function looksCompat(req) {
  return "max_tokens" in req || (req.stream === true && !("stream_options" in req));
}

/** The request's tool choice: null (auto), "none", "required" or {name}. */
function toolChoice(wire, req) {
  if (wire === "bedrock") {
    // {auto: {}}, {any: {}} or {tool: {name}}; Converse has no "none".
    const c = obj(obj(req.toolConfig)?.toolChoice) ?? {};
    if (c.any) return "required";
    return str(c.tool?.name) ? { name: c.tool.name } : null;
  }
  if (wire === "gemini") {
    const c = req.toolConfig?.functionCallingConfig ?? {};
    const names = Array.isArray(c.allowedFunctionNames) ? c.allowedFunctionNames : [];
    if (c.mode === "NONE") return "none";
    if (c.mode === "ANY") return names.length === 1 ? { name: names[0] } : "required";
    return null;
  }
  const c = req.tool_choice;
  if (c === "none" || c?.type === "none") return "none";
  if (c === "required" || c?.type === "any") return "required";
  const name = c?.function?.name ?? (c?.type === "auto" ? null : c?.name);
  return name ? { name } : null;
}

/** One view of a request of any format (see the top of this file). */
export function readRequest(wire, req) {
  const read = {
    openai: openaiEntries,
    responses: responsesEntries,
    anthropic: anthropicEntries,
    bedrock: bedrockEntries,
  };
  return {
    tools: declaredTools(wire, req).filter((t) => t.name),
    entries: (read[wire] ?? geminiEntries)(req),
    format: responseFormat(wire, req),
    thinking: thinkingSetting(wire, req),
    choice: toolChoice(wire, req),
  };
}
