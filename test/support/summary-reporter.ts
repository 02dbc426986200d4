/**
 * Prints the one closing line CI reads, `N passed, N failed, N skipped`, after Vitest's own
 * summary — so a run is judged by what it executed, not only by its exit code — and appends the
 * counts to test-results/summary.jsonl, where test/support/run-tests.mjs adds up the suites.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    const dir = join(import.meta.dirname, '..', '..', 'test-results');
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, 'summary.jsonl'), `${JSON.stringify({ passed, failed, skipped })}\n`);
  }
}
