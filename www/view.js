// What the page draws: messages, reasoning, tool-call cards, finish lines and
// the event log. Shared by the chat and the recorded-streams panel.

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function pretty(json) {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return String(json);
  }
}

/** A scrolling column of nodes (the chat, a replay's transcript). */
export class Column {
  constructor(root, empty) {
    this.root = root;
    this.empty = empty;
  }
  add(node) {
    if (this.empty) this.empty.hidden = true;
    this.root.append(node);
    this.root.scrollTop = this.root.scrollHeight;
    return node;
  }
  clear() {
    this.root.replaceChildren(...(this.empty ? [this.empty] : []));
    if (this.empty) this.empty.hidden = false;
  }
}

/** A tool call's card: name, state, arguments; later its result. */
export function toolCard(call, state = "running…") {
  const card = el("div", "card");
  card.dataset.call = call.id;
  const head = el("div", "head");
  head.append(el("span", "name", call.name), el("span", "state", state));
  card.append(head, el("div", "label", "arguments"), el("pre", "args", pretty(call.arguments)));
  return card;
}

/** Sets a card's state line: `kind` is "ok", "err", "warn" or "" (neutral). */
export function setCardState(card, text, kind = "") {
  const state = card.querySelector(".state");
  state.textContent = text;
  state.className = `state ${kind}`.trim();
}

export function cardSection(card, label, text, cls = "result") {
  card.append(el("div", "label", label), el("pre", cls, text));
}

/** A call that was cut off: what arrived, marked as never executable. */
export function incompleteCard(call) {
  const card = el("div", "card incomplete");
  const head = el("div", "head");
  head.append(
    el("span", "name", call.name || "(no name yet)"),
    el("span", "state err", "incomplete · not run"),
  );
  card.append(
    head,
    el("div", "label", "arguments received before the cut"),
    el("pre", "args", call.arguments || "(none)"),
  );
  return card;
}

/** A file's bytes as a URL an <img> can show: a data: URL of its base64. */
export const fileURL = (file) => file.url ?? `data:${file.mediaType};base64,${file.data ?? ""}`;

