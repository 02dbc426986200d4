/**
 * `validate x { assume … } or { … }` where an assumption cannot even be evaluated for a record
 * (`.price > 0` with price "10": R4008): the record failed validation, so the `or` block takes
 * it, and the run's output says why. It failed the step before, and in a loop the record landed
 * in neither store. Without an `or` block the step still fails with the evaluation error.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

describe('an assumption that cannot be evaluated', () => {
  it("takes the validate's or-block, says why, and replays", async () => {
    const files = c.mission(
      'validate',
      `mission ValidateOr {
  store good: memory("good")
  store bad: memory("bad")
  action A {
    for it in [{ id: 1, price: "10" }, { id: 2, price: 5 }, { id: 3, price: 0 }, { id: 4, price: 1, n: 0 }] {
      validate it { assume .price > 0, assume 10 / (.n ?? 1) > 1 } or {
        store it -> bad { key: .id }
        skip
      }
      store it -> good { key: .id }
    }
  }
  run A
}
`,
    );
    const progress: string[] = [];
    const result = await c.start(files, {}, { progress: (line: string) => progress.push(line) });
    expect(result.status === 'completed' ? result.tolerated : JSON.stringify(result)).toEqual([]);
    expect(Object.keys(await c.store(result.runId, 'good'))).toEqual(['2']);
    expect(Object.keys(await c.store(result.runId, 'bad'))).toEqual(['1', '3', '4']);
    const said = progress.filter((line) => line.includes('could not be evaluated'));
    expect(said).toHaveLength(2);
    expect(said[0]).toContain('`.price > 0` (line 6) could not be evaluated for the record with id 1');
    expect(said[0]).toContain('Cannot compare string ("10") with number (0)');
    expect(said[1]).toContain('Division by zero');
    await c.expectVerified(result.runId);
  });

  it('still fails a validate without an or-block, with the evaluation error', async () => {
    const files = c.mission(
      'validate',
      `mission ValidateOnly {
  store good: memory("good")
  action A {
    validate { price: "10" } { assume .price > 0 }
    store { id: 1 } -> good
  }
  run A
}
`,
    );
    const result = await c.start(files);
    expect(result.status === 'failed' ? result.error.code : result.status).toBe('R4008');
  });
});
