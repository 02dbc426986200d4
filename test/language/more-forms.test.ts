/**
 * More forms of upstream's docs (docs/language.md): object-form pagination, object patterns in
 * match arms, status lists, `wait` shorthands, the stricter checks that became warnings, and an
 * actions-only file checked as a folder mission's part. Each parses into the tree it means and
 * checks as documented; assets/language/more-forms.vague runs in more-forms.int.test.ts.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { parseProgram } from '../../engine/lang/parser.js';
import type { FetchStep, MatchStep, MissionDecl, ObjectPattern, Step, WaitStep } from '../../engine/lang/ast.js';
import { matchesObjectPattern } from '../../engine/eval/object-pattern.js';

const MISSION = new URL('../../assets/language/more-forms.vague', import.meta.url);

function mission(body: string, extra = ''): string {
  return [
    'mission M {',
    '  source Api { auth: none, base: "https://api.test" }',
    '  store out: memory("out")',
    extra,
    '  action Load {',
    body,
    '  }',
    '  run Load',
    '}',
    '',
  ].join('\n');
}

function diags(text: string): string[] {
  return checkSource(text, 'm.vague').map((d) => `${d.severity} ${d.code} ${d.message}${d.help ? ` | ${d.help}` : ''}`);
}

function steps(text: string): Step[] {
  const { program, diagnostics } = parseProgram(text, 'm.vague');
  expect(diagnostics).toEqual([]);
  const m = program.items.find((i): i is MissionDecl => i.kind === 'Mission')!;
  return m.actions.find((a) => a.name.name === 'Load')!.steps;
}

/** The tree without spans, to compare two spellings of one meaning. */
function shape(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'span' || k === 'start' || k === 'end' || k === 'keySpan' || k === 'optionSpans' ? undefined : v)));
}

describe('the more-forms mission', () => {
  it('checks with no diagnostics at all', () => {
    expect(checkSource(fs.readFileSync(MISSION, 'utf8'), 'more-forms.vague')).toEqual([]);
  });
});

describe('object-form pagination', () => {
  const paginate = (text: string) => (steps(mission(`    get "/x" { paginate: ${text} }`))[0] as FetchStep).options.paginate;

  it.each([
    ['{ type: page, param: "page", pageSize: 100 }', 'page(page, 100)'],
    ['{ type: "offset", param: skip, pageSize: 50, sizeParam: "limit" }', 'offset(skip, 50, limit)'],
    ['{ type: cursor, param: "after", pageSize: 20, cursorPath: "meta.next" }', 'cursor(after, 20, "meta.next")'],
    ['{ pageSize: 20, cursorPath: "next", param: after, type: "cursor" }', 'cursor(after, 20, "next")'],
  ])('%s means %s', (object, call) => {
    expect(shape(paginate(object))).toEqual(shape(paginate(call)));
  });

  it('an unknown key names the key, with "did you mean"', () => {
    expect(diags(mission('    get "/x" { paginate: { type: page, param: "p", pageSize: 10, pagesize: 5 } }'))).toEqual([
      'error E2006 Unknown paginate option `pagesize` | did you mean `pageSize`?',
    ]);
  });

  it('a missing key, a bad size, a cursor path on a page strategy and a bad type are errors', () => {
    expect(diags(mission('    get "/x" { paginate: { type: page, pageSize: 10 } }'))).toEqual([
      'error E2017 Missing option `param` in `paginate: { … }` | write `paginate: { type: page, param: "page", pageSize: 100 }`',
    ]);
    expect(diags(mission('    get "/x" { paginate: { param: "p", pageSize: 10 } }'))[0]).toMatch(/^error E2017 Missing option `type`/);
    expect(diags(mission('    get "/x" { paginate: { type: cursor, param: "p", pageSize: 10 } }'))[0]).toMatch(/^error E2017 Missing option `cursorPath`/);
    expect(diags(mission('    get "/x" { paginate: { type: page, param: "p", pageSize: 0 } }'))[0]).toMatch(/^error E2008 Expected a page size but found "0"/);
    expect(diags(mission('    get "/x" { paginate: { type: page, param: "p", pageSize: 10, cursorPath: "n" } }'))).toEqual([
      'error E2008 Only `type: cursor` takes a `cursorPath` (this is `type: page`) | remove `cursorPath`, or write `type: cursor`',
    ]);
    expect(diags(mission('    get "/x" { paginate: { type: "pages", param: "p", pageSize: 10 } }'))[0]).toMatch(/^error E2007 .*did you mean `page`\?/);
  });
});

