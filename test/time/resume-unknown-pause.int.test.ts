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

  it('a pause of a run that failed before anything resumed it: "has already failed", finished (exit 2), not "already resumed" (probe 106 K9)', async () => {
    const files = c.mission('Mix', `mission Mix {
  store out: memory("out")
  action A {
    for i in [1, 2, 3] concurrency 3 {
      match i { c where c == 2 -> abort "two", c where c == 3 -> pause { duration: "1h" }, _ -> continue }
      store { id: i } -> out { key: .id }
    }
  }
  run A
}
`);
    const failed = await c.start(files);
    expect(failed.status).toBe('failed');
    const events = await c.events(failed.runId);
    const pauseId = (events.find((e) => e.type === 'pause.created')!.payload as { pauseId: string }).pauseId;
    expect(events.some((e) => e.type === 'pause.resumed')).toBe(false);
    const refused = c.resume(failed.runId, { expectWaitingOn: `pause:${pauseId}`, payload: { ok: true } });
    await expect(refused).rejects.toThrow(`run ${failed.runId} has already failed, with pause:${pauseId} never resumed: nothing resumes it now. Nothing was changed and your payload was not used`);
    await expect(refused).rejects.toMatchObject({ reason: 'finished' });
    expect(await c.events(failed.runId)).toHaveLength(events.length);
  });
});
