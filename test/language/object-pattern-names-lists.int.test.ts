/**
 * A declared schema's name inside an object pattern (`{ method: Card } -> …`) tests the key's
 * value against the schema, as `Card ->` tests the subject (docs/language.md: "a declared schema's
 * name keeps its meaning"). It was a binding that matched any non-null value: every payment was
 * classified by the first arm and the `{ method: Bank }` arm never ran, in a run that completed
 * (helper 66). In a match step and in a match expression alike; a name no schema declares still binds.
 * And a key's value may be a list pattern in a match step, as an arm's may: `{ data: [] }` an empty
 * list, `{ data: [one] }` a list of one item bound to `one`, `{ data: [Card] }` a list of cards —
 * refused by the parser before (E2001), while the docs give `[]` and `[name]` arms.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const PAYMENTS = `[
      { id: 1, method: { brand: "visa", last4: "4242" } },
      { id: 2, method: { iban: "GB00" } },
      { id: 3, method: "cash" }
    ]`;

const mission = (body: string) => `mission Pay {
  store s: memory("s")
  schema Card { brand: string, last4: string }
  schema Bank { iban: string }
  action A {
    let payments = ${PAYMENTS}
    for p in payments {
${body}
    }
  }
  run A
}
`;

describe('a schema name in an object pattern', () => {
  let c: Conformance;
  beforeEach(async () => {
    c = await openConformance({ backend: 'sqlite' });
  });
  afterEach(async () => {
    await c.close();
  });

  const kinds = async (body: string) => {
    const run = await c.start(c.mission('pay', mission(body)));
    expect(run.status, JSON.stringify(run)).toBe('completed');
    await c.expectVerified(run.runId);
    return Object.values(await c.store(run.runId, 's'));
  };

  it('tests the schema in a match step, and a plain name beside it still binds', async () => {
    expect(
      await kinds(`      match p {
        { method: Card, id: n } -> { store { id: n, kind: "card" } -> s { key: .id } },
        { method: Bank } -> { store { id: p.id, kind: "bank" } -> s { key: .id } },
        { method: m } -> { store { id: p.id, kind: m } -> s { key: .id } }
      }`),
    ).toEqual([
      { id: 1, kind: 'card' },
      { id: 2, kind: 'bank' },
      { id: 3, kind: 'cash' },
    ]);
  });

  it('binds the value it tested too, for the guard and the arm', async () => {
    // Helper 67: a schema's name that only tested left the guard reading nothing and `store Card` failing.
    expect(
      await kinds(`      match p {
        { method: Card } where Card.brand == "visa" -> { store { id: p.id, kind: "visa", last4: Card.last4 } -> s { key: .id } },
        { method: Card } -> { store { id: p.id, kind: "card" } -> s { key: .id } },
        _ -> { store { id: p.id, kind: "other" } -> s { key: .id } }
      }`),
    ).toEqual([
      { id: 1, kind: 'visa', last4: '4242' },
      { id: 2, kind: 'other' },
      { id: 3, kind: 'other' },
    ]);
  });

  it('tests the schema in a match expression, nested too', async () => {
    expect(
      await kinds(`      let kind = match p { { method: Card } => "card", { method: Bank } => "bank", _ => "other" }
      let wrapped = { payment: p }
      let nested = match wrapped { { payment: { method: Bank } } => "bank inside", _ => "no" }
      store { id: p.id, kind: kind, nested: nested } -> s { key: .id }`),
    ).toEqual([
      { id: 1, kind: 'card', nested: 'no' },
      { id: 2, kind: 'bank', nested: 'bank inside' },
      { id: 3, kind: 'other', nested: 'no' },
    ]);
  });

  it('takes list sub-patterns in a match step: [], [name], [Schema]', async () => {
    const run = await c.start(
      c.mission(
        'pages',
        `mission Pages {
  store s: memory("s")
  schema Card { brand: string, last4: string }
  action A {
    let pages = [{ id: "p1", data: [] }, { id: "p2", data: [{ x: 1 }] }, { id: "p3", data: [{ brand: "v", last4: "1" }, { brand: "m", last4: "2" }] }, { id: "p4", data: [{ x: 1 }, { x: 2 }] }, { id: "p5", data: "none" }]
    for pg in pages {
      match pg {
        { data: [] } -> { store { id: pg.id, kind: "empty" } -> s { key: .id } },
        { data: [one] } -> { store { id: pg.id, kind: "single", x: one.x } -> s { key: .id } },
        { data: [Card] } -> { store { id: pg.id, kind: "cards" } -> s { key: .id } },
        _ -> { store { id: pg.id, kind: "other" } -> s { key: .id } }
      }
    }
  }
  run A
}
`,
      ),
    );
    expect(run.status, JSON.stringify(run)).toBe('completed');
    await c.expectVerified(run.runId);
    expect(Object.values(await c.store(run.runId, 's'))).toEqual([
      { id: 'p1', kind: 'empty' },
      { id: 'p2', kind: 'single', x: 1 },
      { id: 'p3', kind: 'cards' },
      { id: 'p4', kind: 'other' },
      { id: 'p5', kind: 'other' },
    ]);
  });
});
