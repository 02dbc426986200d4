/**
 * `map SRC -> Schema { … }` of a null or absent SRC, and a `.field` read of an array or scalar SRC
 * (in `map`, or in `apply T to SRC`'s mapping): each field was evaluated with no record, so a
 * name fell through to a variable or a field of the last response (§D.2) — an order's missing
 * customer mapped to { id: <the order's id>, name: <the response's name> }, stored as a customer.
 * An array's `.total` was absent and its `.currency` a default: `[{total: 7, currency: "GBP"}]`
 * stored as { currency: "USD" }. Now the step fails, naming the source (or the field), and the fix;
 * an object source maps as before, and so does a map reading no field of an array (a count).
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
    const said: string[] = [];
    const result = await c.start({ entry, files: [{ path: entry, text: MISSION }] }, {}, { progress: (line) => said.push(line) });
    // Named by its step path and counted from one: "iteration 1 of A/1" was the second item.
    expect(said.filter((l) => l.startsWith('iteration'))).toEqual([
      expect.stringMatching(/^iteration A\/1\[1\] \(item 2\) failed and was skipped: /),
      expect.stringMatching(/^iteration A\/1\[2\] \(item 3\) failed and was skipped: /),
    ]);
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'customers')).toEqual({ c1: { id: 'c1', name: 'Ann' } });
    expect(result.tolerated.map((t) => [t.code, t.message, t.at])).toEqual([
      ['R4001', '`.id` reads a field of `o.customer`, the record being mapped, but it is null: skip such items (`where o.customer != null`), or map a record', `${entry}:8:40`],
      ['R4001', '`.id` reads a field of `o.customer`, the record being mapped, but it is absent: skip such items (`where o.customer != null`), or map a record', `${entry}:8:40`],
    ]);
    await c.expectVerified(result.runId);

    // The hint, applied as written, keeps the items that have a customer and fails none (helper 59:
    // it said `where .customer != null` before, and for `map t` `where .t != null`, a field no item
    // has: the filter kept nothing and the run completed with an empty store).
    const fixed = MISSION.replace('for o in response.lines onError continue', 'for o in response.lines where o.customer != null onError continue');
    const fixedEntry = path.join(c.dir, 'map-fixed.vague');
    fs.writeFileSync(fixedEntry, fixed);
    const again = await c.start({ entry: fixedEntry, files: [{ path: fixedEntry, text: fixed }] });
    expect(again.status).toBe('completed');
    expect(again.tolerated).toEqual([]);
    expect(await c.store(again.runId, 'customers')).toEqual({ c1: { id: 'c1', name: 'Ann' } });
  });

  it('in an apply, fails as the map does: a transform variant reads no field of a null or absent value (helper 59: `.id ?? "?"` gave "?")', async () => {
    const text = MISSION.replace('store customers: memory("customers")', 'store customers: memory("customers")\n  transform ToCustomer { (_) -> Customer { id: .id ?? "?", name: .name } }').replace(
      'map o.customer -> Customer { id: .id, name: .name }',
      'apply ToCustomer to o.customer',
    );
    const entry = path.join(c.dir, 'apply-missing.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'customers')).toEqual({ c1: { id: 'c1', name: 'Ann' } });
    expect(result.tolerated.map((t) => t.message)).toEqual([
      '`.id` reads a field of `o.customer`, the record being mapped, but it is null: skip such items (`where o.customer != null`), or map a record (in transform `ToCustomer`, field `id`)',
      '`.id` reads a field of `o.customer`, the record being mapped, but it is absent: skip such items (`where o.customer != null`), or map a record (in transform `ToCustomer`, field `id`)',
    ]);
  });

  it('reads a variable bound to an absent value as absent, in a map or an apply of null (helper 60: `note ?? "-"` failed as a field read)', async () => {
    const text = MISSION.replace('store customers: memory("customers")', 'store customers: memory("customers")\n  transform ToCustomer { (_) -> Customer { id: "guest", note: note ?? "-" } }').replace(
      'map o.customer -> Customer { id: .id, name: .name }',
      'let note = o.note\n      apply ToCustomer to o.customer\n      map o.customer -> Customer { id: "guest-" + (note ?? "-"), note: note ?? "-" }',
    );
    // The order has a note of its own: an absent `note` must not fall through to it (§D.2).
    c.api.on('GET /order', { body: { id: 'order-1', note: 'the order\'s', lines: [{ customer: { id: 'c1' } }, { customer: null }, {}] } });
    const entry = path.join(c.dir, 'absent-variable.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    // The first line's customer is a record: `.id`-free variants map it too; the others map by the variable alone.
    expect(result.tolerated).toEqual([]);
    expect(await c.store(result.runId, 'customers')).toEqual({ 'guest--': { id: 'guest--', note: '-' } });
  });

  it('of a null loop item says to filter by the loop variable, and that filter keeps the other items', async () => {
    c.api.on('GET /things', { body: { items: [{ id: 1 }, null, { id: 2 }] } });
    const text = (filter: string) => `mission NullItem {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/things"
    for t in response.items ${filter}onError continue {
      map t -> Label { id: .id, kind: "x" }
      store response -> out { key: .id }
    }
  }
  run A
}
`;
    const run = async (name: string, mission: string) => {
      const entry = path.join(c.dir, name);
      fs.writeFileSync(entry, mission);
      return c.start({ entry, files: [{ path: entry, text: mission }] });
    };
    const first = await run('null-item.vague', text(''));
    expect(first.tolerated.map((t) => t.message)).toEqual([
      '`.id` reads a field of `t`, the record being mapped, but it is null: skip such items (`where t != null`), or map a record',
    ]);
    const fixed = await run('null-item-fixed.vague', text('where t != null '));
    expect(fixed.tolerated).toEqual([]);
    expect(Object.keys(await c.store(fixed.runId, 'out'))).toEqual(['1', '2']);
    // The variable is the item in the filter as in the body, with the record's fields beside it.
    const dotted = await run('null-item-dotted.vague', text('where t.id > 1 and .id < 3 '));
    expect(Object.keys(await c.store(dotted.runId, 'out'))).toEqual(['2']);
    await c.expectVerified(dotted.runId);
  });

  it('of an array or a scalar, a `.field` read fails map and apply; a map reading no field of it is an aggregate', async () => {
    c.api.on('GET /orders', {
      body: [{ id: 'o1', detail: { total: 5, currency: 'EUR' } }, { id: 'o2', detail: [{ total: 7, currency: 'GBP' }] }, { id: 'o3', detail: 'gone' }],
    });
    const text = `mission MapShapes {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store mapped: memory("mapped")
  store applied: memory("applied")
  store counted: memory("counted")
  schema Detail { total: number }
  transform ToOrder {
    (Detail) -> Order { total: .total, currency: .currency ?? "USD" },
    (_) -> Order { total: .total ?? 0, currency: "none" }
  }
  action A {
    get "/orders"
    for o in response onError continue {
      map o.detail -> Order { id: o.id, total: .total, currency: .currency ?? "USD" }
      store response -> mapped { key: .id }
    }
    for o in response onError continue {
      apply ToOrder to o.detail as order
      store { id: o.id, total: order.total, currency: order.currency } -> applied { key: .id }
    }
    map response -> Summary { id: "summary", orders: count(response) }
    store response -> counted { key: .id }
  }
  run A
}
`;
    const entry = path.join(c.dir, 'map-shapes.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'mapped')).toEqual({ o1: { id: 'o1', total: 5, currency: 'EUR' } });
    expect(await c.store(result.runId, 'applied')).toEqual({ o1: { id: 'o1', total: 5, currency: 'EUR' } });
    expect(await c.store(result.runId, 'counted')).toEqual({ summary: { id: 'summary', orders: 3 } });
    const fix = ': map each item in a `for`, or pick one (`x[0]`)';
    expect(result.tolerated.map((t) => [t.code, t.message])).toEqual([
      ['R4001', `\`.total\` reads a field of the record being mapped, but it is array ([{"total":7,"currency":"GBP"}])${fix}`],
      ['R4001', '`.total` reads a field of the record being mapped, but it is string ("gone")'],
      ['R4001', `\`.total\` reads a field of the record being mapped, but it is array ([{"total":7,"currency":"GBP"}])${fix} (in transform \`ToOrder\`, field \`total\`)`],
      ['R4001', '`.total` reads a field of the record being mapped, but it is string ("gone") (in transform `ToOrder`, field `total`)'],
    ]);
    await c.expectVerified(result.runId);
  });
});

describe('map of an absent response in an action that made no request (upstream\'s report actions)', () => {
  it('builds its record from variables and aggregates; a bare name that is no variable still fails', async () => {
    // Before: "map expected a record to map but `response` is absent", in two upstream examples.
    const text = `mission Report {
  store reports: memory("reports")
  action Compute {
    let total = 3
    let failed = 1
    map response -> Report { id: "daily", total: total, ok: total - failed, rate: failed / total }
    store response -> reports { key: .id }
  }
  action Bad {
    map response -> Report { id: "bad", total: totl }
    store response -> reports { key: .id }
  }
  run Compute then Bad
}
`;
    const entry = path.join(c.dir, 'report.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    expect(result.status).toBe('failed');
    expect(await c.store(result.runId, 'reports')).toEqual({ daily: { id: 'daily', total: 3, ok: 2, rate: 1 / 3 } });
    expect(result.status === 'failed' && result.error.message).toContain('`totl` reads a field of `response`, the record being mapped, but it is absent');
  });
});