describe('object patterns', () => {
  const pattern = (text: string) => (steps(mission(`    match response { ${text} -> continue, _ -> skip }`))[0] as MatchStep).arms[0]!.pattern as ObjectPattern;
  const match = (text: string, subject: unknown) => {
    const bound = new Map<string, unknown>();
    return matchesObjectPattern(pattern(text), subject, bound) ? Object.fromEntries(bound) : false;
  };

  it('parses keys (bare or quoted) into sub-patterns', () => {
    expect(shape(pattern('{ error: _, "x-code": 401, ok: false, none: null, who: w, at: { n: -1 } }'))).toEqual({
      kind: 'ObjectPattern',
      fields: [
        { key: 'error', value: { kind: 'Present' } },
        { key: 'x-code', value: { kind: 'Literal', value: 401 } },
        { key: 'ok', value: { kind: 'Literal', value: false } },
        { key: 'none', value: { kind: 'Literal', value: null } },
        { key: 'who', value: { kind: 'Bind', name: { name: 'w' } } },
        { key: 'at', value: { kind: 'ObjectPattern', fields: [{ key: 'n', value: { kind: 'Literal', value: -1 } }] } },
      ],
    });
  });

  it('matches shape: every key present (not null for `_` and names), literals equal, nested objects recursed', () => {
    expect(match('{ error: _ }', { error: 'x' })).toEqual({});
    expect(match('{ error: _ }', { error: null })).toBe(false);
    expect(match('{ error: _ }', { other: 1 })).toBe(false);
    expect(match('{ error: e, code: 429 }', { error: 'slow down', code: 429, extra: true })).toEqual({ e: 'slow down' });
    expect(match('{ error: e, code: 429 }', { error: 'slow down', code: '429' })).toBe(false);
    expect(match('{ gone: null }', {})).toEqual({});
    expect(match('{ gone: null }', { gone: 0 })).toBe(false);
    expect(match('{ a: { b: v } }', { a: { b: [1] } })).toEqual({ v: [1] });
    expect(match('{ a: { b: v } }', { a: 'b' })).toBe(false);
  });

  it('is never fooled by arrays, primitives or inherited keys', () => {
    expect(match('{ length: _ }', [1, 2])).toBe(false);
    expect(match('{ length: _ }', 'text')).toBe(false);
    expect(match('{ constructor: _ }', {})).toBe(false);
    expect(match('{ toString: t }', Object.create({ toString: 1 }))).toBe(false);
    expect(match('{ a: _ }', null)).toBe(false);
  });

  it('checks clean in a mission, and a key given twice is E2014', () => {
    expect(diags(mission('    match response { { error: e } where e != "x" -> skip, _ -> continue }'))).toEqual([]);
    expect(diags(mission('    match response { { a: 1, a: 2 } -> skip, _ -> continue }'))).toEqual([
      'error E2014 Key `a` is given twice in this pattern | remove one of them',
    ]);
    expect(diags(mission('    match response { { a: 1 + 2 } -> skip }'))[0]).toMatch(/^error E2001 Expected "," or "}" but found "\+"/);
  });
});

