// The embeddings panel: a question and a few help-desk passages embedded
// with client.embed (offline, by the mock provider's deterministic vectors:
// texts that share words point the same way), the passages ranked by
// cosine similarity to the question.
import { Client } from "/pkg/browser.js";
import { el } from "./view.js";

export const PASSAGES = [
  "Your parcel will arrive within 3 working days of the order.",
  "To reset your password, open Settings and choose Security.",
  "A refund is paid to your card within 5 days of the return.",
  "Invoices are in the Billing tab of your account.",
  "Our support team answers chat messages from 8 to 18.",
  "Gift cards cannot be exchanged for cash.",
];

/** The cosine similarity of two vectors. */
function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / (Math.sqrt(na * nb) || 1);
}

export class Embeddings {
  constructor(ui, settings) {
    this.ui = ui;
    this.settings = settings;
    this.current = null;
    for (const p of PASSAGES) ui.embedPassages.append(el("li", "", p));
    ui.embedForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.rank(ui.embedQuestion.value.trim());
    });
    for (const chip of ui.embedChips.querySelectorAll(".chip"))
      chip.addEventListener("click", () => {
        ui.embedQuestion.value = chip.textContent;
        this.rank(chip.textContent);
      });
  }

  async rank(question) {
    if (!question) return;
    this.current?.abort();
    const controller = new AbortController();
    this.current = controller;
    const { ui } = this;
    ui.embedStatus.textContent = "embedding…";
    ui.embedResults.replaceChildren();
    const client = new Client({
      provider: "openai",
      baseURL: `${this.settings().mockURL}/v1`,
      maxRetries: 0,
    });
    const started = performance.now();
    try {
      const values = [question, ...PASSAGES];
      const out = await client.embed({
        values,
        model: "mock-embedding",
        dimensions: 256,
        signal: controller.signal,
      });
      const [q, ...docs] = out.embeddings;
      const ranked = docs
        .map((v, i) => ({ text: PASSAGES[i], score: cosine(q, v) }))
        .sort((a, b) => b.score - a.score);
      for (const r of ranked) {
        const li = el("li", "ranked");
        const bar = el("span", "bar");
        bar.style.width = `${Math.max(0, r.score) * 100}%`;
        li.append(el("span", "score", r.score.toFixed(3)), bar, el("span", "text", r.text));
        ui.embedResults.append(li);
      }
      const ms = Math.round(performance.now() - started);
      ui.embedStatus.textContent = `${values.length} texts, ${out.embeddings[0].length} dimensions, ${out.batches} request${out.batches === 1 ? "" : "s"}, ${out.usage?.input ?? "?"} tokens, ${ms} ms`;
    } catch (e) {
      if (controller.signal.aborted) return;
      ui.embedStatus.textContent = `error: ${e.name}: ${e.message}`;
    } finally {
      if (this.current === controller) this.current = null;
    }
  }
}
