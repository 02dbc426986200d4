import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { interpolatePath } from '../../engine/eval/path-template.js';
import { PLACEHOLDER, pathPlaceholders } from '../../engine/lang/path-placeholders.js';
import { Scope } from '../../engine/eval/scope.js';

function scopeWith(vars: Record<string, unknown>): Scope {
  const root = new Scope();
  for (const [k, v] of Object.entries(vars)) root.set(k, v);
  return root.child();
}

describe('interpolatePath (§C.1.3 V2)', () => {
  it('fills {x} and {x.y.z} from variables, walking fields', () => {
    const scope = scopeWith({ id: 42, order: { customer: { id: 'c-7' } } });
    expect(interpolatePath('/orders/{id}/customers/{order.customer.id}', scope)).toBe('/orders/42/customers/c-7');
  });

  it('encodes every value with encodeURIComponent (no path injection)', () => {
    const scope = scopeWith({ name: '../admin?x=1&y=2 #', ok: true });
    expect(interpolatePath('/users/{name}/{ok}', scope)).toBe('/users/..%2Fadmin%3Fx%3D1%26y%3D2%20%23/true');
  });

  it('leaves a template without placeholders alone', () => {
    expect(interpolatePath('/a/b?c=1', new Scope())).toBe('/a/b?c=1');
  });

  it.each<[string, Record<string, unknown>]>([
    ['/x/{id}', {}],
    ['/x/{id}', { id: null }],
    ['/x/{a.b}', { a: {} }],
    ['/x/{a.b}', { a: 5 }],
    ['/x/{response.id}', {}], // response is not a variable
  ])('%s with %j does not resolve', (template, vars) => {
    let error: unknown;
    try {
      interpolatePath(template, scopeWith(vars), { span: { start: 3, end: 9 } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EvaluatorError);
    const e = error as EvaluatorError;
    expect(e.code).toBe('R4010');
    expect(e.message).toMatch(/^Path parameter \{[\w.]+\} did not resolve/);
    expect(e.span).toEqual({ start: 3, end: 9 });
  });

  it('says which variable is missing and how to bind it, or that the bound value is null or absent', () => {
    expect(() => interpolatePath('/repos/{GITHUB_OWNER}/x', new Scope())).toThrow(
      'Path parameter {GITHUB_OWNER} did not resolve: no variable `GITHUB_OWNER` is bound here; bind it before the request in this action, e.g. `let GITHUB_OWNER = env("GITHUB_OWNER")`',
    );
    expect(() => interpolatePath('/x/{id}', scopeWith({ id: null }))).toThrow('Path parameter {id} did not resolve: `id` is null');
    expect(() => interpolatePath('/x/{a.b}', scopeWith({ a: {} }))).toThrow('Path parameter {a.b} did not resolve: `a.b` is absent');
  });

  it('a bare unbound name is read from the run\'s settings; a bound variable, a dotted name or an empty setting is not', () => {
    const env = (name: string) => ({ OWNER: 'acme corp', EMPTY: '', id: 'from-env' })[name];
    expect(interpolatePath('/repos/{OWNER}', new Scope(), { env })).toBe('/repos/acme%20corp');
    expect(interpolatePath('/x/{id}', scopeWith({ id: 7 }), { env })).toBe('/x/7');
    expect(() => interpolatePath('/x/{OWNER.name}', new Scope(), { env })).toThrow('Path parameter {OWNER.name} did not resolve');
    expect(() => interpolatePath('/x/{EMPTY}', new Scope(), { env })).toThrow(
      'Path parameter {EMPTY} did not resolve: no variable `EMPTY` is bound here and the run has no setting of that name; bind it before the request in this action, e.g. `let EMPTY = env("EMPTY")`, or give the run `--env EMPTY=…`',
    );
  });

  it('names the request line when given one, and asks for it only on an error', () => {
    let asked = 0;
    const line = () => (asked++, 12);
    expect(interpolatePath('/x/{id}', scopeWith({ id: 7 }), { line })).toBe('/x/7');
    expect(asked).toBe(0);
    expect(() => interpolatePath('/x/{OWNER}', new Scope(), { line })).toThrow('Path parameter {OWNER} (line 12) did not resolve: no variable `OWNER` is bound here');
    expect(asked).toBe(1);
  });

  it('a field of an array of records in a placeholder is that array, which is no path segment', () => {
    expect(() => interpolatePath('/x/{a.id}', scopeWith({ a: [{ id: 1 }] }))).toThrow('Path parameter {a.id} expected a string or a number but got: array ([1])');
  });

  it('an object value is an error rather than "[object Object]"', () => {
    expect(() => interpolatePath('/x/{a}', scopeWith({ a: { b: 1 } }))).toThrow(
      'Path parameter {a} expected a string or a number but got: object ({"b":1})',
    );
  });

  it('the head is looked up through the parent chain', () => {
    const root = new Scope();
    root.set('tenant', 't1');
    const inner = root.child().child();
    inner.set('id', 5);
    expect(interpolatePath('/{tenant}/{id}', inner)).toBe('/t1/5');
  });
});

describe('pathPlaceholders', () => {
  it('lists placeholders as written, once each, in order', () => {
    expect(pathPlaceholders('/a/{id}/b/{order.customer.id}/{id}')).toEqual(['id', 'order.customer.id']);
    expect(pathPlaceholders('/plain')).toEqual([]);
    expect(pathPlaceholders('/{ not a name }/{9x}')).toEqual([]);
  });

  it('finds what matchAll(PLACEHOLDER) finds, on random templates', () => {
    // The scan is written by hand (no regex iterator per request); the regex stays the definition.
    const alphabet = '{}.a_$9-/ ';
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let n = 0; n < 20000; n++) {
      let t = '';
      const length = Math.floor(next() * 16);
      for (let i = 0; i < length; i++) t += alphabet[Math.floor(next() * alphabet.length)];
      const expected = [...new Set(Array.from(t.matchAll(PLACEHOLDER), (m) => m[1]!))];
      expect(pathPlaceholders(t), t).toEqual(expected);
    }
  });
});

describe('a value that would change the path', () => {
  // `new URL` (and every server) resolves `.` and `..` segments, also written %2E: `/items/{id}/detail`
  // with id ".." was sent as GET /detail, with "." as /items/detail; an empty id turned
  // `/items/{id}` into `/items/` — the collection, not one item. Such a segment is an error now.
  it.each<[string, unknown]>([
    ['/items/{id}/detail', '..'],
    ['/items/{id}/detail', '.'],
    ['/items/{id}', '..'],
    ['/items/{id}', ''],
    ['/items/{id}/detail', ''],
    ['{id}/x', '..'],
    ['/items/{a}{b}', '.'],
  ])('%s with %j is refused', (template, id) => {
    let error: unknown;
    try {
      interpolatePath(template, scopeWith({ id, a: id, b: id }), { span: { start: 3, end: 9 }, line: () => 7 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EvaluatorError);
    expect((error as EvaluatorError).code).toBe('R4010');
    expect((error as EvaluatorError).message).toMatch(/\(line 7\).*would change the request's path/);
  });

  it('inside a segment, in the query or with other text, the same values are data', () => {
    const scope = scopeWith({ id: '..', e: '' });
    expect(interpolatePath('/items/v{id}', scope)).toBe('/items/v..');
    expect(interpolatePath('/items/{id}.json', scope)).toBe('/items/...json');
    expect(interpolatePath('/items?q={id}&e={e}', scope)).toBe('/items?q=..&e=');
    expect(interpolatePath('/items/x#{id}', scope)).toBe('/items/x#..');
    expect(interpolatePath('/items/{e}x', scope)).toBe('/items/x');
  });
});
