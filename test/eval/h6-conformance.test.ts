/**
 * §H6 of reqon-reference.md at the expression level: the mission is parsed, and its steps are
 * replayed by hand — `let`s, `apply`s and the `store` object literal evaluated with the scope and
 * `response` the executor would give them — for each payment. The records must equal the
 * expected `out` records exactly.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../engine/eval/evaluate.js';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope, type EvalContext } from '../../engine/eval/scope.js';
import { applyTransform } from '../../engine/eval/transform.js';
import type { ActionDecl, ApplyStep, ForStep, LetStep, MissionDecl, SchemaDecl, Step, StoreStep, TransformDecl } from '../../engine/lang/ast.js';
import { parseProgram } from '../../engine/lang/parser.js';

const H6 = `
mission Transforms {
  source Api { auth: none, base: "http://fake.test" }
  store out: memory("out")
  schema Card { brand: string, last4: string }
  schema Bank { iban: string }
  transform Label: Card -> Tag { text: .brand }
  transform Anything -> Tag { text: "x" }
  transform ToMethod {
    (Card) -> Method { kind: "card", ref: .brand + "-" + .last4 },
    (Bank) where length(.iban) > 4 -> Method { kind: "bank", ref: .iban },
    (_) -> Method { kind: "unknown", ref: "n/a" }
  }
  action Run {
    get "/payments"
    let list = response
    let firstBank = any of list where .iban is string
    for pm in list {
      apply Anything to pm
      apply ToMethod to pm as method
      let tier = match pm.score { s where s >= 800 => "gold", s where s >= 500 => "silver", _ => "none" }
      store {
        ...method,
        id: pm.id,
        tier: tier,
        tags: pm.tags ?? ["none"],
        first: pm.tags[0] ?? "none",
        vip: "vip" in (pm.tags ?? ["x"]),
        scored: pm.score is number,
        total: round(sum([pm.score ?? 0, 0.6])),
        tag: concat("#", pm.id, "/", length(list)),
        bank: firstBank.id,
        stats: { n: count(list), lo: min(1, 5), hi: max([3, 9]), fl: floor(2.7), ce: ceil(2.1),
                 ab: abs(-4), pn: parseNumber("7.5"), fu: fromUnix(0), r: range(2, 5) }
      } -> out { key: .id }
    }
  }
  run Run
}
`;

const PAYMENTS = [
  { id: 'p1', brand: 'visa', last4: '4242', score: 820, tags: ['vip'] },
  { id: 'p2', iban: 'GB00BANK', score: 510 },
  { id: 'p3', iban: 'X1', score: null, tags: ['a', 'b'] },
];

const STATS = { n: 3, lo: 1, hi: 9, fl: 2, ce: 3, ab: 4, pn: 7.5, fu: '1970-01-01T00:00:00.000Z', r: [2, 3, 4] };

const EXPECTED: Record<string, unknown> = {
  p1: { kind: 'card', ref: 'visa-4242', id: 'p1', tier: 'gold', tags: ['vip'], first: 'vip', vip: true, scored: true, total: 821, tag: '#p1/3', bank: 'p2', stats: STATS },
  p2: { kind: 'bank', ref: 'GB00BANK', id: 'p2', tier: 'silver', tags: ['none'], first: 'none', vip: false, scored: true, total: 511, tag: '#p2/3', bank: 'p2', stats: STATS },
  p3: { kind: 'unknown', ref: 'n/a', id: 'p3', tier: 'none', tags: ['a', 'b'], first: 'a', vip: false, scored: false, total: 1, tag: '#p3/3', bank: 'p2', stats: STATS },
};

function only<K extends Step['kind']>(steps: Step[], kind: K): Extract<Step, { kind: K }>[] {
  return steps.filter((s): s is Extract<Step, { kind: K }> => s.kind === kind);
}

/** Runs the Run action's steps after the fetch, the way the executor would, collecting store records. */
function runH6(): Record<string, unknown> {
  const { program, diagnostics } = parseProgram(H6, 'h6.vague');
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const mission = program.items.find((i): i is MissionDecl => i.kind === 'Mission')!;
  const schemas = new Map<string, SchemaDecl>(mission.schemas.map((s) => [s.name.name, s]));
  const transforms = new Map<string, TransformDecl>(mission.transforms.map((t) => [t.name.name, t]));
  const action: ActionDecl = mission.actions[0]!;
  const [fetch, letList, letBank, loop] = action.steps as [Step, LetStep, LetStep, ForStep];
  expect([fetch.kind, letList.kind, letBank.kind, loop.kind]).toEqual(['Fetch', 'Let', 'Let', 'For']);

  const inputs = fixedInputs();
  const actionScope = new Scope().child();
  const actionCtx: EvalContext = { scope: actionScope, response: PAYMENTS, inputs };
  actionScope.set(letList.name.name, evaluate(letList.value, actionCtx));
  actionScope.set(letBank.name.name, evaluate(letBank.value, actionCtx));

  const out: Record<string, unknown> = {};
  const collection = evaluate(loop.collection, actionCtx) as unknown[];
  for (const item of collection) {
    const scope = actionScope.child();
    scope.set(loop.variable.name, item);
    const ctx: EvalContext = { scope, response: actionCtx.response, inputs };
    for (const step of loop.body) {
      switch (step.kind) {
        case 'Apply': {
          const apply = step as ApplyStep;
          const result = applyTransform(transforms.get(apply.transform.name)!, evaluate(apply.target, ctx), ctx, schemas);
          if (apply.as) scope.set(apply.as.name, result);
          else ctx.response = result;
          break;
        }
        case 'Let':
          scope.set(step.name.name, evaluate(step.value, ctx));
          break;
        case 'Store': {
          const store = step as StoreStep;
          const record = evaluate(store.source, ctx);
          const key = evaluate(store.key!, { ...ctx, current: record });
          out[String(key)] = record;
          break;
        }
        default:
          throw new Error(`unexpected step ${step.kind}`);
      }
    }
  }
  expect(only(loop.body, 'Store')).toHaveLength(1);
  return out;
}

describe('§H6 store records, evaluated from the parsed mission', () => {
  const out = runH6();

  it('produces exactly the three expected records', () => {
    expect(Object.keys(out).sort()).toEqual(['p1', 'p2', 'p3']);
  });

  it.each(['p1', 'p2', 'p3'])('record %s', (key) => {
    expect(out[key]).toEqual(EXPECTED[key]);
    // and with the spread's keys first, then the literal's own keys in order
    expect(Object.keys(out[key] as object)).toEqual(Object.keys(EXPECTED[key] as object));
  });

  it('the single-variant `Label: Card -> Tag` applies to a card and refuses a bank account', () => {
    const { program } = parseProgram(H6, 'h6.vague');
    const mission = program.items.find((i): i is MissionDecl => i.kind === 'Mission')!;
    const schemas = new Map<string, SchemaDecl>(mission.schemas.map((s) => [s.name.name, s]));
    const label = mission.transforms.find((t) => t.name.name === 'Label')!;
    const ctx: EvalContext = { scope: new Scope(), response: null, inputs: fixedInputs() };
    expect(applyTransform(label, PAYMENTS[0], ctx, schemas)).toEqual({ text: 'visa' });
    expect(() => applyTransform(label, PAYMENTS[1], ctx, schemas)).toThrow('No matching transform variant for `Label`');
  });
});
