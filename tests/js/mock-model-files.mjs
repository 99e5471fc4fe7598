// What the mock model can tell about an attached file: its name, media
// type and size, a text file's text, and for a PDF the page count and the
// text that uncompressed content streams show with Tj, TJ, ' and ". The PDF
// reader is enough for a simple PDF made by hand or by a page; it is
// bounded and never throws, so any bytes can be given to it.

const MAX_BYTES = 8 * 1024 * 1024;
const MAX_TEXT = 20_000;
const MAX_STREAMS = 2_000;

/** Reads `bytes`: {pdf, pages (null if unknown), text, compressed (some content not read)}. */
export function readPdf(bytes) {
  const out = { pdf: false, pages: null, text: "", compressed: false };
  try {
    const s = Buffer.from(bytes.subarray(0, MAX_BYTES)).toString("latin1");
    out.pdf = s.startsWith("%PDF-");
    if (!out.pdf) return out;
    out.pages = pageCount(s);
    const texts = [];
    let size = 0;
    for (const { dict, body } of streams(s)) {
      if (/\/Filter\b/.test(dict)) {
        out.compressed = true;
        continue;
      }
      // Fonts, images and other data streams hold no text operators.
      if (/\/(?:Length1|Width|FontFile)\b/.test(dict)) continue;
      const t = showText(body);
      if (!t) continue;
      texts.push(t);
      size += t.length;
      if (size > MAX_TEXT) break;
    }
    out.text = texts.join(" ").replace(/\s+/g, " ").trim().slice(0, MAX_TEXT);
  } catch {
    // A reader for a mock: what was read so far is the answer.
  }
  return out;
}

/** Page objects (/Type /Page), else the largest /Count of a page tree. */
function pageCount(s) {
  const pages = s.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  if (pages) return pages;
  const counts = [...s.matchAll(/\/Count\s+(\d+)/g)].map((m) => Number(m[1]));
  return counts.length ? Math.max(...counts) : null;
}

/** Each `stream … endstream` with the dictionary before it. */
function* streams(s) {
  let from = 0;
  for (let n = 0; n < MAX_STREAMS; n++) {
    const at = s.indexOf("stream", from);
    if (at < 0) return;
    from = at + 6;
    if (s.startsWith("endstream", at - 3)) continue;
    let start = at + 6;
    if (s[start] === "\r") start++;
    if (s[start] === "\n") start++;
    const end = s.indexOf("endstream", start);
    if (end < 0) return;
    const dictStart = s.lastIndexOf("obj", at);
    yield { dict: s.slice(Math.max(dictStart, at - 2048, 0), at), body: s.slice(start, end) };
    from = end + 9;
  }
}

/** The text a content stream shows, lines joined by spaces. */
function showText(body) {
  const parts = [];
  let operands = [];
  let i = 0;
  const n = body.length;
  const push = (t) => {
    if (t) parts.push(t);
  };
  while (i < n) {
    const c = body[i];
    if (c === "(") {
      const [str, next] = literal(body, i);
      operands.push(str);
      i = next;
    } else if (c === "<" && body[i + 1] !== "<") {
      const end = body.indexOf(">", i);
      operands.push(hexString(body.slice(i + 1, end < 0 ? n : end)));
      i = end < 0 ? n : end + 1;
    } else if (c === "[") {
      operands.push({ array: true, start: operands.length });
      i++;
    } else if (c === "]") {
      const mark = operands.findLastIndex((o) => o?.array);
      const items = mark < 0 ? [] : operands.slice(mark + 1);
      if (mark >= 0) operands = operands.slice(0, mark);
      // A large negative kerning number is a space between words.
      operands.push(
        items.map((x) => (typeof x === "number" ? (x < -200 ? " " : "") : String(x))).join(""),
      );
      i++;
    } else if (c === "%") {
      while (i < n && body[i] !== "\n" && body[i] !== "\r") i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === "/") {
      let j = i + 1;
      while (j < n && !/[\s()<>[\]/%{}]/.test(body[j])) j++;
      operands.push(body.slice(i, j));
      i = j;
    } else {
      let j = i;
      while (j < n && !/[\s()<>[\]/%]/.test(body[j])) j++;
      if (j === i) j++;
      const word = body.slice(i, j);
      i = j;
      if (/^[-+]?(?:\d+\.?\d*|\.\d+)$/.test(word)) {
        operands.push(Number(word));
        continue;
      }
      if (word === "Tj" || word === "TJ" || word === "'" || word === '"') {
        const str = operands.findLast((o) => typeof o === "string");
        push(str);
      } else if (word === "ET" || word === "T*" || word === "Td" || word === "TD") {
        if (parts.length && parts.at(-1) !== " ") parts.push(" ");
      }
      operands = [];
    }
  }
  return parts.join("").trim();
}

