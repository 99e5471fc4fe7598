// The boundary format: what the WebAssembly functions return
// (src/shell/mod.rs, src/shell/run.rs and src/shell/boundary.rs, wrapped
// one line each in src/shell/wasm.rs), and its reader; both halves check
// BOUNDARY_VERSION. Numbers and strings in,
// strings out; failures are `{"error": ErrorInfo}` (name, code, message,
// provider, retryable, inBand, eventsEmitted, and when known status,
// providerType, providerCode, param, requestId, retryAfterMs, path,
// partial, body), never exceptions; errors.js makes the class from `name`.
//
//   validate(kind, json)    `""` if valid, else `{"error"}`.
//   new Run(config, request, stream, maxRetries, totalMs, firstByteMs,
//       idleMs, seed), Run.given(provider, totalMs, idleMs)    one request:
//       the core's run machine (src/run.rs, wrapped by src/shell/run.rs).
//       Each input returns the next step, a number of `STEP` (policy.js),
//       and takeOutput() is that step's text:
//       - SEND: `{"ok":{"url":..,"headers":[[name, value], ...]}}`, a NUL,
//         then the HTTP body as it is (JSON text never holds a raw NUL, so
//         the body is neither escaped into the JSON nor parsed back out)
//                                                             -> encoded()
//       - DELIVER: a stream result (below); DONE: `{"response": Response}`
//         for a whole response (every field), `""` for a stream (its
//         response went out with its `finish` event); FAIL: `{"error"}`.
//       The inputs: start() (start(true) only checks the request, before
//       a first token exchange), responded(status, headers, nowMs)
//       (`headers` `[[name, value], ...]` as JSON, `nowMs` the clock for
//       a `retry-after` that is a date), a chunk through the input buffer
//       (inputBuffer(n): the address of at least n bytes in wasm memory,
//       moved only when a larger one is asked for; feedInput(n) decodes
//       the first n), and input(code, cause?) for the rest (`INPUT`:
//       ENDED, DELIVERED, WAITED, and UNREACHABLE and LOST with their
//       cause). expired(total) and abort(reason) return
//       what to cancel (`CANCEL`); stopped() is then the error.
//       timerMs(false) is the limit of the timer that runs during the
//       current step (of a WAIT: the wait), timerMs(true) the total one.
//
// A stream result (BoundaryStream::feed and ::finish in src/shell/boundary.rs):
//
//   the events' strings, concatenated, then a NUL, then
//   {"events":[..],"lens":[..](,"argsFromEvents":true)(,"filesFromEvents":true)(,"error":{..}|,"done":true)}
// A run's result keeps a string over 64 KiB apart: its length is -1, and
// the run's takeApart() gives it, in order (`apart`), as a JS string made
// straight from wasm memory, so that one large event is not copied there.
// (The JSON part never holds a NUL unescaped: decoded() finds the last
// one. Strings first, so that a large event's strings become the result
// in wasm without a copy.)
//
// Each event's strings are left out of the JSON (empty there) and follow
// it, so they are never escaped or parsed: `lens` gives each one's length
// in UTF-16 code units (what String.prototype.slice counts), and they come
// in event order, for each event:
//   - its `raw` frame, first, for every event;
//   - a text or reasoning event, written as the number 0 or 1 in `events`:
//     then its `text` (decoded() builds `{type, text, raw}`);
//   - a `tool_call` event (`{"type":"tool_call","call":{id, name, ..}}`):
//     then its call's `arguments`;
//   - a `file` or `file_partial` event: then its file's base64 `data`;
//   - a `finish` event: then, for each part of `response.message.parts` in
//     order, the `text` of a text or reasoning part, the `arguments` of
//     a tool-call part and the `data` of a file part. With
//     `"argsFromEvents": true` the tool-call parts' arguments are not sent
//     again: they are those of this decoder's `tool_call` events, in order
//     (the core emits one per tool-call part, with the same arguments; the
//     flag is set when the counts agree), kept across results in the run's
//     `sent`; with `"filesFromEvents": true`, likewise the file parts' data
//     (from the `file` events, kept in the progress state's `files`);
//   - a progress event, written as an array: `[2, index, edits]` for a
//     `tool_call_delta` (its id is that of the call's `tool_call_start`,
//     by index), then its `argumentsDelta`; `[3, edits]` for an
//     `output_delta`; then, for each edit that appends, its text;
//   - `usage`, `warning` and `tool_call_start` events: nothing more.
// A progress event's `edits` say how the value read so far changed:
// `[0, path, value]` sets the value at the path (the whole value for
// `[]`), `[1, path]` appends the edit's text to the string there; a path
// lists keys and indices. decoded() applies them to the value it keeps for
// the call (by its index) or the answer, copying only the objects and
// arrays on the paths, and hands the result out as `partial`: a new value
// when an edit changed it (the same one for an event without edits),
// sharing what did not change.
// Every other string (ids and names, a warning's code and message,
// incompleteToolCalls' arguments, providerData) stays in the JSON. The
// finish event's response is compact: without
// `text`, `reasoning`, `toolCalls` and `files`, which repeat the parts;
// completeResponse() derives them. Events before a failure are listed with
// the `error`. `expand_result` (src/shell/expand.rs) is the Rust reading of the same
// format, which the native tests hold to the decoder.

