/**
 * The forms upstream's README, docs and examples write, which the parsed language rejected
 * (issue 15; docs/language.md, "Upstream forms we accept"): each one parses into the tree it
 * means, checks clean, and evaluates as a user would expect. The missions here are ours; the run
 * of assets/language/upstream-forms.vague is in upstream-forms.int.test.ts.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { parseExpression, parseProgram } from '../../engine/lang/parser.js';
import type { Expr, FetchStep, MissionDecl, Step } from '../../engine/lang/ast.js';
import { evaluate } from '../../engine/eval/evaluate.js';
import { ctxOf, type EvOptions } from '../eval/ast-builders.js';

const MISSION = new URL('../../assets/language/upstream-forms.vague', import.meta.url);

function mission(body: string, extra = ''): string {
  return [
    'mission M {',
    '  source Api { auth: none, base: "https://api.test" }',
    '  store out: memory("out")',
    '  schema Bad { error: string }',
    extra,
    '  action Load {',
    body,
    '  }',
    '  run Load',
    '}',
    '',
  ].join('\n');
}

function errors(text: string): string[] {
  return checkSource(text, 'm.vague').filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.message}`);
}

function firstMission(text: string): MissionDecl {
  const { program, diagnostics } = parseProgram(text, 'm.vague');
  expect(diagnostics).toEqual([]);
  return program.items.find((i): i is MissionDecl => i.kind === 'Mission')!;
}

function steps(text: string): Step[] {
  return firstMission(text).actions.find((a) => a.name.name === 'Load')!.steps;
}

function expr(text: string): Expr {
  const { expr: e, diagnostics } = parseExpression(text);
  expect(diagnostics).toEqual([]);
  return e;
}

function ev(text: string, options: EvOptions = {}): unknown {
  return evaluate(expr(text), ctxOf(options));
}

describe('the upstream-forms mission', () => {
  it('checks with no diagnostics at all', () => {
    expect(checkSource(fs.readFileSync(MISSION, 'utf8'), 'upstream-forms.vague')).toEqual([]);
  });
});

describe('quoted enum values', () => {
  it('"pause" and "exponential" mean the words', () => {
    const m = firstMission(
      mission('    get "/x" { retry: { backoff: "exponential", maxAttempts: 2 } }').replace(
        'base: "https://api.test" }',
        'base: "https://api.test", rateLimit: { strategy: "pause" } }',
      ),
    );
    expect(m.sources[0]!.rateLimit?.strategy).toBe('pause');
    expect((m.actions.find((a) => a.name.name === 'Load')!.steps[0] as FetchStep).options.retry?.backoff).toBe('exponential');
  });

  it('a quoted word outside the set is the same E2007, with "did you mean"', () => {
    const ds = checkSource(mission('    get "/x" { retry: { backoff: "expo" } }'), 'm.vague');
    expect(ds.map((d) => [d.code, d.message, d.help])).toEqual([
      ['E2007', 'Expected a backoff (`exponential`, `linear`, `constant`) but found "expo"', 'did you mean `exponential`?'],
    ]);
  });
});

describe('flow-control directives as steps', () => {
  it('skip, abort, retry, continue, queue and jump parse as Flow steps in blocks and loops', () => {
    const body = [
      '    for x in response.items {',
      '      skip',
      '    }',
      '    match response {',
      '      Bad -> {',
      '        store { id: "e" } -> out',
      '        abort "gave up"',
      '      },',
      '      _ -> { continue }',
      '    }',
      '    validate response { assume .ok } or { retry { maxAttempts: 2 } }',
      '    queue out',
      '    jump Other then continue',
    ].join('\n');
    const s = steps(mission(body, '  action Other { get "/o" }'));
    const loop = s[0] as Extract<Step, { kind: 'For' }>;
    expect(loop.body.map((b) => b.kind === 'Flow' && b.directive.kind)).toEqual(['Skip']);
    const match = s[1] as Extract<Step, { kind: 'Match' }>;
    const arm = match.arms[0]!.body;
    expect(arm.kind === 'Steps' && arm.steps.map((b) => (b.kind === 'Flow' ? `${b.directive.kind}` : b.kind))).toEqual(['Store', 'Abort']);
    const validate = s[2] as Extract<Step, { kind: 'Validate' }>;
    expect(validate.fallback?.[0]).toMatchObject({ kind: 'Flow', directive: { kind: 'Retry', config: { maxAttempts: 2 } } });
    expect(s[3]).toMatchObject({ kind: 'Flow', directive: { kind: 'Queue', store: { name: 'out' } } });
    expect(s[4]).toMatchObject({ kind: 'Flow', directive: { kind: 'Jump', action: { name: 'Other' }, then: 'continue' } });
    expect(errors(mission(body, '  action Other { get "/o" }'))).toEqual([]);
  });

  it('a queue step to an undeclared store is E3007, as a queue arm is', () => {
    expect(errors(mission('    queue dlq'))).toEqual(['E3007 Unknown store `dlq`']);
  });
});

describe('jump targets', () => {
  const other = '  action Refresh { post "/token" }';

  it('`jump A then retry|continue` may target any declared action, in the pipeline or not', () => {
    expect(errors(mission('    match response { Bad -> jump Refresh then retry, _ -> continue }', other))).toEqual([]);
    expect(errors(mission('    match response { Bad -> jump Refresh then continue, _ -> continue }', other))).toEqual([]);
  });

  it('a plain `jump A` still needs A to be a sequential stage (it continues the pipeline there)', () => {
    expect(errors(mission('    match response { Bad -> jump Refresh, _ -> continue }', other))).toEqual([
      'E3012 Cannot jump to `Refresh`: it is not a stage of the `run` pipeline',
    ]);
  });
});

describe('`where` as a filter expression', () => {
  it('filters an array, the item as the current record', () => {
    expect(ev('items where .n > 1', { vars: { items: [{ n: 1 }, { n: 2 }, { n: 3 }] } })).toEqual([{ n: 2 }, { n: 3 }]);
    expect(ev('length(items where .tag == "a")', { vars: { items: [{ tag: 'a' }, { tag: 'b' }, { tag: 'a' }] } })).toBe(2);
    expect(ev('(items where .n > 1) where .n < 3', { vars: { items: [{ n: 1 }, { n: 2 }, { n: 3 }] } })).toEqual([{ n: 2 }]);
    expect(ev('missing where .n > 1')).toEqual([]);
  });

  it('binds loosest: `a where b and c` filters by `b and c`', () => {
    expect(expr('xs where .a and .b')).toMatchObject({ kind: 'Where', condition: { kind: 'Binary', operator: 'and' } });
  });

  it('leaves `for … in coll where …` and match-expression guards as they were', () => {
    const loop = steps(mission('    for x in response.items where .ok { store x -> out { key: .id } }'))[0] as Extract<Step, { kind: 'For' }>;
    expect(loop.collection.kind).toBe('Ref');
    expect(loop.where?.kind).toBe('Ref');
    expect(expr('match x { n where n > 1 => "big", _ => "small" }')).toMatchObject({ arms: [{ guard: { kind: 'Binary' } }, {}] });
    const parenthesised = steps(mission('    for x in (response.items where .ok) { store x -> out { key: .id } }'))[0] as Extract<Step, { kind: 'For' }>;
    expect(parenthesised.collection.kind).toBe('Where');
  });

  it('a non-array collection is a type error (R4xxx), not a silent empty list', () => {
    expect(() => ev('n where .a', { vars: { n: 5 } })).toThrow(/'where' expected an array/);
  });
});

describe('guard match `match { cond => value }`', () => {
  it('takes the first arm whose condition is truthy, `_` last', () => {
    const band = (price: number) => ev('match { p >= 100 => "high", p >= 10 => "mid", _ => "low" }', { vars: { p: price } });
    expect([band(150), band(50), band(5)]).toEqual(['high', 'mid', 'low']);
    expect(ev('match { x => "truthy", _ => "no" }', { vars: { x: 'yes' } })).toBe('truthy');
    expect(ev('match { false => 1 }')).toBeUndefined();
  });

  it('`match true { … }` compares each pattern with the subject (no truthiness)', () => {
    expect(ev('match true { x => "same", _ => "differs" }', { vars: { x: 'yes' } })).toBe('differs');
  });
});

describe('object patterns in the match expression', () => {
  const kind = (value: unknown) =>
    ev('match r { { error: { code: 401 } } => "auth", { error: _ } => "error", { status: "ok", count: n } where n > 0 => "ok " + n, _ => "other" }', {
      vars: { r: value },
    });

  it('test shapes as match steps do: `_` present, a literal compares, a name binds (for the guard and the result), nested', () => {
    expect(kind({ error: { code: 401, message: 'no' } })).toBe('auth');
    expect(kind({ error: 'boom' })).toBe('error');
    expect(kind({ status: 'ok', count: 3, extra: true })).toBe('ok 3');
    // `_` and a name need the key present and not null; the guard sees the bound name.
    expect(kind({ error: null })).toBe('other');
    expect(kind({ status: 'ok', count: 0 })).toBe('other');
    expect(kind({ status: 'ok' })).toBe('other');
    // Not an object, or an array: no shape matches.
    expect(kind([{ error: 1 }])).toBe('other');
    expect(kind('error')).toBe('other');
  });

  it('`null` matches null or an absent key, a negative literal compares, a field of the current record is a subject', () => {
    expect(ev('match r { { next: null } => "last", _ => "more" }', { vars: { r: { items: [] } } })).toBe('last');
    expect(ev('match r { { next: null } => "last", _ => "more" }', { vars: { r: { next: 'c2' } } })).toBe('more');
    expect(ev('match .r { { delta: -1 } => "down", _ => "flat" }', { current: { r: { delta: -1 } } })).toBe('down');
  });

  it('a computed value of a key (`1 + 1`, `.n`, `[…]`, a dotted name) must equal the key\'s value by content', () => {
    const two = (r: unknown) => ev('match r { { a: 1 + 1 } => "two", _ => "other" }', { vars: { r } });
    expect([two({ a: 2 }), two({ a: 2, b: 1 }), two({ a: 3 }), two({ a: '2' }), two({})]).toEqual(['two', 'two', 'other', 'other', 'other']);
    expect(ev('match r { { id: .id } => "same", _ => "other" }', { vars: { r: { id: 7 } }, current: { id: 7 } })).toBe('same');
    expect(ev('match r { { id: .id } => "same", _ => "other" }', { vars: { r: { id: 7 } }, current: { id: 8 } })).toBe('other');
    const tags = (r: unknown) => ev('match r { { tags: ["a", "b"] } => "ab", _ => "other" }', { vars: { r } });
    expect([tags({ tags: ['a', 'b'] }), tags({ tags: ['b', 'a'] }), tags({ tags: ['a', 'b', 'c'] }), tags({ tags: 'ab' })]).toEqual(['ab', 'other', 'other', 'other']);
    expect(ev('match r { { owner: want.user } => "mine", _ => "other" }', { vars: { r: { owner: { id: 1, n: [1] } }, want: { user: { n: [1], id: 1 } } } })).toBe('mine');
  });

  it('computed values see the variables around the match, not the names the same pattern binds; they mix with sub-patterns', () => {
    const pick = (r: unknown) => ev('match r { { a: n, b: n + 1, c: _ } => "outer n", _ => "other" }', { vars: { r, n: 5 } });
    expect(pick({ a: 1, b: 6, c: true })).toBe('outer n');
    expect(pick({ a: 1, b: 2, c: true })).toBe('other');
    expect(pick({ a: 1, b: 6 })).toBe('other');
  });

  it('a literal with a spread is a value: equal by content to the whole subject, extra keys included', () => {
    const opts = (r: unknown) => ({ vars: { r, base: { kind: 'x', n: [1, { m: 2 }] } } });
    const same = (r: unknown) => ev('match r { { ...base, ok: true } => "same", _ => "other" }', opts(r));
    expect(same({ n: [1, { m: 2 }], ok: true, kind: 'x' })).toBe('same');
    expect(same({ n: [1, { m: 2 }], ok: true, kind: 'x', extra: 1 })).toBe('other');
    expect(same({ n: [1, { m: 3 }], ok: true, kind: 'x' })).toBe('other');
    // Nested: only that key's value is compared whole.
    expect(ev('match r { { meta: { ...base }, id: _ } => "meta", _ => "other" }', opts({ id: 1, meta: { kind: 'x', n: [1, { m: 2 }] } }))).toBe('meta');
  });

  it('a value arm compares by content too, and `null` matches an absent subject', () => {
    expect(ev('match r { [1, 2] => "pair", _ => "other" }', { vars: { r: [1, 2] } })).toBe('pair');
    expect(ev('match r { [1, 2] => "pair", _ => "other" }', { vars: { r: [2, 1] } })).toBe('other');
    expect(ev('match .missing { null => "none", _ => "some" }', { current: {} })).toBe('none');
    expect(ev('match .v { null => "none", _ => "some" }', { current: { v: 0 } })).toBe('some');
  });
});

describe('infix `contains`', () => {
  it('is contains(a, b): substrings and array elements', () => {
    expect(ev('"a@b.c" contains "@"')).toBe(true);
    expect(ev('tags contains "sale"', { vars: { tags: ['new', 'sale'] } })).toBe(true);
    expect(ev('tags contains "old"', { vars: { tags: ['new'] } })).toBe(false);
    expect(expr('.email contains "@" and .ok')).toMatchObject({ kind: 'Binary', operator: 'and', left: { kind: 'Call', callee: { name: 'contains' } } });
  });

  it('is a word like any other as a key', () => {
    expect(ev('{ contains: 1 }.contains')).toBe(1);
  });
});

describe('upstream functions', () => {
  it('exists, parseDecimal, parseDate and durations check clean and evaluate', () => {
    const body = '    store { id: "a", ok: exists(.x), n: parseDecimal("1.5"), d: parseDate("2024-01-01"), w: days(7), h: hours(1), s: sync_state.get("k") } -> out';
    expect(errors(mission(body))).toEqual([]);
    expect(ev('timestamp() - days(1)', { inputs: { now: 172_800_000 } })).toBe(86_400_000);
    expect(ev('exists(m[k])', { vars: { m: { a: 1 }, k: 'b' } })).toBe(false);
  });

  it('a duration function is a pause duration or a wait timeout, fixed at check time', () => {
    const [pause, wait] = steps(mission('    pause { duration: days(2) }\n    wait { path: "/hook", timeout: minutes(1.5) }'));
    expect(pause).toMatchObject({ kind: 'Pause', duration: { ms: 2 * 86_400_000 } });
    expect(wait).toMatchObject({ kind: 'Wait', timeout: 90_000 });
    expect(errors(mission('    pause { duration: days(36501) }'))).toEqual(['E3023 `duration` expected a duration from 0 to 36500d (about 100 years) but got: 3153686400000']);
  });

  it('sync_state.get reads the checkpoint store through EvalInputs, null without one', () => {
    expect(ev('sync_state.get("orders")')).toBeNull();
    const ctx = ctxOf();
    ctx.inputs = { ...ctx.inputs, syncState: (key) => (key === 'orders' ? '2024-01-01T00:00:00.000Z' : undefined) };
    expect(evaluate(expr('sync_state.get("orders")'), ctx)).toBe('2024-01-01T00:00:00.000Z');
  });

  it('`-> sync_state` needs no declaration', () => {
    expect(errors(mission('    store { id: "k", at: now() } -> sync_state { key: "k" }'))).toEqual([]);
  });
});

describe('sinceParam / sinceFormat', () => {
  it('fold into `since: lastSync { param, format }`', () => {
    const fetch = steps(mission('    get "/x" { since: lastSync, sinceParam: "changed_after", sinceFormat: "unix" }'))[0] as FetchStep;
    expect(fetch.options.since).toMatchObject({ kind: 'LastSync', param: 'changed_after', format: 'unix' });
    expect(fetch.options).not.toHaveProperty('sinceParam');
  });

  it('need `since: lastSync`, and may not repeat what its block says', () => {
    expect(errors(mission('    get "/x" { sinceParam: "a" }'))).toEqual(['E2017 `sinceParam` needs `since: lastSync` in the same fetch options']);
    expect(errors(mission('    get "/x" { since: lastSync { format: iso }, sinceFormat: "unix" }'))).toEqual([
      'E2014 The sync format is given twice (`sinceFormat` and `lastSync { format }`)',
    ]);
  });
});

describe('several missions in one file', () => {
  it('is a warning (E3002): upstream accepts the file and runs the first', () => {
    const ds = checkSource(`${mission('    get "/x"')}mission Other {\n  action A { }\n  run A\n}\n`, 'm.vague');
    expect(ds.map((d) => [d.code, d.severity])).toEqual([['E3002', 'warning']]);
  });
});
