// `client.run(request)`: the tool loop. Every decision is the core's
// (src/runner.rs, through the wasm class `Loop` of src/shell/tool_loop.rs):
// which calls run and when, what goes back to the model, when the run
// stops. Each step's request goes from the core's runner into the run
// machine of its stream without crossing here. This file carries the
// decisions out: it streams each step (a Run), runs the tools' `execute`,
// asks for approvals, and hands out every event as it happens.

import * as wasm from "./skyl_wasm.js";
import {
  asked,
  InvalidRequestError,
  localError,
  makeError,
  requestError,
  scrub,
} from "./errors.js";
import { call, ready } from "./guard.js";
import { parse } from "./boundary.js";
import { LOOP } from "./policy.js";
import { checkSignal, limits, requestJson, Run } from "./run.js";

const isPositive = (v) => typeof v === "number" && v > 0 && Number.isFinite(v);

/** The JS values of a run's request the core cannot see: functions, and what only JS uses. */
function checkRunFields(request) {
  if (!request || typeof request !== "object")
    throw requestError("request", "pass an object such as { messages, tools }");
  const { approve, maxConcurrency, tools } = request;
  checkSignal(request.signal);
  if (approve !== undefined && typeof approve !== "function")
    throw requestError(
      "approve",
      "must be a function (call, args) returning true, false or { deny }",
    );
  if (maxConcurrency !== undefined && !(Number.isInteger(maxConcurrency) && maxConcurrency >= 1))
    throw requestError("maxConcurrency", "must be a whole number, 1 or more");
  if (tools !== undefined && !Array.isArray(tools)) throw requestError("tools", "must be a list");
  (tools ?? []).forEach((t, i) => {
    const at = `tools[${i}]`;
    if (t?.execute !== undefined && typeof t.execute !== "function")
      throw requestError(`${at}.execute`, "must be a function (args, { call, signal, step })");
    const need = t?.needsApproval;
    if (need !== undefined && typeof need !== "boolean" && typeof need !== "function")
      throw requestError(`${at}.needsApproval`, "must be a boolean or a function (args, call)");
    if (t?.readOnly !== undefined && typeof t.readOnly !== "boolean")
      throw requestError(`${at}.readOnly`, "must be a boolean");
    if (t?.timeout !== undefined && !isPositive(t.timeout))
      throw requestError(`${at}.timeout`, "must be a positive number of milliseconds");
  });
}

/** A call's arguments, parsed (the core checked them before it handed the call out). */
const argsOf = (c) => {
  try {
    return JSON.parse(c.arguments || "{}");
  } catch {
    return {};
  }
};

/** What a tool returned, as the text the model reads. */
function resultText(v) {
  try {
    return typeof v === "string" ? v : (JSON.stringify(v) ?? "");
  } catch (e) {
    return failed(`the tool's result is not JSON (${e?.message ?? e})`);
  }
}

/** A tool's failure as the model reads it: its message (never a stack). */
function failureText(e) {
  try {
    return String(e?.message ?? e ?? "the tool failed");
  } catch {
    return "the tool failed";
  }
}

/** Marks a result text as a failure for `settle`. */
const failed = (text) => ({ failed: text });

/** What `client.run()` returns: an async iterable of events with `result()` and `abort()`. */
export class RunResult {
  #queue = [];
  #iterating = false;
  #wake = null;
  #ended = false;
  #error = null;
  #controller = new AbortController();
  #stream = null;
  #result;
  #key;

