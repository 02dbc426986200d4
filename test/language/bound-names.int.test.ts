/**
 * assets/language/bound-names.vague against a FakeApi on 127.0.0.1: a bare name the mission bound
 * (a loop variable, a `let`) is that variable even where the current record has a field of the
 * same name, and `.name` is the record's field. Upstream's file-export groups products with
 * `for product in products where .category == category`; reading `category` as the record's own
 * field (reference §D.2) made the filter always true, so every product landed in every category.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/bound-names.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /products', {
    body: [
      { sku: 'h1', category: 'Home' },
      { sku: 'g1', category: 'Garden' },
      { sku: 'h2', category: 'Home' },
    ],
  });
});

afterEach(async () => {
  await c.close();
});

describe('a bound bare name is the variable', () => {
  it('filters each category to its own products; .category stays the field', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'report')).toEqual({
      Home_h1: { category: 'Home', sku: 'h1', field: 'Home' },
      Home_h2: { category: 'Home', sku: 'h2', field: 'Home' },
      Garden_g1: { category: 'Garden', sku: 'g1', field: 'Garden' },
      sku_h1: { sku: 'h1', bound: 'none' },
      sku_g1: { sku: 'g1', bound: 'none' },
      sku_h2: { sku: 'h2', bound: 'none' },
    });
    await c.expectVerified(result.runId);
  });
});
