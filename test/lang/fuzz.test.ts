/**
 * Fuzzing the front end with fast-check: the ten §H missions are mutated (tokens deleted,
 * duplicated, swapped; text truncated; random bytes and unicode injected), over 3,000 cases per
 * run. Every case must return a Program and well-formed diagnostics without throwing. Parse time
 * per case is measured and printed for the report, never asserted.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CODES } from '../../engine/lang/codes.js';
import { tokenize } from '../../engine/lang/lexer.js';
import { parseExpression, parseProgram } from '../../engine/lang/parser.js';

const missions = Array.from({ length: 10 }, (_, i) =>
  readFileSync(new URL(`../../assets/conformance/h${i + 1}.vague`, import.meta.url), 'utf8'),
);
const spans = missions.map((m) => tokenize(m, 'm').tokens.slice(0, -1).map((t) => t.span));

const timings: number[] = [];

/** Parses and checks the invariants every input must keep. */
function check(text: string): void {
  const started = performance.now();
  const { program, diagnostics } = parseProgram(text, 'fuzz.vague');
  timings.push(performance.now() - started);
  expect(program.kind).toBe('Program');
  for (const d of diagnostics) {
    expect(Object.hasOwn(CODES, d.code)).toBe(true);
    expect(d.span.start).toBeGreaterThanOrEqual(0);
    expect(d.span.end).toBeGreaterThanOrEqual(d.span.start);
    expect(d.span.end).toBeLessThanOrEqual(text.length);
    expect(d.message.length).toBeGreaterThan(0);
  }
  // At most one error per offset (DiagnosticBag), whatever the input.
  const offsets = diagnostics.filter((d) => d.severity === 'error').map((d) => d.span.start);
  expect(new Set(offsets).size).toBe(offsets.length);
}

type Mutation =
  | { op: 'delete'; at: number }
  | { op: 'duplicate'; at: number }
  | { op: 'swap'; at: number; with: number }
  | { op: 'inject'; at: number; text: string };

function mutate(index: number, mutations: Mutation[]): string {
  let text = missions[index]!;
  const tokenSpans = spans[index]!;
  for (const m of mutations) {
    // Positions refer to the original token list; clamp them to the current text.
    const span = tokenSpans[m.at % tokenSpans.length]!;
    const start = Math.min(span.start, text.length);
    const end = Math.min(span.end, text.length);
    switch (m.op) {
      case 'delete':
        text = text.slice(0, start) + text.slice(end);
        break;
      case 'duplicate':
        text = text.slice(0, end) + ' ' + text.slice(start, end) + text.slice(end);
        break;
      case 'swap': {
        const other = tokenSpans[m.with % tokenSpans.length]!;
        const oStart = Math.min(other.start, text.length);
        const oEnd = Math.min(other.end, text.length);
        if (oStart < end && start < oEnd) break; // the same or overlapping tokens: nothing to swap
        const [x0, x1, y0, y1] = start < oStart ? [start, end, oStart, oEnd] : [oStart, oEnd, start, end];
        text = text.slice(0, x0) + text.slice(y0, y1) + text.slice(x1, y0) + text.slice(x0, x1) + text.slice(y1);
        break;
      }
      case 'inject':
        text = text.slice(0, start) + m.text + text.slice(start);
        break;
    }
  }
  return text;
}

const position = fc.nat({ max: 400 });
const junk = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.constantFrom('{', '}', '(', ')', '[', ']', '"', "'", '->', '=>', '..', '|', '^', ',', ':', '/*', '//', ';', '#', '100_000', '\\', '...', '?'),
  fc.constantFrom('mission', 'action', 'store', 'match', 'for', 'get', 'run', 'then', 'where', 'not', 'any of', 'if', 'paginate:', 'retry'),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: position }),
  fc.record({ op: fc.constant('duplicate' as const), at: position }),
  fc.record({ op: fc.constant('swap' as const), at: position, with: position }),
  fc.record({ op: fc.constant('inject' as const), at: position, text: junk }),
);

describe('fuzz: the parser never throws and always terminates', () => {
  afterAll(() => {
    const sorted = timings.slice().sort((a, b) => a - b);
    const mean = sorted.reduce((s, t) => s + t, 0) / sorted.length;
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
    console.log(`fuzz: ${sorted.length} parses, mean ${mean.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms, max ${(sorted.at(-1) ?? 0).toFixed(3)} ms`);
  });

  it('survives token mutations of the §H missions (2,000 cases)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 9 }), fc.array(mutation, { minLength: 1, maxLength: 6 }), (index, mutations) => {
        check(mutate(index, mutations));
      }),
      { numRuns: 2000 },
    );
  });

  it('survives truncation at every kind of position (600 cases)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 9 }), fc.double({ min: 0, max: 1, noNaN: true }), (index, fraction) => {
        const text = missions[index]!;
        check(text.slice(0, Math.floor(text.length * fraction)));
      }),
      { numRuns: 600 },
    );
  });

  it('survives arbitrary text and arbitrary expressions (600 cases)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        check(text);
        const r = parseExpression(text);
        expect(r.expr).toBeDefined();
      }),
      { numRuns: 600 },
    );
  });

  it('survives deep and unbalanced nesting', () => {
    for (const text of [
      '('.repeat(5000),
      '['.repeat(5000),
      '{'.repeat(5000),
      'mission M { action A { ' + 'for a in b { '.repeat(3000),
      'let x = ' + 'not '.repeat(5000) + 'y',
      'let x = ' + '-'.repeat(5000) + '1',
      'let x = ' + 'match a { 1 => '.repeat(2000),
      'schema S { a: ' + '['.repeat(3000) + 'int' + ']'.repeat(3000) + ' }',
      'mission M { action A { match r { _ -> ' + 'match r { _ -> '.repeat(2000) + ' continue } } }',
      '}'.repeat(1000) + ')'.repeat(1000),
    ]) {
      check(text);
    }
  });
});
