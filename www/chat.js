// The chat: streams the answer, shows each tool call as a card the moment it
// is whole, runs the tool here, sends the result back and continues until
// the model answers. An image the model makes shows as it arrives: its
// partial images first (the Responses API's), then the image. Two routes:
//   - via the Worker (default): the page posts the conversation, the Worker
//     calls the provider with skyl and streams skyl events back; the page
//     runs the tools between turns;
//   - direct: skyl runs in this page (the mock by default; a real key only
//     with an explicit opt-in), and its tool runner, client.run, runs the
//     loop: steps, each tool's start, result and duration, and an approval
//     prompt for convert_units. Faults always run direct, so the page holds
//     skyl's error object, with what it kept.
import { Client, toolResultMessage, toolErrorMessage } from "/pkg/browser.js";
import { TOOLS, runTool } from "./tools.js";
import { faultFetch, overloaded } from "./faults.js";
import { readStructured } from "./examples.js";
import {
  el,
  pretty,
  toolCard,
  Column,
  Transcript,
  setCardState,
  cardSection,
  incompleteCard,
  finishLine,
} from "./view.js";

const NAMES = TOOLS.map((t) => t.name);

/** The tool that asks before it runs, on the direct route (client.run's approval). */
export const ASKS = "convert_units";

/** The tools as client.run takes them: each runs here. */
const RUN_TOOLS = TOOLS.map((t) => ({
  ...t,
  execute: (args) => runTool(t.name, args),
  needsApproval: t.name === ASKS,
}));

export class Chat {
  /** `ui`: the page's elements; `settings()`: the controls' current values. */
  constructor(ui, settings) {
    this.ui = ui;
    this.settings = settings;
    this.column = new Column(ui.chat, ui.empty);
    this.messages = [];
    this.current = null; // the running turn's AbortController
    // Approvals: the runner's waiting answers, and clicks that came first.
    this.asking = new Map();
    this.decided = new Map();
  }

  reset() {
    this.current?.abort();
    this.messages = [];
    this.column.clear();
    this.ui.error.hidden = true;
    this.status("ready");
  }

  stop() {
    this.current?.abort();
  }

  status(text, waiting = false) {
    this.ui.status.textContent = text;
    this.ui.progress.hidden = !waiting;
    this.ui.chat.setAttribute("aria-busy", String(waiting));
  }

  showError(e) {
    this.ui.error.hidden = false;
    const name = e?.name && e.name !== "Error" ? `${e.name}: ` : "";
    this.ui.error.textContent = `${name}${e?.message ?? e}`;
  }

  busy(on) {
    this.ui.send.disabled = on;
    this.ui.stop.disabled = !on;
    this.ui.input.disabled = on;
    this.ui.attach.disabled = on;
  }

