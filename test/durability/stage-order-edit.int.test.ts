/**
 * GUARANTEES 14: an edited step order is a divergence — the pipeline's too. Events are taken by
 * step path and each action's steps have paths of their own, so a finished run recorded with
 * `run A then B` verified as a full match against `run B then A` (helper 96), though the edit
 * sends B's request first; and a stage's action moved into a parallel stage passed the same way.
 * The stage's recorded actions are now compared where the stage starts or is skipped (a parallel
 * stage's as a set: they run side by side).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (pipeline: string) => `mission Order {
  store s: memory("s")
  action A {
    store { id: "a" } -> s { key: .id }
  }
  action B {
    store { id: "b" } -> s { key: .id }
  }
  action C {
    store { id: "c" } -> s { key: .id }
  }
  ${pipeline}
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: a pipeline whose stages were reordered', (backend) => {
  const edits: [string, string, string][] = [
    ['run A then B', 'run B then A', 'ran action A, and now runs action B'],
    ['run A then B then [C, A]', 'run A then [C, A] then B', 'ran action B, and now runs actions [C, A]'],
    ['run A then B then [C, A]', 'run [C, A] then A then B', 'ran action A, and now runs actions [C, A]'],
    ['run A then [B, C]', 'run A then [B, A]', 'ran actions [B, C], and now runs actions [B, A]'],
  ];
  it.each(edits)('%s edited to %s diverges at the stage', async (recorded, edited, change) => {
    c = await openConformance({ backend });
    const result = await c.start(c.mission('order', mission(recorded)));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission(edited)) });
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ cause: 'edit' });
    expect(report.divergence!.stepPath).toMatch(/^:stage\//);
    expect(report.divergence!.change).toContain(change);
  });

  it('an unchanged pipeline, or a parallel stage listing its actions in another order, still verifies', async () => {
    c = await openConformance({ backend });
    const result = await c.start(c.mission('order', mission('run A then [B, C]')));
    for (const same of ['run A then [B, C]', 'run A then [C, B]']) {
      expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', mission(same)) })), same).toBe(true);
    }
  });
});
