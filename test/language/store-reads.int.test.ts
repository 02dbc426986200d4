/**
 * assets/language/store-reads.vague against a FakeApi on 127.0.0.1: store names read as values
 * (`length(orders)`, `orders where …`, `products[sku]`, `for o in (orders where …)`) over sql,
 * file and memory stores. A persistent store's read is recorded (`value.recorded`, source
 * `store-read`) before the step that names it, and the run replays clean.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/store-reads.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /orders', {
      body: {
        orders: [
          { id: 10, sku: 'lamp', qty: 2, status: 'open' },
          { id: 2, sku: 'mug', qty: 3, status: 'shipped' },
          { id: 1, sku: 'mug', qty: 1, status: 'open' },
        ],
      },
    })
    .on('GET /products', {
      body: {
        products: [
          { sku: 'lamp', name: 'Lamp', price: 40 },
          { sku: 'mug', name: 'Mug', price: 5 },
        ],
      },
    });
});

afterEach(async () => {
  await c.close();
});

describe('store names read as values', () => {
  it('reads sql, file and memory stores in expressions, records the reads, and replays clean', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    // Products looked up by key in the file store; the open orders filtered from the sql store.
    expect(await c.store(result.runId, 'report')).toEqual({
      10: { id: 10, product: 'Lamp', total: 80 },
      1: { id: 1, product: 'Mug', total: 5 },
      summary: { id: 'summary', orders: 3, open: 2, products: 2, notes: 1, note: 'remember', missing: 'none' },
    });
    const reads = (await c.events(result.runId))
      .filter((e) => e.type === 'value.recorded' && (e.payload as { source: string }).source === 'store-read')
      .map((e) => `${e.stepPath} ${(e.payload as { value: { store: string } }).value.store}`);
    // The `let` (orders), the loop's `where` collection (orders), each iteration's store (products),
    // the summary (orders, products); the memory store `notes` is read as it is, not recorded.
    expect(reads).toEqual([
      'Report/0 orders',
      'Report/1 orders',
      'Report/1[0]/0 products',
      'Report/1[1]/0 products',
      'Report/2 orders',
      'Report/2 products',
    ]);
    await c.expectVerified(result.runId);
  });
});
