/**
 * GUARANTEES 14: replay compares the kind of a store write, set or upsert. A run that stored
 * {id: "x", a: 1, b: 2} and then set {id: "x", a: 3} verified clean against the same mission with
 * `upsert: true` on the second store — whose fields are all in the recorded record — though the
 * edit stores {id: "x", a: 3, b: 2} and what follows reads another record. Both directions diverge.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (second: string) => `mission Ops {
  store s: sql("ops")
  action A {
    store { id: "x", a: 1, b: 2 } -> s { key: .id }
    store { id: "x", a: 3 } -> s { key: .id${second} }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: a store step edited between set and upsert', (backend) => {
  for (const [original, edited] of [['', ', upsert: true'], [', upsert: true', '']] as const) {
    it(`diverges at the write (${original ? 'upsert' : 'set'} became ${edited ? 'upsert' : 'set'})`, async () => {
      c = await openConformance({ backend });
      const result = await c.start(c.mission('ops', mission(original)));
      expect(result.status).toBe('completed');
      expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission(edited)) });
      expect(report.ok).toBe(false);
      expect(report.divergence).toMatchObject({ stepPath: 'A/1', cause: 'edit' });
      expect(report.divergence!.change).toContain(`was ${original ? 'an upsert' : 'a set'}`);
    });
  }
});