  constructor(o, key, fetchFn, request) {
    this.#key = key;
    this.#result = this.#drive(o, fetchFn, request).then(
      (r) => {
        this.#end(null);
        return r;
      },
      (e) => {
        this.#end(e);
        throw e;
      },
    );
    this.#result.catch(() => {}); // observed through result() or the iterator
  }

  /** Resolves to `{ messages, response, steps, stopReason, usage, pending }`. */
  result() {
    return this.#result;
  }

  /** Stops the run: its stream, every running tool's `signal`; no tool or request starts after. */
  abort(reason) {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(reason);
    this.#stream?.abort(reason);
  }

  [Symbol.asyncIterator]() {
    if (this.#iterating)
      throw new InvalidRequestError(
        localError(
          "InvalidRequestError",
          "already_consumed",
          "this run is already being read: iterate it once",
        ),
      );
    this.#iterating = true;
    return this.#events();
  }

  async *#events() {
    try {
      for (;;) {
        if (this.#queue.length) yield this.#queue.shift();
        else if (this.#ended) {
          if (this.#error) throw this.#error;
          return;
        } else await new Promise((r) => (this.#wake = r));
      }
    } finally {
      // Leaving the loop early (break, return, a throw in its body) stops
      // the run, as it cancels a stream.
      if (!this.#ended) this.abort();
    }
  }

  #push(ev) {
    this.#queue.push(ev);
    this.#wake?.();
    this.#wake = null;
  }

  #end(error) {
    this.#ended = true;
    this.#error = error;
    this.#wake?.();
    this.#wake = null;
  }

  async #drive(o, fetchFn, request) {
    checkRunFields(request);
    const signal = this.#controller.signal;
    const outer = request.signal;
    const onOuter = () => this.abort(outer.reason);
    if (outer?.aborted) this.abort(outer.reason);
    else outer?.addEventListener("abort", onOuter, { once: true });
    try {
      return await this.#loop(o, fetchFn, request, signal);
    } finally {
      outer?.removeEventListener("abort", onOuter);
    }
  }

  async #loop(o, fetchFn, request, signal) {
    await ready();
    const tools = new Map((request.tools ?? []).map((t) => [t?.name, t]));
    // Whether a call needs an approval; a predicate that throws: it does.
    const needs = (c) => {
      const need = tools.get(c.name)?.needsApproval;
      try {
        return typeof need === "function" ? Boolean(need(argsOf(c), c)) : Boolean(need);
      } catch {
        return true;
      }
    };
    // Asked once per call of a step: its streamed call (for an early
    // start) is the turn's. (Not across steps: ids repeat from turn to
    // turn, Gemini's and generated ones, until the core renames them.)
    let answers = new Map();
    const asks = (c) => {
      const key = `${c.id}\0${c.name}\0${c.arguments}`;
      if (!answers.has(key)) answers.set(key, needs(c));
      return answers.get(key);
    };
    const askedIds = (calls, ask) => JSON.stringify(calls.filter(ask).map((c) => c.id));
    const {
      signal: _s,
      maxSteps,
      finalAnswer,
      maxConcurrency,
      approve,
      approvals,
      ...wire
    } = request;
    // (JSON leaves a tool's execute out, and the core reads no
    // needsApproval, readOnly or timeout: a tool that is not an object is
    // the core's error, by its path.)
    const names = (keep) => [...tools.values()].filter(keep).map((t) => t.name);
    const history = (request.messages ?? []).flatMap((m) =>
      (Array.isArray(m?.parts) ? m.parts : []).filter((p) => p?.type === "tool_call"),
    );
    const options = JSON.stringify({
      run: names((t) => typeof t?.execute === "function"),
      readOnly: names((t) => t?.readOnly === true),
      maxSteps,
      finalAnswer,
      approvals,
      asks: JSON.parse(askedIds(history, needs)),
    });
    const json = requestJson(wire);
    const loop = call(() => new wasm.Loop(o.config, json, options));
    const tasks = new Set(); // each running tool's { mine, timer }
    let over = false; // the run has ended: no tool starts, running ones are aborted
    const done = []; // [call id, failed, text]: outcomes not yet told to the loop
    const queued = []; // jobs held back by maxConcurrency
    const limit = maxConcurrency ?? Number.POSITIVE_INFINITY;
    let wakeMain = null;
    let stop;
    const stopped = new Promise((_, reject) => {
      stop = () => reject(signal.reason);
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    });
    stopped.catch(() => {});

    // Ends a tool: its timer, its signal (`why`: aborted, else left as is).
    const release = (task, why) => {
      clearTimeout(task.timer);
      tasks.delete(task);
      if (why !== undefined) task.mine.abort(why);
    };
    const cancelAll = () => {
      for (const task of [...tasks]) release(task, signal.reason ?? "the run ended");
    };
    signal.addEventListener("abort", cancelAll, { once: true });

    const start = (job) => {
      if (over || signal.aborted) return;
      if (tasks.size >= limit) return void queued.push(job);
      const { call: c, step } = job;
      const tool = tools.get(c.name);
      const task = { mine: new AbortController(), timer: undefined };
      tasks.add(task);
      this.#push({ type: "tool_start", step, call: c });
      const began = Date.now();
      const ms = tool.timeout;
      const timedOut = ms
        ? new Promise((r) => {
            task.timer = setTimeout(() => {
              task.mine.abort(new Error(`the tool timed out after ${ms} ms`));
              r(failed(`the tool timed out after ${ms} ms`));
            }, ms);
          })
        : null;
      const work = Promise.resolve()
        .then(() => tool.execute(argsOf(c), { call: c, signal: task.mine.signal, step }))
        .then(resultText, (e) => failed(failureText(e)));
      const settle = (out) => {
        const ended = tasks.has(task);
        release(task);
        if (!ended || over || signal.aborted) return;
        const isError = typeof out !== "string";
        const text = scrub(isError ? out.failed : out, this.#key);
        this.#push({
          type: "tool_result",
          step,
          call: c,
          result: { type: "tool_result", callId: c.id, content: text, isError },
          durationMs: Date.now() - began,
        });
        done.push([c.id, isError, text]);
        const next = queued.shift();
        if (next) start(next);
        wakeMain?.();
      };
      (timedOut ? Promise.race([work, timedOut]) : work)
        .then(settle)
        .catch(() => settle(failed("the tool failed")));
    };

    // One step: its stream's events handed out as they come, read-only
    // tools started as their calls come whole.
    const step = async (n) => {
      this.#push({ type: "step_start", step: n });
      answers = new Map();
      const run = new Run(o, this.#key, fetchFn, {}, true);
      const args = limits(o);
      run.make = () => loop.request(...args);
      let response;
      let code = LOOP.FAIL;
      run.onDone = (m) => {
        code = call(() => loop.finishStep(m, askedIds(response?.toolCalls ?? [], asks)));
      };
      this.#stream = run;
      if (signal.aborted) run.abort(signal.reason);
      try {
        for await (const ev of run.events((r) => (response = r))) {
          this.#push({ ...ev, step: n });
          const c = ev.type === "tool_call" ? ev.call : null;
          if (c && call(() => loop.callWhole(c.id, c.name, c.arguments, asks(c))))
            start({ call: c, step: n });
        }
      } finally {
        this.#stream = null;
      }
      this.#push({ type: "step_finish", step: n, response });
      return code;
    };

    const jobs = () => parse(call(() => loop.takeOutput())).jobs;
    let steps = 0;
    try {
      let code = call(() => loop.start());
      for (;;) {
        if (signal.aborted) throw signal.reason;
        // (A step ends at an abort: abort() cancels its stream.)
        if (code === LOOP.REQUEST) code = await step(++steps);
        else if (code === LOOP.RUN) {
          for (const job of jobs()) start(job);
          code = LOOP.WAIT;
        } else if (code === LOOP.APPROVE) {
          const waiting = jobs();
          for (const job of waiting) this.#push({ type: "approval_request", ...job });
          if (!approve) code = call(() => loop.pauseForApproval());
          for (const { call: c } of approve ? waiting : []) {
            const asking = asked(() => approve(c, argsOf(c)), "approve", this.#key);
            asking.catch(() => {}); // an abort may win the race
            const said = await Promise.race([asking, stopped]);
            const reason = typeof said?.deny === "string" ? said.deny : "";
            code = call(() => loop.decide(c.id, said === true, reason));
          }
        } else if (code === LOOP.WAIT) {
          if (!done.length && !tasks.size && !queued.length)
            throw new Error("skyl: the tool loop waits for no tool (a bug)");
          while (!done.length) {
            await Promise.race([new Promise((r) => (wakeMain = r)), stopped]);
            wakeMain = null;
          }
          const [id, failed, text] = done.shift();
          code = call(() => loop.toolDone(id, failed, text));
        } else if (code === LOOP.STOP) {
          const r = parse(call(() => loop.result()));
          return { ...r, response: r.steps.at(-1) };
        } else throw makeError(parse(call(() => loop.takeOutput())).error, this.#key);
      }
    } catch (e) {
      // Every call of the turn gets a result ("cancelled" if it had
      // started), so the messages so far replay.
      const aborted = signal.aborted;
      this.abort(e);
      const reason = aborted ? signal.reason : e;
      const why =
        reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
      const own = parse(call(() => loop.abort(why))).error;
      const { messages, steps: done } = parse(call(() => loop.result()));
      const err = aborted ? makeError(own, this.#key, reason) : e;
      if (err && typeof err === "object") {
        err.messages = messages;
        err.steps = done;
        if (aborted) err.partial = { messages, steps: done };
      }
      throw err;
    } finally {
      // Nothing runs on after the run: no queued tool starts, running
      // ones are aborted (an early start of a turn that was cut off, a
      // tool still running at a pause).
      over = true;
      queued.length = 0;
      cancelAll();
      signal.removeEventListener("abort", stop);
      signal.removeEventListener("abort", cancelAll);
      try {
        loop.free();
      } catch {
        /* after a panic the instance is unusable anyway */
      }
    }
  }
}
