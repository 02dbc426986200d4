/**
 * One commit far larger than a statement's slice: a store step writes a whole response in one
 * commit (hundreds of thousands of records in a bulk export). On PostgreSQL its events and rows go
 * in slices (EVENTS_PER_INSERT, ROWS_PER_INSERT) inside the one transaction, with payloads, records
 * and column values sent as JSON arrays of strings. What must hold, on both backends: every event
 * and row lands, in order (seqs contiguous, `_seq` in write order across the slices), each text
 * read back exactly — quotes, backslashes, escapes, NULs, lone surrogates, astral characters — and
 * a commit whose lease is lost writes nothing of it, even when it spans many slices.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENTS_PER_INSERT } from '../../engine/log/postgres/run-sql.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite, value } from './helpers.js';

/** More than two slices of each kind, with a remainder. */
const N = 2 * EVENTS_PER_INSERT + 345;

/** Text that an escaping mistake anywhere on the way would change. */
function awkward(i: number): Record<string, unknown> {
  return {
    id: i,
    quote: `say "hi" \\ ${i}`,
    escapes: '\\u0000 is not a NUL, \\" is not a quote, \\\\ two',
    nul: i % 3 === 0 ? 'a\u0000b' : 'plain',
    lone: i % 5 === 0 ? 'x\uD800y' : 'ok',
    astral: '😀 é ß',
    nested: { list: [i, 'two', null, { deep: '"\\' }] },
    nothing: null,
  };
}

describe.each(backends)('%s: one commit of many slices', (backend: Backend) => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it(`${N} store writes and ${N} events in one commit land whole, in order, each text exact`, async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 60_000, [started()]);
    const writes = Array.from({ length: N }, (_, i) => storeWrite({ key: `k${i}`, record: awkward(i) }));
    const values = Array.from({ length: N }, (_, i) => value(awkward(i)));
    await t.log.commit(lease, [...writes, ...values], { durable: true });

    const rows = await t.log.readTable('sql', 'orders');
    expect(rows.length).toBe(N);
    rows.forEach((row, i) => {
      expect(row.key).toBe(`k${i}`);
      expect(row.record).toEqual(awkward(i));
    });
    const events = await t.log.read('r1');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 2 * N + 1 }, (_, i) => i + 1));
    const recorded = events.filter((e) => e.type === 'value.recorded').map((e) => (e.payload as { value: unknown }).value);
    expect(recorded).toEqual(values.map((_, i) => awkward(i)));
    const written = events.filter((e) => e.type === 'store.write').map((e) => (e.payload as { record: unknown }).record);
    expect(written).toEqual(writes.map((_, i) => awkward(i)));
  });

  it('events alone (the one-statement path) land whole and exact', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 60_000, [started()]);
    await t.log.commit(lease, Array.from({ length: N }, (_, i) => value(awkward(i))), { durable: false });
    const events = await t.log.read('r1');
    expect(events).toHaveLength(N + 1);
    expect(events.slice(1).map((e) => (e.payload as { value: unknown }).value)).toEqual(Array.from({ length: N }, (_, i) => awkward(i)));
  });

  it('a commit of many slices whose lease was lost writes nothing', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 60_000, [started()]);
    await t.log.release(lease);
    const writes = Array.from({ length: N }, (_, i) => storeWrite({ key: `k${i}`, record: awkward(i) }));
    await expect(t.log.commit(lease, [...writes, value('after')], { durable: true })).rejects.toThrow();
    expect(await t.log.readTable('sql', 'orders')).toEqual([]);
    expect(await t.log.read('r1')).toHaveLength(1);
  });
});
