/**
 * §H8 — durable log, resumable backfill, pause and resume.
 *
 * Run 1 backfills /history (two pages), posts the approval request and suspends on the pause.
 * Resume with `resumeRun(E, {by: 'cli'})`: the pause's timer is 2 days, resuming by hand resumes
 * it early. Deviation from the reference, by our rules: the reference's V2 re-sent POST /approvals
 * on resume with the same Idempotency-Key; our replay answers it from the log instead, so it is
 * sent exactly once (with an Idempotency-Key), and the finalize POST once, with a different key.
 * The reference's run-1 `success:false` is our status `suspended` (a pause is not a failure).
 * Event names are ours: the reference's `mission.started`/`mission.completed` are `run.started`/
 * `run.completed`, its store `effect.applied` is `store.write`, and `pause.resumed` carries
 * `by: 'cli'` where the reference had `resumedBy: "resume"`.
 * On every log backend (test/support/temp-log.ts): the durable §H mission is the one to hold
 * to it on PostgreSQL too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { backends } from '../support/temp-log.js';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const RUN1 = ['GET /history?offset=0', 'GET /history?offset=2', 'POST /approvals'];
const WAREHOUSE = { '1': { id: 1 }, '2': { id: 2 }, '3': { id: 3 } };
const APPROVALS = { T9: { id: 'T9', state: 'final' } };
const TWO_DAYS = 2 * 24 * 3600 * 1000;

let c: Conformance;

/** Index of the first event after `from` matching `pred` (-1 if none): for relative-order checks. */
function indexAfter(events: StoredEvent[], from: number, pred: (e: StoredEvent) => boolean): number {
  for (let i = from + 1; i < events.length; i++) if (pred(events[i]!)) return i;
  return -1;
}

function expectRun1Log(events: StoredEvent[]): void {
  expect(events[0]!.type).toBe('run.started');
  const p1 = indexAfter(events, 0, (e) => e.type === 'page.completed');
  const p2 = indexAfter(events, p1, (e) => e.type === 'page.completed');
  expect(p1).toBeGreaterThan(0);
  expect(p2).toBeGreaterThan(p1);
  expect((events[p1]!.payload as { done: boolean }).done).toBe(false);
  expect((events[p2]!.payload as { done: boolean }).done).toBe(true);
  const write = indexAfter(events, p2, (e) => e.type === 'store.write' && (e.payload as { store: string }).store === 'warehouse');
  expect(write).toBeGreaterThan(p2);
  const pauseStep = indexAfter(events, write, (e) => e.type === 'step.started' && (e.payload as { stepType: string }).stepType === 'Pause');
  expect(pauseStep).toBeGreaterThan(write);
  const created = indexAfter(events, pauseStep, (e) => e.type === 'pause.created');
  expect(created).toBeGreaterThan(pauseStep);
  expect(events.filter((e) => e.type === 'page.completed')).toHaveLength(2);
}

describe.each(backends)('%s: H8 Durable', (backend) => {
  beforeEach(async () => {
    c = await openConformance({ backend });
    c.api
      .on('GET /history?offset=0', { body: { rows: [{ id: 1 }, { id: 2 }] } })
      .on('GET /history?offset=2', { body: { rows: [{ id: 3 }] } })
      .on('POST /approvals', { body: { ticket: 'T9' } })
      .on('POST /approvals/T9/finalize', { body: { ok: true } });
  });

  afterEach(async () => {
    await c.close();
  });

  it('run 1 backfills and suspends on the pause; resumed by hand it finalizes once, POST /approvals never re-sent', async () => {
    const r1 = await c.start(missionFiles('h8'));
    expect(r1.status).toBe('suspended');
    if (r1.status !== 'suspended') return;
    expect(r1.waitingOn).toMatch(/^pause:/);
    const E = r1.runId;
    expect(c.api.lines()).toEqual(RUN1);
    const approvalKey = c.api.requests[2]!.headers['idempotency-key'];
    expect(typeof approvalKey).toBe('string');
    expect(c.api.requests[2]!.body).toEqual({ doc: 'D1' });
    expect(await c.store(E, 'warehouse')).toEqual(WAREHOUSE);
    expect(await c.store(E, 'approvals')).toEqual({});

    const log1 = await c.events(E);
    expectRun1Log(log1);
    expect(log1.some((e) => e.type === 'run.completed')).toBe(false);
    const created = log1.find((e) => e.type === 'pause.created')!.payload as { dueAt?: number; webhookPath?: string };
    expect(created.webhookPath).toBe('/approved');
    const run = (await c.log.getRun(E))!;
    expect(run.status).toBe('suspended');
    expect(run.wakeAt).toBe(created.dueAt);
    expect(created.dueAt! - log1[0]!.recordedAt).toBeGreaterThanOrEqual(TWO_DAYS);

    const r2 = await c.resume(E, { by: 'cli' });
    expect(r2.status).toBe('completed');
    expect(r2.runId).toBe(E);
    // No /history again, no second POST /approvals: only the finalize, with its own key.
    expect(c.api.lines()).toEqual([...RUN1, 'POST /approvals/T9/finalize']);
    const finalizeKey = c.api.requests[3]!.headers['idempotency-key'];
    expect(typeof finalizeKey).toBe('string');
    expect(finalizeKey).not.toBe(approvalKey);
    expect(c.api.requests[3]!.body).toEqual({ ok: true });
    expect([...c.api.applied.values()]).toEqual([1, 1]);

    expect(await c.store(E, 'approvals')).toEqual(APPROVALS);
    expect(await c.store(E, 'warehouse')).toEqual(WAREHOUSE);
    const log2 = await c.events(E);
    const tail = log2.slice(log1.length);
    const resumed = tail.find((e) => e.type === 'pause.resumed');
    expect(resumed?.payload).toEqual(expect.objectContaining({ by: 'cli' }));
    expect(tail.at(-1)!.type).toBe('run.completed');
    expect(tail.findIndex((e) => e.type === 'pause.resumed')).toBeLessThan(tail.length - 1);
    expect(tail.filter((e) => e.type === 'page.completed')).toHaveLength(0);
    expect((await c.log.getRun(E))!.status).toBe('completed');
    await c.expectVerified(E);
  });

  it('the built CLI: `reqon run` exits 10, `reqon resume` exits 0, `reqon store` shows both stores', async () => {
    const cli = await builtCli();
    const opts = { cwd: c.dir, env: { REQON_DATA_DIR: c.dataDir } };
    const run = await runCli(cli, ['run', missionFiles('h8').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'], opts);
    expect(run.code).toBe(10);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('suspended');
    expect(c.api.lines()).toEqual(RUN1);

    const resumed = await runCli(cli, ['resume', runId, '--db', c.dbPath, '--json', '--quiet'], opts);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const last = JSON.parse(resumed.stdout.trim().split('\n').at(-1)!) as { status: string; runId: string };
    expect(last).toEqual(expect.objectContaining({ status: 'completed', runId }));
    expect(c.api.lines()).toEqual([...RUN1, 'POST /approvals/T9/finalize']);
    expect(await cliStore(cli, c, runId, 'approvals')).toEqual(APPROVALS);
    expect(await cliStore(cli, c, runId, 'warehouse')).toEqual(WAREHOUSE);
    await c.expectVerified(runId);
  });
});
