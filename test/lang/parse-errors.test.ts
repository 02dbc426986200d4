/**
 * Parse errors: each common mistake gives exactly the listed diagnostics — code, line, column,
 * wording and help — and nothing more (one typo, one error; independent errors all reported).
 */
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../engine/lang/line-index.js';
import { parseProgram } from '../../engine/lang/parser.js';

interface Expected {
  code: string;
  line: number;
  column: number;
  message: string;
  help?: string;
}

function errors(text: string): Expected[] {
  const lines = new LineIndex(text);
  return parseProgram(text, 'e.vague').diagnostics.map((d) => {
    const { line, column } = lines.position(d.span.start);
    const e: Expected = { code: d.code, line, column, message: d.message };
    if (d.help !== undefined) e.help = d.help;
    return e;
  });
}

/** A valid mission whose action body is `body` (starting on line 5, column 5). */
function inAction(body: string): string {
  return `mission M {\n  source Api { auth: none, base: "http://x" }\n  store s: memory("s")\n  action A {\n    ${body}\n  }\n  run A\n}\n`;
}

const cases: [string, string, Expected[]][] = [
  ['a missing closing brace of an action', 'mission M {\n  action A {\n    get "/x"\n  action B { get "/y" }\n  run A then B\n}\n', [
    { code: 'E2001', line: 4, column: 3, message: 'Expected "}" to close action `A` but found "action"', help: 'add "}" before this `action`' },
  ]],
  ['a missing closing brace at the end of the file', 'mission M {\n  action A { get "/x" }\n  run A\n', [
    { code: 'E2001', line: 4, column: 1, message: 'Expected "}" to close mission `M` but found end of file' },
  ]],
  ['an unterminated string', inAction('get "/x\n    let a = 1'), [
    { code: 'E1002', line: 5, column: 9, message: 'Unterminated string', help: 'add the closing `"`' },
  ]],
  ['a stray semicolon', inAction('get "/x";'), [
    { code: 'E1001', line: 5, column: 13, message: 'Unexpected character ";"', help: 'Reqon needs no `;` between statements: remove it' },
  ]],
  ['single quotes', inAction("get '/x'"), [
    { code: 'E1001', line: 5, column: 9, message: `Unexpected character "'"`, help: 'Reqon strings use double quotes: "…"' },
  ]],
  ['an unknown fetch option', inAction('get "/x" { pagniate: offset(o, 10), until: true }'), [
    { code: 'E2006', line: 5, column: 16, message: 'Unknown fetch option `pagniate`', help: 'did you mean `paginate`?' },
  ]],
  ['an unknown retry key', inAction('get "/x" { retry: { maxAttempt: 3, backoff: constant } }'), [
    { code: 'E2006', line: 5, column: 25, message: 'Unknown retry option `maxAttempt`', help: 'did you mean `maxAttempts`?' },
  ]],
  ['a misspelt backoff', inAction('get "/x" { retry: { backoff: expo } }'), [
    { code: 'E2007', line: 5, column: 34, message: 'Expected a backoff (`exponential`, `linear`, `constant`) but found "expo"', help: 'did you mean `exponential`?' },
  ]],
  ['a zero page size', inAction('get "/x" { paginate: offset(offset, 0) }'), [
    { code: 'E2008', line: 5, column: 41, message: 'Expected a page size but found "0": page size must be a positive integer', help: 'write `offset(offset, 100)`' },
  ]],
  ['a missing page size', inAction('get "/x" { paginate: page(p) }'), [
    { code: 'E2008', line: 5, column: 32, message: 'Expected a page size but found ")"', help: 'write `page(page, 50)`' },
  ]],
  ['a cursor without its path', inAction('get "/x" { paginate: cursor(after, 5) }'), [
    { code: 'E2008', line: 5, column: 41, message: 'Expected "," and the path of the next cursor but found ")"', help: 'write `cursor(after, 50, "meta.next")`' },
  ]],
  ['an unknown pagination strategy', inAction('get "/x" { paginate: offst(o, 5) }'), [
    { code: 'E2007', line: 5, column: 26, message: 'Expected a pagination strategy (`offset`, `page`, `cursor`) but found "offst"', help: 'did you mean `offset`?' },
  ]],
  ['an unknown schedule unit', 'mission M {\n  schedule: every 1 hourz\n  action A { get "/x" }\n  run A\n}\n', [
    { code: 'E2009', line: 2, column: 21, message: 'Unknown schedule unit `hourz`', help: 'did you mean `hours`?' },
  ]],
  ['a bad pause duration', inAction('pause { duration: "7 weeks" }'), [
    { code: 'E2010', line: 5, column: 23, message: 'Invalid duration "7 weeks"', help: 'write milliseconds (`5000`) or a number with a unit ms, s, m, h or d: "30s", "12h", "1.5h", "7d"' },
  ]],
  ['a match arm without `->`', inAction('match response { 404 skip, _ -> continue }'), [
    { code: 'E2001', line: 5, column: 26, message: 'Expected "->" but found "skip"', help: 'a match arm is written `Pattern -> directive`, `Pattern -> { steps }` or `Pattern -> step`' },
  ]],
  ['an expression match arm written with `->`', inAction('let g = match x { 1 -> "a", _ => "b" }'), [
    { code: 'E2001', line: 5, column: 25, message: 'Expected "=>" but found "->"', help: 'expression match arms use `=>` (step match arms use `->`)' },
  ]],
  ['a digit separator', inAction('get "/x" { paginate: offset(o, 100_000) }'), [
    { code: 'E1003', line: 5, column: 36, message: 'Invalid number "100_000": digit separators "_" are not supported', help: 'write `100000`' },
  ]],
  // The limit counts every level (the mission and action blocks are two), hence the 199th "(".
  ['nesting deeper than 200', inAction(`let x = ${'('.repeat(300)}1${')'.repeat(300)}\n    get "/y"`), [
    { code: 'E2012', line: 5, column: 211, message: 'Nesting is too deep (more than 200 levels)', help: 'split it up with `let` or separate actions' },
  ]],
  ['a misspelt step', inAction('gett "/x"\n    store response -> s'), [
    { code: 'E2004', line: 5, column: 5, message: 'Expected a step but found "gett"', help: 'did you mean `get`?' },
  ]],
  ['a JavaScript strict comparison', inAction('let ok = response.a === 1'), [
    { code: 'E2005', line: 5, column: 27, message: 'Expected an expression but found "="', help: 'Reqon compares with `==` and `!=` (there is no `===` or `!==`)' },
  ]],
  ['JavaScript\'s optional chaining', inAction('let v = response?.a\n    get "/y"'), [
    { code: 'E2011', line: 5, column: 21, message: 'Reqon has no optional chaining `?.`', help: 'a field of null or of an absent value is absent already: write `a.b` (and `a.b ?? fallback` for a default)' },
  ]],
  ['a loop\'s concurrency written `parallel 4`', inAction('for x in response parallel 4 { store x -> s }'), [
    { code: 'E2001', line: 5, column: 23, message: 'Expected "{" but found "parallel"', help: 'a loop runs several iterations at a time with `concurrency N`: `for x in xs concurrency 4 { … }`' },
  ]],
  ['a loop\'s clauses out of order', inAction('for x in response onError continue concurrency 4 { store x -> s }'), [
    { code: 'E2001', line: 5, column: 40, message: 'Expected "{" but found "concurrency"', help: 'after the collection come `where …`, `concurrency N` and `onError …`, in that order, then the body in braces' },
  ]],
  ['a pause duration computed at run time', inAction('pause { duration: days(n) }'), [
    { code: 'E2010', line: 5, column: 28, message: 'Expected a number in `days(…)` but found "n"', help: 'this duration is fixed when the mission is checked: write `days(2)`, or a string such as "2d"' },
  ]],
  // Two edits of a three-letter word leave little of it: no "did you mean `for`?".
  ['a word no step is near', inAction('log "fetched"'), [
    { code: 'E2004', line: 5, column: 5, message: 'Expected a step but found "log"', help: 'a step starts with `get`, `post`, `put`, `patch`, `delete`, `call`, `for`, `map`, `apply`, `validate`, `store`, `match`, `let`, `wait`, `pause`' },
  ]],
  ['a block comment', inAction('/* note */ get "/x"'), [
    { code: 'E1004', line: 5, column: 5, message: 'Unexpected characters "/*": Reqon has only `//` line comments', help: 'start each comment line with `//`' },
  ]],
  ['missing commas between call arguments', inAction('let x = f(1 2)'), [
    { code: 'E2001', line: 5, column: 17, message: 'Expected "," or ")" but found "2"', help: 'arguments are separated by commas' },
  ]],
  ['missing commas between object properties', inAction('store { a: 1 b: 2 } -> s'), [
    { code: 'E2001', line: 5, column: 18, message: 'Expected "," or "}" but found "b"', help: 'object properties are separated by commas' },
  ]],
  ['a duplicated option', inAction('get "/x" { backfill: true, backfill: false }'), [
    { code: 'E2014', line: 5, column: 32, message: 'Option `backfill` is given twice', help: 'remove one of them' },
  ]],
  ['transform variants with different targets', 'mission M {\n  transform T { (A) -> X { a: 1 }, (_) -> Y { a: 2 } }\n}\n', [
    { code: 'E2015', line: 2, column: 43, message: 'Every variant of transform `T` must produce `X`, but this one produces `Y`', help: 'split it into two transforms' },
  ]],
  ['an unknown auth kind and an unknown source key', 'mission M {\n  source Api { auth: bearr, bse: "x" }\n}\n', [
    { code: 'E2007', line: 2, column: 22, message: 'Expected an auth kind (`oauth2`, `bearer`, `basic`, `api_key`, `none`) but found "bearr"', help: 'did you mean `bearer`?' },
    { code: 'E2006', line: 2, column: 29, message: 'Unknown source option `bse`', help: 'did you mean `base`?' },
  ]],
  ['a stray closing brace', 'mission M {\n  action A { get "/x" }\n}\n}\n', [
    { code: 'E2002', line: 4, column: 1, message: 'Expected a declaration but found "}"', help: 'this "}" closes nothing: remove it' },
  ]],
  ['a call on something that is not a name', inAction('let a = (f)(1)'), [
    { code: 'E2016', line: 5, column: 16, message: 'Only a function name can be called', help: 'call a built-in by name, e.g. `length(x)`' },
  ]],
  ['a bad sync format', inAction('get "/x" { since: lastSync { format: date } }'), [
    { code: 'E2007', line: 5, column: 42, message: 'Expected a sync format (`iso`, `unix`, `unix-ms`, `date-only`, `http-date`) but found "date"', help: 'did you mean `date-only`?' },
  ]],
  ['a pipe, which is not supported yet', inAction('let t = items | sum(.a)'), [
    { code: 'E2011', line: 5, column: 19, message: 'Pipes (`x | f(…)`) are not supported yet', help: 'call the function directly: `f(x, …)`' },
  ]],
  ['a storage block without target', inAction('wait { storage: { key: .id } }'), [
    { code: 'E2017', line: 5, column: 21, message: 'Missing option `target` in `storage`', help: 'write `storage: { target: storeName }`' },
  ]],
  ['a header name written as a word', 'mission M {\n  source Api { auth: none, headers: { Accept: "x" } }\n}\n', [
    { code: 'E2001', line: 2, column: 39, message: 'Expected a header name as a string but found "Accept"', help: 'write "Accept": …' },
  ]],
  ['a misspelt mission item', 'mission M {\n  actoin A { get "/x" }\n  run A\n}\n', [
    { code: 'E2003', line: 2, column: 3, message: 'Expected a mission item but found "actoin"', help: 'did you mean `action`?' },
  ]],
  ['a missing expression', inAction('let a = ,\n    get "/x"'), [
    { code: 'E2005', line: 5, column: 13, message: 'Expected an expression but found ","' },
  ]],
  ['a misspelt top-level declaration', 'misson M {\n  run A\n}\nsource S { auth: none }\n', [
    { code: 'E2002', line: 1, column: 1, message: 'Expected a declaration but found "misson"', help: 'did you mean `mission`?' },
  ]],
  ['a non-integer retry count', inAction('get "/x" { retry: { maxAttempts: 2.5 } }'), [
    { code: 'E2013', line: 5, column: 38, message: 'Expected an integer but found "2.5"' },
  ]],
];

