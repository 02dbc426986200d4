import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { anyOf, arm, bin, boom, ev, is, lit, match, num, ref, str } from './ast-builders.js';

describe('match expressions (§D.5)', () => {
  const tier = (score: unknown): unknown =>
    ev(
      match(
        ref('pm.score'),
        arm(ref('s'), str('gold'), bin('>=', ref('s'), num(800))),
        arm(ref('s'), str('silver'), bin('>=', ref('s'), num(500))),
        arm(null, str('none')),
      ),
      { vars: { pm: { score } } },
    );

  it.each<[unknown, string]>([
    [820, 'gold'],
    [800, 'gold'],
    [510, 'silver'],
    [499, 'none'],
    [null, 'none'], // a null score makes every ordering guard false (V2)
    [undefined, 'none'],
  ])('guarded binding arms: score %j → %s', (score, expected) => {
    expect(tier(score)).toBe(expected);
  });

  it('the binding outranks a same-named field of the current record and stays local', () => {
    const ctx = { current: { s: 1 }, vars: { x: 900 } };
    expect(ev(match(ref('x'), arm(ref('s'), ref('s'), bin('>', ref('s'), num(100)))), ctx)).toBe(900);
    // outside the arm, `s` is the current record's field again
    expect(ev(ref('s'), ctx)).toBe(1);
  });

  it('`.s` in the arm is still the record\'s field, and a binding of an absent subject is absent (helper 60: `.name` read the binder)', () => {
    const ctx = { current: { s: 1, name: 'Lamp', stock: 3 } };
    expect(ev(match(ref('.stock'), arm(ref('name'), ref('.name'), bin('>', ref('name'), num(0)))), ctx)).toBe('Lamp');
    expect(ev(match(ref('.stock'), arm(ref('s'), ref('s'), bin('>', ref('s'), num(0)))), ctx)).toBe(3);
    // The subject absent: `s` is absent in the arm, not the record's `s`.
    expect(ev(match(ref('.missing'), arm(ref('s'), str('absent'), bin('==', ref('s'), lit(null)))), ctx)).toBe('absent');
  });

  it('the binding does not leak into the enclosing scope', () => {
    const options = { vars: {} as Record<string, unknown> };
    expect(ev(match(num(5), arm(ref('n'), ref('n'), bin('>', ref('n'), num(1)))), options)).toBe(5);
    expect(ev(ref('n'), options)).toBeUndefined();
  });

  it('literal patterns compare with ===', () => {
    const grade = (last: unknown): unknown =>
      ev(match(ref('.last'), arm(str('L'), str('l-team')), arm(num(1), str('one')), arm(null, str('other'))), { current: { last } });
    expect(grade('L')).toBe('l-team');
    expect(grade(1)).toBe('one');
    expect(grade('1')).toBe('other');
  });

  it('patterns are evaluated expressions', () => {
    const expr = match(lit(true), arm(bin('>', ref('n'), num(3)), str('big')), arm(null, str('small')));
    expect(ev(expr, { vars: { n: 5 } })).toBe('big');
    expect(ev(expr, { vars: { n: 2 } })).toBe('small');
  });

  it('an unguarded identifier pattern compares with the variable', () => {
    const expr = match(num(2), arm(ref('wanted'), str('hit')), arm(null, str('miss')));
    expect(ev(expr, { vars: { wanted: 2 } })).toBe('hit');
    expect(ev(expr, { vars: { wanted: 3 } })).toBe('miss');
  });

  it('a guard on a literal pattern needs both', () => {
    const expr = match(str('a'), arm(str('a'), str('first'), ref('flag')), arm(str('a'), str('second')));
    expect(ev(expr, { vars: { flag: true } })).toBe('first');
    expect(ev(expr, { vars: { flag: false } })).toBe('second');
  });

  it('a guarded wildcard', () => {
    const expr = match(ref('response'), arm(null, str('ok'), bin('==', ref('.status'), str('succeeded'))), arm(null, str('failed')));
    expect(ev(expr, { response: { status: 'succeeded' } })).toBe('ok');
    expect(ev(expr, { response: { status: 'failed' } })).toBe('failed');
    expect(ev(match(num(1), arm(ref('_'), str('wild'))))).toBe('wild');
  });

  it('no matching arm gives undefined', () => {
    expect(ev(match(num(1), arm(num(2), str('two'))))).toBeUndefined();
  });

  it('stops at the first matching arm', () => {
    expect(ev(match(num(1), arm(num(1), str('one')), arm(num(1), boom())))).toBe('one');
  });
});

describe('any of', () => {
  const list = [{ id: 'p1', brand: 'visa' }, { id: 'p2', iban: 'GB00BANK' }, { id: 'p3', iban: 'X1' }];

  it('with where: the first item for which the condition holds, item as current', () => {
    expect(ev(anyOf(ref('list'), is(ref('.iban'), 'string')), { vars: { list } })).toEqual(list[1]);
    expect(ev(anyOf(ref('list'), bin('==', ref('.id'), str('zz'))), { vars: { list } })).toBeUndefined();
  });

  it('with where: the scope stays visible', () => {
    expect(ev(anyOf(ref('list'), bin('==', ref('.id'), ref('want'))), { vars: { list, want: 'p3' } })).toEqual(list[2]);
  });

  it('without where: picks floor(r * length) from the recorded random input', () => {
    expect(ev(anyOf(ref('list')), { vars: { list }, inputs: { random: 0 } })).toEqual(list[0]);
    expect(ev(anyOf(ref('list')), { vars: { list }, inputs: { random: 0.5 } })).toEqual(list[1]);
    expect(ev(anyOf(ref('list')), { vars: { list }, inputs: { random: 0.9999 } })).toEqual(list[2]);
    // a misbehaving source of randomness can never index out of range
    expect(ev(anyOf(ref('list')), { vars: { list }, inputs: { random: 1 } })).toEqual(list[2]);
    expect(ev(anyOf(ref('list')), { vars: { list }, inputs: { random: -3 } })).toEqual(list[0]);
  });

  it('an empty collection gives undefined without drawing a random number', () => {
    let draws = 0;
    expect(ev(anyOf(lit([])), { inputs: { random: () => (draws++, 0.5) } })).toBeUndefined();
    expect(draws).toBe(0);
  });

  it('a non-array collection is an error', () => {
    expect(() => ev(anyOf(num(128)))).toThrow(new EvaluatorError('R4001', "'any of' expected an array but got: number (128)", { start: 0, end: 0 }));
    expect(() => ev(anyOf(ref('missing')))).toThrow(/expected an array but got: absent \(no value\)$/);
  });
});
