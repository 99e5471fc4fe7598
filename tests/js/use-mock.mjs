// The mock provider's lifetime in a test file, shared by every suite that
// talks to it (tests/js, tests/pkg, tests/interop, tests/examples). No other
// import: a file that uses it does not load the package or Chromium.
import { before, after } from "node:test";
import { startMock } from "./mock-server.mjs";

/**
 * Starts the mock provider (tests/js/mock-server.mjs; `options` go to
 * startMock) before this file's first test and closes it after its last.
 * Returns a handle that holds the running mock's fields (url, port,
 * requests, reset, close) once it has started. Tests can use `mock.url`
 * directly; a file's own `before` hook that needs it awaits
 * `mock.ready()` first (node:test may run a file's `before` hooks
 * without waiting for the one before it to settle).
 */
export function useMock(options) {
  const mock = {};
  let started;
  mock.ready = () => {
    started ??= startMock(options).then((m) => Object.assign(mock, m));
    return started;
  };
  before(() => mock.ready());
  after(async () => {
    if (started) await (await started).close();
  });
  return mock;
}
