/**
 * assets/language/store-order.vague against a FakeApi on 127.0.0.1: memory, sql, nosql and file
 * stores (and a sql table made in the shape before `_seq`) are walked in the one order the
 * reference gives (§B.4): insertion order, a key written again keeping its place. The keys'
 * string order differs from their arrival order, so a kind that listed by key would show here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/store-order.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });
/** Arrival order; in string order they would be 1, 10, 11, 2, a, b. */
const ARRIVAL = [10, 2, 11, 'b', 1, 'a'];

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /items', { body: { items: ARRIVAL.map((id) => ({ id, name: `item ${id}` })) } }).on('POST /seen', { status: 201, body: {} });
  // A store table as an engine before insertion order made it: no `_seq`, only the hidden rowid.
  const db = new Database(c.dbPath);
  db.exec('CREATE TABLE order_legacy (_key TEXT PRIMARY KEY, _record TEXT NOT NULL)');
  db.close();
});

afterEach(async () => {
  await c.close();
});

function seen(kind: string): unknown[] {
  return c.api.requests
    .filter((r) => r.method === 'POST' && r.url === '/seen' && (r.body as { kind: string }).kind === kind)
    .map((r) => (r.body as { id: unknown }).id);
}

describe('store iteration order', () => {
  it('is insertion order for every store kind, a rewritten key keeping its place, and replays clean', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    for (const kind of ['memory', 'sql', 'nosql', 'file', 'legacy']) {
      expect({ kind, ids: seen(kind) }).toEqual({ kind, ids: ARRIVAL });
    }
    for (const r of c.api.requests.filter((r) => r.url === '/seen' && (r.body as { of?: number }).of !== undefined)) {
      expect((r.body as { of: number }).of).toBe(ARRIVAL.length);
    }
    // `where` keeps the store's order: 2 (rewritten, still second) before "a" (last).
    expect(seen('sql-where')).toEqual([2, 'a']);
    expect(seen('file-where')).toEqual([2, 'a']);
    // The rewrite merged into the record in place.
    expect(await c.log.readTable('sql', 'order_sql')).toEqual(
      ARRIVAL.map((id) => ({ key: String(id), record: id === 2 ? { id, name: 'item 2', again: true } : { id, name: `item ${id}` } })),
    );
    // The file lists its records in that order too, so a person reading it sees it.
    const text = fs.readFileSync(path.join(c.dataDir, 'order_file.json'), 'utf8');
    expect([...text.matchAll(/^ {2}"([^"]+)": \{/gm)].map((m) => m[1])).toEqual(ARRIVAL.map(String));
    // New tables carry the order as a column people can sort by in plain SQL.
    const db = new Database(c.dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT _key FROM order_sql ORDER BY _seq').pluck().all()).toEqual(ARRIVAL.map(String));
      expect(db.prepare('SELECT _key FROM order_nosql ORDER BY _seq').pluck().all()).toEqual(ARRIVAL.map(String));
    } finally {
      db.close();
    }
    await c.expectVerified(result.runId);
  });

  it('a second run reads what the first wrote in the same order, and appends its new keys last', async () => {
    const first = await c.start(files());
    expect(first.status).toBe('completed');
    c.api.requests.length = 0;
    c.api.on('GET /items', { body: { items: [{ id: 0, name: 'item 0' }, { id: 11, name: 'eleven' }] } });
    const second = await c.start(files());
    expect(second.status === 'completed' ? 'completed' : JSON.stringify(second)).toBe('completed');
    // The memory store is the run's own; the persistent kinds keep the first run's order and put 0 last.
    expect(seen('memory')).toEqual([0, 11, 2]);
    for (const kind of ['sql', 'nosql', 'file', 'legacy']) {
      expect({ kind, ids: seen(kind) }).toEqual({ kind, ids: [...ARRIVAL, 0] });
    }
  });
});
