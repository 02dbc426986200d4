/**
 * A journal over a streamed record (EventLog.replayReader: events read as the walk reaches them)
 * answers exactly as one over the whole log read first: the same events, in order and out of
 * order, the same divergences, the same end. Also: SQLite's reader yields what `read` does.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal, META_EVENT_TYPES } from '../../engine/journal/journal.js';
import { NondeterminismError } from '../../engine/journal/nondeterminism-error.js';
import type { EventType, StoredEvent } from '../../engine/log/events.js';
import type { CommitEntry, ReplayReader } from '../../engine/log/log.js';
import { newRun, openTempLog, started, storeWrite, value, type TempLog } from '../log/helpers.js';

/** `run.started`, then per step path i: step.started, value.recorded, step.completed; a `run.resumed` in the middle. */
function recordedLog(paths: number): StoredEvent[] {
  const out: StoredEvent[] = [];
  const push = (type: EventType, stepPath: string, payload: unknown) =>
    out.push({ runId: 'r', seq: out.length + 1, type, stepPath, payload, recordedAt: 1_000 + out.length } as StoredEvent);
  push('run.started', '', { mission: 'm', missionHash: 'h' });
  for (let i = 0; i < paths; i++) {
    if (i === Math.floor(paths / 2)) push('run.resumed', '', { reason: 'crash', owner: 'w', replayFromSeq: out.length });
    push('step.started', `A/${i}`, { stepType: 'Let', line: i });
    push('value.recorded', `A/${i}`, { source: 'now', value: i });
    push('step.completed', `A/${i}`, { stepType: 'Let' });
  }
  return out;
}

/** A reader over `events` handing out at most `chunk` at a time, meta events skipped. */
function readerOver(events: StoredEvent[], chunk: number): ReplayReader & { reads: number } {
  const kept = events.filter((e) => !META_EVENT_TYPES.includes(e.type));
  let at = 0;
  return {
    total: kept.length,
    reads: 0,
    next(max: number) {
      this.reads++;
      const out = kept.slice(at, at + Math.min(max, chunk));
      at += out.length;
      return out;
    },
  };
}

function journals(paths: number, chunk = 5) {
  const events = recordedLog(paths);
  const clock = new FakeClock(0);
  const reader = readerOver(events, chunk);
  return {
    events,
    reader,
    whole: new Journal(null, null, 'r', events, clock, { verifyOnly: true }),
    streamed: new Journal(null, null, 'r', { reader, lastSeq: events[events.length - 1]!.seq }, clock, { verifyOnly: true }),
  };
}

describe('a journal over a streamed record', () => {
  it('answers in-order asks as the whole log does, reading as the cursor goes', () => {
    const { whole, streamed, reader } = journals(40);
    expect(streamed.lastRecordedSeq).toBe(whole.lastRecordedSeq);
    for (let i = 0; i < 40; i++) {
      for (const type of ['step.started', 'value.recorded', 'step.completed'] as const) {
        expect(streamed.take(`A/${i}`, type)).toEqual(whole.take(`A/${i}`, type));
      }
      if (i === 2) expect(reader.reads).toBeLessThan(3); // a window, not the whole log
    }
    expect(streamed.replaying).toBe(false);
    expect(() => streamed.assertFullyConsumed()).not.toThrow();
  });

  it('answers out-of-order asks (concurrent branches) as the whole log does', () => {
    const { whole, streamed } = journals(30);
    // Each step of action A as a branch of its own: asked in any order.
    const construct = { branchOf: (path: string) => path };
    whole.enterConcurrent(construct);
    streamed.enterConcurrent(construct);
    const order = [7, 3, 29, 0, 12, 1, 2, 4, 5, 6, ...Array.from({ length: 30 }, (_, i) => i).filter((i) => ![7, 3, 29, 0, 12, 1, 2, 4, 5, 6].includes(i))];
    for (const i of order) {
      for (const type of ['step.started', 'value.recorded', 'step.completed'] as const) {
        expect(streamed.take(`A/${i}`, type)).toEqual(whole.take(`A/${i}`, type));
      }
    }
    expect(streamed.replaying).toBe(false);
  });

  it('refuses the same divergences', () => {
    const { whole, streamed } = journals(20);
    const asked = (j: Journal) => {
      j.take('A/0', 'step.started');
      try {
        j.take('A/0', 'step.completed'); // the log holds value.recorded next at A/0
        return 'no error';
      } catch (error) {
        return error instanceof NondeterminismError ? error.message : String(error);
      }
    };
    expect(asked(streamed)).toBe(asked(whole));
    const { whole: w2, streamed: s2 } = journals(20);
    // Going live at a path the log never had, while recorded events remain.
    expect(() => s2.take('B/0', 'step.started')).toThrow(NondeterminismError);
    expect(() => w2.take('B/0', 'step.started')).toThrow(NondeterminismError);
    const { whole: w3, streamed: s3 } = journals(3);
    w3.take('A/0', 'step.started');
    s3.take('A/0', 'step.started');
    expect(() => s3.assertFullyConsumed()).toThrow(/value.recorded event/);
    expect(() => w3.assertFullyConsumed()).toThrow(/value.recorded event/);
  });
});

