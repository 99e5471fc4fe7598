// Building the `tool` message that answers a tool call.

/** A `tool` message answering `callId` with `content`. */
export function toolResultMessage(callId, content) {
  return {
    role: "tool",
    parts: [
      {
        type: "tool_result",
        callId: String(callId),
        content: typeof content === "string" ? content : JSON.stringify(content),
      },
    ],
  };
}

/** A `tool` message telling the model that call `callId` failed. */
export function toolErrorMessage(callId, err) {
  const content =
    err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
  return {
    role: "tool",
    parts: [{ type: "tool_result", callId: String(callId), content, isError: true }],
  };
}
