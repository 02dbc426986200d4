import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { matchesSchema, matchesSchemaArray } from '../../engine/eval/schema-match.js';
import { applyTransform, evaluateFieldMap } from '../../engine/eval/transform.js';
import type { SchemaDecl } from '../../engine/lang/ast.js';
import { SCHEMA_TYPE_NAMES } from '../../engine/lang/builtin-names.js';
import {
  arrayOf,
  bin,
  call,
  ctxOf,
  field,
  mapping,
  num,
  objectOf,
  ref,
  schema,
  str,
  transform,
  variant,
} from './ast-builders.js';

const card = schema('Card', field('brand', 'string'), field('last4', 'string'));
const bank = schema('Bank', field('iban', 'string'));
const table = (...decls: SchemaDecl[]): Map<string, SchemaDecl> => new Map(decls.map((d) => [d.name.name, d]));

describe('matchesSchema (§B.5)', () => {
  const schemas = table(card, bank);

  // The checker's list (E3054 for any other name) and the matcher's types are one set: each
  // listed name but `any` refuses some value, and a name not listed matches anything.
  it.each(SCHEMA_TYPE_NAMES.filter((name) => name !== 'any'))('the built-in field type %s is a type the matcher knows', (name) => {
    const typed = schema('Typed', field('v', name));
    expect(matchesSchema({ v: Symbol('no JSON value') }, typed, schemas)).toBe(false);
    expect(matchesSchema({ v: Symbol('no JSON value') }, schema('Loose', field('v', 'Unlisted')), schemas)).toBe(true);
  });

  it.each<[unknown, boolean]>([
    [{ brand: 'visa', last4: '4242' }, true],
    [{ brand: 'visa', last4: '4242', extra: 1 }, true], // extra fields allowed
    [{ brand: 'visa' }, false], // required field missing
    [{ brand: 'visa', last4: 4242 }, false], // wrong type
    [{ brand: 'visa', last4: null }, false], // required field holding null
    [null, false],
    [[{ brand: 'visa', last4: '1' }], false],
    ['visa', false],
  ])('Card matches %j → %s', (value, expected) => {
    expect(matchesSchema(value, card, schemas)).toBe(expected);
  });

  it.each<[string, unknown, boolean]>([
    ['string', 's', true],
    ['string', 1, false],
    ['int', 3, true],
    ['integer', 3.5, false],
    ['decimal', 3.5, true],
    ['number', '3', false],
    ['float', 1, true],
    ['double', Number.NaN, false],
    ['boolean', false, true],
    ['bool', 0, false],
    ['date', '2024-01-01', true],
    ['datetime', '2024-01-01T10:00:00Z', true],
    ['date', 'tomorrow', false],
    ['any', null, true],
    ['array', [], true],
    ['array', {}, false],
    ['object', {}, true],
    ['object', [], false],
    ['Whatever', 42, true], // unknown type names are permissive
    ['String', 1, false], // type names are case-insensitive
  ])('a field of type %s holding %j → %s', (type, value, expected) => {
    const s = schema('S', field('v', type));
    expect(matchesSchema({ v: value }, s, table(s))).toBe(expected);
  });

  it('optional fields may be absent or null, but not the wrong type', () => {
    const s = schema('S', field('id', 'string'), field('note', 'string', true));
    expect(matchesSchema({ id: 'a' }, s, table(s))).toBe(true);
    expect(matchesSchema({ id: 'a', note: null }, s, table(s))).toBe(true);
    expect(matchesSchema({ id: 'a', note: 5 }, s, table(s))).toBe(false);
  });

  it('nested named schemas, array types and object types', () => {
    const address = schema('Address', field('city', 'string'));
    const person = schema(
      'Person',
      field('home', 'Address'),
      field('tags', arrayOf({ kind: 'NamedType', name: 'string', start: 0, end: 0 })),
      field('meta', objectOf([field('v', 'int')])),
    );
    const schemas = table(address, person);
    const ok = { home: { city: 'Oslo' }, tags: ['a'], meta: { v: 1 } };
    expect(matchesSchema(ok, person, schemas)).toBe(true);
    expect(matchesSchema({ ...ok, home: { town: 'x' } }, person, schemas)).toBe(false);
    expect(matchesSchema({ ...ok, tags: ['a', 2] }, person, schemas)).toBe(false);
    expect(matchesSchema({ ...ok, tags: [] }, person, schemas)).toBe(true);
    expect(matchesSchema({ ...ok, meta: { v: 1.5 } }, person, schemas)).toBe(false);
  });

  it('a recursive schema matches finite trees', () => {
    const node = schema('Node', field('name', 'string'), field('children', arrayOf({ kind: 'NamedType', name: 'Node', start: 0, end: 0 }), true));
    const schemas = table(node);
    expect(matchesSchema({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }, node, schemas)).toBe(true);
    expect(matchesSchema({ name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] }, node, schemas)).toBe(false);
  });

  it('matchesSchemaArray: every element, empty arrays match, non-arrays do not', () => {
    const schemas = table(card);
    expect(matchesSchemaArray([{ brand: 'a', last4: '1' }, { brand: 'b', last4: '2' }], card, schemas)).toBe(true);
    expect(matchesSchemaArray([{ brand: 'a', last4: '1' }, { brand: 'b' }], card, schemas)).toBe(false);
    expect(matchesSchemaArray([], card, schemas)).toBe(true);
    expect(matchesSchemaArray({ brand: 'a', last4: '1' }, card, schemas)).toBe(false);
  });
});

