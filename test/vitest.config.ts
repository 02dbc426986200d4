import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // Integration tests spawn CLI processes and servers; keep parallelism modest on 2 cores.
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
