/**
 * assets/language/store-delete.vague against a FakeApi on 127.0.0.1, on each log backend
 * ($REQON_TEST_BACKENDS): `delete S[k]` removes the record under k from a memory, sql, nosql and
 * file store — once, the rest left; an absent key is no error and its event says `removed: false`;
 * a deleted key written again goes to the end; `delete p` of a path bound by `let` is an HTTP
 * DELETE; the run verifies clean, and the store fold at each seq shows the record until its delete.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { startFakePostgrest } from '../stores/helpers/fake-postgrest.js';

const ENTRY = path.join(REPO, 'assets/language/store-delete.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });
const ITEMS = [1, 2, 3, 4, 5].map((id) => ({ id, name: `item ${id}` }));
/** 3 twice (the second removes nothing), 9 never stored. */
const DONE = [{ id: 3 }, { id: 1 }, { id: 9 }, { id: 3 }];
const KINDS = { mem: 'memory', tab: 'sql', doc: 'nosql', fil: 'file' } as const;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

function seen(api: Conformance['api'], kind: string): unknown[] {
  return api.requests
    .filter((r) => r.method === 'POST' && r.url === '/seen' && (r.body as { kind: string }).kind === kind)
    .map((r) => (r.body as { id: unknown }).id);
}

describe.each(backends)('delete S[k] on the %s log', (backend) => {
  it('removes each record once from every store kind, leaves the rest, and replays clean', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /items', { body: { items: ITEMS } }).on('GET /done', { body: { done: DONE } }).on('POST /seen', { status: 201, body: {} });
    c.api.on('DELETE /gone', { status: 204 });
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');

    // 3 and 1 gone; 1 written again, now last; 2, 4, 5 untouched and in their order.
    for (const kind of Object.values(KINDS)) expect({ kind, ids: seen(c.api, kind) }).toEqual({ kind, ids: [2, 4, 5, 1] });
    for (const store of Object.keys(KINDS)) {
      expect(await c.store(result.runId, store)).toEqual({ '1': { id: 1, name: 'item 1 again' }, '2': ITEMS[1], '4': ITEMS[3], '5': ITEMS[4] });
    }
    expect(await c.log.readTable('sql', 'del_sql')).toEqual([2, 4, 5, 1].map((id) => ({ key: String(id), record: id === 1 ? { id, name: 'item 1 again' } : ITEMS[id - 1] })));
    // The file's members in its own order (JSON.parse would put integer-like keys first).
    const text = fs.readFileSync(path.join(c.dataDir, 'del_file.json'), 'utf8');
    expect([...text.matchAll(/^ {2}"([^"]+)": \{/gm)].map((m) => m[1])).toEqual(['2', '4', '5', '1']);

    // Only `delete gone` (a variable's path) went out as a request; no DELETE of a store path.
    expect(c.api.requests.filter((r) => r.method === 'DELETE').map((r) => r.url)).toEqual(['/gone']);

    const events = await c.events(result.runId);
    const deletes = events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write' && e.payload.op === 'delete');
    for (const store of Object.keys(KINDS)) {
      const mine = deletes.filter((e) => e.payload.store === store).map((e) => [e.payload.key, e.payload.removed, e.payload.record]);
      expect({ store, mine }).toEqual({ store, mine: [['3', true, null], ['1', true, null], ['9', false, null], ['3', false, null], ['nobody', false, null]] });
    }
    await c.expectVerified(result.runId);

    // The store fold (`reqon store … --at SEQ`, the studio) drops the record at the delete's seq.
    const firstDelete = deletes.find((e) => e.payload.store === 'tab' && e.payload.key === '3')!;
    expect(MemoryStoreState.fromEvents(events, firstDelete.seq - 1).get('tab', '3')).toEqual(ITEMS[2]);
    expect(MemoryStoreState.fromEvents(events, firstDelete.seq).get('tab', '3')).toBeUndefined();
    expect(MemoryStoreState.fromEvents(events, firstDelete.seq).get('tab', '4')).toEqual(ITEMS[3]);
    expect(MemoryStoreState.fromEvents(events).list('fil').map((r) => r.key)).toEqual(['1', '2', '4', '5']);
  });
});

/** One string edit of the mission at a recorded delete, and what verify must say about it. */
const MUTATIONS: { name: string; from: string; to: string; recorded: RegExp; asked: RegExp }[] = [
  { name: 'a delete became a write', from: 'delete tab[d.id]', to: 'store { id: d.id } -> tab', recorded: /a delete of key "3" in `tab`/, asked: /a write of key "3"/ },
  { name: 'a write became a delete', from: 'store { id: 1, name: "item 1 again" } -> doc', to: 'delete doc[1]', recorded: /a write of key "1" in `doc`/, asked: /a delete of key "1"/ },
  { name: 'the store deleted from changed', from: 'delete mem["nobody"]', to: 'delete tab["nobody"]', recorded: /`mem`/, asked: /`tab`/ },
  { name: 'the key deleted changed', from: 'delete doc["nobody"]', to: 'delete doc["somebody"]', recorded: /key "nobody"/, asked: /key "somebody"/ },
  // A file store's batch intent (its keys) is compared first.
  { name: 'the key deleted from a file store changed', from: 'delete fil["nobody"]', to: 'delete fil["somebody"]', recorded: /keys "nobody"/, asked: /keys "somebody"/ },
];

