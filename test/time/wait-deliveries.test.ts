/**
 * A delivery that reaches the inbox after a `wait` expired, before any worker timed the wait out,
 * is late for it: the wait times out as it would have, and the delivery stays in the inbox for a
 * later wait on the path (before, the waking worker's wait took it and the run went on with it).
 * One made in time is taken, however late the worker wakes the run. `reqon resume RUN --payload P`
 * gives P to that run: its wait takes P before older deliveries on the path (helper 96: it took an
 * older one, said "completed", and P went to the mission's next run). An eventFilter reading
 * `now()` reads when the delivery arrived, the same on replay: a verify of the run matches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resumeRun, startRun } from '../../engine/executor/run-mission.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { forkRun } from '../../engine/executor/fork-run.js';
import { timeWorld, type TimeWorld } from './support/time-fixtures.js';

let world: TimeWorld | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

const MISSION = `mission Late {
  store got: memory("got")
  action A {
    wait { path: "/late", timeout: 60000 }
    store response -> got { key: .id }
  }
  run A
}
`;

async function waitingRun(w: TimeWorld): Promise<string> {
  const started = await startRun(w.mission('late.vague', MISSION), { sources: {}, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
  expect(started.status).toBe('suspended');
  return started.runId;
}

describe('a delivery after its wait expired', () => {
  it('is not taken: the wait times out, the delivery stays in the inbox', async () => {
    world = await timeWorld();
    const w = world;
    const runId = await waitingRun(w);
    await w.env.clock.advance(61_000);
    expect(await w.log.deliverWebhook('/late', 'd-late', { id: 'late' }, w.env.clock.now())).toBe('accepted');
    await w.worker().loop(true);
    const run = await w.log.getRun(runId);
    expect(run?.status).toBe('failed');
    const events = await w.log.read(runId);
    expect(events.filter((e) => e.type === 'webhook.received')).toEqual([]);
    expect(events.find((e) => e.type === 'wait.completed')?.payload).toMatchObject({ timedOut: true, events: 0 });
    expect((await w.log.webhookInbox('/late')).map((d) => d.eventId)).toEqual(['d-late']);
  });

  it('one made before the expiry is taken, though the worker wakes the run after it', async () => {
    world = await timeWorld();
    const w = world;
    const runId = await waitingRun(w);
    await w.env.clock.advance(59_000);
    expect(await w.log.deliverWebhook('/late', 'd-in-time', { id: 'in-time' }, w.env.clock.now())).toBe('accepted');
    await w.env.clock.advance(2_000);
    await w.worker().loop(true);
    expect((await w.log.getRun(runId))?.status).toBe('completed');
    expect(MemoryStoreState.fromEvents(await w.log.read(runId)).list('got').map((r) => r.key)).toEqual(['in-time']);
  });
});

describe('resume --payload to a wait with an older delivery in its inbox', () => {
  it('gives the run the payload; the older delivery stays for the next wait on the path', async () => {
    world = await timeWorld();
    const w = world;
    const runId = await waitingRun(w);
    expect(await w.log.deliverWebhook('/late', 'd-older', { id: 'older' }, w.env.clock.now())).toBe('accepted');
    const resumed = await resumeRun(runId, { payload: { id: 'operator' } }, { log: w.log, env: w.env, dataDir: w.dir });
    expect(resumed.status).toBe('completed');
    expect(MemoryStoreState.fromEvents(await w.log.read(runId)).list('got').map((r) => r.key)).toEqual(['operator']);
    expect((await w.log.webhookInbox('/late')).map((d) => d.eventId)).toEqual(['d-older']);
  });
});

describe('an eventFilter that reads now()', () => {
  it('reads when each delivery arrived: the stale one is left, the run completes and verifies (helper 96: DIVERGED)', async () => {
    world = await timeWorld();
    const w = world;
    const started = await startRun(
      w.mission(
        'fresh.vague',
        `mission Fresh {
  store got: memory("got")
  action A {
    wait { path: "/offers", timeout: 86400000, expectedEvents: 2, eventFilter: .validUntil > now() }
    for o in response {
      store o -> got { key: .id }
    }
  }
  run A
}
`,
      ),
      { sources: {}, env: {} },
      { log: w.log, env: w.env, dataDir: w.dir },
    );
    expect(started.status).toBe('suspended');
    const at = (ms: number) => new Date(w.env.clock.now() + ms).toISOString();
    expect(await w.log.deliverWebhook('/offers', 'o1', { id: 'o1', validUntil: at(60_000) }, w.env.clock.now())).toBe('accepted');
    expect(await w.log.deliverWebhook('/offers', 'stale', { id: 'stale', validUntil: at(-1) }, w.env.clock.now())).toBe('accepted');
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('suspended');
    await w.env.clock.advance(30_000);
    expect(await w.log.deliverWebhook('/offers', 'o2', { id: 'o2', validUntil: at(60_000) }, w.env.clock.now())).toBe('accepted');
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('completed');
    expect(MemoryStoreState.fromEvents(await w.log.read(started.runId)).list('got').map((r) => r.key)).toEqual(['o1', 'o2']);
    expect((await w.log.webhookInbox('/offers')).map((d) => d.eventId)).toEqual(['stale']);
    // Much later (o1 long expired by then): the replay reads each delivery's own arrival.
    await w.env.clock.advance(3_600_000);
    const report = await verifyRun(w.log, started.runId, { env: w.env });
    expect(report.divergence).toBeNull();
    expect(report.ok).toBe(true);
  });
});

describe('a wait storing its deliveries', () => {
  it('keys them by the rules of every store step: an object key is refused, never "[object Object]" (helper 96: deliveries merged)', async () => {
    world = await timeWorld();
    const w = world;
    const started = await startRun(
      w.mission(
        'keyed.vague',
        `mission Keyed {
  store events: memory("events")
  action A {
    wait { path: "/orders", timeout: 600000, expectedEvents: 2, storage: { target: events, key: .id } }
  }
  run A
}
`,
      ),
      { sources: {}, env: {} },
      { log: w.log, env: w.env, dataDir: w.dir },
    );
    expect(started.status).toBe('suspended');
    await w.log.deliverWebhook('/orders', 'o1', { id: { shop: 'eu', n: 1 } }, w.env.clock.now());
    await w.log.deliverWebhook('/orders', 'o2', { id: { shop: 'us', n: 2 } }, w.env.clock.now());
    await w.worker().loop(true);
    const events = await w.log.read(started.runId);
    expect((await w.log.getRun(started.runId))?.status).toBe('failed');
    expect(JSON.stringify(events.find((e) => e.type === 'run.failed')?.payload)).toMatch(/key/);
    expect(MemoryStoreState.fromEvents(events).list('events')).toEqual([]);
  });
});

describe('a fork of a run waiting at a generated URL', () => {
  it('waits at a URL of its own: a delivery to the parent\'s is the parent\'s (helper 96: the fork took it)', async () => {
    world = await timeWorld();
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: w.dir };
    const parent = await startRun(
      w.mission('generated.vague', `mission Gen {\n  store got: memory("got")\n  action A {\n    wait { timeout: 600000 }\n    store response -> got { key: .id }\n  }\n  run A\n}\n`),
      { sources: {}, env: {} },
      deps,
    );
    expect(parent.status).toBe('suspended');
    const parentWaits = (await w.log.getRun(parent.runId))!.waitingOn!;
    expect(parentWaits).toMatch(new RegExp(`^wait:/webhook/${parent.runId}/`));
    const fork = await forkRun(parent.runId, { atSeq: (await w.log.getRun(parent.runId))!.lastSeq }, deps);
    expect(fork.status).toBe('suspended');
    const forkWaits = (await w.log.getRun(fork.runId))!.waitingOn!;
    expect(forkWaits).toMatch(new RegExp(`^wait:/webhook/${fork.runId}/`));
    await w.log.deliverWebhook(parentWaits.slice('wait:'.length), 'for-parent', { id: 'p' }, w.env.clock.now());
    await w.worker().loop(true);
    expect((await w.log.getRun(parent.runId))?.status).toBe('completed');
    expect((await w.log.getRun(fork.runId))?.status).toBe('suspended');
  });
});

describe('a pause on a timer and a webhook', () => {
  const PAUSE = `mission Approve {
  store got: memory("got")
  action A {
    pause { duration: "1m", resumeOn: timeout | webhook "/approve" }
    store { id: "after", by: response } -> got { key: .id }
  }
  run A
}
`;
  it('a delivery after the timer was due does not resume it: the timer did, and the delivery stays (helper 96)', async () => {
    world = await timeWorld();
    const w = world;
    const started = await startRun(w.mission('approve.vague', PAUSE), { sources: {}, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    expect(started.status).toBe('suspended');
    await w.env.clock.advance(120_000);
    await w.log.deliverWebhook('/approve', 'late', { approved: true }, w.env.clock.now());
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('completed');
    const resumed = (await w.log.read(started.runId)).find((e) => e.type === 'pause.resumed');
    expect(resumed?.payload).toMatchObject({ by: 'timer' });
    expect((await w.log.webhookInbox('/approve')).map((d) => d.eventId)).toEqual(['late']);
  });

  it('one before it was due resumes it, with its payload', async () => {
    world = await timeWorld();
    const w = world;
    const started = await startRun(w.mission('approve.vague', PAUSE), { sources: {}, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    await w.env.clock.advance(30_000);
    await w.log.deliverWebhook('/approve', 'in-time', { approved: true }, w.env.clock.now());
    await w.env.clock.advance(60_000);
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('completed');
    expect((await w.log.read(started.runId)).find((e) => e.type === 'pause.resumed')?.payload).toMatchObject({ by: 'webhook', payload: { approved: true } });
  });
});

describe('a wait for three events that times out with one', () => {
  it('goes on with what arrived, as the reference does: the single body', async () => {
    world = await timeWorld();
    const w = world;
    const started = await startRun(
      w.mission('three.vague', `mission Three {\n  store got: memory("got")\n  action A {\n    wait { path: "/votes", timeout: 60000, expectedEvents: 3 }\n    store { id: "tally", first: webhook } -> got { key: .id }\n  }\n  run A\n}\n`),
      { sources: {}, env: {} },
      { log: w.log, env: w.env, dataDir: w.dir },
    );
    await w.log.deliverWebhook('/votes', 'v1', { vote: 'yes' }, w.env.clock.now());
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('suspended');
    await w.env.clock.advance(61_000);
    await w.worker().loop(true);
    expect((await w.log.getRun(started.runId))?.status).toBe('completed');
    const events = await w.log.read(started.runId);
    expect(events.find((e) => e.type === 'wait.completed')?.payload).toMatchObject({ events: 1, timedOut: true });
    expect(MemoryStoreState.fromEvents(events).list('got')[0]?.record).toEqual({ id: 'tally', first: { vote: 'yes' } });
  });
});

