import { describe, expect, it } from 'vitest';
import { Scope } from '../../engine/eval/scope.js';
import { call, ev, index, lit, member, num, ref, str } from './ast-builders.js';

describe('single names (§D.2)', () => {
  it('a field of the current record comes first, even when it holds null', () => {
    expect(ev(ref('id'), { current: { id: 'cur' }, response: { id: 'resp' } })).toBe('cur');
    expect(ev(ref('.id'), { current: { id: 'cur' }, vars: { id: 'var' }, response: { id: 'resp' } })).toBe('cur');
    expect(ev(ref('id'), { current: { id: null }, response: { id: 'resp' } })).toBeNull();
    expect(ev(ref('.id'), { current: { id: null }, vars: { id: 'var' } })).toBeNull();
  });

  it('a bare name the mission bound is that variable, even where the record has that field (docs/language.md)', () => {
    // `for p in products where .category == category`: `category` is the outer loop's variable.
    expect(ev(ref('id'), { current: { id: 'cur' }, vars: { id: 'var' }, response: { id: 'resp' } })).toBe('var');
    expect(ev(ref('id'), { current: { id: null }, vars: { id: 'var' } })).toBe('var');
  });

  it('.x and x mean the same unless x is a bound variable: then .x is the field, x the variable', () => {
    expect(ev(ref('.x'), { current: { x: 1 } })).toBe(ev(ref('x'), { current: { x: 1 } }));
    const options = { current: { x: 1 }, vars: { x: 2 } };
    expect(ev(ref('.x'), options)).toBe(1);
    expect(ev(ref('x'), options)).toBe(2);
    expect(ev(ref('.x'), { vars: { x: 2 } })).toBe(2);
    // Of a record that lacks it, `.x` is absent (below); with no record, the variable as before.
    expect(ev(ref('.x'), { current: { y: 1 }, vars: { x: 2 } })).toBeUndefined();
  });

  it('.x of a record is its field only: never a variable\'s or the response\'s x (helper 59: lines without an id keyed by .id took the order\'s)', () => {
    const order = { id: 5, status: 'open' };
    expect(ev(ref('.id'), { current: { sku: 'a' }, response: order })).toBeUndefined();
    expect(ev(ref('.id'), { current: { sku: 'a' }, vars: { id: 'var' }, response: order })).toBeUndefined();
    expect(ev(ref('.status.code'), { current: { sku: 'a' }, response: { status: { code: 1 } } })).toBeUndefined();
    // A field of the record's array field is still each item's (array-fields.test.ts).
    expect(ev(ref('.lines.qty'), { current: { lines: [{ qty: 1 }, { qty: 2 }] }, response: order })).toEqual([1, 2]);
    // A bare name still falls through as §D.2 says; `.x` with no record (a loop body) reads the response.
    expect(ev(ref('status'), { current: { sku: 'a' }, response: order })).toBe('open');
    expect(ev(ref('.status'), { response: order })).toBe('open');
  });

  it('then the nearest variable', () => {
    const outer = new Scope();
    outer.set('x', 'outer');
    const inner = outer.child();
    inner.set('x', 'inner');
    expect(ev(ref('x'), { scope: inner, current: { y: 1 } })).toBe('inner');
    expect(ev(ref('x'), { scope: outer.child() })).toBe('outer');
  });

  it('a variable holding undefined counts as absent', () => {
    const outer = new Scope();
    outer.set('x', 'outer');
    const inner = outer.child();
    inner.set('x', undefined);
    expect(ev(ref('x'), { scope: inner })).toBe('outer');
    expect(ev(ref('y'), { vars: { y: undefined }, response: { y: 'resp' } })).toBe('resp');
  });

  it('then `response` itself, then fields of response', () => {
    expect(ev(ref('response'), { response: [1, 2] })).toEqual([1, 2]);
    expect(ev(ref('total'), { response: { total: 9 } })).toBe(9);
    expect(ev(ref('missing'), { response: { total: 9 } })).toBeUndefined();
    expect(ev(ref('total'), { response: 'not an object' })).toBeUndefined();
  });

  it('H7 pitfall: a variable outranks a response field', () => {
    const options = { vars: { paymentId: 'pay_1' }, response: { paymentId: 'from-event', status: 'ok' } };
    expect(ev(ref('.paymentId'), options)).toBe('pay_1');
    expect(ev(ref('response.paymentId'), options)).toBe('from-event');
    expect(ev(ref('.status'), options)).toBe('ok');
  });

  it('a variable named response shadows the response', () => {
    expect(ev(ref('response'), { vars: { response: 'var' }, response: 'real' })).toBe('var');
  });

  it('never reaches inherited JavaScript properties', () => {
    expect(ev(ref('constructor'), { current: {}, response: {} })).toBeUndefined();
    expect(ev(ref('toString'), { response: {} })).toBeUndefined();
    expect(ev(ref('a.constructor'), { vars: { a: {} } })).toBeUndefined();
    expect(ev(ref('__proto__'), { current: {} })).toBeUndefined();
  });
});

