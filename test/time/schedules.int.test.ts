/**
 * Schedules on a fake clock, in process: `every` fires on time and keeps its phase, missed ticks
 * after downtime fire once (and say how many they swallowed), `at` fires once and is not re-armed
 * by re-registering, skipIfRunning / maxConcurrency consume a firing without a run, `retry`
 * restarts a failed scheduled run after its delay up to maxRetries, a worker with no free slot fires
 * a due tick once one frees (the ticks missed meanwhile coalesced), two workers racing on one
 * firing start one run, and cron instants honour the time zone (DST included). On every log
 * backend: a firing is the log's compare-and-set, its instant the worker's clock.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonResponse } from '../../engine/env/fake-env.js';
import type { ScheduleSpec } from '../../engine/log/log.js';
import { coalesce, nextFireAfter, parseAt, registerSchedule, ScheduleError } from '../../engine/worker/schedules.js';
import { MissionInvalidError } from '../../engine/executor/run-mission.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends } from '../support/temp-log.js';
import { waitFor } from './support/processes.js';
import { timeWorld, type TimeWorld } from './support/time-fixtures.js';

let world: TimeWorld;

const OPTS = { sources: {}, env: {} };

function mission(name: string, schedule: string, body = 'store { id: "x" } -> done { key: .id }'): string {
  return `mission ${name} {
  schedule: ${schedule}
  source Api { auth: none, base: "http://fake.test" }
  store done: memory("done")
  action A {
    ${body}
  }
  run A
}
`;
}

async function tickAndDrain(w: ReturnType<TimeWorld['worker']>): Promise<number> {
  const n = await w.tick();
  await w.drain();
  return n;
}

describe.each(backends)('%s', (backend) => {
  beforeEach(async () => {
    world = await timeWorld({
      backend,
      handler: (req) => (new URL(req.url).pathname === '/fail' ? jsonResponse(404, { error: 'gone' }) : jsonResponse(200, { ok: true })),
    });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  describe('every N unit', () => {
    it('fires on time, keeps its phase, and coalesces missed ticks into one firing', async () => {
      const { env, log } = world;
      const t0 = env.clock.now();
      const reg = await registerSchedule(log, world.mission('e.vague', mission('Every', 'every 10 seconds')), OPTS, t0);
      expect(reg.nextFireAt).toBe(t0 + 10_000);
      const lines: string[] = [];
      const w = world.worker('every-worker', (line) => lines.push(line));

      await env.clock.advance(9_999);
      expect(await tickAndDrain(w)).toBe(0);
      await env.clock.advance(1);
      expect(await tickAndDrain(w)).toBe(1);
      expect(await tickAndDrain(w)).toBe(0); // the same instant never fires twice
      await env.clock.advance(10_000);
      expect(await tickAndDrain(w)).toBe(1);

      // Downtime: 95 s pass without a tick. One firing, for the oldest missed instant.
      await env.clock.advance(95_000);
      expect(await tickAndDrain(w)).toBe(1);
      expect(await tickAndDrain(w)).toBe(0);
      const said = lines.filter((l) => l.startsWith('schedule Every: fired'));
      expect(said).toHaveLength(3);
      // For the oldest missed instant, standing in for the 8 after it (40 s … 110 s), missed until now (115 s).
      expect(said[2]).toContain(`fired for ${new Date(t0 + 30_000).toISOString()} (and for the 8 tick(s) after it missed until ${new Date(t0 + 115_000).toISOString()}, coalesced into this one firing)`);
      expect(said[2]).toContain(`next ${new Date(t0 + 120_000).toISOString()}`);
      const firings = await log.scheduleFirings('Every');
      expect(firings.map((f) => [f.dueAt - t0, f.attempt, f.outcome, f.missed])).toEqual([
        [10_000, 0, 'started', 0],
        [20_000, 0, 'started', 0],
        [30_000, 0, 'started', 8],
      ]);
      expect((await log.getSchedule('Every'))!.nextFireAt).toBe(t0 + 120_000);
      const runs = await log.listRuns();
      expect(runs).toHaveLength(3);
      expect(runs.every((r) => r.status === 'completed' && r.mission === 'Every')).toBe(true);
      expect(new Set(firings.map((f) => f.runId))).toEqual(new Set(runs.map((r) => r.runId)));
    });

    it('re-registering an unchanged schedule keeps its position; a changed one re-arms', async () => {
      const { env, log } = world;
      const t0 = env.clock.now();
      await registerSchedule(log, world.mission('e.vague', mission('Keep', 'every 10 seconds')), OPTS, t0);
      await env.clock.advance(4_000);
      const again = await registerSchedule(log, world.mission('e.vague', mission('Keep', 'every 10 seconds', 'store { id: "y" } -> done { key: .id }')), OPTS, env.clock.now());
      expect(again.nextFireAt).toBe(t0 + 10_000);
      expect(again.missionFiles.files[0]!.text).toContain('"y"');
      const changed = await registerSchedule(log, world.mission('e.vague', mission('Keep', 'every 1 minutes')), OPTS, env.clock.now());
      expect(changed.nextFireAt).toBe(t0 + 4_000 + 60_000);
    });

    it('two workers ticking at the same instant start exactly one run', async () => {
      const { env, log } = world;
      await registerSchedule(log, world.mission('e.vague', mission('Race', 'every 1 seconds')), OPTS, env.clock.now());
      const a = world.worker('worker-a');
      const b = world.worker('worker-b');
      for (let i = 0; i < 5; i++) {
        await env.clock.advance(1_000);
        const [na, nb] = await Promise.all([a.tick(), b.tick()]);
        expect(na + nb).toBe(1);
        await Promise.all([a.drain(), b.drain()]);
      }
      const firings = await log.scheduleFirings('Race');
      expect(firings).toHaveLength(5);
      expect(new Set(firings.map((f) => f.dueAt)).size).toBe(5);
      expect(await log.listRuns()).toHaveLength(5);
    });
  });

  describe('at', () => {
    it('fires once at its instant and is not re-armed by registering again', async () => {
      const { env, log } = world;
      const t0 = env.clock.now(); // 2025-01-01T00:00:00Z
      const files = world.mission('a.vague', mission('Once', 'at "2025-01-01T00:00:05Z"'));
      expect((await registerSchedule(log, files, OPTS, t0)).nextFireAt).toBe(t0 + 5_000);
      const w = world.worker();
      await env.clock.advance(4_999);
      expect(await tickAndDrain(w)).toBe(0);
      await env.clock.advance(1);
      expect(await tickAndDrain(w)).toBe(1);
      expect((await log.getSchedule('Once'))!.nextFireAt).toBeNull();
      await registerSchedule(log, files, OPTS, env.clock.now());
      await env.clock.advance(60_000);
      expect(await tickAndDrain(w)).toBe(0);
      expect(await log.listRuns()).toHaveLength(1);
      expect((await log.listRuns())[0]!.status).toBe('completed');
    });

    it('reads a date-time without an offset in the schedule time zone', () => {
      expect(parseAt('2025-07-01T09:00:00', 'America/New_York')).toBe(Date.UTC(2025, 6, 1, 13));
      expect(parseAt('2025-01-01T09:00', 'Europe/Paris')).toBe(Date.UTC(2025, 0, 1, 8));
      expect(parseAt('2025-01-01T09:00:00+02:00', 'UTC')).toBe(Date.UTC(2025, 0, 1, 7));
      expect(() => parseAt('tomorrow', 'UTC')).toThrow(ScheduleError);
      // Years 0–99 are those years, not 1900–1999 (helper 97: registered and fired as 1950).
      expect(new Date(parseAt('0050-06-01T00:00:00Z', 'UTC')).toISOString()).toBe('0050-06-01T00:00:00.000Z');
      expect(new Date(parseAt('0099-12-31T23:00:00', 'Europe/London')).getUTCFullYear()).toBe(99);
      // Year 0 too (Intl calls it 1 BC), and a zone's offset of minutes and seconds then (London's mean time).
      expect(new Date(parseAt('0000-06-01T00:00', 'UTC')).toISOString()).toBe('0000-06-01T00:00:00.000Z');
      expect(new Date(parseAt('0000-06-01T00:00', 'Europe/London')).toISOString()).toBe('0000-06-01T00:01:15.000Z');
      // A wall time in a spring-forward gap does not exist: taken after it (03:30 EDT), as a cron
      // in the zone fires — not an hour early (01:30 EST). In a fall-back overlap, the first.
      expect(parseAt('2027-03-14T02:30:00', 'America/New_York')).toBe(Date.UTC(2027, 2, 14, 7, 30));
      expect(parseAt('2027-11-07T01:30:00', 'America/New_York')).toBe(Date.UTC(2027, 10, 7, 5, 30));
    });
  });

  describe('concurrency limits', () => {
    const PAUSED = 'pause { duration: "1h" }\n    store { id: "x" } -> done { key: .id }';

    it('skipIfRunning: a firing while a run is suspended is consumed without a run', async () => {
      const { env, log } = world;
      await registerSchedule(log, world.mission('s.vague', mission('Skip', 'every 1 seconds { skipIfRunning: true }', PAUSED)), OPTS, env.clock.now());
      const w = world.worker();
      await env.clock.advance(1_000);
      expect(await tickAndDrain(w)).toBe(1);
      await env.clock.advance(1_000);
      expect(await tickAndDrain(w)).toBe(0);
      await env.clock.advance(1_000);
      expect(await tickAndDrain(w)).toBe(0);
      const firings = await log.scheduleFirings('Skip');
      expect(firings.map((f) => [f.outcome, f.reason])).toEqual([
        ['started', null],
        ['skipped', 'skip-if-running'],
        ['skipped', 'skip-if-running'],
      ]);
      const runs = await log.listRuns();
      expect(runs.map((r) => r.status)).toEqual(['suspended']);
    });

    it('maxConcurrency: at most N runs running or suspended; the next firing after one ends starts again', async () => {
      const { env, log } = world;
      await registerSchedule(log, world.mission('m.vague', mission('Max', 'every 1 seconds { maxConcurrency: 2 }', PAUSED)), OPTS, env.clock.now());
      const w = world.worker();
      const started: number[] = [];
      for (let i = 0; i < 4; i++) {
        await env.clock.advance(1_000);
        started.push(await tickAndDrain(w));
      }
      expect(started).toEqual([1, 1, 0, 0]);
      expect((await log.scheduleFirings('Max')).map((f) => f.reason)).toEqual([null, null, 'max-concurrency', 'max-concurrency']);
      expect((await log.listRuns({ status: 'suspended' })).length).toBe(2);
    });

    it('a worker whose every slot is busy fires a due tick only when a slot frees, the ticks missed meanwhile coalesced into one run (GUARANTEES 21)', async () => {
      const { env, log } = world;
      // The first run holds the worker's one slot until its request is answered.
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      let slowCalls = 0;
      const counting = env.http.handler;
      env.http.handler = async (req) => {
        if (new URL(req.url).pathname === '/slow' && ++slowCalls === 1) await answered;
        return counting(req);
      };
      const t0 = env.clock.now();
      await registerSchedule(log, world.mission('b.vague', mission('Busy', 'every 10 seconds', 'get "/slow"\n    store { id: "x" } -> done { key: .id }')), OPTS, t0);
      const lines: string[] = [];
      const w = new Worker({ log, env, dataDir: path.join(world.dir, 'data'), owner: 'one-slot', pollMs: 100, concurrency: 1, progress: (line) => lines.push(line) });
      try {
        await env.clock.advance(10_000);
        expect(await w.tick()).toBe(1);
        await waitFor('the first run\'s request', () => slowCalls === 1);
        // Ticks at 20 s, 30 s and 40 s come due while the slot is taken: nothing fires.
        for (let i = 0; i < 3; i++) {
          await env.clock.advance(10_000);
          expect(await w.tick()).toBe(0);
        }
        expect(await log.scheduleFirings('Busy')).toHaveLength(1);
        await env.clock.advance(5_000); // 45 s
        answer();
        await w.drain();
        // The slot is free: one firing, for the oldest missed tick (20 s), standing in for 30 s and 40 s.
        expect(await w.tick()).toBe(1);
        await w.drain();
        expect(await w.tick()).toBe(0);
        const firings = await log.scheduleFirings('Busy');
        expect(firings.map((f) => [f.dueAt - t0, f.outcome, f.missed])).toEqual([
          [10_000, 'started', 0],
          [20_000, 'started', 2],
        ]);
        expect((await log.getSchedule('Busy'))!.nextFireAt).toBe(t0 + 50_000);
        expect(lines.filter((l) => l.startsWith('schedule Busy: fired'))[1]).toContain(
          `fired for ${new Date(t0 + 20_000).toISOString()} (and for the 2 tick(s) after it missed until ${new Date(t0 + 45_000).toISOString()}, coalesced into this one firing)`,
        );
        const runs = await log.listRuns();
        expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
      } finally {
        w.stop();
        answer();
        await w.drain();
      }
    });
  });

  describe('retry', () => {
    it('starts a failed scheduled run again after delaySeconds, up to maxRetries', async () => {
      const { env, log } = world;
      const files = world.mission('r.vague', mission('Flaky', 'every 1 hours { retry: { maxRetries: 2, delaySeconds: 5 } }', 'get "/fail"'));
      await registerSchedule(log, files, OPTS, env.clock.now());
      const w = world.worker();
      await env.clock.advance(3_600_000);
      expect(await tickAndDrain(w)).toBe(1);
      expect((await log.listRuns())[0]!.status).toBe('failed');
      await env.clock.advance(4_999);
      expect(await tickAndDrain(w)).toBe(0);
      await env.clock.advance(1);
      expect(await tickAndDrain(w)).toBe(1);
      await env.clock.advance(5_000);
      expect(await tickAndDrain(w)).toBe(1);
      await env.clock.advance(5_000);
      expect(await tickAndDrain(w)).toBe(0);
      const firings = await log.scheduleFirings('Flaky');
      expect(firings.map((f) => [f.attempt, f.outcome])).toEqual([
        [0, 'started'],
        [1, 'started'],
        [2, 'started'],
      ]);
      expect(new Set(firings.map((f) => f.dueAt)).size).toBe(1);
      const runs = await log.listRuns();
      expect(runs.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
      expect(env.http.requests.filter((r) => r.url.endsWith('/fail'))).toHaveLength(3);
    });
  });

  describe('cron', () => {
    const ny: ScheduleSpec = { trigger: { kind: 'cron', expression: '0 9 * * *' }, timezone: 'America/New_York' };

    it('a cron or `at` schedule without timezone: is in UTC whatever the machine\'s zone (GUARANTEES 21)', async () => {
      const { env, log } = world;
      const saved = process.env.TZ;
      try {
        for (const [i, zone] of ['Asia/Kolkata', 'America/Los_Angeles', 'Pacific/Chatham'].entries()) {
          process.env.TZ = zone;
          expect(new Date(Date.UTC(2025, 0, 1)).getTimezoneOffset(), zone).not.toBe(0); // the zone took effect
          const now = env.clock.now(); // 2025-01-01T00:00:00Z
          const daily = await registerSchedule(log, world.mission(`c${i}.vague`, mission(`Daily${i}`, 'cron "0 9 * * *"')), OPTS, now);
          expect(new Date(daily.nextFireAt!).toISOString(), zone).toBe('2025-01-01T09:00:00.000Z');
          const once = await registerSchedule(log, world.mission(`a${i}.vague`, mission(`Once${i}`, 'at "2025-01-02T09:00:00"')), OPTS, now);
          expect(new Date(once.nextFireAt!).toISOString(), zone).toBe('2025-01-02T09:00:00.000Z');
        }
      } finally {
        if (saved === undefined) delete process.env.TZ;
        else process.env.TZ = saved;
      }
    });

    it('computes the next instant in the schedule time zone, across daylight saving', () => {
      expect(nextFireAfter(ny, Date.UTC(2025, 0, 1))).toBe(Date.UTC(2025, 0, 1, 14)); // EST
      expect(nextFireAfter(ny, Date.UTC(2025, 6, 1))).toBe(Date.UTC(2025, 6, 1, 13)); // EDT
      expect(nextFireAfter(ny, Date.UTC(2025, 6, 1, 13))).toBe(Date.UTC(2025, 6, 2, 13)); // strictly after
      expect(nextFireAfter(ny, Date.UTC(2025, 2, 8, 15))).toBe(Date.UTC(2025, 2, 9, 13)); // the DST switch day
      const utc: ScheduleSpec = { trigger: { kind: 'cron', expression: '*/15 * * * *' } };
      expect(nextFireAfter(utc, Date.UTC(2025, 0, 1, 10, 7))).toBe(Date.UTC(2025, 0, 1, 10, 15));
      expect(coalesce(utc, Date.UTC(2025, 0, 1, 10, 15), Date.UTC(2025, 0, 1, 11, 20))).toEqual({ next: Date.UTC(2025, 0, 1, 11, 30), missed: 4 });
      // Ten days of every minute missed: counted to 10,000 and said to be a lower bound (helper 97: 14,399 read as 10,000).
      const everyMinute: ScheduleSpec = { trigger: { kind: 'cron', expression: '* * * * *' } };
      expect(coalesce(everyMinute, Date.UTC(2025, 0, 1), Date.UTC(2025, 0, 11))).toEqual({ next: Date.UTC(2025, 0, 11, 0, 1), missed: 10_000, atLeast: true });
    });

    it('when clocks go back, a schedule of every hour or minutes fires through both passes of the repeated hour, a fixed hour once (helper 75)', () => {
      const walk = (expression: string, timezone: string, from: string, n: number) => {
        const out: string[] = [];
        let t = Date.parse(from);
        for (let i = 0; i < n; i++) {
          t = nextFireAfter({ trigger: { kind: 'cron', expression }, timezone }, t)!;
          out.push(new Date(t).toISOString().slice(11, 16));
        }
        return out;
      };
      // New York, 2026-11-01: 01:00–01:59 EDT (05:00Z–05:59Z) and again EST (06:00Z–06:59Z). croner went 05:45Z → 07:00Z.
      expect(walk('*/15 * * * *', 'America/New_York', '2026-11-01T04:50:00Z', 10)).toEqual(['05:00', '05:15', '05:30', '05:45', '06:00', '06:15', '06:30', '06:45', '07:00', '07:15']);
      // Berlin and London, 2026-10-25: croner skipped one pass of the repeated hour.
      expect(walk('*/30 * * * *', 'Europe/Berlin', '2026-10-24T23:00:00Z', 6)).toEqual(['23:30', '00:00', '00:30', '01:00', '01:30', '02:00']);
      expect(walk('0 * * * *', 'Europe/London', '2026-10-24T22:30:00Z', 4)).toEqual(['23:00', '00:00', '01:00', '02:00']);
      // A fixed hour fires once; spring forward loses no firing of an every-20-minutes schedule.
      // Whole instants: firing twice on the 1st (01:30 EDT = 05:30Z, 01:30 EST = 06:30Z) has the same times of day.
      const instants = (expression: string, timezone: string, from: string, n: number) => {
        const out: string[] = [];
        for (let t = Date.parse(from), i = 0; i < n; i++) out.push(new Date((t = nextFireAfter({ trigger: { kind: 'cron', expression }, timezone }, t)!)).toISOString());
        return out;
      };
      expect(instants('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 2)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
      expect(walk('*/20 * * * *', 'America/New_York', '2026-03-08T06:10:00Z', 5)).toEqual(['06:20', '06:40', '07:00', '07:20', '07:40']);
      // A fixed time that does not exist that day (02:30 when clocks go forward) fires once, at 03:30 EDT.
      expect(instants('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2)).toEqual(['2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
      // Helper 76: a range of hours is hours as they pass too; Lord Howe goes back half an hour.
      expect(walk('*/15 0-5 * * *', 'America/New_York', '2026-11-01T05:40:00Z', 6)).toEqual(['05:45', '06:00', '06:15', '06:30', '06:45', '07:00']);
      expect(walk('*/20 * * * *', 'Australia/Lord_Howe', '2026-04-04T14:35:00Z', 5)).toEqual(['14:40', '15:10', '15:30', '15:50', '16:10']);
    });

    it('a registered cron schedule fires at its next zoned instant', async () => {
      const { env, log } = world;
      const t0 = env.clock.now(); // 2025-01-01T00:00:00Z = 2024-12-31 19:00 in New York
      const reg = await registerSchedule(log, world.mission('c.vague', mission('Cron', 'cron "30 21 * * *" { timezone: "America/New_York" }')), OPTS, t0);
      expect(reg.nextFireAt).toBe(Date.UTC(2025, 0, 1, 2, 30));
      const w = world.worker();
      await env.clock.advance(reg.nextFireAt! - t0 - 1);
      expect(await tickAndDrain(w)).toBe(0);
      await env.clock.advance(1);
      expect(await tickAndDrain(w)).toBe(1);
      expect((await log.getSchedule('Cron'))!.nextFireAt).toBe(Date.UTC(2025, 0, 2, 2, 30));
    });
  });

  describe('registration errors', () => {
    it('refuses a mission without a schedule, and an invalid mission', async () => {
      const { log, env } = world;
      const plain = world.mission('p.vague', mission('Plain', 'every 1 hours').replace('schedule: every 1 hours\n', ''));
      await expect(registerSchedule(log, plain, OPTS, env.clock.now())).rejects.toThrow(/mission "Plain" .* has no `schedule:`/);
      const bad = world.mission('b.vague', mission('Bad', 'cron "61 * * * *"'));
      await expect(registerSchedule(log, bad, OPTS, env.clock.now())).rejects.toBeInstanceOf(MissionInvalidError);
      expect(await log.listSchedules()).toEqual([]);
    });
  });
});
