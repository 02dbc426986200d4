/**
 * Parser: each construct of reference §B–§D parses into the AST shape ast.ts promises (compared
 * with spans stripped), contextual keywords work in name positions, and spans are exact.
 */
import { describe, expect, it } from 'vitest';
import type { ActionDecl, Expr, MissionDecl, Step } from '../../engine/lang/ast.js';
import { parseExpression, parseProgram } from '../../engine/lang/parser.js';
import { optionSpan, spanOf } from '../../engine/lang/ast.js';

function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'span' || k === 'start' || k === 'end' || k === 'optionSpans' ? undefined : v))) as T;
}

function mission(body: string): MissionDecl {
  const r = parseProgram(`mission M {\n${body}\n}`, 'm.vague');
  expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
  return r.program.items[0] as MissionDecl;
}

function steps(body: string): Step[] {
  return strip(mission(`action A {\n${body}\n}`).actions[0]!.steps);
}

function expr(text: string): Expr {
  const r = parseExpression(text);
  expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
  return strip(r.expr);
}

// Expected nodes are written without spans (the parsed ones are compared with spans stripped).
const ref = (...parts: string[]): Expr => ({ kind: 'Ref', parts, leadingDot: false }) as unknown as Expr;
const dot = (...parts: string[]): Expr => ({ kind: 'Ref', parts, leadingDot: true }) as unknown as Expr;
const num = (value: number): Expr => ({ kind: 'Number', value }) as unknown as Expr;
const str = (value: string): Expr => ({ kind: 'String', value }) as unknown as Expr;
const clean = <T>(v: T): T => strip(v);

