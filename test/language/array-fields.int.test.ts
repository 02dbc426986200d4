/**
 * assets/language/array-fields.vague against a FakeApi on 127.0.0.1: a field of an array of
 * records (`sum(orders.total)` over a sql store, `big.id` over a `where` result,
 * `orders.lines.qty` one level flattened, `response.orders.lines` of a fetch), the store read
 * recorded for a dotted name that starts with a store, a replay that agrees; then answers the
 * mission was not written for: a null total, a shape without the field.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/array-fields.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

const ORDERS = [
  { id: 1, region: 'eu', total: 30, lines: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] },
  { id: 2, region: 'us', total: 70.5, lines: [{ sku: 'c', qty: 4 }] },
  { id: 3, region: 'eu', total: 100, lines: [] },
];

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('POST /report', { status: 201, body: {} });
});

afterEach(async () => {
  await c.close();
});

describe('a field of an array of records, in a run', () => {
  it('sums and lists item fields over a store, a where result and a fetch, records the store reads, and replays clean', async () => {
    c.api.on('GET /orders', { body: { orders: ORDERS } });
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'summary')).toEqual({
      all: {
        id: 'all',
        count: 3,
        revenue: 200.5,
        average: 200.5 / 3,
        units: 7,
        big_revenue: 170.5,
        big_ids: [2, 3],
        none: 0,
        coupon: 'no coupon field',
        regions: ['eu', 'us', 'eu'],
      },
    });
    expect(await c.store(result.runId, 'seen')).toEqual({
      1: { id: 1, qty: 3, skus: ['a', 'b'] },
      3: { id: 3, qty: 0, skus: [] },
    });
    expect(c.api.requests.filter((r) => r.url === '/report').map((r) => r.body)).toEqual([{ eu_total: 130, first_lines: 3 }]);
    // `sum(orders.total)` names the store with a dotted name: the summary step reads it first, recorded.
    const reads = (await c.events(result.runId))
      .filter((e) => e.type === 'value.recorded' && (e.payload as { source: string }).source === 'store-read')
      .map((e) => `${e.stepPath} ${(e.payload as { value: { store: string } }).value.store}`);
    expect(reads).toEqual(['Summarize/0 orders', 'Summarize/2 orders', 'Summarize/3 orders']);
    await c.expectVerified(result.runId);
  });

  it('a null total fails the sum, saying so, as a null item of any array does', async () => {
    c.api.on('GET /orders', { body: { orders: [ORDERS[0], { ...ORDERS[1], total: null }] } });
    const result = await c.start(files());
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toMatch(/^Cannot perform 'sum' on null/);
    await c.expectVerified(result.runId);
  });

  it('an API whose orders have no `total` field: the field is absent, so sum refuses it instead of reporting 0', async () => {
    c.api.on('GET /orders', { body: { orders: [{ id: 1, region: 'eu', amount: 5, lines: [] }, { id: 2, region: 'us', amount: 6, lines: [] }] } });
    const result = await c.start(files());
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toMatch(/sum\(\).*array.*absent \(no value\)/);
    await c.expectVerified(result.runId);
  });

  it('no orders at all: every total is 0, every list empty (even `orders.coupon`: an empty array has every field, none)', async () => {
    c.api.on('GET /orders', { body: { orders: [] } });
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'summary')).toEqual({
      all: { id: 'all', count: 0, revenue: 0, average: 0, units: 0, big_revenue: 0, big_ids: [], none: 0, coupon: [], regions: [] },
    });
    expect(c.api.requests.filter((r) => r.url === '/report').map((r) => r.body)).toEqual([{ eu_total: 0, first_lines: 0 }]);
  });
});
