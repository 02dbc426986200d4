/**
 * The bulk read (engine/log/sqlite/read-events.ts: one string per column per chunk, decoded by
 * JSON.parse and split) must equal the plain decoding — one row at a time, `JSON.parse(payload)`
 * per row — event for event, field for field, key order included: on varied payloads and paths,
 * across chunk boundaries, for every range and limit, and on rows the engine would never write
 * (gaps in seq, NUL in a path, unsafe numbers, a payload that is not JSON), where it must fall
 * back to rows rather than answer differently.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { UnreadableEventError } from '../../engine/log/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventType, NewEvent, StoredEvent } from '../../engine/log/events.js';
import type { CommitEntry } from '../../engine/log/log.js';
import type { EventRow as Row } from '../../engine/log/rows.js';
import { newRun, openTempLog, type TempLog } from './helpers.js';

let t: TempLog;
let raw: Database.Database;
beforeEach(async () => {
  t = await openTempLog();
  raw = new Database(t.dbPath);
});
afterEach(async () => {
  raw.close();
  await t.cleanup();
});


/** The reference: SELECT * … ORDER BY seq, one JSON.parse per row (what rows.ts toStoredEvent does). */
function plainRead(runId: string, opts: { fromSeq?: number; toSeq?: number; limit?: number } = {}): StoredEvent[] {
  const rows = raw
    .prepare<[string, number, number, number], Row>('SELECT * FROM reqon_events WHERE run_id = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?')
    .all(runId, opts.fromSeq ?? 1, opts.toSeq ?? Number.MAX_SAFE_INTEGER, opts.limit ?? -1);
  return rows.map((row) => ({
    runId: row.run_id,
    seq: row.seq,
    type: row.type as EventType,
    stepPath: row.step_path,
    payload: JSON.parse(row.payload) as StoredEvent['payload'],
    recordedAt: row.recorded_at,
  }) as StoredEvent);
}

/** Deep equality plus the same key order at every level (toStrictEqual ignores key order). */
function expectSame(actual: StoredEvent[], expected: StoredEvent[]): void {
  expect(actual.length).toBe(expected.length);
  expect(actual).toStrictEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  for (let i = 0; i < actual.length; i++) expect(Object.keys(actual[i]!)).toStrictEqual(Object.keys(expected[i]!));
}

function event(type: string, stepPath: string, payload: unknown, recordedAt: number): CommitEntry {
  return { kind: 'event', event: { type, stepPath, payload, recordedAt } as NewEvent };
}

/** Writes `entries` to a new run through the log's own commit path, `perCommit` at a time. */
async function writeRun(runId: string, entries: CommitEntry[], perCommit = 500): Promise<void> {
  const { lease } = await t.log.createRun(newRun(runId), 'w1', 600_000, []);
  for (let i = 0; i < entries.length; i += perCommit) await t.log.commit(lease, entries.slice(i, i + perCommit), { durable: false });
}

/** Inserts rows directly, bypassing the log's checks: what a hand-made or foreign file may hold. */
function insertRows(rows: [string, number | bigint, string, string, string, number | bigint][]): void {
  const insert = raw.prepare('INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at) VALUES (?, ?, ?, ?, ?, ?)');
  raw.transaction(() => {
    for (const row of rows) insert.run(...row);
  })();
}

const TRICKY_STRINGS = [
  '',
  'Orders/3[2]/1',
  'naïve café — ünïcödé',
  '日本語のパス/0',
  '😀 emoji 👩‍👩‍👧 family',
  'quote " and \' and \\ backslash',
  'line\nbreak\ttab\r',
  '[1,2]{"a":1}',
  ',',
  '\u2028\u2029',
  'lone \ud800 surrogate',
  'x'.repeat(3000),
];