describe('declarations', () => {
  it('parses top-level import, let, and actions with the file name', () => {
    const r = parseProgram('import Shared from "./s.vague"\nlet x = 42\naction Extra { get "/x" }', 'actions.vague');
    expect(r.diagnostics).toEqual([]);
    expect(strip(r.program.items)).toEqual([
      { kind: 'Import', name: { name: 'Shared' }, from: { value: './s.vague' } },
      { kind: 'TopLevelLet', name: { name: 'x' }, value: clean(num(42)) },
      { kind: 'Action', name: { name: 'Extra' }, steps: [{ kind: 'Fetch', method: 'GET', path: clean(str('/x')), options: {} }], file: 'actions.vague' },
    ]);
  });

  it('parses a source with every option, each key span recorded', () => {
    const m = mission(`source Api from "./api.yaml" {
      auth: oauth2, base: "https://a", headers: { "User-Agent": env("UA") }, validateResponses: true,
      rateLimit: { strategy: throttle, maxWait: 5, fallbackRpm: 60, model: { type: tokenBucket, capacity: 10, refill: 2, safety: 0.8 } },
      circuitBreaker: { failureThreshold: 5, resetTimeout: 30, successThreshold: 2, failureWindow: 60, failureRate: 50, minimumRequests: 20 },
      proxy: [env("P1"), "http://p2"], timeout: 1000
    }`);
    const s = m.sources[0]!;
    expect(Object.keys(s.optionSpans)).toEqual(['auth', 'base', 'headers', 'validateResponses', 'rateLimit', 'circuitBreaker', 'proxy', 'timeout']);
    expect(strip(s)).toEqual({
      kind: 'Source', name: { name: 'Api' }, spec: { value: './api.yaml' }, auth: { kind: 'oauth2' }, base: { value: 'https://a' },
      headers: [{ name: { value: 'User-Agent' }, value: { kind: 'Call', callee: { name: 'env' }, args: [clean(str('UA'))] } }],
      validateResponses: true,
      rateLimit: { strategy: 'throttle', maxWait: 5, fallbackRpm: 60, model: { type: 'tokenBucket', capacity: 10, refill: 2, safety: 0.8 } },
      circuitBreaker: { failureThreshold: 5, resetTimeout: 30, successThreshold: 2, failureWindow: 60, failureRate: 50, minimumRequests: 20 },
      proxy: [{ kind: 'Call', callee: { name: 'env' }, args: [clean(str('P1'))] }, clean(str('http://p2'))],
      timeout: 1000,
    });
  });

  it('parses store declarations of every type, with batch options', () => {
    const m = mission('store a: memory("a") store b: file("x/b") { batch: 10 } store c: sql("c") { batch: { size: 5, maxDelay: 100, durability: relaxed } } store d: nosql("d") store e: postgrest("e")');
    expect(strip(m.stores)).toEqual([
      { kind: 'Store', name: { name: 'a' }, type: { kind: 'memory' }, target: { value: 'a' } },
      { kind: 'Store', name: { name: 'b' }, type: { kind: 'file' }, target: { value: 'x/b' }, batch: { size: 10 } },
      { kind: 'Store', name: { name: 'c' }, type: { kind: 'sql' }, target: { value: 'c' }, batch: { size: 5, maxDelay: 100, durability: 'relaxed' } },
      { kind: 'Store', name: { name: 'd' }, type: { kind: 'nosql' }, target: { value: 'd' } },
      { kind: 'Store', name: { name: 'e' }, type: { kind: 'postgrest' }, target: { value: 'e' } },
    ]);
  });

  it('parses schemas with keyword-named fields, optional fields, arrays and nested objects', () => {
    const m = mission('schema S { id: int, total: decimal, date: date, note?: string, tags: string[], items: [Item], meta: { from: string }, x: any? }');
    expect(strip(m.schemas[0]!.fields)).toEqual([
      { name: { name: 'id' }, type: { kind: 'NamedType', name: 'int' }, optional: false },
      { name: { name: 'total' }, type: { kind: 'NamedType', name: 'decimal' }, optional: false },
      { name: { name: 'date' }, type: { kind: 'NamedType', name: 'date' }, optional: false },
      { name: { name: 'note' }, type: { kind: 'NamedType', name: 'string' }, optional: true },
      { name: { name: 'tags' }, type: { kind: 'ArrayType', element: { kind: 'NamedType', name: 'string' } }, optional: false },
      { name: { name: 'items' }, type: { kind: 'ArrayType', element: { kind: 'NamedType', name: 'Item' } }, optional: false },
      { name: { name: 'meta' }, type: { kind: 'ObjectType', fields: [{ name: { name: 'from' }, type: { kind: 'NamedType', name: 'string' }, optional: false }] }, optional: false },
      { name: { name: 'x' }, type: { kind: 'NamedType', name: 'any' }, optional: true },
    ]);
  });

  it('parses the three transform forms', () => {
    const m = mission(`transform L: Card -> Tag { text: .brand }
      transform U -> Tag { text: "x" }
      transform V { (Card) -> M { k: 1 }, (Bank) where length(.iban) > 4 -> M { k: 2 } (_) -> M { k: 3 } }`);
    const [l, u, v] = strip(m.transforms);
    expect(l!.variants).toEqual([{ sourceSchema: { name: 'Card' }, targetSchema: { name: 'Tag' }, fields: [{ name: { name: 'text' }, value: clean(dot('brand')) }] }]);
    expect(u!.variants[0]!.sourceSchema).toBeNull();
    expect(v!.variants.map((x) => [x.sourceSchema?.name ?? null, x.targetSchema.name, x.guard?.kind])).toEqual([
      ['Card', 'M', undefined], ['Bank', 'M', 'Binary'], [null, 'M', undefined],
    ]);
  });

  it('parses pipelines with parallel and conditional stages; several run lines are kept', () => {
    const m = mission('run A\nrun A then [B, C] then D if env("X") == "yes"');
    expect(m.pipelines).toHaveLength(2);
    expect(strip(m.pipelines[1]!.stages)).toEqual([
      { actions: [{ name: 'A' }], parallel: false },
      { actions: [{ name: 'B' }, { name: 'C' }], parallel: true },
      {
        actions: [{ name: 'D' }], parallel: false,
        condition: { kind: 'Binary', operator: '==', left: { kind: 'Call', callee: { name: 'env' }, args: [clean(str('X'))] }, right: clean(str('yes')) },
      },
    ]);
  });

  it('parses schedules (every / cron / at) with options, and checkpoint and trace', () => {
    const m = mission(`schedule: every 6 hours { timezone: "UTC", maxConcurrency: 1, skipIfRunning: true, retry: { maxRetries: 2, delaySeconds: 30 } }
      schedule: cron "0 * * * *"
      schedule: at "2030-01-01T00:00:00Z"
      checkpoint: onFailure
      trace: minimal`);
    expect(strip(m.schedules)).toEqual([
      { kind: 'Schedule', trigger: { kind: 'every', amount: 6, unit: 'hours' }, timezone: { value: 'UTC' }, maxConcurrency: 1, skipIfRunning: true, retry: { maxRetries: 2, delaySeconds: 30 } },
      { kind: 'Schedule', trigger: { kind: 'cron', expression: { value: '0 * * * *' } } },
      { kind: 'Schedule', trigger: { kind: 'at', when: { value: '2030-01-01T00:00:00Z' } } },
    ]);
    expect(strip(m.checkpoint)).toEqual({ mode: 'on-failure' });
    expect(strip(m.trace)).toEqual({ mode: 'minimal' });
    expect(mission('checkpoint: afterStep').checkpoint?.mode).toBe('after-step');
  });
});

