/**
 * A partial update (`upsert: true`, or `partial: true`) is a JSON Merge Patch (RFC 7386) on every
 * store kind: objects merged key by key, arrays replaced, null deletes. Before: `upsert` merged
 * shallowly (a nested `profile` replaced whole: `profile.email` lost) and `partial: true` without
 * `upsert` replaced the whole record; sql/nosql/file/postgrest each did it their own way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { startFakePostgrest, type FakePostgrest } from './helpers/fake-postgrest.js';

const FIRST = { id: 1, name: 'Ada', profile: { email: 'ada@example.com', phone: '111', address: { city: 'London', zip: 'N1' } }, tags: ['a', 'b'], note: 'old' };
const PATCH = { id: 1, profile: { phone: '222', address: { zip: 'E2' } }, tags: ['c'], note: null };
const MERGED = { id: 1, name: 'Ada', profile: { email: 'ada@example.com', phone: '222', address: { city: 'London', zip: 'E2' } }, tags: ['c'] };

let h: Conformance;
let pg: FakePostgrest;

beforeEach(async () => {
  pg = await startFakePostgrest({ table: 'people' });
  h = await openConformance({ vars: { REQON_STORE_PEOPLE_URL: pg.url } });
  h.api.on('GET /first', { body: FIRST });
  h.api.on('GET /patch', { body: PATCH });
});

afterEach(async () => {
  await h.close();
  await pg.close();
});

function mission(kind: string, option: string): string {
  return `mission Merge {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store people: ${kind}("people")
  action Load {
    get "/first"
    store response -> people { key: .id }
    get "/patch"
    store response -> people { key: .id, ${option} }
  }
  run Load
}
`;
}

async function stored(kind: string, runId: string): Promise<Record<string, unknown>> {
  switch (kind) {
    case 'memory':
      return (await h.store(runId, 'people'))['1'] as Record<string, unknown>;
    case 'sql':
    case 'nosql':
      return recordsOf(await h.log.readTable(kind, 'people'))['1'] as Record<string, unknown>;
    case 'file':
      return (JSON.parse(fs.readFileSync(path.join(h.dataDir, 'people.json'), 'utf8')) as Record<string, Record<string, unknown>>)['1']!;
    default:
      return pg.rows.get('1')!;
  }
}

describe('partial updates are JSON Merge Patches on every store kind', () => {
  for (const kind of ['memory', 'sql', 'nosql', 'file', 'postgrest']) {
    for (const [option, extra] of [['upsert: true', {}], ['partial: true', { _partial: true }]] as const) {
      it(`${kind}, ${option}: nested objects merged key by key, arrays replaced, null deletes`, async () => {
        const entry = path.join(h.dir, 'merge.vague');
        const text = mission(kind, option);
        fs.writeFileSync(entry, text);
        const result = await h.start({ entry, files: [{ path: entry, text }] });
        expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
        expect(await stored(kind, result.runId)).toEqual({ ...MERGED, ...extra });
        // The store.write event carries the record as stored.
        const writes = (await h.events(result.runId)).filter((e) => e.type === 'store.write');
        expect((writes[writes.length - 1]!.payload as { record: unknown }).record).toEqual({ ...MERGED, ...extra });
        await h.expectVerified(result.runId);
      });
    }
  }
});
