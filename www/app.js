// The demo page: a chat that streams the answer, shows each tool call as a
// card the moment it is whole, runs the tool here, sends the result back and
// continues until the model answers. Two routes:
//   - via the Worker (default): the page posts the conversation, the Worker
//     calls the provider with skyl and streams skyl events back;
//   - direct: skyl runs in this page (the mock by default; a real key only
//     with an explicit opt-in).
import { Client, toolResultMessage, toolErrorMessage, ready } from "/pkg/browser.js";
import { TOOLS, runTool } from "./tools.js";

const params = new URLSearchParams(location.search);
const WORKER = params.get("worker") ?? "http://127.0.0.1:8787";
const $ = (id) => document.getElementById(id);
const ui = {
  provider: $("provider"),
  model: $("model"),
  route: $("route"),
  slow: $("slow"),
  reset: $("reset"),
  direct: $("direct"),
  apikey: $("apikey"),
  baseurl: $("baseurl"),
  optin: $("optin"),
  chat: $("chat"),
  empty: $("empty"),
  error: $("error"),
  form: $("form"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  status: $("status"),
  mode: $("mode"),
};
if (params.get("provider")) ui.provider.value = params.get("provider");

let messages = [];
let config = { providers: {}, mockURL: "http://127.0.0.1:8788" };
let current = null; // { abort() } of the running turn

// ------------------------------------------------------------------ view

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function add(node) {
  ui.empty.hidden = true;
  ui.chat.append(node);
  ui.chat.scrollTop = ui.chat.scrollHeight;
  return node;
}

function showError(e) {
  ui.error.hidden = false;
  const name = e?.name && e.name !== "Error" ? `${e.name}: ` : "";
  ui.error.textContent = `${name}${e?.message ?? e}`;
}

function toolCard(call) {
  const card = el("div", "card");
  card.dataset.call = call.id;
  const head = el("div", "head");
  head.append(el("span", "name", call.name), el("span", "state", "running…"));
  card.append(head, el("div", "label", "arguments"), el("pre", "args", pretty(call.arguments)));
  return add(card);
}

function pretty(json) {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return String(json);
  }
}

function updateMode() {
  const p = ui.provider.value;
  const live =
    ui.route.value === "worker"
      ? config.providers[p]?.live
      : Boolean(ui.apikey.value && ui.optin.checked);
  ui.mode.textContent = live ? `live ${p}` : `mock provider (${p} wire format)`;
  ui.mode.classList.toggle("live", Boolean(live));
  ui.direct.hidden = ui.route.value !== "direct";
  ui.model.placeholder =
    (ui.route.value === "worker" && config.providers[p]?.model) || "mock-model";
}

function busy(on) {
  ui.send.disabled = on;
  ui.stop.disabled = !on;
  ui.input.disabled = on;
}

// ------------------------------------------------------- the two routes

