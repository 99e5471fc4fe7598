// The request features beyond tools that the page shows: structured output
// (`responseFormat`) and a PDF sent as a file part.

/** The structured-output example: a JSON Schema every adapter can send. */
export const WEATHER_REPORT = {
  type: "json_schema",
  name: "weather_report",
  description: "A short weather report for one city.",
  strict: true,
  schema: {
    type: "object",
    properties: {
      city: { type: "string" },
      temperatureC: { type: "number" },
      condition: { type: "string" },
      advice: { type: "string" },
    },
    required: ["city", "temperatureC", "condition", "advice"],
    additionalProperties: false,
  },
};

/**
 * Reads a structured answer: the parsed value only when the turn finished
 * normally and the text is one whole JSON value with the schema's required
 * keys. A cut-off answer (finish `length`, an early end) never passes for
 * whole JSON, even when its text happens to parse.
 */
export function readStructured(response, format = WEATHER_REPORT) {
  if (response.finishReason !== "stop")
    return { ok: false, why: `the turn finished with "${response.finishReason}", not "stop"` };
  let value;
  try {
    value = JSON.parse(response.text);
  } catch (e) {
    return { ok: false, why: `the text is not JSON (${e.message})` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    return { ok: false, why: "the text is JSON but not an object" };
  const missing = (format.schema?.required ?? []).filter((k) => !(k in value));
  if (missing.length) return { ok: false, why: `missing ${missing.join(", ")}` };
  return { ok: true, value };
}

const latin1 = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);

/** Escapes a string for a PDF literal: backslash and parentheses. */
const pdfString = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);

/**
 * A one-page PDF with these lines of Helvetica text, built by hand (an
 * uncompressed content stream, a correct xref): a real document for the
 * file-part example, made in the page with no library.
 */
export function makePdf(lines) {
  const text = lines
    .map((l, i) => `${i === 0 ? "BT /F1 16 Tf 36 150 Td" : "0 -24 Td"} (${pdfString(l)}) Tj`)
    .join("\n");
  const content = `${text}\nET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return latin1(out);
}

export function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** The demo invoice, as a file part. */
export function invoicePart() {
  const pdf = makePdf([
    "Invoice 2026-117 from Kampala Coffee Ltd",
    "2 kg of roasted beans at 21.00 EUR per kg",
    "Total due: 42.00 EUR by 15 December 2026",
  ]);
  return { type: "file", mediaType: "application/pdf", filename: "invoice.pdf", data: base64(pdf) };
}

/** A file the user picked, as a file part (PDF or plain text). */
export async function filePart(file) {
  const mediaType = file.type || (file.name.endsWith(".pdf") ? "application/pdf" : "text/plain");
  const bytes = new Uint8Array(await file.arrayBuffer());
  return { type: "file", mediaType, filename: file.name, data: base64(bytes) };
}
