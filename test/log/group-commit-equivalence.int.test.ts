/**
 * Group commit must be invisible: commits of many runs that share one group leave exactly what
 * the same commits leave one by one on the SQLite log (the reference: a path the grouped one does
 * not share, so a rule both got wrong the same way cannot hide) — the same outcomes (a lost lease, a refused write fail
 * alone), the same events and seqs, the same store tables in the same order. On PostgreSQL a
 * group runs as one batch (commit-batch.ts: one fence UPDATE, multi-row table writes, one events
 * INSERT), so a key written by two runs in one group, an upsert merging over a write made in
 * the same group, and a delete followed by a write are the cases that could tell them apart.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommitEntry, EventLog, Lease } from '../../engine/log/log.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started } from './helpers.js';

type Write = { kind: 'sql' | 'nosql'; key: string; op: 'set' | 'upsert' | 'delete'; record: Record<string, unknown> };
type Commit = { durable: boolean; entries: ({ event: number } | Write)[] };
type Scenario = { runs: { lostBefore: number | null; commits: Commit[] }[] };

const field = fc.constantFrom('a', 'b', 'c', 'n');
const fieldValue = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.string({ maxLength: 3 }), fc.constant(null), fc.record({ x: fc.integer({ min: 0, max: 2 }) }));
const write: fc.Arbitrary<Write> = fc.record({
  kind: fc.constantFrom('sql' as const, 'nosql' as const),
  key: fc.constantFrom('k1', 'k2', 'k3'),
  op: fc.constantFrom('set' as const, 'upsert' as const, 'delete' as const),
  record: fc.dictionary(field, fieldValue, { maxKeys: 3 }),
});
const commit: fc.Arbitrary<Commit> = fc.record({
  durable: fc.boolean(),
  entries: fc.array(fc.oneof(fc.record({ event: fc.integer({ min: 0, max: 9 }) }), write), { minLength: 0, maxLength: 4 }),
});
const scenario: fc.Arbitrary<Scenario> = fc.record({
  runs: fc.array(fc.record({ lostBefore: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }), commits: fc.array(commit, { minLength: 1, maxLength: 3 }) }), {
    minLength: 2,
    maxLength: 6,
  }),
});

function entriesOf(c: Commit, tag: string): CommitEntry[] {
  return c.entries.map((entry, i) =>
    'event' in entry
      ? { kind: 'event', event: { type: 'value.recorded', stepPath: 'main/0', payload: { source: 'random', value: entry.event }, recordedAt: 2_000 + i } }
      : {
          kind: 'store',
          write: {
            storeKind: entry.kind,
            table: `${tag}_${entry.kind}`,
            store: entry.kind,
            key: entry.key,
            record: entry.record,
            op: entry.op,
            stepPath: 'main/1',
            effectId: `eff-${i}`,
            recordedAt: 3_000 + i,
          },
        },
  );
}

/** Plays the scenario round by round: commit r of every run, all at once (`together`) or one after another. */
async function play(log: EventLog, s: Scenario, tag: string, together: boolean) {
  const leases: Lease[] = [];
  for (let r = 0; r < s.runs.length; r++) leases.push((await log.createRun(newRun(`${tag}-r${r}`), 'w1', 60_000, [started()])).lease);
  const outcomes: string[] = [];
  const rounds = Math.max(...s.runs.map((run) => run.commits.length));
  for (let round = 0; round < rounds; round++) {
    for (let r = 0; r < s.runs.length; r++) {
      if (s.runs[r]!.lostBefore === round) await log.acquire(leases[r]!.runId, 'w2', 0, 60_000, { takeOverFrom: 'w1' });
    }
    const calls = s.runs.map((run, r) => () => {
      const c = run.commits[round];
      return c === undefined ? Promise.resolve([]) : log.commit(leases[r]!, entriesOf(c, tag), { durable: c.durable });
    });
    const settled = together ? await Promise.allSettled(calls.map((call) => call())) : [];
    if (!together) for (const call of calls) settled.push(await call().then((value) => ({ status: 'fulfilled' as const, value }), (reason: unknown) => ({ status: 'rejected' as const, reason })));
    for (const result of settled) outcomes.push(result.status === 'fulfilled' ? `ok ${result.value.map((e) => e.seq).join(',')}` : `failed ${(result.reason as Error).name}`);
  }
  const events = [];
  for (const lease of leases) events.push((await log.read(lease.runId)).map((e) => [e.seq, e.type, e.payload]));
  return { outcomes, events, sql: await log.readTable('sql', `${tag}_sql`), nosql: await log.readTable('nosql', `${tag}_nosql`) };
}

const w = (kind: Write['kind'], op: Write['op'], key: string, record: Record<string, unknown> = {}): Write => ({ kind, key, op, record });
/**
 * Always played first: keys new to the table written again after others (their insertion order
 * is their first write's), deletes between writes of a key (it lands at the end again), upserts
 * over writes of the same group, of both store kinds — what random scenarios reach only rarely.
 */
const crowded: Scenario = {
  runs: [
    { lostBefore: null, commits: [
      { durable: false, entries: [w('sql', 'set', 'k1', { a: 1 }), w('sql', 'set', 'k2', { a: 2 }), w('sql', 'set', 'k1', { b: 1 }), w('sql', 'upsert', 'k3', { a: 3 })] },
      { durable: true, entries: [w('sql', 'upsert', 'k1', { a: 9 }), w('sql', 'delete', 'k3'), w('sql', 'set', 'k3', { a: 0 }), w('sql', 'upsert', 'k2', { b: null })] },
    ] },
    { lostBefore: null, commits: [
      { durable: true, entries: [w('sql', 'upsert', 'k3', { b: 3 }), w('sql', 'delete', 'k1'), w('sql', 'set', 'k1', { c: 1 }), w('nosql', 'upsert', 'k2', { n: 1 })] },
      { durable: false, entries: [w('nosql', 'delete', 'k2'), w('nosql', 'delete', 'k2'), w('sql', 'delete', 'k2'), w('nosql', 'set', 'k1', { n: 5 })] },
    ] },
    { lostBefore: null, commits: [
      { durable: false, entries: [w('nosql', 'set', 'k3', { x: 1 }), w('nosql', 'set', 'k1', {}), w('nosql', 'upsert', 'k3', { y: 2 }), w('sql', 'upsert', 'k2', { n: 2 })] },
      { durable: false, entries: [w('sql', 'set', 'k2', { c: 'z' }), w('nosql', 'upsert', 'k2', { a: 1 }), w('nosql', 'delete', 'k3'), w('sql', 'upsert', 'k1', { n: null })] },
    ] },
  ],
};

describe.each(backends)('%s', (backend: Backend) => {
  let grouped: TempLog;
  let alone: TempLog;
  beforeAll(async () => {
    grouped = await openTempLog(backend);
    alone = await openTempLog('sqlite');
  });
  afterAll(async () => {
    await grouped?.cleanup();
    await alone?.cleanup();
  });

  it('commits sharing a group leave what the same commits leave one by one', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const tag = `p${n++}`;
        const groupedBefore = grouped.log.stats().transactions;
        const aloneBefore = alone.log.stats().transactions;
        const together = await play(grouped.log, s, tag, true);
        const oneByOne = await play(alone.log, s, tag, false);
        expect(together).toEqual(oneByOne);
        // The grouped side really shared transactions (the first round has 2+ commits).
        expect(grouped.log.stats().transactions - groupedBefore).toBeLessThan(alone.log.stats().transactions - aloneBefore);
      }),
      { numRuns: 40, examples: [[crowded]] },
    );
  }, 120_000);
});