describe('steps', () => {
  it('parses fetches in both cases with all fetch options', () => {
    const [a, b] = steps(`get "/a" { source: Api, body: { x: 1 }, until: .done, retry: { maxAttempts: 2, backoff: linear, initialDelay: 10, maxDelay: 50, timeout: 900 },
        allow: [404, 410], backfill: true, maxPages: 3, maxItems: 100, itemsPath: "data.items" }
      DELETE "/b/" + id`);
    expect(a).toMatchObject({ kind: 'Fetch', method: 'GET', options: {
      source: { name: 'Api' }, until: dot('done') as object, retry: { maxAttempts: 2, backoff: 'linear', initialDelay: 10, maxDelay: 50, timeout: 900 },
      allow: { statuses: [404, 410] }, backfill: true, maxPages: 3, maxItems: 100, itemsPath: { value: 'data.items' },
    } });
    expect(b).toEqual({ kind: 'Fetch', method: 'DELETE', path: { kind: 'Binary', operator: '+', left: clean(str('/b/')), right: clean(ref('id')) }, options: {} });
  });

  it('parses the three pagination forms, with and without a size parameter', () => {
    const pages = steps(`get "/a" { paginate: offset(offset, 100) }
      get "/b" { paginate: page(p, 50, per_page) }
      get "/c" { paginate: cursor(after, 50, "meta.next", limit) }
      get "/d" { paginate: offset(page, 2) }`).map((s) => (s.kind === 'Fetch' ? s.options.paginate : undefined));
    expect(pages).toEqual([
      { strategy: 'offset', param: { name: 'offset' }, pageSize: 100 },
      { strategy: 'page', param: { name: 'p' }, pageSize: 50, sizeParam: { name: 'per_page' } },
      { strategy: 'cursor', param: { name: 'after' }, pageSize: 50, cursorPath: { value: 'meta.next' }, sizeParam: { name: 'limit' } },
      { strategy: 'offset', param: { name: 'page' }, pageSize: 2 },
    ]);
  });

  it('parses since: lastSync in all forms (all four formats) and since: expr', () => {
    const since = steps(`get "/a" { since: lastSync }
      get "/b" { since: lastSync("k") { param: "updated_since", format: unix, updateFrom: "meta.at", header: "If-Modified-Since" } }
      get "/c" { since: lastSync { format: unix-ms } }
      get "/d" { since: lastSync { format: date-only } }
      get "/e" { since: lastSync { format: "iso" } }
      get "/f" { since: "2024-01-01" }`).map((s) => (s.kind === 'Fetch' ? s.options.since : undefined));
    expect(since).toEqual([
      { kind: 'LastSync' },
      { kind: 'LastSync', key: { kind: 'String', value: 'k' }, param: 'updated_since', format: 'unix', updateFrom: 'meta.at', header: 'If-Modified-Since' },
      { kind: 'LastSync', format: 'unix-ms' },
      { kind: 'LastSync', format: 'date-only' },
      { kind: 'LastSync', format: 'iso' },
      { kind: 'SinceExpr', value: clean(str('2024-01-01')) },
    ]);
  });

  it('parses call, for (where, concurrency, onError), map, apply, validate-or, let', () => {
    const s = steps(`call Store.listPets { paginate: cursor(cursor, 20, "next") }
      for t in tasks where .age >= 18 concurrency 2 onError queue dlq { let x = t.id }
      for u in users onError abort { }
      map p -> Person { id: .id, from: .from, key: .key }
      apply ToMethod to pm as method
      validate response { assume .total >= 0, assume .name is string } or { store response -> audit }`);
    expect(s[0]).toMatchObject({ kind: 'Call', source: { name: 'Store' }, operation: { name: 'listPets' } });
    expect(s[1]).toEqual({
      kind: 'For', variable: { name: 't' }, collection: clean(ref('tasks')),
      where: { kind: 'Binary', operator: '>=', left: clean(dot('age')), right: clean(num(18)) },
      concurrency: 2, onError: { mode: 'queue', store: { name: 'dlq' } },
      body: [{ kind: 'Let', name: { name: 'x' }, value: clean(ref('t', 'id')) }],
    });
    expect(s[2]).toMatchObject({ kind: 'For', onError: { mode: 'abort' }, body: [] });
    expect(s[3]).toEqual({
      kind: 'Map', source: clean(ref('p')), schema: { name: 'Person' },
      fields: [
        { name: { name: 'id' }, value: clean(dot('id')) },
        { name: { name: 'from' }, value: clean(dot('from')) },
        { name: { name: 'key' }, value: clean(dot('key')) },
      ],
    });
    expect(s[4]).toEqual({ kind: 'Apply', transform: { name: 'ToMethod' }, target: clean(ref('pm')), as: { name: 'method' } });
    expect(s[5]).toMatchObject({ kind: 'Validate', constraints: [{ condition: { kind: 'Binary' } }, { condition: { kind: 'Is', type: { name: 'string' } } }], fallback: [{ kind: 'Store' }] });
  });

  it('parses store steps: each, options, and an object literal source', () => {
    const [a, b, c] = steps(`store each response -> items { key: .sku, upsert: true, partial: false }
      store { ...m, id: 1 } -> out
      store each -> x`);
    expect(a).toEqual({ kind: 'Store', each: true, source: clean(ref('response')), store: { name: 'items' }, key: clean(dot('sku')), upsert: true, partial: false });
    expect(b).toMatchObject({ kind: 'Store', each: false, source: { kind: 'Object' }, store: { name: 'out' } });
    expect(c).toMatchObject({ kind: 'Store', each: false, source: clean(ref('each')) });
  });

  it('parses match arms: patterns, guards, every directive, blocks and single steps', () => {
    const [m] = steps(`match response {
      [Ref] -> continue,
      404 -> skip
      Bad -> abort "boom",
      _ where .state == "x" -> retry { maxAttempts: 3 },
      A -> retry
      B -> queue dlq
      C -> queue,
      D -> jump Recover then retry,
      E -> jump Other,
      Good where .total > 1000 -> { store response -> audit { key: .id } },
      _ -> let y = 1
    }`);
    if (m?.kind !== 'Match') throw new Error('not a match');
    expect(m.arms.map((a) => a.pattern)).toEqual([
      { kind: 'SchemaArrayPattern', schema: { name: 'Ref' } }, { kind: 'StatusPattern', status: 404 }, { kind: 'SchemaPattern', schema: { name: 'Bad' } },
      { kind: 'Wildcard' }, { kind: 'SchemaPattern', schema: { name: 'A' } }, { kind: 'SchemaPattern', schema: { name: 'B' } },
      { kind: 'SchemaPattern', schema: { name: 'C' } }, { kind: 'SchemaPattern', schema: { name: 'D' } }, { kind: 'SchemaPattern', schema: { name: 'E' } },
      { kind: 'SchemaPattern', schema: { name: 'Good' } }, { kind: 'Wildcard' },
    ]);
    expect(m.arms.map((a) => (a.body.kind === 'Directive' ? a.body.directive : a.body.steps.map((s) => s.kind)))).toEqual([
      { kind: 'Continue' }, { kind: 'Skip' }, { kind: 'Abort', message: { value: 'boom' } }, { kind: 'Retry', config: { maxAttempts: 3 } },
      { kind: 'Retry' }, { kind: 'Queue', store: { name: 'dlq' } }, { kind: 'Queue' }, { kind: 'Jump', action: { name: 'Recover' }, then: 'retry' },
      { kind: 'Jump', action: { name: 'Other' } }, ['Store'], ['Let'],
    ]);
    expect(m.arms[3]!.guard).toMatchObject({ kind: 'Binary', operator: '==' });
  });

  it('parses wait and pause with all their options', () => {
    const [w, p, q] = steps(`wait { path: "/hooks/p", timeout: 5000, expectedEvents: 2, eventFilter: .ok == true, retry: { maxAttempts: 2 }, storage: { target: hooks, key: .eventId } }
      pause { duration: "1.5h", persist: pauses, resumeOn: timeout | webhook "/approved" }
      pause { duration: 250 }`);
    expect(w).toEqual({
      kind: 'Wait', path: { value: '/hooks/p' }, timeout: 5000, expectedEvents: 2,
      eventFilter: { kind: 'Binary', operator: '==', left: clean(dot('ok')), right: { kind: 'Boolean', value: true } },
      retry: { maxAttempts: 2 }, storage: { target: { name: 'hooks' }, key: clean(dot('eventId')) },
    });
    expect(p).toEqual({ kind: 'Pause', duration: { ms: 5_400_000 }, persist: { name: 'pauses' }, resumeOn: [{ kind: 'timeout' }, { kind: 'webhook', path: { value: '/approved' } }] });
    expect(q).toEqual({ kind: 'Pause', duration: { ms: 250 }, resumeOn: [] });
  });

  it('accepts every pause duration unit, case-insensitively, with spaces and fractions', () => {
    const ms = (d: string): number | undefined => {
      const [s] = steps(`pause { duration: "${d}" }`);
      return s?.kind === 'Pause' ? s.duration?.ms : undefined;
    };
    expect([ms('250'), ms('10ms'), ms('2s'), ms('3 m'), ms('12H'), ms('7d'), ms('0.5s')]).toEqual([250, 10, 2000, 180_000, 43_200_000, 604_800_000, 500]);
  });
});

