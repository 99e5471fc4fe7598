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
//     (skyl must not retry: text was handed out; it keeps that text);
//   - "fallback": the provider answers 529 Overloaded to every request (the
//     mock's `fail`, set on the client in chat.js), past its retries; the
//     client's `fallback` provider answers instead, and the chat shows
//     skyl's `fallback` warning.

export const FAULTS = {
  none: "no fault",
  cut: "cut the stream mid-tool-call",
  "overload-start": "in-band overload before the first event",
  "overload-text": "in-band overload after the first text",
  fallback: "the provider is overloaded: a fallback provider answers",
};

/**
 * For the "fallback" fault: the mock headers that make the client's own
 * provider answer 529 to every request (`steps` steps of two attempts),
 * and the provider that answers instead.
 */
export function overloaded(provider, steps) {
  const headers = {
    "x-mock-fail": Array(steps * 2)
      .fill(529)
      .join(","),
    "x-mock-scenario": `fallback ${Date.now()} ${Math.random()}`,
  };
  return { headers, fallback: provider === "anthropic" ? "openai" : "anthropic" };
}

/**
 * A fetch for skyl's Client. `names` are the declared tool names (the cut
 * comes after the frame that opens a call of one of them), `provider` the
 * wire format, `onAttempt(n)` is told of each attempt (n: of this request).
 */
export function faultFetch({ fault, names, provider, onAttempt }) {
  // Attempts of one request: a retry sends the same body again, the tool
  // runner's next step another one.
  let attempts = 0;
  let sent = 0;
  let body = null;
  return async (input, init = {}) => {
    if (init.body !== body) attempts = 0;
    body = init.body;
    attempts += 1;
    sent += 1;
    onAttempt?.(attempts);
    const headers = new Headers(init.headers);
    if (fault === "overload-start" && sent === 1) headers.set("x-mock-inband_error", "start");
    if (fault === "overload-text") headers.set("x-mock-inband_error", "after_text");
    const res = await fetch(input, { ...init, headers });
    if (fault !== "cut" || !res.ok || !res.body) return res;
    // Gemini sends a call whole in one frame, so the cut falls in the frame
    // after it; elsewhere two frames after the call opened, inside its
    // streamed arguments. Bedrock's frames are binary event-stream messages.
    const frames = provider === "gemini" ? 1 : 2;
    const binary = /vnd\.amazon\.eventstream/.test(res.headers.get("content-type") ?? "");
    return new Response(res.body.pipeThrough(cutAfterCall(names, frames, binary)), {
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
 * Passes bytes through until `frames` SSE events (or, if `binary`, AWS
 * event-stream messages) have ended after the one that names a tool, then
 * 12 bytes into the next, and ends the body there: no terminal frame ever
 * arrives. Each byte is searched once: the marker search resumes where the
 * last chunk's could not yet match, the frame count where it stopped.
 */
export function cutAfterCall(names, frames, binary = false) {
  const markers = names.map((n) => encoder.encode(`"name":${JSON.stringify(n)}`));
  const overlap = Math.max(0, ...markers.map((m) => m.length - 1));
  let seen = new Uint8Array(1024); // the bytes so far, in seen[0..length)
  let length = 0;
  let scan = -1; // the next byte the frame count reads, once a call began
  let ends = 0; // frame ends counted since the call began
  let message = 0; // binary: where the next event-stream message starts
  let cutAt = -1;
  let done = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (done) return;
      const base = length;
      if (base + chunk.length > seen.length) {
        const grown = new Uint8Array(Math.max(seen.length * 2, base + chunk.length));
        grown.set(seen.subarray(0, base));
        seen = grown;
      }
      seen.set(chunk, base);
      length += chunk.length;
      const bytes = seen.subarray(0, length);
      if (scan < 0) {
        for (const m of markers) {
          const at = indexOf(bytes, m, base - overlap);
          if (at >= 0 && (scan < 0 || at < scan)) scan = at;
        }
      }
      if (binary && cutAt < 0) countMessages(bytes);
      else if (scan >= 0 && cutAt < 0) countFrames(bytes);
      if (cutAt < 0 || cutAt > length) {
        controller.enqueue(chunk);
        return;
      }
      if (cutAt > base) controller.enqueue(chunk.subarray(0, cutAt - base));
      done = true;
      controller.terminate();
    },
  });

  /**
   * Walks whole event-stream messages (each opens with its total length,
   * 4 bytes big-endian); counts those that end past the tool's name, and
   * sets `cutAt` 12 bytes after the `frames`-th.
   */
  function countMessages(bytes) {
    while (message + 4 <= bytes.length) {
      const end =
        message +
        ((bytes[message] << 24) |
          (bytes[message + 1] << 16) |
          (bytes[message + 2] << 8) |
          bytes[message + 3]);
      if (end < message + 16 || end > bytes.length) return; // malformed, or not all here yet
      if (scan >= 0 && end > scan && ++ends === frames) {
        cutAt = end + 12;
        return;
      }
      message = end;
    }
  }

  /** Counts blank lines (LF LF, or LF CR LF in CRLF framing) from `scan`; sets `cutAt` at the `frames`-th. */
  function countFrames(bytes) {
    for (; scan + 1 < bytes.length; scan++) {
      if (bytes[scan] !== 10) continue;
      const lf = bytes[scan + 1] === 10;
      const cr = bytes[scan + 1] === 13;
      if (cr && scan + 2 >= bytes.length) return; // LF CR: the next chunk decides
      if (!lf && !(cr && bytes[scan + 2] === 10)) continue;
      const next = scan + (lf ? 2 : 3);
      ends += 1;
      if (ends === frames) {
        cutAt = next + 12;
        return;
      }
      scan = next - 1;
    }
  }
}