  /** One turn through the Worker: yields skyl events parsed from its SSE. */
  async *viaWorker(request, signal) {
    const s = this.settings();
    const res = await fetch(`${s.worker}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        provider: s.provider,
        model: s.model || undefined,
        request,
        mock: s.slow ? { chunk: 24, delay: 120 } : {},
      }),
      signal,
    });
    if (!res.ok) throw new Error(`the Worker answered ${res.status}: ${await res.text()}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (!data) continue;
        const parsed = JSON.parse(data);
        if (event === "error") throw Object.assign(new Error(parsed.message), parsed);
        yield parsed;
      }
    }
  }

  /** A client of skyl in the page, through the fault fetch. */
  client(onAttempt) {
    const s = this.settings();
    const useKey = Boolean(s.apiKey && s.optin);
    const mockBase = (p) =>
      p.startsWith("openai") || p === "responses" ? `${s.mockURL}/v1` : s.mockURL;
    const headers = {};
    if (!useKey && s.slow) Object.assign(headers, { "x-mock-chunk": "24", "x-mock-delay": "120" });
    // The "fallback" fault: the mock overloads this provider, and skyl goes
    // on to another (faults always run against the mock).
    const chain = {};
    if (s.fault === "fallback") {
      const { headers: failing, fallback } = overloaded(s.provider, 8);
      Object.assign(headers, failing);
      chain.maxRetries = 1;
      chain.fallback = [
        { provider: fallback, model: "mock-model", baseURL: mockBase(fallback), maxRetries: 1 },
      ];
    }
    return new Client({
      provider: s.provider,
      model: s.model || (useKey ? undefined : "mock-model"),
      apiKey: useKey ? s.apiKey : undefined,
      baseURL: useKey ? s.baseURL || undefined : mockBase(s.provider),
      // Bedrock: a Bedrock API key goes to bedrock-runtime.<region>.amazonaws.com.
      region: useKey && s.provider === "bedrock" ? s.region || undefined : undefined,
      headers,
      dangerouslyAllowBrowser: useKey,
      fetch: faultFetch({ fault: s.fault, names: NAMES, provider: s.provider, onAttempt }),
      ...chain,
    });
  }

  /** Why the current settings cannot send, if they cannot. */
  cannotSend() {
    const s = this.settings();
    if (s.route === "direct" && s.apiKey && !s.optin)
      return "tick the opt-in box to use a real key from the page, or clear the key to use the mock";
    return null;
  }

  /**
   * Sends a user message and runs the tool loop. `parts` are the message's
   * parts; `options.responseFormat` asks for structured output (no tools).
   */
  async converse(parts, options = {}) {
    const ui = this.ui;
    ui.error.hidden = true;
    const problem = this.cannotSend();
    if (problem) {
      this.showError(new Error(problem));
      return false;
    }
    this.messages.push({ role: "user", parts });
    const bubble = el("div", "msg user", parts.find((p) => p.type === "text")?.text ?? "");
    for (const f of parts.filter((p) => p.type === "file"))
      bubble.append(el("div", "attachment", `attached: ${f.filename ?? f.mediaType}`));
    this.column.add(bubble);
    const controller = new AbortController();
    this.current = controller;
    this.busy(true);
    const s = this.settings();
    try {
      if (s.route === "worker" && s.fault === "none")
        for (let turn = 0; turn < 8; turn++) {
          const response = await this.turn(options, controller.signal);
          this.messages.push(response.message);
          if (options.responseFormat) this.structured(response, options.responseFormat);
          if (response.toolCalls.length === 0) break;
          this.runTools(response.toolCalls);
        }
      else await this.run(options, controller.signal);
    } catch (e) {
      // Completed turns (an answer and its tool results) are in the history;
      // the unfinished one never was. A run's error carries its messages so
      // far, every call answered.
      if (Array.isArray(e?.messages)) this.messages.push(...e.messages);
      if (controller.signal.aborted || e?.name === "AbortError") {
        this.status("stopped");
        this.column.add(el("div", "meta", "stopped"));
      } else {
        this.failed(e);
      }
    } finally {
      for (const b of ui.chat.querySelectorAll(".streaming")) b.classList.remove("streaming");
      // Calls still streaming when the turn failed or stopped: the failure
      // lists what they received (failed()); they never become calls.
      for (const c of ui.chat.querySelectorAll(".card.partial")) c.remove();
      for (const box of ui.chat.querySelectorAll(".approval")) box.remove();
      this.asking.clear();
      this.decided.clear();
      this.current = null;
      this.busy(false);
      ui.input.focus();
    }
    return true;
  }

  /** Shows an attempt: the first waits for its first byte, later ones are skyl's retries. */
  attempt(n) {
    this.status(n > 1 ? `retrying: attempt ${n}…` : "waiting for the first byte…", true);
    if (n > 1)
      this.column.add(
        el(
          "div",
          "meta warn retry",
          `attempt ${n}: skyl retried, since no event had been handed out yet`,
        ),
      );
  }

  /** The tool loop by skyl's runner in the page (client.run): every step drawn as it streams. */
  async run(options, signal) {
    const request = options.responseFormat
      ? { messages: this.messages, responseFormat: options.responseFormat }
      : // Progress: each call's card from its first bytes, each image's
        // partial versions before it (view.js).
        { messages: this.messages, tools: RUN_TOOLS, partial: { tools: true, files: true } };
    const run = this.client((n) => this.attempt(n)).run({
      ...request,
      maxTokens: 1024,
      maxSteps: 8,
      signal,
      approve: (call) => this.approve(call),
    });
    let view = null;
    for await (const ev of run) {
      if (ev.type === "step_start") {
        view = new Transcript(this.column);
        this.handed = [];
        this.column.add(el("div", "step-line", `step ${ev.step}`));
        this.status(`step ${ev.step} · waiting for the first byte…`, true);
      } else if (ev.type === "tool_start") {
        setCardState(this.card(ev.call), "running…");
      } else if (ev.type === "tool_result") {
        const card = this.card(ev.call);
        const ok = !ev.result.isError;
        setCardState(card, ok ? "done" : "failed", ok ? "ok" : "err");
        cardSection(
          card,
          `${ok ? "result" : "error"} · ${ev.durationMs} ms`,
          pretty(ev.result.content),
        );
      } else if (ev.type === "approval_request") {
        this.askApproval(ev.call);
      } else if (ev.type === "step_finish") {
        view.finish(ev.response);
        this.status(finishLine(ev.response));
        if (options.responseFormat) this.structured(ev.response, options.responseFormat);
      } else {
        if (ev.type !== "finish") this.status(`step ${ev.step} · streaming…`, true);
        const card = view.event(ev);
        if (card) this.handed.push(card);
      }
    }
    const { messages, stopReason } = await run.result();
    this.messages.push(...messages);
    if (stopReason !== "done")
      this.column.add(el("div", "meta warn", `the run stopped: ${stopReason}`));
  }

  /** A call's card (drawn when the call came whole). */
  card(call) {
    return (
      this.ui.chat.querySelector(`.card[data-call="${CSS.escape(call.id)}"]`) ??
      this.column.add(toolCard(call))
    );
  }

  /** The runner asks about a call: resolved by the buttons of its card. */
  approve(call) {
    if (this.decided.has(call.id)) return this.decided.get(call.id);
    return new Promise((resolve) => this.asking.set(call.id, resolve));
  }

  /** Draws the approval prompt on a call's card. */
  askApproval(call) {
    const card = this.card(call);
    setCardState(card, "waiting for approval", "warn");
    this.status(`waiting for your approval of ${call.name}`);
    const box = el("div", "approval");
    box.append(el("span", "", `${call.name} asks before it runs`));
    const answer = (yes) => {
      box.remove();
      setCardState(card, yes ? "approved" : "denied", yes ? "" : "err");
      const said = yes ? true : { deny: "the user declined" };
      const resolve = this.asking.get(call.id);
      this.asking.delete(call.id);
      if (resolve) resolve(said);
      else this.decided.set(call.id, said);
    };
    const yes = el("button", "approve", "Approve");
    const no = el("button", "deny ghost", "Deny");
    yes.onclick = () => answer(true);
    no.onclick = () => answer(false);
    box.append(yes, no);
    card.append(box);
  }

  /** One streamed turn via the Worker: draws its events, returns its Response. */
  async turn(options, signal) {
    const request = options.responseFormat
      ? { messages: this.messages, responseFormat: options.responseFormat, maxTokens: 1024 }
      : // Partial images (the Responses API's) shown before the image.
        { messages: this.messages, tools: TOOLS, maxTokens: 1024, partial: { files: true } };
    this.attempt(1);
    const source = this.viaWorker(request, signal);
    const view = new Transcript(this.column);
    this.handed = [];
    let response = null;
    for await (const ev of source) {
      this.status("streaming…", true);
      const card = view.event(ev);
      if (card) this.handed.push(card);
      if (ev.type === "finish") response = ev.response;
    }
    if (!response) throw new Error("the stream ended without a finish event");
    view.finish(response);
    this.status(finishLine(response));
    return response;
  }

  /** Runs each whole call of a finished turn and answers it. */
  runTools(calls) {
    for (const call of calls) {
      const card =
        this.ui.chat.querySelector(`.card[data-call="${CSS.escape(call.id)}"]`) ??
        this.column.add(el("div", "card"));
      try {
        const result = runTool(call.name, JSON.parse(call.arguments));
        this.messages.push(toolResultMessage(call.id, result));
        setCardState(card, "done", "ok");
        cardSection(card, "result", JSON.stringify(result, null, 2));
      } catch (e) {
        this.messages.push(toolErrorMessage(call.id, e));
        setCardState(card, "failed", "err");
        cardSection(card, "error", String(e.message ?? e));
      }
    }
  }

  /** Shows a structured answer: parsed only when whole. */
  structured(response, format) {
    const r = readStructured(response, format);
    const card = this.column.add(el("div", `card structured ${r.ok ? "" : "bad"}`.trim()));
    const head = el("div", "head");
    head.append(
      el("span", "name", `structured output · ${format.name ?? format.type}`),
      el("span", `state ${r.ok ? "ok" : "err"}`, r.ok ? "whole JSON" : "not usable"),
    );
    card.append(head);
    if (r.ok) cardSection(card, "parsed value", JSON.stringify(r.value, null, 2));
    else cardSection(card, "why", r.why);
  }

  /** A failed turn: the typed error, what skyl kept, and calls never run. */
  failed(e) {
    this.showError(e);
    this.status(`error: ${e?.name ?? "Error"}`);
    const held = this.handed ?? [];
    for (const card of held) {
      card.classList.add("held");
      setCardState(card, "not run: the turn did not finish", "warn");
    }
    const facts = [
      e?.code && `code ${e.code}`,
      e?.inBand && "in-band (inside a 200 response)",
      e?.eventsEmitted !== undefined &&
        (e.eventsEmitted ? "events had been handed out" : "no event had been handed out"),
      e?.retryable !== undefined && (e.retryable ? "retryable" : "not retryable"),
    ].filter(Boolean);
    const box = this.column.add(el("div", "failure"));
    box.append(el("div", "label", `${e?.name ?? "Error"} · ${facts.join(" · ")}`));
    if (held.length)
      box.append(
        el(
          "div",
          "held-note",
          `${held.length} whole call(s) had been handed out before the error; the page runs calls only from a turn that finished.`,
        ),
      );
    const partial = e?.partial;
    if (partial) {
      if (partial.text)
        box.append(el("div", "kept", `text kept (${partial.text.length} characters)`));
      for (const call of partial.incompleteToolCalls ?? []) {
        const card = incompleteCard(call);
        card.append(el("div", "reason", `reason: ${call.reason}`));
        box.append(card);
      }
    }
  }
}
