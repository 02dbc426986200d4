/**
 * A store step of more records than one batch holds (STORE_BATCH_RECORDS) writes them as several
 * batches, each a commit of its own, so its memory stays bounded (one 62 MB answer of 4.5M small
 * records, written as one batch, took the process past a 2 GB heap and left the run `running`).
 * The batches must still be the step's writes exactly: the same keys and effect ids, every batch
 * counted by the crash points, and a kill inside any batch — the first batches committed, the
 * rest not — resumed to the same stores as a crash-free run, the log verifying clean. On each
 * log backend, the built CLI SIGKILLed at the armed point.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passesRecordedBy } from '../../engine/journal/effects.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { STORE_BATCH_RECORDS } from '../../engine/steps/store-step.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { runArmedToEnd } from './support/armed-run.js';
import { builtCli } from './support/cli-build.js';

/** Two and a half batches: the last one short. */
const COUNT = STORE_BATCH_RECORDS * 2 + STORE_BATCH_RECORDS / 2;
const ITEMS = Array.from({ length: COUNT }, (_, i) => ({ id: i, name: `item ${i}`, even: i % 2 === 0 }));

// The sql store's batches are mid-store 1–3, the memory store's 4–6; `seen` counts the records
// by one GET after both, so a resume that stored a batch twice or skipped one shows in the stores.
const MISSION = `mission BigBatches {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store table: sql("big_batches")
  store mem: memory("big_batches_mem")
  action Load {
    get "/items"
    store response -> table { key: .id }
    store response -> mem
    get "/done"
  }
  run Load
}
`;

let cli: string;
let api: FakeApi;
let root: string;

beforeAll(async () => {
  cli = builtCli();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-big-batches-'));
  api = await new FakeApi().start();
  api.on('GET /items', { body: ITEMS });
  api.on('GET /done', { body: { ok: true } });
});

afterAll(async () => {
  await api.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

interface Outcome {
  runId: string;
  killedAt: { sql: number; mem: number } | undefined;
  events: StoredEvent[];
  table: Record<string, unknown>;
  mem: Record<string, unknown>;
}

const writesTo = (events: StoredEvent[], store: string) =>
  events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write' && e.payload.store === store);

async function runToEnd(backend: Backend, name: string, crashAt?: string): Promise<Outcome> {
  let killedAt: Outcome['killedAt'];
  const facts = await runArmedToEnd({
    cli, backend, dir: path.join(root, `${backend}-${name}`), missionText: MISSION, apiUrl: api.url, tables: ['big_batches'],
    ...(crashAt ? { crashAt } : {}),
    atKill: (events) => (killedAt = { sql: writesTo(events, 'table').length, mem: writesTo(events, 'mem').length }),
  });
  const table = Object.fromEntries(facts.tables['big_batches']!.map((r) => [r.key, r.record]));
  const mem = Object.fromEntries(MemoryStoreState.fromEvents(facts.events).list('mem').map((r) => [r.key, r.record]));
  return { runId: facts.runId, killedAt, events: facts.events, table, mem };
}

describe.each(backends)('a store step of more records than one batch (%s log)', (backend) => {
  let reference: Outcome;

  it('writes them as batches with the one step’s effect ids, each batch a crash point', async () => {
    reference = await runToEnd(backend, 'reference');
    expect(Object.keys(reference.table)).toHaveLength(COUNT);
    expect(reference.table['12345']).toEqual(ITEMS[12345]);
    expect(Object.keys(reference.mem)).toHaveLength(COUNT);
    for (const store of ['table', 'mem']) {
      const writes = writesTo(reference.events, store);
      expect(writes).toHaveLength(COUNT);
      // One step, one path, effect ids by position in the whole answer; a batch marker every STORE_BATCH_RECORDS.
      expect(new Set(writes.map((w) => w.stepPath)).size).toBe(1);
      expect(new Set(writes.map((w) => w.payload.effectId)).size).toBe(COUNT);
      expect(writes.flatMap((w, i) => (w.payload.batch !== undefined ? [i] : []))).toEqual([0, STORE_BATCH_RECORDS, STORE_BATCH_RECORDS * 2]);
    }
    const midStores = reference.events.flatMap((e) => passesRecordedBy(e, { format: 2, externalBatchAt: () => false })).filter((p) => p.point === 'mid-store');
    expect(midStores).toHaveLength(6);
  }, 180_000);

  // Inside the sql store's second batch, and inside the memory store's third.
  for (const [crashAt, killedAt] of [
    ['mid-store:2', { sql: STORE_BATCH_RECORDS, mem: 0 }],
    ['mid-store:6', { sql: COUNT, mem: STORE_BATCH_RECORDS * 2 }],
    ['before-effect:3', { sql: STORE_BATCH_RECORDS, mem: 0 }],
  ] as const) {
    it(`killed at ${crashAt}: the batches before it committed, and the resume stores what a crash-free run stores`, async () => {
      const outcome = await runToEnd(backend, crashAt.replace(':', '-'), crashAt);
      expect(outcome.killedAt).toEqual(killedAt);
      expect(outcome.table).toEqual(reference.table);
      expect(outcome.mem).toEqual(reference.mem);
      // Each record written once: no batch written again by the resume, none skipped.
      for (const store of ['table', 'mem']) {
        const ids = writesTo(outcome.events, store).map((w) => w.payload.effectId);
        expect(ids).toHaveLength(COUNT);
        expect(new Set(ids).size).toBe(COUNT);
      }
    }, 180_000);
  }
});