describe('SQLite replayReader', () => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('yields the events read returns, in order, up to toSeq, skipped types left out, in chunks of at most max', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.createRun(newRun('r2'), 'w1', 30_000, [started()]);
    for (let i = 0; i < 30; i++) await t.log.commit(lease, [value(i), value(`x${i}`)], { durable: false });
    const all = await t.log.read('r1');
    const reader = t.log.replayReader!('r1', 50, ['run.started']);
    expect(reader.total).toBe(49);
    const got: StoredEvent[] = [];
    for (let chunk = reader.next(7); chunk.length > 0; chunk = reader.next(7)) {
      expect(chunk.length).toBeLessThanOrEqual(7);
      got.push(...chunk);
    }
    // Its events parse their payloads on first use: compared field by field, as a step reads them.
    const fields = ({ runId, seq, type, stepPath, payload, recordedAt }: StoredEvent) => ({ runId, seq, type, stepPath, payload, recordedAt });
    expect(got.map(fields)).toEqual(all.filter((e) => e.seq <= 50 && e.type !== 'run.started'));
    expect(reader.next(7)).toEqual([]);
  });

  it('measures a run of store writes where they lie, and skips it as reading and dropping it would', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const writes = (from: number, n: number, stepPath = 'S/1') => Array.from({ length: n }, (_, i) => storeWrite({ key: `k${from + i}`, record: { i: from + i }, stepPath }));
    // seq 2 value, 3–7 writes at S/1, 8 a write at S/2, 9–11 writes at S/1, then the end.
    await t.log.commit(lease, [value('a'), ...writes(0, 5)], { durable: false });
    await t.log.commit(lease, [...writes(5, 1, 'S/2'), ...writes(6, 3)], { durable: false });
    const fields = ({ seq, type, stepPath }: StoredEvent) => ({ seq, type, stepPath });
    const reader = t.log.replayReader!('r1', 11, ['run.started']);
    expect(reader.next(1).map(fields)).toEqual([{ seq: 2, type: 'value.recorded', stepPath: 'main/0' }]);
    const first = reader.measureRun!('store.write', 'S/1');
    expect(first.length).toBe(5);
    expect(first.after).toEqual({ type: 'store.write', stepPath: 'S/2' });
    // Measuring moves nothing: the reader still yields the run.
    const again = reader.measureRun!('store.write', 'S/1');
    expect(again.length).toBe(5);
    again.passOver();
    expect(reader.next(1).map(fields)).toEqual([{ seq: 8, type: 'store.write', stepPath: 'S/2' }]);
    expect(reader.measureRun!('store.write', 'S/2').length).toBe(0);
    const last = reader.measureRun!('store.write', 'S/1');
    expect(last).toMatchObject({ length: 3, after: undefined });
    last.passOver();
    expect(reader.next(5)).toEqual([]);
    expect(reader.measureRun!('store.write', 'S/1')).toMatchObject({ length: 0, after: undefined });
    // A skip after the reader moved on would drop events it never measured: refused.
    const fresh = t.log.replayReader!('r1', 11, ['run.started']);
    fresh.next(1);
    const stale = fresh.measureRun!('store.write', 'S/1');
    fresh.next(1);
    expect(() => stale.passOver()).toThrow(/read from between measureRun and passOver/);
  });

  it('measures past the skipped events a resume wrote between a page\'s answer and its writes, as next drops them', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const writes = (from: number, n: number) => Array.from({ length: n }, (_, i) => storeWrite({ key: `k${from + i}`, record: { i: from + i }, stepPath: 'S/1' }));
    const resumed: CommitEntry = { kind: 'event', event: { type: 'run.resumed', stepPath: '', payload: { reason: 'crash', owner: 'w2', replayFromSeq: 2 }, recordedAt: 5 } };
    // seq 2 value, 3 run.resumed, 4–5 writes, 6 run.resumed, 7 a write, 8 value.
    await t.log.commit(lease, [value('a'), resumed, ...writes(0, 2), resumed, ...writes(2, 1), value('b')], { durable: false });
    const reader = t.log.replayReader!('r1', 8, ['run.started', 'run.resumed']);
    expect(reader.total).toBe(5);
    reader.next(1);
    const run = reader.measureRun!('store.write', 'S/1');
    expect(run.length).toBe(3);
    expect(run.after).toEqual({ type: 'value.recorded', stepPath: 'main/0' });
    run.passOver();
    expect(reader.next(5).map((e) => e.seq)).toEqual([8]);
  });
});
