/**
 * Records with no id and no `key:` are keyed by their content (stores/keys.ts), so identical ones
 * are one record — two identical ledger rows of one answer (two coffees of one day) kept one and
 * the run said nothing. It still keeps one (a second run of the sync must overwrite, not double),
 * but says so, naming the step and how to keep each.
 */
import { afterEach, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

it('says how many identical keyless records of one write were stored as one', async () => {
  c = await openConformance();
  const coffee = { day: '2026-12-01', item: 'coffee', amount: 5 };
  c.api.on('GET /export', { body: { rows: [coffee, { day: '2026-12-01', item: 'tea', amount: 4 }, coffee] } });
  const mission = (key: string) => `mission Ledger {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store ledger: sql("ledger${key ? '_keyed' : ''}")
  action A {
    get "/export"
    store response.rows -> ledger${key}
  }
  run A
}
`;
  const progress: string[] = [];
  const result = await c.start(c.mission('ledger', mission('')), {}, { progress: (line) => progress.push(line) });
  expect(result.status).toBe('completed');
  expect(Object.keys(recordsOf(await c.log.readTable('sql', 'ledger')))).toHaveLength(2);
  expect(progress).toContain(
    'warning: A/1: 1 record(s) identical to another of the same write, with no id and no key:, were stored as one — records without a key are keyed by their content; give the store step a key: to keep each',
  );
  const keyed: string[] = [];
  await c.start(c.mission('keyed', mission(' { key: concat(.day, .item, .amount) }')), {}, { progress: (line) => keyed.push(line) });
  expect(keyed.filter((l) => l.startsWith('warning'))).toEqual([]);
});

it('says when two different records of one write share a key (the later replaced the earlier), and not for upserts or identical ones', async () => {
  c = await openConformance();
  c.api.on('GET /items', { body: [{ id: 7, sku: 'apple' }, { id: 8, sku: 'plum' }, { id: 7, sku: 'pear' }, { id: 8, sku: 'plum' }] });
  const mission = (name: string, options: string) => `mission Items {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store items: sql("${name}")
  action A {
    get "/items"
    store response -> items${options}
  }
  run A
}
`;
  const progress: string[] = [];
  const result = await c.start(c.mission('items', mission('dup_items', '')), {}, { progress: (line) => progress.push(line) });
  expect(result.status).toBe('completed');
  expect(recordsOf(await c.log.readTable('sql', 'dup_items'))).toEqual({ '7': { id: 7, sku: 'pear' }, '8': { id: 8, sku: 'plum' } });
  expect(progress.filter((l) => l.startsWith('warning'))).toEqual([
    'warning: A/1: 1 record(s) had the key of another, different record of the same write (key "7" first): a store keeps one record per key, so each replaced the one before it — check the step\'s key: (or the records\' id), or use upsert: true to merge them',
  ]);
  const merged: string[] = [];
  await c.start(c.mission('upserted', mission('dup_items_upsert', ' { upsert: true }')), {}, { progress: (line) => merged.push(line) });
  expect(merged.filter((l) => l.startsWith('warning'))).toEqual([]);
});
