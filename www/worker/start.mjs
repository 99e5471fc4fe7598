// Starts the demo Worker under `wrangler dev` (workerd, local mode).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const KEYS = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "OPENAICOMPAT_API_KEY",
  "OPENAICOMPAT_BASE_URL",
  "AWS_BEARER_TOKEN_BEDROCK",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_REGION",
];

/**
 * Runs a Worker project (`dir`, default the demo Worker) under wrangler dev
 * on 127.0.0.1:`port`, with MOCK_URL = `mockURL` if given, the other
 * variables in `vars` (name: value), and the keys found in `env` (written
 * to .dev.vars, readable only by this user, removed by stop()). Its V8
 * inspector listens on `inspectorPort` if given, else where wrangler
 * chooses. Resolves with { url, stop, log, pid } once it answers `probe`
 * (`pid`: wrangler's, which leads the process group that workerd is in).
 */
export async function startWorker({
  port,
  mockURL,
  vars: extraVars = {},
  inspectorPort,
  dir = here,
  env = process.env,
  probe = "/api/config",
  timeoutMs = 60000,
}) {
  const vars = path.join(dir, ".dev.vars");
  const secrets = KEYS.filter((k) => env[k]).map((k) => `${k}=${JSON.stringify(env[k])}`);
  if (secrets.length) fs.writeFileSync(vars, secrets.join("\n") + "\n", { mode: 0o600 });
  else fs.rmSync(vars, { force: true });
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--log-level", "warn"];
  if (mockURL) args.push("--var", `MOCK_URL:${mockURL}`);
  for (const [name, value] of Object.entries(extraVars)) args.push("--var", `${name}:${value}`);
  if (inspectorPort) args.push("--inspector-port", String(inspectorPort));
  const proc = spawn(path.join(root, "node_modules/.bin/wrangler"), args, {
    cwd: dir,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_UPDATE_NOTIFIER: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  proc.stdout.on("data", (d) => {
    log += d;
  });
  proc.stderr.on("data", (d) => {
    log += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => {
    try {
      process.kill(-proc.pid, "SIGTERM");
    } catch {
      /* gone */
    }
    fs.rmSync(vars, { force: true });
  };
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(`${url}${probe}`);
      return { url, stop, log: () => log, pid: proc.pid };
    } catch {
      if (proc.exitCode !== null || Date.now() > end) {
        stop();
        throw new Error(`the Worker did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}
