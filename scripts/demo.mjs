// The main job (see scripts/demo): starts the mock provider, the Worker in
// workerd and the static server, prints the URL, runs the terminal example,
// and stops everything on Ctrl-C.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startMock } from "../tests/js/mock-server.mjs";
import { startStatic } from "../www/serve.mjs";
import { startWorker } from "../www/worker/start.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const port = (name, fallback) => Number(process.env[name] ?? fallback);
const stops = [];
let stopping = false;

async function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const stop of stops.reverse()) {
    try {
      await stop();
    } catch {
      /* best effort */
    }
  }
  process.exit(code);
}
process.on("SIGINT", () => {
  console.log("\nstopping…");
  stopAll(0);
});
process.on("SIGTERM", () => stopAll(0));

try {
  const mock = await startMock({ port: port("MOCK_PORT", 8788) });
  stops.push(() => mock.close());
  const worker = await startWorker({ port: port("WORKER_PORT", 8787), mockURL: mock.url });
  stops.push(() => worker.stop());
  const site = await startStatic({ port: port("WEB_PORT", 8080) });
  stops.push(() => site.close());

  // Which providers the Worker calls for real: it says so itself.
  const config = await (await fetch(`${worker.url}/api/config`)).json();
  const live = Object.keys(config.providers).filter((p) => config.providers[p].live);
  console.log(`mock provider  ${mock.url}   (every wire format)`);
  console.log(
    `Worker         ${worker.url}   (workerd via wrangler dev; live: ${live.length ? live.join(", ") : "none, every provider uses the mock"})`,
  );
  console.log(`\n  Open the chat: ${site.url}/\n`);

  if (process.env.SKYL_DEMO_NO_TERMINAL !== "1") {
    console.log("A streamed, tool-calling conversation in the terminal, for each wire format:");
    await new Promise((resolve) => {
      const p = spawn(process.execPath, [path.join(root, "examples/terminal.mjs")], {
        stdio: "inherit",
        env: { ...process.env, MOCK_URL: mock.url },
      });
      p.on("exit", resolve);
    });
  }
  console.log(
    `\nThe chat is at ${site.url}/  ·  Ctrl-C stops the mock, the Worker and the server.`,
  );
  if (process.env.SKYL_DEMO_EXIT === "1") await stopAll(0);
} catch (e) {
  console.error(`demo: ${e.message}`);
  if (/EADDRINUSE/.test(String(e)))
    console.error("a port is taken: set MOCK_PORT, WORKER_PORT or WEB_PORT");
  await stopAll(1);
}
