/**
 * `eventCounts`' http.response statuses are read from the payload's first characters, not by
 * parsing the whole body (a 20 MB body made every runs-list call parse 20 MB). The counts must be
 * those of the full parse on both backends: for the engine's payload order, and for payloads in
 * any other shape (status not first, `response` after an object, status a string or a fraction,
 * quotes and brackets in the strings before it), where the fast path must step aside.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitEntry } from '../../engine/log/log.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started } from './helpers.js';

const response = (payload: unknown, at: number): CommitEntry => ({ kind: 'event', event: { type: 'http.response', stepPath: 'A/0', payload, recordedAt: at } as never });
const engineOrder = (effectId: string, status: number, body: unknown) => ({ effectId, attempt: 1, response: { status, headers: {}, body }, durationMs: 1, verdict: 'success' });

/** The statuses as counted, sorted, and as the full parse of every event counts them. */
async function statuses(t: TempLog, runId: string) {
  const counts = await t.log.eventCounts(runId, ['http.response']);
  const counted = counts.responseStatuses.map((r) => [JSON.stringify(r.status), r.count] as const).sort();
  const full = new Map<string, number>();
  for (const e of await t.log.read(runId)) {
    if (e.type !== 'http.response') continue;
    const s = JSON.stringify((e.payload as { response?: { status?: unknown } }).response?.status ?? null);
    full.set(s, (full.get(s) ?? 0) + 1);
  }
  return { counted, full: [...full].sort() };
}

describe.each(backends)('%s log: http.response statuses without parsing the body', (backend: Backend) => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('counts the engine-written order, big bodies included', async () => {
    const { lease } = await t.log.createRun(newRun('big', 1_000), 'w1', 30_000, [started()]);
    await t.log.commit(
      lease,
      [
        response(engineOrder('ef_1', 200, { s: 'y'.repeat(2_000_000) }), 2_000),
        response(engineOrder('ef_2', 503, [1, 2]), 2_001),
        response(engineOrder('ef_3', 200, null), 2_002),
        response(engineOrder('ef_"{[4', 404, '"response":{"status":999}'), 2_003),
      ],
      { durable: false },
    );
    const { counted, full } = await statuses(t, 'big');
    expect(counted).toEqual(full);
    expect(counted).toEqual([['200', 2], ['404', 1], ['503', 1]]);
  });

  it('falls back to the full parse for any other shape, with the same answer', async () => {
    const { lease } = await t.log.createRun(newRun('odd', 1_000), 'w1', 30_000, [started()]);
    const odd = [
      { response: { headers: {}, status: 201, body: null } }, // status not the first key
      { meta: { response: { status: 999 } }, response: { status: 202 } }, // a nested "response" first
      { list: ['"response":{"status":998,'], response: { status: 203 } }, // inside an array first
      { effectId: 'a\\",\\"response\\":{\\"status\\":997,', response: { status: 204 } }, // escaped quotes
      { 'x\\"response': { status: 996 }, response: { status: 205 } },
      { response: { status: '200' } }, // a string
      { response: { status: 200.5 } }, // a fraction
      { response: { status: 42 } }, // not three digits
      { response: { status: 2000 } },
      { response: null },
      { attempt: 1 },
      { effectId: 'e', attempt: 1e3, ok: true, no: null, response: { status: 206 } }, // flat members before: fast path
    ];
    await t.log.commit(lease, odd.map((p, i) => response(p, 2_000 + i)), { durable: false });
    const { counted, full } = await statuses(t, 'odd');
    expect(counted).toEqual(full);
    expect(counted.map(([s]) => s)).toEqual(expect.arrayContaining(['201', '202', '203', '204', '205', '"200"', '200.5', '42', '2000', '206', 'null']));
  });
});