import * as wasm from "./skyl_wasm.js";
import { call } from "./guard.js";
import { localError, SkylError } from "./errors.js";

/**
 * The version of this format; the Rust half's is `BOUNDARY_VERSION` in
 * src/shell/boundary.rs, returned by `boundaryVersion()`. Both change
 * together, whenever the format does.
 */
export const BOUNDARY_VERSION = 7;

let versionChecked = false;

/**
 * Refuses a WebAssembly module that speaks another version of this format
 * (JS and wasm from different builds), once, before its first result is read.
 */
function checkVersion() {
  if (versionChecked) return;
  const theirs = call(() => wasm.boundaryVersion());
  if (theirs !== BOUNDARY_VERSION) {
    throw new SkylError(
      localError(
        "SkylError",
        "version_mismatch",
        `skyl's JavaScript (boundary format ${BOUNDARY_VERSION}) and WebAssembly module (format ${theirs}) come from different builds: install the package again`,
      ),
    );
  }
  versionChecked = true;
}

/** A JSON result of the boundary, parsed. */
export function parse(json) {
  checkVersion();
  return JSON.parse(json);
}

/** A SEND step's output: `{ ok: { url, headers, body } }` or `{ error }`. */
export function encoded(text) {
  const cut = text.indexOf("\0");
  const out = parse(cut < 0 ? text : text.slice(0, cut));
  if (!out.error) out.ok.body = text.slice(cut + 1);
  return out;
}

/**
 * Completes a `finish` event's response: the decoder leaves out what the
 * message already holds (text, reasoning, tool calls), exactly as the core
 * derives them, and it is rebuilt here in the documented key order.
 */
export function completeResponse(r) {
  let text = "";
  let reasoning = "";
  const toolCalls = [];
  const files = [];
  for (const p of r.message.parts) {
    if (p.type === "text") text += p.text;
    else if (p.type === "reasoning") reasoning += p.text;
    else if (p.type === "tool_call")
      toolCalls.push({ id: p.id, name: p.name, arguments: p.arguments });
    else if (p.type === "file") files.push(p);
  }
  const out = {};
  if (r.id !== undefined) out.id = r.id;
  if (r.model !== undefined) out.model = r.model;
  out.message = r.message;
  out.text = text;
  if (reasoning) out.reasoning = reasoning;
  out.toolCalls = toolCalls;
  if (files.length) out.files = files;
  for (const k of [
    "incompleteToolCalls",
    "refusal",
    "usage",
    "finishReason",
    "rawFinishReason",
    "provider",
    "attempts",
  ]) {
    if (r[k] !== undefined) out[k] = r[k];
  }
  return out;
}