describe('status lists in match arms', () => {
  it('`[200, 201]` is one arm for each status, and a status in two arms is still E3025', () => {
    const arm = (steps(mission('    match response { [200, 201] -> continue }'))[0] as MatchStep).arms[0]!;
    expect(shape(arm.pattern)).toEqual({ kind: 'StatusListPattern', statuses: [{ status: 200 }, { status: 201 }] });
    expect(diags(mission('    match response { [200, 201] -> continue, 201 -> skip }'))[0]).toMatch(/^error E3025 Status 201 is already handled by an earlier arm/);
    expect(diags(mission('    match response { [200, 700] -> continue }'))[0]).toMatch(/^error E3024 /);
    expect(diags(mission('    match response { [Bad] -> continue }', '  schema Bad { e: string }'))).toEqual([]);
  });
});

describe('wait shorthands', () => {
  const wait = (options: string) => steps(mission(`    wait { path: "/done", ${options} }`))[0] as WaitStep;

  it('`retryOnTimeout: { … }` is the wait\'s `retry`', () => {
    expect(shape(wait('retryOnTimeout: { maxAttempts: 2, backoff: exponential }'))).toEqual(shape(wait('retry: { maxAttempts: 2, backoff: exponential }')));
    expect(diags(mission('    wait { path: "/done", retry: { maxAttempts: 2 }, retryOnTimeout: { maxAttempts: 3 } }'))).toEqual([
      'error E2014 `retryOnTimeout` and `retry` are the same option, given twice | keep one of them',
    ]);
  });

  it('`storage: out` is `storage: { target: out }`, and an unknown store is still E3007', () => {
    expect(shape(wait('storage: out'))).toEqual(shape(wait('storage: { target: out }')));
    expect(diags(mission('    wait { path: "/done", storage: ot }'))).toEqual(['error E3007 Unknown store `ot` | did you mean `out`?']);
  });
});

describe('checks upstream does not make: warnings, saying what running does', () => {
  it('a duplicate store or source, a request with no source, an unknown stage, a past `at`', () => {
    expect(diags(mission('    get "/x"', '  store out: file("again")\n  source Api { auth: none, base: "https://b.test" }'))).toEqual([
      'warning E3035 Duplicate store `out`: this declaration is ignored, the one at line 3 is used | rename or remove one of them',
      'warning E3035 Duplicate source `Api`: this declaration is ignored, the one at line 2 is used | rename or remove one of them',
    ]);
    expect(diags('mission M {\n  action Load { get "/x" }\n  run Load then Sav\n}\n')).toEqual([
      'warning E3033 This request has no source: the mission declares none, so running it fails | declare one: source Api { auth: none, base: "https://api.example.com" }',
      'warning E3036 Unknown action `Sav`: running the mission fails at this stage | declared actions: `Load`',
    ]);
    expect(diags(mission('    get "/x"', '  schedule: at "2024-12-25 00:00 UTC"'))).toEqual([
      'warning E3037 The schedule time "2024-12-25 00:00Z" is already past: a worker fires it once, as soon as it registers the schedule | write a future date-time, or run the mission by hand (`reqon run`)',
    ]);
    expect(diags(mission('    get "/x"', '  schedule: at "2999-12-25 00:00 UTC"'))).toEqual([]);
    expect(diags(mission('    get "/x"', '  schedule: at "2999-12-25 00:00 CET"'))[0]).toMatch(/^error E3027 /);
    // A wall time with no offset is read in the schedule's zone, as the worker fires it — UTC
    // where it names none (helpers 97 and 98: read with the widest zone's offset, a time hours
    // past passed as future).
    const wall = (zone: string) => new Intl.DateTimeFormat('sv-SE', { timeZone: zone, dateStyle: 'short', timeStyle: 'short' }).format(Date.now() - 3 * 3_600_000).replace(' ', 'T');
    expect(diags(mission('    get "/x"', `  schedule: at "${wall('Europe/London')}" { timezone: "Europe/London" }`))[0]).toMatch(/^warning E3037 The schedule time ".+" \(Europe\/London\) is already past/);
    expect(diags(mission('    get "/x"', `  schedule: at "${wall('UTC')}"`))[0]).toMatch(/^warning E3037 The schedule time ".+" is already past/);
    expect(diags(mission('    get "/x"', `  schedule: at "${wall('Pacific/Kiritimati').replace(/^\d{4}/, (y) => String(Number(y) + 1))}"`))).toEqual([]);
  });

  it('the errors that stay errors: a duplicate action, a jump to nowhere', () => {
    expect(diags(mission('    get "/x"', '  action Load { get "/y" }'))[0]).toMatch(/^error E3006 Duplicate action `Load`/);
    expect(diags(mission('    match response { _ -> jump Nowhere }'))[0]).toMatch(/^error E3010 Unknown action `Nowhere`/);
  });
});

