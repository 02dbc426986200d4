/**
 * Memory stores written by concurrent branches (a concurrent loop's iterations, a parallel stage's
 * actions) hold, on replay, what they held live: insertion order and each key's record by the
 * log's order. Replayed answers come at once, so branches replay in another order than they ran
 * live; applied in walk order, `for x in store` after the loop iterated another order than it did
 * live, so an unedited run diverged on its own log (verify) and a resume after a crash failed with
 * "the write of key 3 became a write of key 0" — or stored another order. The API answers the
 * items in reverse order of asking (each later item sooner), so live order is not index order.
 * On each log backend, the built CLI SIGKILLed inside the loop and resumed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { runArmedToEnd } from './support/armed-run.js';
import { builtCli } from './support/cli-build.js';

const ITEMS = 8;

const MISSION = `mission ConcurrentMemory {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store det: memory("det")
  store all: memory("all")
  store copy: sql("concurrent_memory_copy")
  action Fan {
    get "/list"
    for it in response concurrency 4 {
      get "/item/{it.id}"
      store response -> det { key: .id }
    }
  }
  action Slow { get "/slow"  store response -> all { key: .id } }
  action Fast { get "/fast"  store response -> all { key: .id } }
  action Copy {
    store { id: "det", ids: det.id } -> copy { key: .id }
    store { id: "all", ids: all.id } -> copy { key: .id }
    for d in det { store { id: concat("d-", d.id), detail: d.detail } -> copy { key: .id } }
  }
  run Fan then [Slow, Fast] then Copy
}
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cli: string;
let api: FakeApi;
let root: string;

beforeAll(async () => {
  cli = builtCli();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-concurrent-memory-'));
  api = await new FakeApi().start();
  api.on('GET /list', { body: Array.from({ length: ITEMS }, (_, i) => ({ id: `i${i}` })) });
  for (let i = 0; i < ITEMS; i++) {
    api.on(`GET /item/i${i}`, async () => {
      await sleep((ITEMS - i) * 30);
      return { body: { id: `i${i}`, detail: `d${i}` } };
    });
  }
  api.on('GET /slow', async () => {
    await sleep(200);
    return { body: [{ id: 's1' }, { id: 's2' }] };
  });
  api.on('GET /fast', { body: [{ id: 'f1' }, { id: 'f2' }] });
});

afterAll(async () => {
  await api.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A memory store's keys in insertion order, folded from the log in seq order. */
function insertOrder(events: StoredEvent[], store: string): string[] {
  const keys = new Set<string>();
  for (const e of events) {
    if (e.type !== 'store.write') continue;
    const w = e as StoredEvent<'store.write'>;
    if (w.payload.store !== store) continue;
    if (w.payload.op === 'delete') keys.delete(w.payload.key);
    else keys.add(w.payload.key);
  }
  return [...keys];
}

async function runToEnd(backend: Backend, name: string, crashAt?: string) {
  const facts = await runArmedToEnd({
    cli, backend, dir: path.join(root, `${backend}-${name}`), missionText: MISSION, apiUrl: api.url, tables: ['concurrent_memory_copy'],
    ...(crashAt ? { crashAt } : {}),
  });
  return { events: facts.events, copy: Object.fromEntries(facts.tables['concurrent_memory_copy']!.map((r) => [r.key, r.record])) };
}

describe.each(backends)('memory stores written by concurrent branches (%s log)', (backend) => {
  it('are read after the loop in the order the log holds, and the run verifies on its own log', async () => {
    const { events, copy } = await runToEnd(backend, 'reference');
    const det = insertOrder(events, 'det');
    // Live order is the answers' order, not index order: the test would not test otherwise.
    expect(det).not.toEqual(Array.from({ length: ITEMS }, (_, i) => `i${i}`));
    expect(copy['det']).toEqual({ id: 'det', ids: det });
    expect(copy['all']).toEqual({ id: 'all', ids: insertOrder(events, 'all') });
    expect(insertOrder(events, 'all')).toEqual(['f1', 'f2', 's1', 's2']);
  }, 60_000);

  // Inside the loop: the second and the fifth item's store.
  for (const crashAt of ['mid-store:2', 'mid-store:5', 'before-effect:7']) {
    it(`killed at ${crashAt} and resumed: the same holds`, async () => {
      const { events, copy } = await runToEnd(backend, crashAt.replace(':', '-'), crashAt);
      expect(copy['det']).toEqual({ id: 'det', ids: insertOrder(events, 'det') });
      expect(copy['all']).toEqual({ id: 'all', ids: insertOrder(events, 'all') });
      expect(Object.keys(copy).filter((k) => k.startsWith('d-'))).toHaveLength(ITEMS);
    }, 60_000);
  }
});