describe('parse errors', () => {
  it.each(cases)('%s', (_name, text, expected) => {
    expect(errors(text)).toEqual(expected);
  });

  it('reports several independent errors in one file, each once', () => {
    const text = inAction('get "/x" { pagniate: 1 }\n    let = 3\n    store response -> s { kye: .id }\n    get "/ok"');
    expect(errors(text).map((e) => [e.code, e.line, e.column])).toEqual([
      ['E2006', 5, 16],
      ['E2001', 6, 9],
      ['E2006', 7, 27],
    ]);
  });

  it('keeps parsing the steps after an error', () => {
    const r = parseProgram(inAction('gett "/x"\n    store response -> s\n    get "/y"'), 'e.vague');
    const mission = r.program.items[0];
    if (mission?.kind !== 'Mission') throw new Error('no mission');
    expect(mission.actions[0]!.steps.map((s) => s.kind)).toEqual(['Store', 'Fetch']);
    expect(mission.pipelines).toHaveLength(1);
  });
});

describe('words that are Object.prototype members', () => {
  it('`constructor` or `toString` at the start of a step is an unknown step, not a fetch', async () => {
    const { parseProgram } = await import('../../engine/lang/parser.js');
    for (const word of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const { program, diagnostics } = parseProgram(`mission M {\n  action A {\n    ${word} "/x"\n  }\n  run A\n}\n`, 'm.vague');
      expect(diagnostics.length).toBeGreaterThan(0);
      const mission = program.items.find((i) => i.kind === 'Mission');
      const steps = mission && mission.kind === 'Mission' ? mission.actions[0]?.steps ?? [] : [];
      expect(steps.some((s) => s.kind === 'Fetch')).toBe(false);
    }
  });
});