/**
 * Fills in an error's partial response with its files' data: a stream's
 * file parts come from the core with an empty `data` (each is in its
 * `file` event, which `progress.files` kept in order), so that wasm holds
 * an image once.
 */
export function withFiles(partial, progress) {
  for (const list of [partial?.message?.parts, partial?.files]) {
    let f = 0;
    for (const p of list ?? []) {
      if (p.type !== "file" || p.data === undefined) continue;
      if (p.data === "" && f < progress.files.length) p.data = progress.files[f];
      f++;
    }
  }
}

/** A copy of an object or array, one level deep. */
const shallow = (x) => (Array.isArray(x) ? x.slice() : { ...x });
const FIELD = { writable: true, enumerable: true, configurable: true };

/**
 * What decoded() keeps from one result of a run to the next for progress
 * events: the value read so far of each call (by index) and of the answer
 * (`"output"`), each call's id (by index, from its `tool_call_start`), and
 * the data of the `file` events (for a finish with `filesFromEvents`).
 */
export function progressState() {
  return { values: new Map(), ids: [], files: [] };
}

/**
 * Applies a progress event's edits to the value `state` keeps under `key`
 * (an appended text is the event's next string, `next()`); returns the new
 * value. Containers on an edited path are copied once per event (the last
 * event's value is never changed); the rest is shared.
 */
function edited(state, key, edits, next) {
  let root = state.values.get(key);
  // One edit (the usual case) copies its whole path: nothing is fresh yet.
  const fresh = edits.length > 1 ? new Set() : null;
  const mark = (x) => {
    if (fresh !== null && typeof x === "object" && x !== null) fresh.add(x);
    return x;
  };
  const own = (x) => (fresh?.has(x) ? x : mark(shallow(x)));
  for (const e of edits) {
    const path = e[1];
    const v = e[0] === 0 ? e[2] : next();
    if (path.length === 0) {
      root = mark(e[0] === 0 ? v : root + v);
      continue;
    }
    root = own(root);
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      const child = own(node[path[i]]);
      node[path[i]] = child;
      node = child;
    }
    const last = path[path.length - 1];
    // (A key "__proto__" is the object's own, as JSON.parse makes it:
    // defined, not set, which would change the object's prototype.)
    if (e[0] !== 0) node[last] += v;
    else if (last === "__proto__") Object.defineProperty(node, last, { ...FIELD, value: mark(v) });
    else node[last] = mark(v);
  }
  state.values.set(key, root);
  return root;
}

/**
 * A stream result (see the top of this file) as `{ events, error?, done?,
 * response? }`: the strings sliced back in, text and reasoning events
 * built, `response` the finish event's when `done`. `sent` holds the
 * arguments of the decoder's tool_call events so far (appended to);
 * `progress` what progress events need from earlier results
 * (progressState()); `apart()` the next string the result kept apart.
 */