/** Up to `max` events with any types, step paths (NUL included), JSON payloads and instants. */
function randomEvents(max: number) {
  return fc.array(
    fc.record({
      type: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
      stepPath: fc.oneof(fc.string({ unit: 'binary', maxLength: 24 }), fc.constantFrom(...TRICKY_STRINGS)),
      payload: fc.dictionary(fc.string(), fc.jsonValue()),
      recordedAt: fc.integer({ min: -(2 ** 40), max: 2 ** 45 }),
    }),
    { minLength: 1, maxLength: max },
  );
}

describe('bulk read equals row-by-row decoding', () => {
  it('on varied payloads, types and step paths across many chunks', async () => {
    const entries: CommitEntry[] = [];
    for (let i = 0; i < 10_000; i++) {
      const s = TRICKY_STRINGS[i % TRICKY_STRINGS.length]!;
      const payloads: unknown[] = [
        { effectId: `ef_${i}`, store: 'items', key: String(i), record: { id: i, name: s }, op: 'set' },
        { nested: { deep: [1, 2.5, -0, 1e21, 0.1, null, true, false, s, { [s]: s }] } },
        JSON.parse('{"__proto__": {"x": 1}, "b": 2, "2": "two", "1": "one"}'),
        {},
        { list: [s, [s, [s]]], n: i, none: null },
      ];
      entries.push(event(i % 7 === 0 ? 'value.recorded' : `type.${s.slice(0, 5)}`, i % 5 === 0 ? '' : `${s}/${i}`, payloads[i % payloads.length], 1_700_000_000_000 + ((i * 7919) % 100_000) - 50_000));
    }
    await writeRun('r1', entries);
    await writeRun('r2', entries.slice(0, 300)); // another run's rows interleave in the same table
    const expected = plainRead('r1');
    expect(expected.length).toBe(10_000);
    expectSame(await t.log.read('r1'), expected);
    expectSame(await t.log.read('r2'), plainRead('r2'));
  });

  it('for every range and limit: chunk edges, past the end, before the start, empty', async () => {
    const entries = Array.from({ length: 9_000 }, (_, i) => event('value.recorded', `A/${i % 13}`, { source: 'random', value: i }, 5_000 + i));
    await writeRun('r1', entries, 3_000);
    const ranges: { fromSeq?: number; toSeq?: number; limit?: number }[] = [
      {},
      { fromSeq: 1, toSeq: 4096 },
      { fromSeq: 4096, toSeq: 4097 },
      { fromSeq: 4095, limit: 4099 },
      { fromSeq: 100, limit: 1 },
      { limit: 0 },
      { limit: 8_191 },
      { fromSeq: -50, toSeq: 3 },
      { fromSeq: 8_990, toSeq: 1_000_000 },
      { fromSeq: 9_001 },
      { fromSeq: 7, toSeq: 6 },
      { fromSeq: -Number.MAX_SAFE_INTEGER, toSeq: Number.MAX_SAFE_INTEGER, limit: 5_000 },
    ];
    for (const range of ranges) expectSame(await t.log.read('r1', range), plainRead('r1', range));
    expect(await t.log.read('nobody')).toEqual([]);
  });

  it('with payloads too big for one chunk string (read row by row)', async () => {
    const big = 'é'.repeat(3 * 1024 * 1024); // 6 MB of UTF-8 per payload: a chunk passes 16 MB
    const entries = Array.from({ length: 12 }, (_, i) => event('response.received', `Sync/0~${i}`, { page: i, body: i % 2 === 0 ? big : 'small' }, 1_000 + i));
    await writeRun('r1', entries, 1);
    expectSame(await t.log.read('r1'), plainRead('r1'));
    expectSame(await t.log.read('r1', { fromSeq: 3, limit: 4 }), plainRead('r1', { fromSeq: 3, limit: 4 }));
  });

  it('on rows the engine never writes: gaps in seq, NUL in paths and types, unsafe integers', async () => {
    insertRows([
      ['hand', 1, 'run.started', '', '{"a":1}', 10],
      ['hand', 2, 'x\u0000y', 'p\u0000q', '{"b":2}', 11],
      ['hand', 3, 'step.started', 'A/0', '{"s":"s"}', 12],
      ['hand', 9_000_000, 'step.started', 'A/1', '{"l":[1,2]}', 13],
      ['hand', 9_000_001, 'step.started', 'A/2', '{"n":null}', 2n ** 60n],
      ['hand', 9_000_002, 'step.started', 'A/3', '{}', -(2n ** 62n)],
      ['hand', 9_000_003, 'step.started', 'A/4', '{"z":0}', 9_007_199_254_740_991],
    ]);
    for (let i = 0; i < 5_000; i++) insertRows([['hand', 20_000_000 + i * 3, 'value.recorded', `B/${i}`, `{"i":${i}}`, 1_000 + i]]);
    for (const range of [{}, { fromSeq: 2, toSeq: 2 }, { fromSeq: 4, limit: 3 }, { fromSeq: 9_000_001, limit: 4_100 }, { limit: 6 }]) {
      expectSame(await t.log.read('hand', range), plainRead('hand', range));
    }
  });

  it('when only a step path, or only a type, holds a NUL (the split would shift every later event)', async () => {
    insertRows([
      ['p', 1, 'run.started', '', '{}', 1],
      ['p', 2, 'step.started', 'A/\u0000/0', '{"n":2}', 2],
      ['p', 3, 'step.completed', 'A/1', '{"n":3}', 3],
      ['t', 1, 'run.started', '', '{}', 1],
      ['t', 2, 'step\u0000started', 'A/0', '{"n":2}', 2],
      ['t', 3, 'step.completed', 'A/1', '{"n":3}', 3],
    ]);
    expectSame(await t.log.read('p'), plainRead('p'));
    expectSame(await t.log.read('t'), plainRead('t'));
  });

  it('when recorded_at is beyond 2^53 (a difference to the chunk base would round differently)', async () => {
    // 2^54 + 3 reads as 2^54 + 4; sent as 1 + (2^54 + 2) it would come back as 1 + 2^54 → 2^54.
    insertRows([
      ['big', 1, 'run.started', '', '{}', 1],
      ['big', 2, 'step.started', 'A/0', '{}', 2n ** 54n + 3n],
    ]);
    const expected = plainRead('big');
    expect(expected[1]!.recordedAt).toBe(2 ** 54 + 4);
    expectSame(await t.log.read('big'), expected);
  });

  it('throws on a payload that is not a JSON object, naming the event, where the row-by-row decoding would not read it', async () => {
    insertRows([
      ['bad', 1, 'run.started', '', '[1', 10],
      ['bad', 2, 'step.started', 'A/0', '2]', 11],
    ]);
    expect(() => plainRead('bad')).toThrow(SyntaxError);
    await expect(t.log.read('bad')).rejects.toThrow(UnreadableEventError);
    await expect(t.log.read('bad')).rejects.toThrow("the payload of its event 1 (run.started) is not a JSON object");
    // Valid JSON that is no object: no payload the engine writes (it refuses to write one).
    insertRows([['nul', 1, 'run.started', '', 'null', 10]]);
    await expect(t.log.read('nul')).rejects.toThrow('the payload of its event 1 (run.started) is not a JSON object (it is null, not an object)');
    await expect(writeRun('three', [event('x', '', 3, 1)])).rejects.toThrow(/payload of 'x' must be an object/);
  });

  it('on random events (property)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        randomEvents(60),
        fc.integer({ min: -3, max: 70 }),
        fc.integer({ min: -1, max: 70 }),
        async (events, fromSeq, limit) => {
          const runId = `p${n++}`;
          await writeRun(runId, events.map((e) => event(e.type, e.stepPath, e.payload, e.recordedAt)), 7);
          expectSame(await t.log.read(runId), plainRead(runId));
          expectSame(await t.log.read(runId, { fromSeq, limit }), plainRead(runId, { fromSeq, limit }));
        },
      ),
      { numRuns: 150 },
    );
  });
});

