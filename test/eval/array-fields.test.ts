/**
 * A field name applied to an array of records (docs/language.md, "A field of an array"):
 * `orders.total` is each item's `total`, where the dotted walk used to stop with undefined.
 * Every name that meant something before (an index, `length`, a paginated result's items field,
 * a record field, a variable) keeps its meaning.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../engine/eval/evaluate.js';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope } from '../../engine/eval/scope.js';
import { fieldOf, withItemsField } from '../../engine/eval/values.js';
import { parseExpression } from '../../engine/lang/parser.js';

const orders = [
  { id: 1, total: 10, lines: [{ qty: 1 }, { qty: 2 }] },
  { id: 2, total: null, lines: [] },
  { id: 3, lines: [{ qty: 4 }] },
  'not a record',
  { id: 4, total: 5.5, lines: { qty: 100 } },
];

function run(text: string, extra: { vars?: Record<string, unknown>; current?: unknown; response?: unknown; stores?: Record<string, unknown[]> } = {}): unknown {
  const { expr, diagnostics } = parseExpression(text);
  expect(diagnostics).toEqual([]);
  const scope = new Scope();
  for (const [k, v] of Object.entries(extra.vars ?? {})) scope.set(k, v);
  const stores = Object.fromEntries(Object.entries(extra.stores ?? {}).map(([name, records]) => [name, records.map((record, i) => ({ key: String(i), record }))]));
  return evaluate(expr, { scope, response: extra.response, current: extra.current, inputs: fixedInputs({ stores }) });
}

describe('a field of an array of records', () => {
  it('is each item’s field in order: absent items and non-records skipped, null kept, an array value spliced in', () => {
    expect(run('orders.total', { vars: { orders } })).toEqual([10, null, 5.5]);
    expect(run('orders.id', { vars: { orders } })).toEqual([1, 2, 3, 4]);
    // One level: each order's lines, then each line's qty; order 4's `lines` is an object, so kept as one item.
    expect(run('orders.lines', { vars: { orders } })).toEqual([{ qty: 1 }, { qty: 2 }, { qty: 4 }, { qty: 100 }]);
    expect(run('orders.lines.qty', { vars: { orders } })).toEqual([1, 2, 4, 100]);
    expect(run('sum(orders.lines.qty)', { vars: { orders } })).toBe(107);
  });

  it('feeds the aggregates upstream’s examples use; a null total fails sum, as a null item always did', () => {
    const paid = [{ total: 10 }, { total: 2.5 }, { total: '7' }];
    expect(run('sum(orders.total)', { vars: { orders: paid } })).toBe(19.5);
    expect(run('sum(orders.total) / max(length(orders), 1)', { vars: { orders: paid } })).toBe(6.5);
    expect(run('max(orders.total)', { vars: { orders: paid } })).toBe(10);
    expect(() => run('sum(orders.total)', { vars: { orders } })).toThrow(/sum.*null/);
  });

  it('an empty array gives [], so a sum over nothing is 0; a field no item has stays absent, so a typo fails', () => {
    expect(run('orders.total', { vars: { orders: [] } })).toEqual([]);
    expect(run('sum(orders.total)', { vars: { orders: [] } })).toBe(0);
    expect(run('orders.totl', { vars: { orders } })).toBeUndefined();
    expect(() => run('sum(orders.totl)', { vars: { orders } })).toThrow(/sum\(\).*array/);
    expect(run('orders.totl ?? "none"', { vars: { orders } })).toBe('none');
  });

  it('indexes and length keep their meaning; a field named length or 0 on the items is not reached this way', () => {
    const xs = [{ length: 9, 0: 'zero' }, { length: 8 }];
    expect(run('xs.length', { vars: { xs } })).toBe(2);
    expect(fieldOf(xs, '0')).toBe(xs[0]); // `a.0` is a path segment (cursor paths, templates), not source syntax
    expect(fieldOf(xs, '5')).toBeUndefined();
    expect(run('xs[1].length', { vars: { xs } })).toBe(8);
  });

  it('works on a store’s records, a `where` result, a call’s result and from the current record', () => {
    const stores = { orders: [{ total: 3 }, { total: 4 }] };
    expect(run('sum(orders.total)', { stores })).toBe(7);
    expect(run('sum((orders where .total > 3).total)', { stores })).toBe(4);
    expect(run('first([orders]).total', { stores })).toEqual([3, 4]);
    expect(run('sum(.orders.total)', { current: { orders: [{ total: 1 }, { total: 2 }] } })).toBe(3);
    expect(run('customer.orders.total', { vars: { customer: { orders: [{ total: 1 }, { total: 2 }] } } })).toEqual([1, 2]);
    // A record field still outranks a variable, and a variable a store.
    expect(run('orders.total', { vars: { orders: [{ total: 'var' }] }, stores })).toEqual(['var']);
  });

  it('where a name meant something before, it still does: an object variable after a record array, the walk from response', () => {
    // The strict walk from the record finds no `orders.total` (orders is an array), so the variable answers, as before.
    expect(run('orders.total', { current: { orders: [{ total: 1 }] }, vars: { orders: { total: 'object' } } })).toBe('object');
    expect(run('response.items.id', { response: { items: [{ id: 'a' }, { id: 'b' }] } })).toEqual(['a', 'b']);
    expect(run('items.id', { response: { items: [{ id: 'a' }] } })).toEqual(['a']);
  });

  it('a record without the field does not borrow it from response: `.id` is absent, not every item’s id', () => {
    // `for x in response where exists(.id)` / `response where .deleted_at == null`: a name the
    // current record lacks falls back to a field of `response` (§D.2 step 4); an array response has
    // no such field, so the name is absent. It is never the items' values (which made a record with
    // no id pass `exists(.id)` and one with no deleted_at fail `.deleted_at == null`).
    const response = [{ id: 1, deleted_at: null }, { name: 'no id' }, { id: 3, deleted_at: '2024-01-01' }];
    expect(run('.id', { current: response[1], response })).toBeUndefined();
    expect(run('id', { current: response[1], response })).toBeUndefined();
    expect(run('exists(.id)', { current: response[1], response })).toBe(false);
    expect(run('length(response where .id != null)', { response })).toBe(2);
    expect(run('length(response where .deleted_at == null)', { response })).toBe(2);
    expect(run('.id', { response })).toBeUndefined();
    // Explicit paths still map over the items, and an array's own names keep their meaning.
    expect(run('response.id', { response })).toEqual([1, 3]);
    expect(run('length', { current: {}, response })).toBe(3);
    const rows = withItemsField([{ code: 'a' }], 'rows');
    expect(run('rows', { current: {}, response: rows })).toBe(rows);
  });

  it('a null record has no fields: `.x` on it is absent, never a variable’s or the response’s x', () => {
    // `validate c { assume .raw != null }` with c null passed on the response's `raw`, and
    // `[null, { raw: 1 }] where .raw != null` kept the null item for the same reason.
    const response = { raw: 'the response', items: [null, { raw: 'own' }] };
    expect(run('.raw', { current: null, response })).toBeUndefined();
    expect(run('.raw.x', { current: null, response: { raw: { x: 1 } } })).toBeUndefined();
    expect(run('.raw', { current: null, vars: { raw: 'var' }, response })).toBeUndefined();
    expect(run('length(response.items where .raw != null)', { response })).toBe(1);
    // A bare name still reads a bound variable (`where .id == id`), as before.
    expect(run('raw', { current: null, vars: { raw: 'var' }, response })).toBe('var');
  });

  it('after a paginated fetch: the items field names all items, their fields map, other envelope fields stay absent', () => {
    const rows = withItemsField([{ code: 'a', qty: 1 }, { code: 'b', qty: 2 }], 'rows');
    expect(run('response.rows', { response: rows })).toBe(rows);
    expect(run('response.rows.qty', { response: rows })).toEqual([1, 2]);
    expect(run('response.qty', { response: rows })).toEqual([1, 2]);
    expect(run('response.next', { response: rows })).toBeUndefined();
    expect(run('response.next', { response: withItemsField([], 'rows') })).toBeUndefined();
    expect(run('response.rows', { response: withItemsField([], 'rows') })).toEqual([]);
  });

  it('never reaches inherited properties of the items, and copes with a large array', () => {
    expect(fieldOf([{}, { a: 1 }], 'constructor')).toBeUndefined();
    expect(fieldOf([{}], '__proto__')).toBeUndefined();
    // An own field named __proto__ (JSON.parse makes one) is data like any other.
    expect(fieldOf([JSON.parse('{"__proto__": 1}')], '__proto__')).toEqual([1]);
    const many = Array.from({ length: 200_000 }, (_, i) => ({ v: [i] }));
    const flat = fieldOf(many, 'v') as number[];
    expect(flat.length).toBe(200_000);
    expect(flat[199_999]).toBe(199_999);
  });
});
