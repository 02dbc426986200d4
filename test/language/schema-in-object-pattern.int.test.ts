/**
 * A declared schema's name inside an object pattern (`{ method: Card } -> …`) tests the key's
 * value against the schema, as `Card ->` tests the subject (docs/language.md: "a declared schema's
 * name keeps its meaning"). It was a binding that matched any non-null value: every payment was
 * classified by the first arm and the `{ method: Bank }` arm never ran, in a run that completed
 * (helper 66). In a match step and in a match expression alike; a name no schema declares still binds.
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
});
