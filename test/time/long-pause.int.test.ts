/**
 * Long durations on a fake clock: a pause of 30 days, of 2^31+5 ms (past setTimeout's limit) and
 * of 400 days is a row with `wakeAt`, not a timer. The run suspends with wakeAt exactly
 * now + duration; a worker tick one millisecond early does nothing; at the due instant it
 * completes the run, whose POST is applied once. No sleep and no real setTimeout anywhere near
 * the duration is armed while it waits. On every log backend: `wakeAt` is in the time of the
 * worker that set it (GUARANTEES, "On PostgreSQL"), so a fake clock drives it on either.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRun } from '../../engine/executor/run-mission.js';
import { backends } from '../support/temp-log.js';
import { DAY, timeWorld, type TimeWorld } from './support/time-fixtures.js';

let world: TimeWorld;

function missionWith(duration: string): string {
  return `mission LongPause {
  source Api { auth: none, base: "http://fake.test" }
  store done: memory("done")
  action A {
    post "/before" { body: { step: 1 } }
    pause { duration: ${duration} }
    post "/after" { body: { step: 2 } }
    store { id: "x", ok: true } -> done { key: .id }
  }
  run A
}
`;
}

const CASES = [
  { name: '30 days', literal: '"30d"', ms: 30 * DAY },
  { name: '2^31 + 5 ms (beyond setTimeout)', literal: String(2 ** 31 + 5), ms: 2 ** 31 + 5 },
  { name: '400 days', literal: '"400d"', ms: 400 * DAY },
];

describe.each(backends)('%s: a long pause waits in the database, not in a timer', (backend) => {
  beforeEach(async () => {
    world = await timeWorld({ backend });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await world.cleanup();
  });

  for (const c of CASES) {
    it(`${c.name}: suspended with wakeAt = now + duration, early tick no-op, due tick completes once`, async () => {
      const delays: number[] = [];
      const realSetTimeout = globalThis.setTimeout;
      vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
        delays.push(ms ?? 0);
        return realSetTimeout(fn, ms);
      }) as typeof setTimeout);
      const { env, log } = world;
      const t0 = env.clock.now();
      const files = world.mission('long.vague', missionWith(c.literal));
      const first = await startRun(files, { sources: {}, env: {} }, { log, env, dataDir: world.dir });
      expect(first.status).toBe('suspended');
      if (first.status !== 'suspended') return;
      expect(first.wakeAt).toBe(t0 + c.ms);
      const row = (await log.getRun(first.runId))!;
      expect(row).toMatchObject({ status: 'suspended', wakeAt: t0 + c.ms, owner: null });
      expect(row.waitingOn).toMatch(/^pause:/);

      const worker = world.worker();
      await env.clock.advance(c.ms - 1);
      expect(await worker.tick()).toBe(0);
      await worker.drain();
      expect((await log.getRun(first.runId))!.status).toBe('suspended');
      expect(env.http.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['POST /before']);

      await env.clock.advance(1);
      expect(await worker.tick()).toBe(1);
      await worker.drain();
      const done = (await log.getRun(first.runId))!;
      expect(done.status).toBe('completed');
      expect(env.http.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['POST /before', 'POST /after']);
      expect([...world.applied.values()]).toEqual([1, 1]);
      const events = await log.read(first.runId);
      const resumed = events.filter((e) => e.type === 'pause.resumed');
      expect(resumed).toHaveLength(1);
      expect(resumed[0]!.payload).toMatchObject({ by: 'timer' });
      expect(resumed[0]!.recordedAt).toBe(t0 + c.ms);

      // Nothing slept for the pause: no fake sleep, no pending sleeper, no long real timer.
      expect(env.clock.pending).toBe(0);
      expect(Math.max(0, ...env.clock.sleeps)).toBeLessThan(60_000);
      expect(Math.max(0, ...delays)).toBeLessThan(60_000);
      // A second tick finds nothing more to do.
      expect(await worker.tick()).toBe(0);
    });
  }
});
