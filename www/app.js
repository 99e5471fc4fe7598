// The demo page's wiring: the tabs, the controls, the examples, and start-up
// (the Worker's configuration, the WebAssembly module). The chat is in
// chat.js, the recorded streams in replay.js, what is drawn in view.js.
import { ready } from "/pkg/browser.js";
import { Chat } from "./chat.js";
import { Replay } from "./replay.js";
import { Embeddings } from "./embed.js";
import { FAULTS } from "./faults.js";
import { WEATHER_REPORT, invoicePart, filePart } from "./examples.js";
import { el } from "./view.js";

const params = new URLSearchParams(location.search);
const WORKER = params.get("worker") ?? "http://127.0.0.1:8787";
const $ = (id) => document.getElementById(id);
const ui = {};
for (const id of [
  "provider",
  "model",
  "route",
  "fault",
  "slow",
  "reset",
  "direct",
  "apikey",
  "baseurl",
  "region",
  "region-field",
  "optin",
  "chat",
  "empty",
  "error",
  "form",
  "input",
  "send",
  "stop",
  "status",
  "progress",
  "mode",
  "attach",
  "attached",
  "recordings",
  "speed",
  "replay-out",
  "replay-empty",
  "replay-log",
  "replay-title",
  "replay-status",
  "replay-progress",
  "show-raw",
  "fault-note",
  "embed-form",
  "embed-question",
  "embed-chips",
  "embed-status",
  "embed-results",
  "embed-passages",
])
  ui[id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = $(id);

for (const [value, label] of Object.entries(FAULTS))
  ui.fault.append(Object.assign(el("option", "", label), { value }));
if (params.get("provider")) ui.provider.value = params.get("provider");

let config = { providers: {}, mockURL: "http://127.0.0.1:8788" };
let attached = null; // a file part waiting for the next message

const settings = () => ({
  worker: WORKER,
  mockURL: config.mockURL,
  provider: ui.provider.value,
  model: ui.model.value.trim(),
  route: ui.route.value,
  fault: ui.fault.value,
  slow: ui.slow.checked,
  apiKey: ui.apikey.value.trim(),
  baseURL: ui.baseurl.value.trim(),
  region: ui.region.value.trim(),
  optin: ui.optin.checked,
  speed: ui.speed.value,
});
const chat = new Chat(ui, settings);
new Replay(ui, settings);
new Embeddings(ui, settings);

function updateMode() {
  const s = settings();
  const live = s.route === "worker" ? config.providers[s.provider]?.live : s.apiKey && s.optin;
  ui.mode.textContent = live ? `live ${s.provider}` : `mock provider (${s.provider} wire format)`;
  ui.mode.classList.toggle("live", Boolean(live));
  ui.direct.hidden = s.route !== "direct";
  ui.regionField.hidden = s.provider !== "bedrock";
  ui.model.placeholder =
    (s.route === "worker" && config.providers[s.provider]?.model) || "mock-model";
  ui.faultNote.hidden = s.fault === "none";
  ui.faultNote.textContent =
    s.fault === "none"
      ? ""
      : `Fault: ${FAULTS[s.fault]}. It runs skyl in this page against the mock, so the page holds skyl's error object and what it kept.`;
}

// ------------------------------------------------------------ the tabs

const tabs = [$("tab-chat"), $("tab-replay"), $("tab-embed")];
function select(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
  }
}
for (const t of tabs) {
  t.addEventListener("click", () => select(t));
  t.addEventListener("keydown", (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (!step) return;
    const next = tabs[(tabs.indexOf(t) + step + tabs.length) % tabs.length];
    select(next);
    next.focus();
  });
}

// -------------------------------------------------------- the chat box

/** Sends a message (with the attached file, if any); false when the settings cannot send. */
async function send(text, options = {}) {
  if (chat.current) return false;
  const problem = chat.cannotSend();
  if (problem) {
    chat.showError(new Error(problem));
    return false;
  }
  const parts = [{ type: "text", text }];
  if (options.file) parts.push(options.file);
  else if (attached) parts.push(attached);
  attached = null;
  ui.attached.hidden = true;
  ui.attach.value = "";
  return chat.converse(parts, options);
}

ui.form.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = ui.input.value.trim();
  if (!text || chat.current) return;
  ui.input.value = "";
  send(text).then((sent) => {
    if (!sent) ui.input.value = text; // kept for another try
  });
});
ui.input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    ui.form.requestSubmit();
  }
});
ui.attach.addEventListener("change", async () => {
  const file = ui.attach.files?.[0];
  if (!file) return;
  attached = await filePart(file);
  ui.attached.hidden = false;
  ui.attached.textContent = `attached: ${file.name} (${file.size} bytes) goes with your next message`;
});
ui.stop.addEventListener("click", () => chat.stop());
ui.reset.addEventListener("click", () => chat.reset());

const EXAMPLES = {
  structured: () =>
    send("Give me a short weather report for Oslo as JSON.", { responseFormat: WEATHER_REPORT }),
  pdf: () => send("What does this invoice say, and what is the total?", { file: invoicePart() }),
  // Images come in the Gemini and Responses formats: from another, the
  // example switches to Responses (partial images, then the image).
  draw: () => {
    if (ui.provider.value !== "gemini" && ui.provider.value !== "responses") {
      ui.provider.value = "responses";
      updateMode();
    }
    return send("Draw a cat");
  },
};
for (const chip of document.querySelectorAll(".chip")) {
  chip.addEventListener("click", () => {
    const example = EXAMPLES[chip.dataset.example];
    if (example) example();
    else send(chip.textContent);
  });
}
for (const c of [ui.provider, ui.route, ui.apikey, ui.optin, ui.fault])
  c.addEventListener("change", updateMode);

// ------------------------------------------------------------ start-up

(async () => {
  try {
    const res = await fetch(`${WORKER}/api/config`);
    config = await res.json();
  } catch {
    ui.route.value = "direct";
    chat.showError(
      new Error(
        `the Worker at ${WORKER} does not answer: using skyl directly in this page against the mock`,
      ),
    );
  }
  updateMode();
  await ready();
  document.body.dataset.ready = "1";
})();