/** One turn through the Worker: yields skyl events parsed from its SSE. */
async function* viaWorker(request, signal) {
  const mock = ui.slow.checked ? { chunk: 24, delay: 120 } : {};
  const res = await fetch(`${WORKER}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      provider: ui.provider.value,
      model: ui.model.value || undefined,
      request,
      mock,
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
      if (event === "error")
        throw Object.assign(new Error(parsed.message), { name: parsed.name, code: parsed.code });
      yield parsed;
    }
  }
}

/** One turn with skyl in the page. */
async function* direct(request, signal) {
  const provider = ui.provider.value;
  const key = ui.apikey.value.trim();
  const useKey = key && ui.optin.checked;
  const mockBase =
    provider.startsWith("openai") || provider === "responses"
      ? `${config.mockURL}/v1`
      : config.mockURL;
  const headers = {};
  if (!useKey && ui.slow.checked)
    Object.assign(headers, { "x-mock-chunk": "24", "x-mock-delay": "120" });
  const client = new Client({
    provider,
    model: ui.model.value || (useKey ? undefined : "mock-model"),
    apiKey: useKey ? key : undefined,
    baseURL: useKey ? ui.baseurl.value || undefined : mockBase,
    headers,
    dangerouslyAllowBrowser: Boolean(useKey),
  });
  yield* client.stream({ ...request, signal });
}

// -------------------------------------------------------------- the loop

/** Why the current settings cannot send, if they cannot. */
function cannotSend() {
  if (ui.route.value === "direct" && ui.apikey.value.trim() && !ui.optin.checked) {
    return "tick the opt-in box to use a real key from the page, or clear the key to use the mock";
  }
  return null;
}

async function converse(text) {
  ui.error.hidden = true;
  const problem = cannotSend();
  if (problem) {
    showError(new Error(problem));
    ui.input.value = text;
    return;
  }
  messages.push({ role: "user", parts: [{ type: "text", text }] });
  add(el("div", "msg user", text));
  const controller = new AbortController();
  current = controller;
  busy(true);
  try {
    for (let turn = 0; turn < 8; turn++) {
      const request = { messages, tools: TOOLS, maxTokens: 1024 };
      const source =
        ui.route.value === "worker"
          ? viaWorker(request, controller.signal)
          : direct(request, controller.signal);
      let bubble = null;
      let thinking = null;
      let response = null;
      ui.status.textContent = "streaming…";
      for await (const ev of source) {
        if (ev.type === "text") {
          bubble ??= add(el("div", "msg assistant streaming"));
          bubble.textContent += ev.text;
          ui.chat.scrollTop = ui.chat.scrollHeight;
        } else if (ev.type === "reasoning") {
          thinking ??= add(el("div", "reasoning"));
          thinking.textContent += ev.text;
        } else if (ev.type === "tool_call") {
          bubble?.classList.remove("streaming");
          bubble = null;
          toolCard(ev.call);
        } else if (ev.type === "warning") {
          add(el("div", "meta", `warning: ${ev.message}`));
        } else if (ev.type === "finish") {
          response = ev.response;
        }
      }
      bubble?.classList.remove("streaming");
      if (!response) throw new Error("the stream ended without a finish event");
      const u = response.usage ?? {};
      ui.status.textContent = `finish: ${response.finishReason}${response.rawFinishReason ? ` (${response.rawFinishReason})` : ""} · tokens in ${u.input ?? "?"} / out ${u.output ?? "?"}`;
      add(el("div", "meta", ui.status.textContent));
      messages.push(response.message);
      if (response.toolCalls.length === 0) break;
      for (const call of response.toolCalls) {
        const card =
          ui.chat.querySelector(`.card[data-call="${CSS.escape(call.id)}"]`) ?? toolCard(call);
        const state = card.querySelector(".state");
        try {
          const result = runTool(call.name, JSON.parse(call.arguments));
          messages.push(toolResultMessage(call.id, result));
          state.textContent = "done";
          state.className = "state ok";
          card.append(
            el("div", "label", "result"),
            el("pre", "result", JSON.stringify(result, null, 2)),
          );
        } catch (e) {
          messages.push(toolErrorMessage(call.id, e));
          state.textContent = "failed";
          state.className = "state err";
          card.append(el("div", "label", "error"), el("pre", "result", String(e.message ?? e)));
        }
      }
    }
  } catch (e) {
    // Completed turns (an answer and its tool results) are in the history;
    // the unfinished one never was.
    if (controller.signal.aborted || e?.name === "AbortError") {
      ui.status.textContent = "stopped";
      add(el("div", "meta", "stopped"));
    } else {
      showError(e);
      ui.status.textContent = "error";
    }
  } finally {
    ui.chat.querySelectorAll(".streaming").forEach((b) => {
      b.classList.remove("streaming");
    });
    current = null;
    busy(false);
    ui.input.focus();
  }
}

// ---------------------------------------------------------------- wiring

ui.form.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = ui.input.value.trim();
  if (!text || current) return;
  ui.input.value = "";
  converse(text);
});
ui.input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    ui.form.requestSubmit();
  }
});
ui.stop.addEventListener("click", () => current?.abort());
ui.reset.addEventListener("click", () => {
  current?.abort();
  messages = [];
  ui.chat.replaceChildren(ui.empty);
  ui.empty.hidden = false;
  ui.error.hidden = true;
  ui.status.textContent = "ready";
});
for (const chip of document.querySelectorAll(".chip")) {
  chip.addEventListener("click", () => {
    if (!current) converse(chip.textContent);
  });
}
for (const c of [ui.provider, ui.route, ui.apikey, ui.optin])
  c.addEventListener("change", updateMode);

(async () => {
  try {
    const res = await fetch(`${WORKER}/api/config`);
    config = await res.json();
  } catch {
    ui.route.value = "direct";
    showError(
      new Error(
        `the Worker at ${WORKER} does not answer: using skyl directly in this page against the mock`,
      ),
    );
  }
  updateMode();
  await ready();
  document.body.dataset.ready = "1";
})();
