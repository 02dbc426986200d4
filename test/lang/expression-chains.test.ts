/**
 * Chains that parse in a loop still nest their trees (`1 + 1 + …` is a tree as deep as it is
 * long): each link counts towards the nesting limit, so a long chain is one E2012 diagnostic —
 * never a stack overflow in the checker or the evaluator, never an "internal error".
 */
import { describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { MAX_DEPTH } from '../../engine/lang/parser-core.js';

const mission = (expr: string) => `mission M {\n  action A {\n    let x = ${expr}\n  }\n  run A\n}\n`;
const codes = (expr: string) => checkSource(mission(expr), '/tmp/m.vague').filter((d) => d.severity === 'error').map((d) => d.code);

describe('long expression chains', () => {
  const chains: [string, (n: number) => string][] = [
    ['1 + 1 + …', (n) => Array(n).fill('1').join(' + ')],
    ['1 * 1 * …', (n) => Array(n).fill('1').join(' * ')],
    ['a ?? b ?? …', (n) => Array(n).fill('null').join(' ?? ')],
    ['true and true and …', (n) => Array(n).fill('true').join(' and ')],
    ['1 == 1 == …', (n) => Array(n).fill('1').join(' == ')],
    ['a ? b : c ? …', (n) => `${'true ? 1 : '.repeat(n)}0`],
    ['[0][0][0]…', (n) => `[1]${'[0]'.repeat(n)}`],
  ];
  for (const [name, chain] of chains) {
    it(`${name}: a chain of 4,000 links is one E2012, not a crash`, () => {
      expect(codes(chain(4000))).toEqual(['E2012']);
    });
  }

  it('a chain well inside the limit still checks clean', () => {
    expect(codes(Array(MAX_DEPTH / 2).fill('1').join(' + '))).toEqual([]);
  });
});
