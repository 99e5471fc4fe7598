// Type declarations for skyl's tool runner, `client.run` (re-exported by
// index.d.ts).
import type {
  Message,
  Request,
  Response,
  StreamEvent,
  Tool,
  ToolCall,
  ToolResultPart,
  Usage,
} from "./index.js";

/** What a tool's `execute` gets besides its arguments. */
export type ToolContext = {
  call: ToolCall;
  /** Aborted when the run is aborted or the tool's `timeout` passes. */
  signal: AbortSignal;
  /** The step (1-based) whose turn made the call; 0 for a call of the history. */
  step: number;
};

/** A call's parsed arguments (an object, checked against the tool's `parameters`). */
export type ToolArgs = { [name: string]: unknown };

// (Method types: a function that declares its own argument type, such as
// `({ city }: { city: string }) => ...`, is accepted.)
type Execute = { f(args: ToolArgs, context: ToolContext): unknown }["f"];
type NeedsApproval = { f(args: ToolArgs, call: ToolCall): boolean }["f"];

/** A tool `client.run` can run: a `Tool` with what the runner needs. */
export type RunTool = Tool & {
  /**
   * Runs the call: `args` is the parsed arguments object, already checked
   * against `parameters`. A string result is sent as is, anything else as
   * JSON; a throw becomes an error result with its message. Without it,
   * the call is handed back (`stopReason: "client_tool"`).
   */
  execute?: Execute;
  /** Ask before running (a boolean, or decided per call: the function is asked once per call, a throw meaning yes). */
  needsApproval?: boolean | NeedsApproval;
  /** It changes nothing: it may start as soon as its call is whole, while the turn streams. */
  readOnly?: boolean;
  /** Milliseconds before the call becomes a "timed out" error result and its signal aborts. */
  timeout?: number;
};

/** A `Request` for `client.run`. */
export type RunRequest = Omit<Request, "tools"> & {
  tools?: RunTool[];
  /** Model requests at most (default 20). */
  maxSteps?: number;
  /** At the step limit, one more request with `toolChoice: "none"`, so the run ends in text (refused at the start where a provider of the chain cannot send it: Bedrock). */
  finalAnswer?: boolean;
  /** Tools running at once at most (default: no limit). */
  maxConcurrency?: number;
  /**
   * Decides each call that needs approval; without it the run stops
   * `approval_pending`. One that throws fails the run with a `SkylError` of
   * code `callback` (path `approve()`).
   */
  approve?: (
    call: ToolCall,
    args: ToolArgs,
  ) => Promise<boolean | { deny: string }> | boolean | { deny: string };
  /** Decisions by call id, to resume a run that stopped `approval_pending`. */
  approvals?: { [callId: string]: boolean };
};

export type StopReason = "done" | "max_steps" | "truncated" | "client_tool" | "approval_pending";

/** Every event of a run: each step's stream events (with `step`) and the runner's own. */
export type RunEvent =
  | (StreamEvent & { step: number })
  | { type: "step_start"; step: number }
  | { type: "tool_start"; step: number; call: ToolCall }
  | {
      type: "tool_result";
      step: number;
      call: ToolCall;
      result: ToolResultPart;
      durationMs: number;
    }
  | { type: "approval_request"; step: number; call: ToolCall }
  | { type: "step_finish"; step: number; response: Response };

export type RunOutcome = {
  /** Only the new messages (assistant and tool turns), ready to append to the history. */
  messages: Message[];
  /** The last step's response. */
  response: Response;
  /** Every step's response. */
  steps: Response[];
  stopReason: StopReason;
  /** Summed over the steps. */
  usage: Usage;
  /** The calls handed back (`client_tool`) or waiting for a decision (`approval_pending`). */
  pending: ToolCall[];
};

/** An aborted run's `partial`: its new messages so far (started calls answered "cancelled") and every step's response. */
export type RunPartial = { messages: Message[]; steps: Response[] };

/** What `client.run()` returns. */
export declare class RunResult implements AsyncIterable<RunEvent> {
  private constructor();
  /** Every event, as it happens (iterate once; leaving the loop early stops the run). */
  [Symbol.asyncIterator](): AsyncIterator<RunEvent>;
  /**
   * The run's outcome. It rejects with the error that ended the run; that
   * error's `messages` (and an `AbortError`'s `partial.messages`) hold the
   * new messages so far, every call answered, so the history replays.
   */
  result(): Promise<RunOutcome>;
  /** Stops the run: its stream and every running tool's signal; nothing starts after. */
  abort(reason?: unknown): void;
}
