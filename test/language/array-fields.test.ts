/**
 * assets/language/array-fields.vague parses and checks clean (no E3040/E3041: it counts with
 * `length(… where …)` and binds what its paths use); a field of an array through the real parser
 * and evaluator; and what `reqon check` says of upstream's loop counter beside the form that works.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../engine/eval/evaluate.js';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope } from '../../engine/eval/scope.js';
import { checkSource } from '../../engine/lang/loader.js';
import { parseExpression, parseProgram } from '../../engine/lang/parser.js';

const MISSION = fs.readFileSync(new URL('../../assets/language/array-fields.vague', import.meta.url), 'utf8');

function diags(text: string): string[] {
  return checkSource(text, 'm.vague').map((d) => `${d.severity} ${d.code} ${d.message}`);
}

describe('array-fields.vague', () => {
  it('parses and checks with no finding', () => {
    expect(parseProgram(MISSION, 'array-fields.vague').diagnostics).toEqual([]);
    expect(diags(MISSION)).toEqual([]);
  });

  it('its expressions mean what the docs say, through the parser', () => {
    const scope = new Scope();
    scope.set('xs', [{ a: 1, b: [{ c: 'x' }] }, { a: 2, b: [{ c: 'y' }, { c: 'z' }] }, { b: null }]);
    const ev = (text: string) => evaluate(parseExpression(text).expr, { scope, response: undefined, inputs: fixedInputs() });
    expect(ev('xs.a')).toEqual([1, 2]);
    expect(ev('xs.b')).toEqual([{ c: 'x' }, { c: 'y' }, { c: 'z' }, null]);
    expect(ev('xs.b.c')).toEqual(['x', 'y', 'z']);
    expect(ev('length(xs.b)')).toBe(4);
    expect(ev('xs.length')).toBe(3);
    expect(ev('xs[1].a')).toBe(2);
    expect(ev('xs.nope')).toBeUndefined();
  });
});

describe('upstream’s loop counter at check time', () => {
  const counter = (body: string) => `mission M {
  source Api { auth: none, base: "https://api.test" }
  store out: memory("out")
  action Count {
    get "/events"
    let opens = 0
${body}
    store { id: "n", opens: opens } -> out
  }
  run Count
}
`;

  it('`let opens = opens + 1` in a sequential for body counts (no warning); in a concurrent one it is warned about, with the line of the outer one', () => {
    expect(diags(counter('    for e in response.events where .type == "open" { let opens = opens + 1 }'))).toEqual([]);
    expect(diags(counter('    for e in response.events concurrency 2 { let opens = opens + 1 }'))).toEqual([
      'warning E3040 `let opens` inside this concurrent loop binds a new variable for each iteration; the outer `opens` (line 6) keeps its value',
    ]);
  });

  it('the form its help suggests checks clean', () => {
    expect(diags(counter('    let opens = length(response.events where .type == "open")'))).toEqual([]);
  });
});