/** A replay reader's events, read whole; their payloads are parsed on first use. */
function replayRead(runId: string, toSeq: number): StoredEvent[] {
  const reader = t.log.replayReader!(runId, toSeq, []);
  const out: StoredEvent[] = [];
  for (let chunk = reader.next(5); chunk.length > 0; chunk = reader.next(5)) out.push(...chunk);
  return out;
}

/** What a step sees of an event: its fields, read one by one (the payload through its getter). */
function fields({ runId, seq, type, stepPath, payload, recordedAt }: StoredEvent): StoredEvent {
  return { runId, seq, type, stepPath, payload, recordedAt } as StoredEvent;
}

describe('the replay reader (payloads parsed on first use) equals row-by-row decoding', () => {
  it('field for field and serialised, on random events (property)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        randomEvents(40),
        async (events) => {
          const runId = `lazy${n++}`;
          await writeRun(runId, events.map((e) => event(e.type, e.stepPath, e.payload, e.recordedAt)), 7);
          const replayed = replayRead(runId, events.length);
          const expected = plainRead(runId);
          expectSame(replayed.map(fields), expected);
          // A serialised replayed event is the plain event (JSON.stringify sees its payload too).
          expect(JSON.stringify(replayed)).toBe(JSON.stringify(expected));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('throws on first use of a payload that is not JSON, naming the event', async () => {
    insertRows([
      ['bad', 1, 'run.started', '', '{"ok":true}', 10],
      ['bad', 2, 'step.started', 'A/0', '{"stepType":', 11],
    ]);
    const [good, bad] = replayRead('bad', 2);
    expect(good!.payload).toEqual({ ok: true });
    expect(bad!.type).toBe('step.started');
    expect(() => bad!.payload).toThrow(/the log of run 'bad' is damaged: the payload of its event 2 \(step\.started\) is not a JSON object/);
  });

  it("reads a type's payloads without another's: a marker's broken payload never read does not fail a write's", async () => {
    insertRows([
      ['types', 1, 'step.started', 'A/0', '{"stepType":', 10],
      ['types', 2, 'store.write', 'A/0', '{"key":"k1"}', 11],
      ['types', 3, 'step.completed', 'A/0', 'not json either', 12],
      ['types', 4, 'store.write', 'A/1', '{"key":"k2"}', 13],
    ]);
    const events = replayRead('types', 4);
    expect(events.filter((e) => e.type === 'store.write').map((e) => e.payload)).toEqual([{ key: 'k1' }, { key: 'k2' }]);
    expect(() => events[2]!.payload).toThrow(/the log of run 'types' is damaged: the payload of its event 3 \(step\.completed\) is not a JSON object/);
  });

  it('with payloads too big for one chunk string: each type read whole when it fits, else row by row', async () => {
    const big = 'é'.repeat(3 * 1024 * 1024); // 6 MB of UTF-8 per payload: the chunk passes 16 MB, a type of them may not
    const smallPayloads = Array.from({ length: 10 }, (_, i) => (i % 3 === 0 ? undefined : { stepType: 'Store', line: i }));
    const entries = smallPayloads.map((small, i) =>
      small === undefined ? event('response.received', `Sync/0~${i}`, { page: i, body: big }, 1_000 + i) : event('step.started', `Sync/${i}`, small, 1_000 + i),
    );
    await writeRun('bigLazy', entries, 1);
    const replayed = replayRead('bigLazy', entries.length);
    // The small type first (its own size asked, then read whole), then the big one (row by row).
    expect(replayed.filter((e) => e.type === 'step.started').map((e) => e.payload)).toEqual(smallPayloads.filter((p) => p !== undefined));
    expectSame(replayed.map(fields), plainRead('bigLazy'));
  });
});
