// Faults on purpose, for the chat's direct route: a fetch handed to skyl's
// Client (its `fetch` option) that stands where a flaky network or proxy
// would. It counts attempts, so the page can show skyl's retries, and
// injects one of:
//   - "cut": the body ends cleanly in the middle of the first tool call, as
//     a proxy that drops the upstream connection would end it;
//   - "overload-start": the mock sends an in-band server error before any
//     content, on the first attempt only (skyl may retry: nothing was handed
//     out yet);
//   - "overload-text": the same error after the first text, on every attempt
//     (skyl must not retry: text was handed out; it keeps that text).

export const FAULTS = {
  none: "no fault",
  cut: "cut the stream mid-tool-call",
  "overload-start": "in-band overload before the first event",
  "overload-text": "in-band overload after the first text",
};

/**
 * A fetch for skyl's Client. `names` are the declared tool names (the cut
 * comes after the frame that opens a call of one of them), `provider` the
 * wire format, `onAttempt(n)` is told of each attempt.
 */
export function faultFetch({ fault, names, provider, onAttempt }) {
  let attempts = 0;
  return async (input, init = {}) => {
    attempts += 1;
    onAttempt?.(attempts);
    const headers = new Headers(init.headers);
    if (fault === "overload-start" && attempts === 1) headers.set("x-mock-inband_error", "start");
    if (fault === "overload-text") headers.set("x-mock-inband_error", "after_text");
    const res = await fetch(input, { ...init, headers });
    if (fault !== "cut" || !res.ok || !res.body) return res;
    // Gemini sends a call whole in one frame, so the cut falls in the frame
    // after it; elsewhere two frames after the call opened, inside its
    // streamed arguments.
    const frames = provider === "gemini" ? 1 : 2;
    return new Response(res.body.pipeThrough(cutAfterCall(names, frames)), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

const encoder = new TextEncoder();

/** Index of `needle` in `hay` at or after `from`, or -1. */
function indexOf(hay, needle, from) {
  outer: for (let i = Math.max(0, from); i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * Passes bytes through until `frames` SSE events have ended after the one
 * that names a tool, then 12 bytes into the next event, and ends the body
 * there: no terminal frame ever arrives.
 */
export function cutAfterCall(names, frames) {
  const markers = names.map((n) => encoder.encode(`"name":${JSON.stringify(n)}`));
  let seen = new Uint8Array(0);
  let callAt = -1; // where the first call's name appeared
  let done = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (done) return;
      const base = seen.length;
      const all = new Uint8Array(base + chunk.length);
      all.set(seen);
      all.set(chunk, base);
      seen = all;
      if (callAt < 0) {
        for (const m of markers) {
          const at = indexOf(seen, m, 0);
          if (at >= 0 && (callAt < 0 || at < callAt)) callAt = at;
        }
      }
      const cut = callAt < 0 ? -1 : cutPoint(seen, callAt, frames);
      if (cut < 0) {
        controller.enqueue(chunk);
        return;
      }
      if (cut > base) controller.enqueue(chunk.subarray(0, cut - base));
      done = true;
      controller.terminate();
    },
  });
}

/** The cut offset: 12 bytes after the `frames`-th blank line after `from`, once those bytes exist. */
function cutPoint(bytes, from, frames) {
  let ends = 0;
  for (let i = from; i + 1 < bytes.length; i++) {
    // A blank line: LF LF, or LF CR LF (CRLF framing).
    const blank =
      bytes[i] === 10 && (bytes[i + 1] === 10 || (bytes[i + 1] === 13 && bytes[i + 2] === 10));
    if (!blank) continue;
    ends += 1;
    const next = i + (bytes[i + 1] === 10 ? 2 : 3);
    if (ends === frames) return next + 12 <= bytes.length ? next + 12 : -1;
    i = next - 1;
  }
  return -1;
}
