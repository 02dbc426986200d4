/**
 * `reqon resume RUN --pause ID` naming a pause the run never made (a typo) said "no longer waits
 * on pause:ID … it was already resumed", which sends a user looking for who resumed it. It says
 * the run has no such pause and which it has; a pause that was resumed is still said so.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

describe('resume --pause', () => {
  it('a pause the run never made is named as such, nothing changed; the real one resumes', async () => {
    const files = c.mission('Approve', `mission Approve {
  store out: memory("out")
  action A {
    pause { duration: "2d" }
    store { id: 1 } -> out { key: .id }
  }
  run A
}
`);
    const paused = await c.start(files);
    expect(paused.status).toBe('suspended');
    if (paused.status !== 'suspended') return;
    const pauseId = paused.waitingOn.replace(/^pause:/, '');
    const before = (await c.events(paused.runId)).length;

    await expect(c.resume(paused.runId, { expectWaitingOn: 'pause:nope', payload: { ok: true } })).rejects.toThrow(
      `run ${paused.runId} has no pause nope (its pauses: ${pauseId}; it waits on pause:${pauseId} now); nothing was changed and your payload was not used`,
    );
    expect(await c.events(paused.runId)).toHaveLength(before);

    const resumed = await c.resume(paused.runId, { expectWaitingOn: `pause:${pauseId}` });
    expect(resumed.status).toBe('completed');
    await expect(c.resume(paused.runId, { expectWaitingOn: `pause:${pauseId}` })).rejects.toThrow(/no longer waits on pause:\S+ \(it is completed\): it was already resumed/);
  });
});
