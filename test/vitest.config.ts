import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster per run for the tests on both log backends (test/support/temp-log.ts).
    globalSetup: ['./test/support/pg-global-setup.ts'],
    // Integration tests spawn CLI processes and servers; keep parallelism modest on 2 cores.
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
