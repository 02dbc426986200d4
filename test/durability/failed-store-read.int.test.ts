/**
 * A run whose read of a PostgREST store failed (rows the log cannot hold, here a number past a
 * 64-bit float) fails at that step with no value recorded; replayed, the step must fail again as
 * it did. Verify called such a run diverged on its own log ("recorded step.failed, replay asked
 * for value.recorded … please report it") — helper 42. Both reads: a `for` over the store, and
 * an expression that reads it (read before the step, step-runtime.ts prefetchReads).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { startFakePostgrest } from '../stores/helpers/fake-postgrest.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const mission = (read: string) => `mission FailedRead {
  store people: postgrest("people")
  store out: memory("out")
  action Report {
    store { id: "before" } -> out
    ${read}
  }
  run Report
}
`;

describe('a store read that failed live', () => {
  for (const [what, read] of [
    ['a for over the store', 'for p in people { store p -> out }'],
    ['an expression reading the store', 'let n = count(people)'],
  ]) {
    it(`fails again when replayed, and verifies: ${what}`, async () => {
      const pg = await startFakePostgrest({ table: 'people' });
      try {
        c = await openConformance({ vars: { REQON_STORE_PEOPLE_URL: pg.url } });
        pg.failWith = { status: 200, body: '[{"id":"a","n":1e400}]' };
        const result = await c.start(c.mission('failed-read', mission(read)));
        expect(result.status === 'failed' ? result.error.message : result.status).toMatch(/rows the run cannot take: the JSON holds Infinity at \$\[0\]\.n/);
        const report = await verifyRun(c.log, result.runId, { env: c.env });
        expect(report.divergence ?? null).toBeNull();
        expect(fullyVerified(report)).toBe(true);
      } finally {
        await pg.close();
      }
    });
  }
});