/** The size of base64 `data` in bytes, as people read it: "684 bytes", "2.0 MiB". */
export function fileSize(data = "") {
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const n = Math.floor((data.length * 3) / 4) - pad;
  return n < 1024
    ? `${n} bytes`
    : n < 1048576
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / 1048576).toFixed(1)} MiB`;
}

/**
 * A generated image's figure: the picture and a caption. `state` is
 * "partial N" (a lower-detail version while the image is made) or "final".
 */
export function imageFigure() {
  const figure = el("figure", "generated");
  const img = el("img");
  img.alt = "an image the model made";
  figure.append(img, el("figcaption"));
  return figure;
}

/** Shows `file` in a figure from imageFigure(), in the given state. */
export function showImage(figure, file, state, note) {
  figure.dataset.state = state;
  figure.classList.toggle("partial", state !== "final");
  const img = figure.querySelector("img");
  img.src = fileURL(file);
  if (state === "final") img.alt = `an image the model made (${file.mediaType})`;
  figure.querySelector("figcaption").textContent =
    `${note} · ${file.mediaType}, ${fileSize(file.data)}`;
}

/** "finish: stop (end_turn) · tokens in 12 / out 34" */
export function finishLine(response) {
  const u = response.usage ?? {};
  const raw = response.rawFinishReason ? ` (${response.rawFinishReason})` : "";
  // (With a fallback chain, who answered when it was not the first.)
  const by = response.attempts?.length ? ` · answered by ${response.provider}` : "";
  return `finish: ${response.finishReason}${raw} · tokens in ${u.input ?? "?"} / out ${u.output ?? "?"}${by}`;
}

/** Sources a response's text parts carry (Anthropic citations, Responses annotations). */
export function sourcesOf(response) {
  const out = [];
  for (const part of response.message?.parts ?? []) {
    if (part.type !== "text" || !part.providerData) continue;
    for (const data of Object.values(part.providerData)) {
      for (const s of [...(data?.citations ?? []), ...(data?.annotations ?? [])]) {
        const url = s?.url ?? s?.source ?? "";
        const title = s?.title ?? s?.cited_text ?? url;
        if (url || title) out.push({ url, title: String(title).slice(0, 140) });
      }
    }
  }
  const seen = new Set();
  return out.filter((s) => !seen.has(s.url + s.title) && seen.add(s.url + s.title));
}

/** One line of summary for an event in the log. */
function summary(ev) {
  switch (ev.type) {
    case "text":
    case "reasoning":
      return JSON.stringify(ev.text);
    case "tool_call":
      return `${ev.call.name}(${ev.call.arguments})`;
    case "usage":
      return `in ${ev.usage.input ?? "?"} / out ${ev.usage.output ?? "?"}`;
    case "warning":
      return `${ev.code}: ${ev.message}`;
    case "file":
    case "file_partial":
      return `${ev.type === "file" ? "" : `partial ${ev.index + 1} · `}${ev.file.mediaType}, ${fileSize(ev.file.data)}`;
    case "finish":
      return finishLine(ev.response);
    default:
      return "";
  }
}

/** The event log: one row per event skyl handed out, with its raw provider frame. */
export class EventLog {
  constructor(list) {
    this.list = list;
    this.count = 0;
  }
  clear() {
    this.list.replaceChildren();
    this.count = 0;
  }
  add(ev) {
    this.count++;
    const row = el("li", `ev ev-${ev.type}`);
    row.append(el("span", "n", String(this.count)), el("span", "type", ev.type));
    row.append(el("span", "sum", summary(ev)));
    if (ev.raw !== undefined) row.append(el("pre", "raw", ev.raw));
    this.list.append(row);
    this.list.scrollTop = this.list.scrollHeight;
  }
  note(text, cls = "") {
    this.list.append(el("li", `ev note ${cls}`.trim(), text));
  }
}

/** Draws streamed events into a column: text bubbles, reasoning, call cards. */
export class Transcript {
  constructor(column) {
    this.column = column;
    this.bubble = null;
    this.thinking = null;
    /** Cards of calls still streaming (`partial: { tools: true }`), by id. */
    this.streaming = new Map();
    /** The figure of an image still being made (its partial images so far). */
    this.drawing = null;
  }
  /** Applies one event; returns the card for a tool_call. */
  event(ev) {
    if (ev.type === "text") {
      this.thinking = null;
      this.bubble ??= this.column.add(el("div", "msg assistant streaming"));
      this.bubble.textContent += ev.text;
    } else if (ev.type === "reasoning") {
      this.endBubble();
      this.thinking ??= this.column.add(el("div", "reasoning"));
      this.thinking.textContent += ev.text;
    } else if (ev.type === "tool_call_start") {
      // A progress event: the card shows what streams, and cannot run.
      this.endBubble();
      this.thinking = null;
      const card = this.column.add(
        toolCard({ ...ev, arguments: "{}" }, "streaming · not runnable yet"),
      );
      card.classList.add("partial");
      this.streaming.set(ev.id, { card, partial: undefined, drawn: true });
    } else if (ev.type === "tool_call_delta") {
      // The arguments so far (a path shows before the content that follows
      // it), drawn at most once a frame.
      const s = this.streaming.get(ev.id);
      if (s) {
        s.partial = ev.partial;
        if (s.drawn) {
          s.drawn = false;
          requestAnimationFrame(() => {
            s.drawn = true;
            if (s.card.classList.contains("partial"))
              s.card.querySelector("pre.args").textContent = JSON.stringify(
                s.partial ?? {},
                null,
                2,
              );
          });
        }
      }
    } else if (ev.type === "tool_call") {
      this.endBubble();
      this.thinking = null;
      const s = this.streaming.get(ev.call.id);
      this.streaming.delete(ev.call.id);
      if (!s) return this.column.add(toolCard(ev.call, "whole · not run yet"));
      // Whole: only now is it a call.
      s.card.classList.remove("partial");
      s.card.querySelector("pre.args").textContent = pretty(ev.call.arguments);
      setCardState(s.card, "whole · not run yet");
      return s.card;
    } else if (ev.type === "file_partial") {
      // A lower-detail version of an image on its way (`partial: { files:
      // true }`): shown until the file itself comes, never part of the turn.
      this.endBubble();
      this.drawing ??= this.column.add(imageFigure());
      showImage(
        this.drawing,
        ev.file,
        `partial ${ev.index + 1}`,
        `partial image ${ev.index + 1}, lower detail`,
      );
    } else if (ev.type === "file") {
      // The image, whole: it replaces its partial images.
      this.endBubble();
      const figure = this.drawing ?? this.column.add(imageFigure());
      this.drawing = null;
      showImage(figure, ev.file, "final", "generated image");
    } else if (ev.type === "warning") {
      this.column.add(el("div", "meta warn", `warning ${ev.code}: ${ev.message}`));
    }
    return null;
  }
  endBubble() {
    this.bubble?.classList.remove("streaming");
    this.bubble = null;
  }
  /** After a stream, with the final response: usage, finish, sources. */
  finish(response) {
    this.endBubble();
    // Calls that streamed and never came whole: cut off, never runnable.
    for (const { card } of this.streaming.values()) {
      card.classList.remove("partial");
      card.classList.add("incomplete");
      setCardState(card, "cut off · never runnable", "err");
    }
    this.streaming.clear();
    // Partial images whose file never came (the turn was cut): not an image of the turn.
    if (this.drawing) {
      this.drawing.classList.add("incomplete");
      this.drawing.querySelector("figcaption").textContent =
        "partial image only: the image never came whole";
      this.drawing = null;
    }
    this.column.add(el("div", "meta", finishLine(response)));
    const sources = sourcesOf(response);
    if (sources.length) {
      const box = this.column.add(el("div", "sources"));
      box.append(el("div", "label", `sources (${sources.length})`));
      const list = el("ol");
      for (const s of sources.slice(0, 8)) {
        const li = el("li");
        if (/^https?:\/\//.test(s.url)) {
          const a = el("a", "", s.title || s.url);
          a.href = s.url;
          a.target = "_blank";
          a.rel = "noopener noreferrer";
          li.append(a);
        } else li.textContent = s.title;
        list.append(li);
      }
      box.append(list);
    }
    const kept = (response.message?.parts ?? []).filter((p) => p.type === "provider");
    if (kept.length)
      this.column.add(
        el(
          "div",
          "meta",
          `${kept.length} provider block(s) kept for replay (server tools, results, encrypted items)`,
        ),
      );
  }
}
