// The mock provider's lifetime in a test file, shared by every suite that
// talks to it (tests/js, tests/pkg, tests/interop, tests/examples). No other
// import: a file that uses it does not load the package or Chromium.
import { before, after } from "node:test";
import { startMock } from "./mock-server.mjs";

/**
 * Starts the mock provider (tests/js/mock-server.mjs; `options` go to
 * startMock) before this file's first test and closes it after its last.
 * Returns a handle that holds the running mock's fields (url, port,
 * requests, reset, close) from the file's first `before` hook on, so a
 * file can use it as `mock.url` in its tests and later hooks.
 */
export function useMock(options) {
  const mock = {};
  before(async () => {
    Object.assign(mock, await startMock(options));
  });
  after(async () => {
    await mock.close?.();
  });
  return mock;
}
