/**
 * `run [A, B]` where A pauses and B fails: the stage fails only once A's pause ends (every branch
 * runs to its end first), so the run suspends — and it now says at once that B failed, where it
 * said nothing until A resumed, however long after. On resume the stage fails with B's error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Split {
  action Waits {
    pause { resumeOn: webhook "/approve" }
  }
  action Breaks {
    abort "the ledger is closed"
  }
  run [Waits, Breaks]
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('a parallel branch that fails while its sibling is paused', () => {
  it('is said when the run suspends, and fails the stage on resume', async () => {
    c = await openConformance();
    const progress: string[] = [];
    const result = await c.start(c.mission('split', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('suspended');
    expect(progress).toContain('warning: a parallel branch failed (Breaks: the ledger is closed); the stage fails once the suspended branch resumes and ends');
    const resumed = await c.resume(result.runId, { payload: { ok: true } });
    expect(resumed.status).toBe('failed');
    expect(resumed.status === 'failed' && resumed.error.message).toMatch(/Breaks: the ledger is closed/);
  });
});
