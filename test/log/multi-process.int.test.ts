/**
 * Several Node processes share one log file: appends to their own runs, competition for one run's
 * lease, and 20 resumers racing on one suspended run. The log must show no seq gap or duplicate,
 * one owner at a time, and exactly one resume. On every log backend (test/support/temp-log.ts):
 * a SQLite file, or a PostgreSQL database each process reaches by its own connections.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { openLog } from '../../engine/log/open-log.js';
import { buildChild, type ChildBuild } from './build-child.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { newRun, started } from './helpers.js';
import { childJson, runChild } from './spawn-child.js';

let build: ChildBuild;
const targets: TempLogTarget[] = [];
beforeAll(() => {
  build = buildChild();
});
afterEach(async () => {
  for (const target of targets.splice(0)) await target.drop();
});

function contiguous(events: StoredEvent[]): boolean {
  return events.every((event, index) => event.seq === index + 1);
}

describe.each(backends)('%s: several processes on one log', (backend) => {
  async function freshLog(): Promise<string> {
    const target = await tempLogTarget(backend);
    targets.push(target);
    return target.target;
  }

  it('append to their own runs and take turns on a shared run: no gaps, no duplicates, one owner at a time', async () => {
    const dbPath = await freshLog();
    const log = await openLog(dbPath);
    const { lease } = await log.createRun(newRun('shared', Date.now()), 'parent', 60_000, [started()]);
    await log.release(lease);
    const processes = 4;
    const rounds = 3;
    const perRun = 30;
    const results = await Promise.all(
      Array.from({ length: processes }, (_, i) =>
        runChild(process.execPath, [build.script, 'append', dbPath, `own-${i}`, String(perRun), 'shared', String(rounds)]),
      ),
    );
    const summaries = results.map((result) => childJson<{ owner: string; held: number }>(result));
    expect(summaries.map((s) => s.held)).toEqual(Array(processes).fill(rounds));

    for (let i = 0; i < processes; i++) {
      const events = await log.read(`own-${i}`);
      expect(events.length).toBe(1 + perRun);
      expect(contiguous(events)).toBe(true);
      expect(events.slice(1).map((e) => (e.payload as { value: number }).value)).toEqual(Array.from({ length: perRun }, (_, k) => k));
    }

    const shared = await log.read('shared');
    expect(shared.length).toBe(1 + processes * rounds * 4);
    expect(contiguous(shared)).toBe(true);
    // Every write under a lease belongs to the owner whose takeover marker precedes it.
    let holder: string | undefined;
    const turns: string[] = [];
    for (const event of shared.slice(1)) {
      if (event.type === 'run.resumed') {
        holder = (event.payload as { owner: string }).owner;
        turns.push(holder);
      } else {
        expect(event.type).toBe('value.recorded');
        expect((event.payload as { value: string }).value).toBe(holder);
      }
    }
    expect(turns.length).toBe(processes * rounds);
    expect(new Set(turns)).toEqual(new Set(summaries.map((s) => s.owner)));
    const run = await log.getRun('shared');
    expect(run).toMatchObject({ lastSeq: shared.length, leaseEpoch: 1 + processes * rounds, owner: null });
    await log.close();
  });

  it('20 concurrent resumers across 4 processes resume a suspended run exactly once', async () => {
    const dbPath = await freshLog();
    const log = await openLog(dbPath);
    const { lease } = await log.createRun(newRun('paused', Date.now()), 'parent', 60_000, [started()]);
    await log.commit(
      lease,
      [{ kind: 'event', event: { type: 'pause.created', stepPath: 'main/0', payload: { pauseId: 'p1', webhookPath: '/approved' }, recordedAt: 2 } }],
      { durable: true, status: { status: 'suspended', waitingOn: 'webhook:/approved', releaseLease: true } },
    );
    const startAt = String(Date.now() + 2_000);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => runChild(process.execPath, [build.script, 'resume', dbPath, 'paused', 'webhook:/approved', '5', startAt])),
    );
    const outcomes = results.flatMap((result) => childJson<{ results: string[] }>(result).results);
    expect(outcomes.length).toBe(20);
    expect(outcomes.filter((o) => o === 'resumed').length).toBe(1);
    expect(outcomes.filter((o) => o === 'not-waiting').length).toBe(19);
    const events = await log.read('paused');
    expect(events.map((e) => e.type)).toEqual(['run.started', 'pause.created', 'pause.resumed']);
    expect(await log.getRun('paused')).toMatchObject({ status: 'running', waitingOn: null, lastSeq: 3 });
    await log.close();
  });
});
