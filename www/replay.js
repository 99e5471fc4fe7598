// The recorded-streams panel: a real provider recording, served byte for
// byte by the mock (`x-mock-fixture`) in pieces, decoded by skyl in this
// page. Each event shows as it arrives, in the transcript and in the event
// log with its raw provider frame.
import { Client } from "/pkg/browser.js";
import { RECORDINGS } from "./recordings.js";
import { el, Column, EventLog, Transcript, setCardState } from "./view.js";

/** Pieces and pauses for the mock's replay: [chunk bytes, delay ms]. */
export const SPEEDS = {
  live: [512, 15],
  slow: [96, 25],
  whole: [0, 0],
};

export class Replay {
  constructor(ui, settings) {
    this.ui = ui;
    this.settings = settings;
    this.column = new Column(ui.replayOut, ui.replayEmpty);
    this.log = new EventLog(ui.replayLog);
    this.current = null;
    for (const r of RECORDINGS) {
      const li = el("li");
      const b = el("button", "recording");
      b.type = "button";
      b.dataset.id = r.id;
      b.append(el("span", "title", r.title), el("span", "shows", r.shows));
      b.addEventListener("click", () => this.play(r));
      li.append(b);
      ui.recordings.append(li);
    }
    ui.showRaw.addEventListener("change", () =>
      ui.replayLog.classList.toggle("show-raw", ui.showRaw.checked),
    );
  }

  async play(recording) {
    this.current?.abort();
    const controller = new AbortController();
    this.current = controller;
    const { ui } = this;
    for (const b of ui.recordings.querySelectorAll("button"))
      b.setAttribute("aria-pressed", String(b.dataset.id === recording.id));
    this.column.clear();
    this.log.clear();
    ui.replayTitle.textContent = recording.title;
    ui.replayStatus.textContent = `replaying ${recording.id}…`;
    ui.replayProgress.hidden = false;
    const { mockURL, speed } = this.settings();
    const [chunk, delay] = SPEEDS[speed] ?? SPEEDS.live;
    const provider = recording.provider;
    const client = new Client({
      provider,
      model: "mock-model",
      baseURL:
        provider.startsWith("openai") || provider === "responses" ? `${mockURL}/v1` : mockURL,
      headers: {
        "x-mock-fixture": recording.id,
        "x-mock-chunk": String(chunk),
        "x-mock-delay": String(delay),
      },
      maxRetries: 0,
    });
    const view = new Transcript(this.column);
    const started = performance.now();
    try {
      const stream = client.stream({
        messages: [{ role: "user", parts: [{ type: "text", text: "(a recorded response)" }] }],
        // A generated image's partial versions, shown before it.
        partial: { files: true },
        signal: controller.signal,
      });
      for await (const ev of stream) {
        this.log.add(ev);
        const card = view.event(ev);
        if (card) setCardState(card, "whole · a replay: not run", "ok");
        if (ev.type === "finish") view.finish(ev.response);
      }
      const ms = Math.round(performance.now() - started);
      ui.replayStatus.textContent = `${this.log.count} events from ${recording.id} in ${ms} ms`;
    } catch (e) {
      if (controller.signal.aborted) return;
      this.log.note(`${e.name}: ${e.message}`, "err");
      ui.replayStatus.textContent = `error: ${e.name}`;
    } finally {
      if (this.current === controller) {
        this.current = null;
        ui.replayProgress.hidden = true;
      }
    }
  }
}
