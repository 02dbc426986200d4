import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster per run for the tests on both log backends (test/support/temp-log.ts).
    globalSetup: ['./test/support/pg-global-setup.ts'],
    // Integration tests spawn CLI processes and servers, and wait on them, on fsync and on timers:
    // two files at a time keep 2 cores busy (Vitest's default here is one, cores - 1). Measured on
    // this machine: 626 s for the suite against 1,442 s with one file at a time, all green.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
