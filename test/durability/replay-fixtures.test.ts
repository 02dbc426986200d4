/**
 * Replay compatibility (STYLE.md item 10): a recorded run log kept as a fixture must verify clean
 * with the current engine, and a mutated copy must diverge where it was mutated.
 *
 * fixtures/replay-orders.ndjson is `reqon events RUN_ID --json` of one run of
 * fixtures/replay-orders.vague (a frozen copy of the crash-matrix mission) that was killed at
 * `after-effect:5` (a POST sent, its response never committed) and then resumed until it
 * completed: a crash resume, two pause resumes, pagination, `since` checkpoints, recorded now().
 * To re-record after an intended change of the event vocabulary: run that mission with the built
 * CLI against any server that answers its routes (test/durability/support/mission-api.ts), with
 * `--crash-at after-effect:5`, `reqon resume` it until it completes, and write
 * `reqon events RUN_ID --json` over the .ndjson file.
 *
 * Pure: the log is served from memory to `verifyRun`, which reads only the run row and events.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { missionHash } from '../../engine/executor/run-mission.js';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import type { EventLog, MissionFiles, RunRecord } from '../../engine/log/log.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
/** Where the mission lived when the run was recorded: part of the mission hash in `run.started`. */
const RECORDED_ENTRY = '/work/main/test/durability/fixtures/replay-orders.vague';

function fixture(): { files: MissionFiles; events: StoredEvent[] } {
  const text = fs.readFileSync(path.join(FIXTURES, 'replay-orders.vague'), 'utf8');
  const events = fs
    .readFileSync(path.join(FIXTURES, 'replay-orders.ndjson'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StoredEvent);
  return { files: { entry: RECORDED_ENTRY, files: [{ path: RECORDED_ENTRY, text }] }, events };
}

/** A log holding one finished run, in memory; verify needs nothing but `getRun` and `read`. */
function fixtureLog(files: MissionFiles, events: StoredEvent[]): EventLog {
  const first = events[0]!;
  const last = events[events.length - 1]!;
  // Only the fields verify reads matter; the cast keeps this fixture independent of row fields added later.
  const run = {
    runId: first.runId,
    mission: (first.payload as { mission: string }).mission,
    missionHash: (first.payload as { missionHash: string }).missionHash,
    missionFiles: files,
    options: { sources: { Api: 'http://127.0.0.1:9' }, env: {} },
    status: 'completed',
    createdAt: first.recordedAt,
    updatedAt: last.recordedAt,
    lastSeq: last.seq,
    owner: null,
    leaseEpoch: 0,
    leaseExpiresAt: null,
    wakeAt: null,
    waitingOn: null,
  } as RunRecord;
  const impl: Pick<EventLog, 'getRun' | 'read'> = {
    getRun: async (runId) => (runId === run.runId ? run : undefined),
    read: async (runId, opts = {}) =>
      runId === run.runId
        ? events
            .filter((e) => e.seq >= (opts.fromSeq ?? 1) && e.seq <= (opts.toSeq ?? Infinity))
            .slice(0, opts.limit ?? Infinity)
            .map((e) => structuredClone(e))
        : [],
  };
  return new Proxy(impl, {
    get(target, prop) {
      if (prop in target) return target[prop as keyof typeof target];
      // Optional: a log without a synchronous reader is read whole, as these fixtures are.
      if (prop === 'replayReader') return undefined;
      return () => {
        throw new Error(`the fixture log serves a finished run to verify; it has no ${String(prop)}`);
      };
    },
  }) as EventLog;
}

async function verify(events: StoredEvent[]) {
  const { files } = fixture();
  return verifyRun(fixtureLog(files, events), events[0]!.runId, { env: createFakeEnv() });
}

/** A copy of the events with the one at `seq` changed by `change`. */
function mutated(events: StoredEvent[], seq: number, change: (e: StoredEvent) => StoredEvent): StoredEvent[] {
  return events.map((e) => (e.seq === seq ? change(structuredClone(e)) : e));
}

function seqOf(events: StoredEvent[], type: string, stepPath: string, nth = 0): number {
  const found = events.filter((e) => e.type === type && e.stepPath === stepPath);
  expect(found.length, `a ${type} at ${stepPath} in the fixture`).toBeGreaterThan(nth);
  return found[nth]!.seq;
}

describe('recorded run logs replay with the current engine', () => {
  it('the fixture is the run its header says: mission text unchanged, crashed, resumed, completed', () => {
    const { files, events } = fixture();
    expect((events[0]!.payload as { missionHash: string }).missionHash).toBe(missionHash(files));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.type).toBe('run.completed');
    const reasons = events.filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason);
    expect(reasons).toEqual(['crash', 'pause', 'pause']);
  });

  it('verifies the recorded run clean: every event re-derived, no divergence', async () => {
    const { events } = fixture();
    const report = await verify(events);
    expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
    expect(report.ok).toBe(true);
    const walked = events.filter((e) => e.type !== 'run.started' && e.type !== 'run.resumed');
    expect(report.original.map((e) => e.seq)).toEqual(walked.map((e) => e.seq));
    // The replay asked for exactly the recorded events, in the log's order for this sequential run.
    expect(report.replayed.map((e) => e.seq)).toEqual(walked.map((e) => e.seq));
  });

  it('a changed step path diverges at that step', async () => {
    const { events } = fixture();
    const seq = seqOf(events, 'step.started', 'Sync/1[2]/1');
    const report = await verify(mutated(events, seq, (e) => ({ ...e, stepPath: 'Sync/1[2]/7' })));
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toBe('Sync/1[2]/1');
    // Nothing recorded at Sync/1[2]/1 starts the step any more: the walk meets the step's request there.
    expect(report.divergence?.seq).toBe(seq + 1);
    expect(report.divergence?.recorded).toContain('http.request');
    expect(report.divergence?.asked).toContain('step.started');
  });

  it('a changed event type diverges at that event', async () => {
    const { events } = fixture();
    const seq = seqOf(events, 'loop.iteration', 'Sync/1[4]');
    const report = await verify(mutated(events, seq, (e) => ({ ...e, type: 'step.started' }) as StoredEvent));
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toBe('Sync/1[4]');
    expect(report.divergence?.seq).toBe(seq);
    expect(report.divergence?.recorded).toContain('step.started');
    expect(report.divergence?.asked).toContain('loop.iteration');
  });

  it('a changed effect id diverges at that effect', async () => {
    const { events } = fixture();
    const seq = seqOf(events, 'http.request', 'Sync/1[2]/1');
    const report = await verify(
      mutated(events, seq, (e) => ({ ...e, payload: { ...(e.payload as object), effectId: 'ef_00000000000000000000000000000000' } }) as StoredEvent),
    );
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toBe('Sync/1[2]/1');
    expect(report.divergence?.seq).toBe(seq);
    expect(report.divergence?.recorded).toContain('http.request');
  });

  it('a dropped store write is a damaged log at its seq (a gap in seq), never verified', async () => {
    const { events } = fixture();
    const seq = seqOf(events, 'store.write', 'Sync/1[5]/2');
    const report = await verify(events.filter((e) => e.seq !== seq));
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq });
  });
});