describe('an edited delete diverges at its step (verify)', () => {
  it.each(MUTATIONS)('$name', async ({ from, to, recorded, asked }) => {
    c = await openConformance();
    c.api.on('GET /items', { body: { items: ITEMS } }).on('GET /done', { body: { done: DONE } }).on('POST /seen', { status: 201, body: {} });
    c.api.on('DELETE /gone', { status: 204 });
    const result = await c.start(files());
    expect(result.status).toBe('completed');
    const original = fs.readFileSync(ENTRY, 'utf8');
    const text = original.replace(from, to);
    expect(text).not.toBe(original);
    const report = await verifyRun(c.log, result.runId, { env: createFakeEnv(), missionFiles: { entry: ENTRY, files: [{ path: ENTRY, text }] } });
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toMatch(/^Prune\//);
    // What was recorded and what is asked, in the words of the report (and its `change` line).
    const said = `${report.divergence?.recorded} | ${report.divergence?.asked} | ${report.divergence?.change ?? ''}`;
    expect(said).toMatch(recorded);
    expect(said).toMatch(asked);
  });
});

describe('delete S[k] on a postgrest store', () => {
  it('sends one DELETE of the row per delete, removes those rows once, leaves the rest, and replays clean', async () => {
    const pg = await startFakePostgrest({ table: 'people' });
    try {
      c = await openConformance({ vars: { REQON_STORE_PEOPLE_URL: pg.url } });
      c.api.on('GET /items', { body: { items: ITEMS } }).on('GET /done', { body: { done: DONE } });
      const entry = path.join(c.dir, 'pg-delete.vague');
      const text = `mission PgDelete {
  source Api { auth: none, base: "https://api.test" }
  store people: postgrest("people")
  action Load {
    get "/items"
    store response.items -> people
    get "/done"
    for d in response.done { delete people[d.id] }
  }
  run Load
}
`;
      fs.writeFileSync(entry, text);
      const result = await c.start({ entry, files: [{ path: entry, text }] });
      expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
      expect([...pg.rows.keys()].sort()).toEqual(['2', '4', '5']);
      expect(pg.requests.filter((r) => r.method === 'DELETE').map((r) => r.url)).toEqual(['/people?id=eq.3', '/people?id=eq.1', '/people?id=eq.9', '/people?id=eq.3']);
      const deletes = (await c.events(result.runId)).filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write' && e.payload.op === 'delete');
      expect(deletes.map((e) => [e.payload.key, e.payload.removed])).toEqual([['3', true], ['1', true], ['9', false], ['3', false]]);
      const requests = pg.requests.length;
      await c.expectVerified(result.runId);
      // Verify replays from the log: it sends nothing.
      expect(pg.requests.length).toBe(requests);
    } finally {
      await pg.close();
    }
  });
});

describe('delete S[k] with keys an API did not promise', () => {
  const text = `mission Hostile {
  source Api { auth: none, base: "https://api.test" }
  store tab: sql("hostile_sql")
  action Load {
    get "/items"
    store response.items -> tab
    get "/done"
    for d in response.done { delete tab[d.id] }
  }
  run Load
}
`;
  for (const [what, id, message] of [
    ['null', null, /store key evaluated to null/],
    ['an object', { nested: 1 }, /store key must be a string, a number or a boolean \(its text is the key\) but got: object/],
    ['an empty string', '', /store key evaluated to an empty string/],
  ] as const) {
    it(`a key that is ${what} fails that iteration's step saying so (the loop tolerates it); the other delete lands`, async () => {
      c = await openConformance();
      c.api.on('GET /items', { body: { items: ITEMS } }).on('GET /done', { body: { done: [{ id: 2 }, { id }] } });
      const entry = path.join(c.dir, 'hostile.vague');
      fs.writeFileSync(entry, text);
      const result = await c.start({ entry, files: [{ path: entry, text }] });
      expect(result.status).toBe('completed');
      const failed = (await c.events(result.runId)).filter((e) => e.type === 'step.failed').map((e) => (e.payload as { error: { message: string } }).error.message);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatch(message);
      expect((await c.log.readTable('sql', 'hostile_sql')).map((r) => r.key)).toEqual(['1', '3', '4', '5']);
      await c.expectVerified(result.runId);
    });
  }

  it('a huge key (1 MB) and a key of quotes and slashes are keys like any other', async () => {
    c = await openConformance();
    const huge = 'k'.repeat(1 << 20);
    const odd = `a"b'/c\\\\d;DROP TABLE hostile_sql;--`;
    c.api.on('GET /items', { body: { items: [{ id: huge }, { id: odd }, { id: 'plain' }] } }).on('GET /done', { body: { done: [{ id: huge }, { id: odd }] } });
    const entry = path.join(c.dir, 'hostile.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result).slice(0, 500)).toBe('completed');
    expect(await c.log.readTable('sql', 'hostile_sql')).toEqual([{ key: 'plain', record: { id: 'plain' } }]);
    await c.expectVerified(result.runId);
  });
});