describe('an actions-only file is checked as a folder mission\'s part', () => {
  it('no E3001; its names are not resolved, everything else is checked, and a warning says so', () => {
    const part = 'action SyncThings {\n  get "/things" { source: Elsewhere }\n  store response -> things\n}\n';
    expect(diags(part)).toEqual([
      'warning E3034 m.vague has no mission: checked as a part of a folder mission (stores, sources, schemas and other actions it names are not resolved) | check the folder (`reqon check <folder>`) to resolve them against its mission.vague',
    ]);
    const broken = 'action A {\n  let n = lenght(response)\n  store response -> things\n}\n';
    expect(diags(broken).filter((d) => d.startsWith('error'))).toEqual(['error E3018 Unknown function `lenght` | did you mean `length`?']);
    expect(diags('action A { get "/a" }\ntransform T -> X { a: 1 }\n').filter((d) => d.startsWith('error'))).toEqual([
      'error E3031 A folder mission\'s part may contain only `action` declarations, found a transform | move it into the mission in mission.vague',
    ]);
    expect(diags('schema S { a: string }\n')[0]).toMatch(/^error E3001 No mission found/);
  });
});

describe('delete of a store record', () => {
  it('`delete dlq[item.id]` on a declared store is a store removal: no finding, no request checks', () => {
    const text = mission('    for item in response {\n      delete dlq[item.id]\n    }', '  store dlq: memory("dlq")');
    expect(diags(text)).toEqual([]);
  });

  it('a store removal with request options is E3039, saying how to write the request', () => {
    const text = mission('    delete dlq["k"] { retry: { maxAttempts: 2 } }', '  store dlq: memory("dlq")');
    expect(diags(text)).toEqual([
      'error E3039 `delete dlq[…]` removes a record from the store `dlq` and takes no request options (found `retry`) | to send an HTTP DELETE with options, write the path as a string: `delete "/dlq/{…}" { … }`',
    ]);
  });

  it('`delete x[k]` where x is no declared store stays a request, warned about (E3038) with both spellings', () => {
    expect(diags(mission('    let paths = ["/a", "/b"]\n    delete paths[0]'))).toEqual([
      'warning E3038 `delete paths[…]` sends an HTTP DELETE of the path `paths[…]` evaluates to: `paths` is not a declared store | to remove a record from a store, name a declared store: `delete S[key]`; to send the DELETE without this warning, bind the path first (`let path = paths[…]`, then `delete path`) or write it as a string: `delete "/paths/{…}"`',
    ]);
    // A misspelt store: the help names the store it probably meant.
    expect(diags(mission('    delete dql["k"]', '  store dlq: memory("dlq")'))[0]).toMatch(/^warning E3038 .*did you mean `dlq`\?\): `delete dlq\[key\]`/);
  });

  it('a DELETE whose path is a string, a bound name or a field is a request without findings', () => {
    expect(diags(mission('    for item in response {\n      delete "/dlq/{item.id}"\n    }', '  store dlq: memory("dlq")'))).toEqual([]);
    expect(diags(mission('    let p = "/x"\n    delete p'))).toEqual([]);
    expect(diags(mission('    delete .out[0]'))).toEqual([]);
  });
});
