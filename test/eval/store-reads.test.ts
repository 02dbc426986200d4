/**
 * A declared store's name read as a value (docs/language.md, "Store reads"): its records in
 * insertion order, `store[key]` by key; a record field, a variable or `.name` outranks it.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../engine/eval/evaluate.js';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope } from '../../engine/eval/scope.js';
import { parseExpression } from '../../engine/lang/parser.js';

const orders = [
  { key: '10', record: { id: 10, status: 'open' } },
  { key: '2', record: { id: 2, status: 'shipped' } },
  { key: '1', record: { id: 1, status: 'open' } },
  // A record keyed by a boolean is stored under its text (stores/keys.ts).
  { key: 'true', record: { id: 0, flag: true, status: 'flag' } },
];

function run(text: string, extra: { vars?: Record<string, unknown>; lets?: Record<string, unknown>; current?: unknown; response?: unknown } = {}): unknown {
  const { expr } = parseExpression(text);
  const scope = new Scope();
  for (const [k, v] of Object.entries(extra.vars ?? {})) scope.set(k, v);
  for (const [k, v] of Object.entries(extra.lets ?? {})) scope.let(k, v);
  return evaluate(expr, { scope, response: extra.response ?? { orders: 'a field' }, current: extra.current, inputs: fixedInputs({ stores: { orders } }) });
}

describe('store names as values', () => {
  it.each<[string, unknown]>([
    ['length(orders)', 4],
    ['orders where .status == "open"', [{ id: 10, status: 'open' }, { id: 1, status: 'open' }]],
    ['orders[1].status', 'open'],
    ['orders["2"].status', 'shipped'],
    ['orders[99]', undefined],
    ['orders[null]', undefined],
    ['length(orders where .id > 1)', 2],
    // By a boolean, the record its text keys (probe 110 K6: absent, so a per-flag count restarted at 1).
    ['orders[true].status', 'flag'],
    ['orders[1 == 1].status', 'flag'],
    ['orders[false]', undefined],
  ])('%s', (text, expected) => {
    expect(run(text)).toEqual(expected);
  });

  it('a `let` of an absent value hides the store of that name too: the variable is absent', () => {
    expect(run('orders', { lets: { orders: undefined } })).toBeUndefined();
    expect(run('orders[1]', { lets: { orders: undefined } })).toBeUndefined();
    expect(run('length(orders)', { lets: { orders: undefined } })).toBe(0);
  });

  it('a record field, a variable and `.name` outrank the store; `response.orders` is the field', () => {
    expect(run('orders', { current: { orders: 'mine' } })).toBe('mine');
    expect(run('orders', { vars: { orders: [1] } })).toEqual([1]);
    expect(run('orders[0]', { vars: { orders: ['v'] } })).toBe('v');
    expect(run('.orders')).toBe('a field');
    expect(run('response.orders')).toBe('a field');
  });
});