const ESCAPES = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", "(": "(", ")": ")", "\\": "\\" };

/** A literal string starting at `i` ("(" … ")"): [text, index after it]. */
function literal(s, i) {
  let depth = 0;
  let out = "";
  let j = i;
  for (; j < s.length; j++) {
    const c = s[j];
    if (c === "\\") {
      const d = s[j + 1];
      if (d in ESCAPES) {
        out += ESCAPES[d];
        j++;
      } else if (/[0-7]/.test(d)) {
        const oct = /^[0-7]{1,3}/.exec(s.slice(j + 1, j + 4))[0];
        out += String.fromCharCode(Number.parseInt(oct, 8));
        j += oct.length;
      } else if (d === "\r" || d === "\n") {
        j += d === "\r" && s[j + 2] === "\n" ? 2 : 1;
      }
      continue;
    }
    if (c === "(") {
      depth++;
      if (depth === 1) continue;
    } else if (c === ")") {
      depth--;
      if (depth === 0) return [decode(out), j + 1];
    }
    out += c;
  }
  return [decode(out), j];
}

/** A hex string's text. */
function hexString(hex) {
  const h = hex.replace(/[^0-9a-fA-F]/g, "");
  let out = "";
  for (let k = 0; k < h.length; k += 2)
    out += String.fromCharCode(Number.parseInt(h.slice(k, k + 2).padEnd(2, "0"), 16));
  return decode(out);
}

/** UTF-16BE when it says so with a BOM, else PDFDocEncoding read as Latin-1. */
function decode(bin) {
  if (bin.charCodeAt(0) !== 0xfe || bin.charCodeAt(1) !== 0xff) return bin;
  let out = "";
  for (let k = 2; k + 1 < bin.length; k += 2)
    out += String.fromCharCode((bin.charCodeAt(k) << 8) | bin.charCodeAt(k + 1));
  return out;
}

const quote = (t, max = 300) => `"${t.length > max ? `${t.slice(0, max)}…` : t}"`;

/** The facts of one attached file: {filename, mediaType, size, pages, text, kind}. */
export function fileFacts(file) {
  const mediaType = file.mediaType ?? "application/octet-stream";
  const facts = { filename: file.filename, mediaType, size: file.data?.length ?? null };
  if (!file.data)
    return { ...facts, kind: file.url ? "url" : "stored", ref: file.url ?? file.fileId };
  const pdf = readPdf(file.data);
  if (pdf.pdf || mediaType === "application/pdf")
    return { ...facts, kind: "pdf", pages: pdf.pages, text: pdf.text, compressed: pdf.compressed };
  if (/^text\/|json|xml|csv/.test(mediaType))
    return { ...facts, kind: "text", text: file.data.toString("utf8").replace(/\s+/g, " ").trim() };
  return { ...facts, kind: mediaType.startsWith("image/") ? "image" : "binary" };
}

/** One sentence or two about a file, from its facts. */
export function describeFile(f) {
  const name = f.filename ?? "The attached file";
  if (f.kind === "url")
    return `${name === "The attached file" ? "The linked file" : name} (${f.mediaType}) is at ${f.ref}; I cannot fetch it from here, so I cannot say what it holds.`;
  if (f.kind === "stored")
    return `${name} is a stored file (${f.ref ?? "no id"}) that I cannot open here.`;
  const what = `${name} (${f.mediaType}, ${f.size} bytes)`;
  if (f.kind === "pdf") {
    const pages = f.pages == null ? "" : ` with ${f.pages} page${f.pages === 1 ? "" : "s"}`;
    if (f.text) return `${what} is a PDF${pages}. Its text reads: ${quote(f.text)}.`;
    const why = f.compressed
      ? "its content is compressed, which I cannot read"
      : "I found no text in it";
    return `${what} is a PDF${pages}, but ${why}.`;
  }
  if (f.kind === "text")
    return f.text
      ? `${what} is a text file. It reads: ${quote(f.text)}.`
      : `${what} is an empty text file.`;
  if (f.kind === "image") return `${what} is an image; I cannot see images.`;
  return `${what} is a binary file I cannot read.`;
}