export function decoded(text, sent, progress = progressState(), apart = null) {
  const one = oneTextEvent(text);
  if (one !== null) return one;
  const cut = text.lastIndexOf("\0");
  const out = JSON.parse(text.slice(cut + 1));
  const lens = out.lens;
  let at = 0;
  let k = 0;
  const next = () => {
    const n = lens[k++];
    if (n < 0) return apart();
    const from = at;
    at += n;
    return text.slice(from, at);
  };
  const events = out.events;
  for (let i = 0; i < events.length; i++) {
    const ev = events[i];
    if (typeof ev === "number") {
      // A text (0) or reasoning (1) event: its frame, then its text.
      const raw = next();
      events[i] = { type: ev === 0 ? "text" : "reasoning", text: next(), raw };
      continue;
    }
    if (Array.isArray(ev)) {
      // A progress event: its frame, its text (a delta's), its edits' texts.
      const raw = next();
      let e;
      if (ev[0] === 2) {
        const index = ev[1];
        e = { type: "tool_call_delta", id: progress.ids[index], index, argumentsDelta: next() };
        const partial = edited(progress, index, ev[2], next);
        if (partial !== undefined) e.partial = partial;
      } else {
        e = { type: "output_delta" };
        const partial = edited(progress, "output", ev[1], next);
        if (partial !== undefined) e.partial = partial;
      }
      e.raw = raw;
      events[i] = e;
      continue;
    }
    ev.raw = next();
    switch (ev.type) {
      case "tool_call_start":
        progress.ids[ev.index] = ev.id;
        break;
      case "tool_call":
        ev.call.arguments = next();
        sent.push(ev.call.arguments);
        break;
      case "file":
        if (ev.file.data !== undefined) {
          ev.file.data = next();
          progress.files.push(ev.file.data);
        }
        break;
      case "file_partial":
        if (ev.file.data !== undefined) ev.file.data = next();
        break;
      case "finish": {
        let c = 0;
        let f = 0;
        for (const p of ev.response.message.parts) {
          if (p.type === "text" || p.type === "reasoning") p.text = next();
          else if (p.type === "tool_call") p.arguments = out.argsFromEvents ? sent[c++] : next();
          else if (p.type === "file" && p.data !== undefined)
            p.data = out.filesFromEvents ? progress.files[f++] : next();
        }
        ev.response = completeResponse(ev.response);
      }
    }
  }
  // (lens stays: `delete` would drop the object into V8's slow mode.)
  if (out.done) out.response = out.events.at(-1)?.response;
  return out;
}

/** How the decoder writes the commonest result: one text event, nothing else. */
const ONE_TEXT = '{"events":[0],"lens":[';

/**
 * The commonest result, one text event and nothing else (the raw frame,
 * the text, a NUL, `{"events":[0],"lens":[R,T]}`), read without
 * JSON.parse; `null` for any other result, which decoded() reads in full.
 * (Measured: JSON.parse of this small index was most of decoded()'s cost
 * per text event; bench/README.md.)
 */
function oneTextEvent(text) {
  const cut = text.lastIndexOf("\0");
  if (cut < 0 || !text.startsWith(ONE_TEXT, cut + 1)) return null;
  let at = cut + 1 + ONE_TEXT.length;
  const first = at;
  let raw = 0;
  let c = text.charCodeAt(at);
  for (; c >= 48 && c <= 57; c = text.charCodeAt(++at)) raw = raw * 10 + c - 48;
  if (c !== 44 || at === first) return null; // ","
  const from = ++at;
  let len = 0;
  c = text.charCodeAt(at);
  for (; c >= 48 && c <= 57; c = text.charCodeAt(++at)) len = len * 10 + c - 48;
  // "]}" and nothing after the lengths; the strings fill what is before.
  if (at === from || c !== 93 || text.charCodeAt(at + 1) !== 125 || at + 2 !== text.length)
    return null;
  if (raw + len !== cut) return null;
  return { events: [{ type: "text", text: text.slice(raw, cut), raw: text.slice(0, raw) }] };
}

/** The module's memory as bytes (a new view after the memory grows). */
let memoryView = null;
export function memoryBytes() {
  if (memoryView === null || memoryView.byteLength === 0)
    memoryView = new Uint8Array(wasm.wasmMemory().buffer);
  return memoryView;
}

/**
 * A wasm object's input buffer (`inputBuffer(n)`: the address of at least
 * n bytes in the module's memory, moved only when a larger one is asked
 * for): chunks are copied in, with no allocation per chunk.
 */
export class Input {
  #at = 0;
  #capacity = 0;
  /** Copies `chunk` into `target`'s buffer; returns its length. */
  put(target, chunk) {
    const n = chunk.length;
    if (n > this.#capacity) {
      this.#at = call(() => target.inputBuffer(n));
      this.#capacity = n;
    }
    memoryBytes().set(chunk, this.#at);
    return n;
  }
}