describe('dotted names (§D.2)', () => {
  it('response.x walks from the response, undefined at any non-object', () => {
    const response = { data: { items: [{ id: 1 }] }, n: 5 };
    expect(ev(ref('response.data.items'), { response })).toEqual([{ id: 1 }]);
    expect(ev(ref('response.n.x'), { response })).toBeUndefined();
    expect(ev(ref('response.nope.x'), { response })).toBeUndefined();
    expect(ev(ref('response.data'), { response: null })).toBeUndefined();
  });

  it('the whole path is walked from the current record first', () => {
    const current = { address: { city: 'Oslo' } };
    expect(ev(ref('address.city'), { current })).toBe('Oslo');
    expect(ev(ref('.address.city'), { current, vars: { address: { city: 'var' } } })).toBe('Oslo');
    // A bound head is the variable, walked: the record's field is `.address.city`.
    expect(ev(ref('address.city'), { current, vars: { address: { city: 'var' } } })).toBe('var');
  });

  it('inside `map p -> X { v: p.id }` with current p, p.id falls back to the variable p', () => {
    const p = { id: 'p1', name: 'x' };
    expect(ev(ref('p.id'), { current: p, vars: { p } })).toBe('p1');
  });

  it('without a current record the walk starts at the response', () => {
    expect(ev(ref('page.next'), { response: { page: { next: 'c2' } } })).toBe('c2');
    expect(ev(ref('.page.next'), { response: { page: { next: 'c2' } }, vars: { page: { next: 'var' } } })).toBe('c2');
    expect(ev(ref('page.next'), { response: { page: { next: 'c2' } }, vars: { page: { next: 'var' } } })).toBe('var');
  });

  it('a walk ending in null from the record wins; one ending in undefined falls back', () => {
    expect(ev(ref('.a.b'), { current: { a: { b: null } }, vars: { a: { b: 'var' } } })).toBeNull();
    expect(ev(ref('a.b'), { current: { a: { c: 1 } }, vars: { a: { b: 'var' } } })).toBe('var');
  });

  it('a walk hitting a non-object falls back to the variable', () => {
    expect(ev(ref('a.b'), { current: { a: 5 }, vars: { a: { b: 'var' } } })).toBe('var');
  });

  it('the variable walk gives undefined on a non-object; no variable gives undefined', () => {
    expect(ev(ref('a.b.c'), { vars: { a: { b: 3 } } })).toBeUndefined();
    expect(ev(ref('a.b'), {})).toBeUndefined();
    expect(ev(ref('a.b'), { response: { x: 1 }, current: { y: 2 } })).toBeUndefined();
  });

  it('walks into arrays by index, and .length on arrays', () => {
    const vars = { list: [{ id: 'a' }, { id: 'b' }] };
    expect(ev(ref('list.1.id'), { vars })).toBe('b');
    expect(ev(ref('list.length'), { vars })).toBe(2);
    expect(ev(ref('list.01'), { vars })).toBeUndefined();
    expect(ev(ref('s.length'), { vars: { s: 'abc' } })).toBeUndefined();
  });
});

describe('subscripts and members', () => {
  const vars = { list: ['a', 'b', 'c'], s: 'hey', o: { k: 1, '2': 'two', 'true': 't' } };

  it.each<[string, unknown, unknown]>([
    ['list', 0, 'a'],
    ['list', 2, 'c'],
    ['list', -1, 'c'],
    ['list', -3, 'a'],
    ['list', -4, undefined],
    ['list', 3, undefined],
    ['list', 1.5, undefined],
    ['list', '1', undefined],
    ['s', 0, 'h'],
    ['s', -1, 'y'],
    ['s', 5, undefined],
    ['o', 'k', 1],
    ['o', 2, 'two'],
    ['o', true, 't'],
    ['o', 'missing', undefined],
    ['o', 'hasOwnProperty', undefined],
    ['n', 0, undefined],
    ['missing', 0, undefined],
  ])('%s[%j] is %j', (name, key, expected) => {
    expect(ev(index(ref(name), lit(key)), { vars: { ...vars, n: 42 } })).toEqual(expected);
  });

  it('a subscript of a missing field is undefined, so ?? can default it', () => {
    expect(ev(index(ref('pm.tags'), num(0)), { vars: { pm: { id: 'p2' } } })).toBeUndefined();
  });

  it('a member after a call or subscript is a plain field read', () => {
    expect(ev(member(call('first', ref('list')), 'id'), { vars: { list: [{ id: 'x' }] } })).toBe('x');
    expect(ev(member(index(ref('o'), str('k')), 'deep'), { vars: { o: { k: { deep: true } } } })).toBe(true);
    // never a name lookup: a variable `id` does not leak in
    expect(ev(member(call('first', ref('list')), 'id'), { vars: { list: [{}], id: 'var' } })).toBeUndefined();
    expect(ev(member(num(1), 'x'))).toBeUndefined();
  });
});
