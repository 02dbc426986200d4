/**
 * GUARANTEES 11: a store key never comes from time, randomness or the run. Records with neither
 * `key:` nor `id` are keyed by their content, so a second run of the same sync into a store that
 * outlives runs overwrites the first run's records instead of doubling them (before: the fallback
 * hashed the effect id, which hashes the random run id — 3 rows became 6).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';

let h: Conformance;

beforeEach(async () => {
  h = await openConformance();
  h.api.on('GET /rows', { body: [{ name: 'a', n: 1 }, { name: 'b', n: 2 }, { name: 'c', n: 3 }] });
});

afterEach(async () => {
  await h.close();
});

const MISSION = `mission Keyless {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store s: sql("keyless_sql")
  store n: nosql("keyless_nosql")
  store f: file("keyless_file")
  action Sync {
    get "/rows"
    store response -> s
    store response -> n
    store response -> f
  }
  run Sync
}
`;

describe('fallback keys outlive runs', () => {
  it('two runs of one keyless sync leave 3 rows in each persistent store, not 6', async () => {
    const entry = path.join(h.dir, 'keyless.vague');
    fs.writeFileSync(entry, MISSION);
    const files = { entry, files: [{ path: entry, text: MISSION }] };
    const first = await h.start(files);
    expect(first.status).toBe('completed');
    const second = await h.start(files);
    expect(second.status).toBe('completed');
    expect(second.runId).not.toBe(first.runId);
    const sql = recordsOf(await h.log.readTable('sql', 'keyless_sql'));
    const nosql = recordsOf(await h.log.readTable('nosql', 'keyless_nosql'));
    const file = JSON.parse(fs.readFileSync(path.join(h.dataDir, 'keyless_file.json'), 'utf8')) as Record<string, unknown>;
    for (const store of [sql, nosql, file]) {
      expect(Object.values(store)).toHaveLength(3);
      expect(Object.values(store).map((r) => (r as { name: string }).name).sort()).toEqual(['a', 'b', 'c']);
    }
    expect(Object.keys(sql).sort()).toEqual(Object.keys(file).sort());
  });
});
