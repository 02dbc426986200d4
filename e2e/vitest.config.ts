/**
 * The e2e runner: Vitest driving Chromium through playwright-core (no @playwright/test).
 * One spec file at a time — each starts its own studio server and browser, and two cores do not
 * take several Chromiums well.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['e2e/**/*.spec.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
