/**
 * `map SRC -> Schema { … }` of a null or absent SRC: each field was evaluated with no record, so a
 * name fell through to a variable or a field of the last response (§D.2) — an order's missing
 * customer mapped to { id: <the order's id>, name: <the response's name> }, stored as a customer.
 * Now the step fails, naming the source, its place and the fix; an object source maps as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const MISSION = `mission MapMissing {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store customers: memory("customers")
  schema Customer { id: string }
  action A {
    get "/order"
    for o in response.lines onError continue {
      map o.customer -> Customer { id: .id, name: .name }
      store response -> customers { key: .id }
    }
  }
  run A
}
`;

let c: Conformance;
beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /order', {
    body: { id: 'order-1', name: 'the order', lines: [{ customer: { id: 'c1', name: 'Ann' } }, { customer: null }, {}] },
  });
});
afterEach(async () => {
  await c.close();
});

describe('map of a null or absent source', () => {
  it('fails the step (tolerated here), never maps the response’s fields', async () => {
    const entry = path.join(c.dir, 'map-missing.vague');
    fs.writeFileSync(entry, MISSION);
    const result = await c.start({ entry, files: [{ path: entry, text: MISSION }] });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'customers')).toEqual({ c1: { id: 'c1', name: 'Ann' } });
    expect(result.tolerated.map((t) => [t.code, t.message, t.at])).toEqual([
      ['R4001', 'map expected a record to map but `o.customer` is null; skip such items (`where .customer != null`) or map a record', `${entry}:8:11`],
      ['R4001', 'map expected a record to map but `o.customer` is absent; skip such items (`where .customer != null`) or map a record', `${entry}:8:11`],
    ]);
    await c.expectVerified(result.runId);
  });
});