describe('applyTransform (§C.4) — the H6 ToMethod variants', () => {
  const toMethod = transform(
    'ToMethod',
    variant('Card', 'Method', [mapping('kind', str('card')), mapping('ref', bin('+', bin('+', ref('.brand'), str('-')), ref('.last4')))]),
    variant('Bank', 'Method', [mapping('kind', str('bank')), mapping('ref', ref('.iban'))], bin('>', call('length', ref('.iban')), num(4))),
    variant('_', 'Method', [mapping('kind', str('unknown')), mapping('ref', str('n/a'))]),
  );
  const schemas = table(card, bank);

  it.each<[unknown, unknown]>([
    [{ id: 'p1', brand: 'visa', last4: '4242', score: 820, tags: ['vip'] }, { kind: 'card', ref: 'visa-4242' }],
    [{ id: 'p2', iban: 'GB00BANK', score: 510 }, { kind: 'bank', ref: 'GB00BANK' }],
    // p3 matches Bank but fails the guard (length 2), so the wildcard variant applies
    [{ id: 'p3', iban: 'X1', score: null, tags: ['a', 'b'] }, { kind: 'unknown', ref: 'n/a' }],
  ])('%j → %j', (value, expected) => {
    expect(applyTransform(toMethod, value, ctxOf(), schemas)).toEqual(expected);
  });

  it('returns exactly the variant fields, in order', () => {
    const out = applyTransform(toMethod, { brand: 'a', last4: '1', secret: 'x' }, ctxOf(), schemas);
    expect(Object.keys(out as object)).toEqual(['kind', 'ref']);
  });

  it('the unconditional form always applies', () => {
    const anything = transform('Anything', variant(null, 'Tag', [mapping('text', str('x'))]));
    expect(applyTransform(anything, 42, ctxOf(), schemas)).toEqual({ text: 'x' });
  });

  it('no matching variant is an error naming the transform', () => {
    const label = transform('Label', variant('Card', 'Tag', [mapping('text', ref('.brand'))]));
    let error: unknown;
    try {
      applyTransform(label, { iban: 'x' }, ctxOf(), schemas);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EvaluatorError);
    expect((error as EvaluatorError).code).toBe('R4009');
    expect((error as EvaluatorError).message).toBe('No matching transform variant for `Label`; the value was: object ({"iban":"x"})');
  });

  it('skips (and reports) a variant naming an undeclared schema', () => {
    const t = transform('T', variant('Ghost', 'X', [mapping('v', num(1))]), variant(null, 'X', [mapping('v', num(2))]));
    const warnings: string[] = [];
    expect(applyTransform(t, {}, ctxOf(), schemas, (m) => warnings.push(m))).toEqual({ v: 2 });
    expect(warnings).toEqual(['Transform `T` skips a variant for the undeclared schema `Ghost`']);
  });

  it('guards and mappings see the scope as well as the value', () => {
    const t = transform('T', variant(null, 'X', [mapping('v', bin('+', ref('.n'), ref('offset')))], bin('>', ref('offset'), num(0))));
    expect(applyTransform(t, { n: 1 }, ctxOf({ vars: { offset: 10 } }), schemas)).toEqual({ v: 11 });
  });

  it("a bare name is the value's field before a variable of the action applying it, in guards and mappings", () => {
    // Helper 66: `let status = "open"` and `let name` in the applying action chose the guarded
    // variant for a closed record and filled its label: the transform mapped by who applied it.
    const t = transform(
      'T',
      variant(null, 'X', [mapping('label', ref('name')), mapping('kind', str('open'))], bin('==', ref('status'), str('open'))),
      variant(null, 'X', [mapping('label', ref('name')), mapping('kind', str('other'))]),
    );
    const caller = ctxOf({ vars: { name: 'report-2024', status: 'open' } });
    expect(applyTransform(t, { name: 'Cy', status: 'closed' }, caller, schemas)).toEqual({ label: 'Cy', kind: 'other' });
    expect(applyTransform(t, { name: 'Ann', status: 'open' }, caller, schemas)).toEqual({ label: 'Ann', kind: 'open' });
    // A field the value lacks is still the action's variable (§D.2: the record, then variables).
    expect(applyTransform(t, { status: 'closed' }, caller, schemas)).toEqual({ label: 'report-2024', kind: 'other' });
    // A field that is null is the value's null, not the variable.
    expect(applyTransform(t, { name: null, status: 'open' }, caller, schemas)).toEqual({ label: null, kind: 'open' });
  });
});

describe('evaluateFieldMap (used by map)', () => {
  it('evaluates each field in order with the given current record', () => {
    const ctx = ctxOf({ current: { first: 'Ada', last: 'L', age: 36 } });
    const out = evaluateFieldMap(
      [mapping('label', bin('+', bin('+', ref('.first'), str(' ')), ref('.last'))), mapping('left', bin('-', num(100), ref('.age')))],
      ctx,
    );
    expect(out).toEqual({ label: 'Ada L', left: 64 });
    expect(Object.keys(out)).toEqual(['label', 'left']);
  });
});
