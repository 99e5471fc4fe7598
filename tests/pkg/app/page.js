// The browser app of the bundler tests (Vite, webpack): the tool loop for
// every provider through "skyl", and through the one-adapter entries
// skyl/anthropic and skyl/openai, against the mock named by ?mock=. What it
// assembled goes to window.__result for the test to check.
import * as skyl from "skyl";
import * as anthropicOnly from "skyl/anthropic";
import * as openaiOnly from "skyl/openai";
import { runAll, runEntry } from "./toolloop.js";

const mock = new URLSearchParams(location.search).get("mock");
const show = (result) => {
  window.__result = result;
  document.getElementById("out").textContent = JSON.stringify(result, null, 1);
};

// The library's own guard: a key in a page needs the explicit opt-in.
const guard = {};
try {
  new skyl.Client({ provider: "openai", model: "m", apiKey: "sk-page" });
  guard.refused = false;
} catch (e) {
  guard.refused = e instanceof skyl.InvalidRequestError && e.path === "dangerouslyAllowBrowser";
}
try {
  new skyl.Client({
    provider: "openai",
    model: "m",
    apiKey: "sk-page",
    dangerouslyAllowBrowser: true,
  });
  guard.optIn = true;
} catch {
  guard.optIn = false;
}

(async () => ({
  guard,
  all: await runAll(skyl, mock),
  anthropic: await runEntry(anthropicOnly, mock),
  openai: await runEntry(openaiOnly, mock),
}))().then(show, (e) => show({ error: String(e?.stack || e) }));