describe('expressions', () => {
  it('follows the precedence table: ternary < ?? < or < and < not < comparison < + < * < unary', () => {
    expect(expr('a or b and not c == d + e * -f')).toEqual({
      kind: 'Binary', operator: 'or', left: clean(ref('a')),
      right: { kind: 'Binary', operator: 'and', left: clean(ref('b')), right: { kind: 'Unary', operator: 'not', operand: {
        kind: 'Binary', operator: '==', left: clean(ref('c')), right: { kind: 'Binary', operator: '+', left: clean(ref('d')), right: {
          kind: 'Binary', operator: '*', left: clean(ref('e')), right: { kind: 'Unary', operator: '-', operand: clean(ref('f')) } } } } } },
    });
    expect(expr('a ?? b ? c : d')).toMatchObject({ kind: 'Conditional', test: { kind: 'Binary', operator: '??' } });
    expect(expr('a - b - c')).toMatchObject({ left: { kind: 'Binary', operator: '-', left: ref('a') as object }, right: ref('c') as object });
  });

  it('accepts any word after a dot, as an object key, and after `is`', () => {
    expect(expr('response.page.from.date')).toEqual(clean(ref('response', 'page', 'from', 'date')));
    expect(expr('.key')).toEqual(clean(dot('key')));
    expect(expr('x is decimal')).toEqual({ kind: 'Is', operand: clean(ref('x')), type: { name: 'decimal' } });
    expect(expr('{ from: 1, store: 2, "quoted key": 3 }')).toMatchObject({ entries: [{ key: { name: 'from' } }, { key: { name: 'store' } }, { key: { name: 'quoted key' } }] });
  });

  it('parses calls on dotted names, subscripts and member reads after them', () => {
    expect(expr('a.b(1)')).toEqual({ kind: 'Call', callee: { name: 'a.b' }, args: [clean(num(1))] });
    expect(expr('pm.tags[0].name')).toEqual({
      kind: 'Member', property: 'name', object: { kind: 'Index', object: clean(ref('pm', 'tags')), index: clean(num(0)) },
    });
    expect(expr('(x).y')).toEqual({ kind: 'Member', object: clean(ref('x')), property: 'y' });
  });

  it('parses arrays (including empty), objects with spread, in, ??, %, and if-then-else', () => {
    expect(expr('[]')).toEqual({ kind: 'Array', elements: [] });
    expect(expr('[1, "a"]')).toEqual({ kind: 'Array', elements: [clean(num(1)), clean(str('a'))] });
    expect(expr('{ ...a, b: 1, }')).toEqual({ kind: 'Object', entries: [{ kind: 'Spread', value: clean(ref('a')) }, { kind: 'Property', key: { name: 'b' }, value: clean(num(1)) }] });
    expect(expr('"v" in tags')).toMatchObject({ kind: 'Binary', operator: 'in' });
    expect(expr('7 % 3')).toMatchObject({ kind: 'Binary', operator: '%' });
    expect(expr('if a > 1 then "x" else "y"')).toMatchObject({ kind: 'Conditional', test: { operator: '>' }, consequent: str('x') as object, alternate: str('y') as object });
    expect(expr('true')).toEqual({ kind: 'Boolean', value: true });
    expect(expr('null')).toEqual({ kind: 'Null' });
  });

  it('parses match expressions with literal, wildcard and guarded binding arms', () => {
    expect(expr('match .last { "L" => "l", s where s > 3 => "g", _ => "o" }')).toEqual({
      kind: 'MatchExpr', subject: clean(dot('last')),
      arms: [
        { pattern: clean(str('L')), result: clean(str('l')) },
        { pattern: clean(ref('s')), guard: { kind: 'Binary', operator: '>', left: clean(ref('s')), right: clean(num(3)) }, result: clean(str('g')) },
        { pattern: null, result: clean(str('o')) },
      ],
    });
  });

  it('parses any-of with and without where', () => {
    expect(expr('any of list')).toEqual({ kind: 'AnyOf', collection: clean(ref('list')) });
    expect(expr('any of list where .x > 1')).toMatchObject({ kind: 'AnyOf', where: { operator: '>' } });
  });

  it('turns pipes, superposition, ranges and ^parent into Unsupported with one E2011 each', () => {
    for (const [text, construct] of [['x | sum(.a)', 'pipe'], ['a | b', 'superposition'], ['1..5', 'range'], ['^parent.x', 'parent-reference']] as const) {
      const r = parseExpression(text);
      expect(strip(r.expr)).toEqual({ kind: 'Unsupported', construct });
      expect(r.diagnostics.map((d) => d.code)).toEqual(['E2011']);
      expect(r.diagnostics[0]!.message).toMatch(/not supported yet$/);
    }
  });

  it('records exact spans', () => {
    const r = parseExpression('a.b + f(1)');
    expect(spanOf(r.expr)).toEqual({ start: 0, end: 10 });
    if (r.expr.kind !== 'Binary') throw new Error('not binary');
    expect(spanOf(r.expr.left)).toEqual({ start: 0, end: 3 });
    expect(spanOf(r.expr.right)).toEqual({ start: 6, end: 10 });
  });
});

describe('spans of declarations', () => {
  it('records option key spans and node spans as offsets into the file', () => {
    const text = 'mission M {\n  action A { get "/x" { paginate: offset(o, 5) } }\n  run A\n}';
    const r = parseProgram(text, 'm.vague');
    expect(r.diagnostics).toEqual([]);
    const m = r.program.items[0] as MissionDecl;
    const action = m.actions[0] as ActionDecl;
    const fetch = action.steps[0]!;
    if (fetch.kind !== 'Fetch') throw new Error('not a fetch');
    const key = optionSpan(fetch.options.optionSpans, 'paginate')!;
    expect(text.slice(key.start, key.end)).toBe('paginate');
    expect(text.slice(fetch.start, fetch.end)).toBe('get "/x" { paginate: offset(o, 5) }');
    expect(text.slice(action.start, action.end)).toBe('action A { get "/x" { paginate: offset(o, 5) } }');
    expect(spanOf(m)).toEqual({ start: 0, end: text.length });
  });
});
