/**
 * Values the evaluator got wrong, run end to end against a FakeApi on 127.0.0.1 and verified
 * (a replay derives the same records): years 0000–0099 (read as 1900–1999), `instant + ms` (it
 * concatenated), `round` of negative halves (toward +∞), `absent is null` (false while
 * `absent == null` was true), a `for` over an absent value (its message said "undefined"), and
 * arithmetic past a 64-bit float (Infinity, stored as null).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance({ env: (real) => ({ ...real, clock: new FakeClock(Date.parse('2026-03-01T00:00:00Z')) }) });
});

afterEach(async () => {
  await c.close();
});

async function runToCompletion(text: string): Promise<Record<string, unknown>> {
  const result = await c.start(c.mission('values', text));
  expect(result.status === 'completed' ? result.tolerated : JSON.stringify(result)).toEqual([]);
  await c.expectVerified(result.runId);
  return c.store(result.runId, 'out');
}

describe('runtime values', () => {
  it('reads years 0000–0099 as written', async () => {
    const out = await runToCompletion(`mission Years {
  store out: memory("out")
  action A {
    store { id: "y", p: parseDate("0001-01-01T00:00:00"), cmp: "0050-01-01" > "1949-06-01",
            diff: "0001-01-02T00:00:00Z" - "0001-01-01T00:00:00Z", add: addDays("0001-01-01", 1) } -> out { key: .id }
  }
  run A
}
`);
    expect(out).toEqual({ y: { id: 'y', p: '0001-01-01T00:00:00.000Z', cmp: false, diff: 86_400_000, add: '0001-01-02' } });
  });

  it('adds milliseconds to an instant', async () => {
    const out = await runToCompletion(`mission NowPlus {
  store out: memory("out")
  action A {
    store { id: "t", tomorrow: now() + days(1), later: parseDate("2024-01-01") + hours(1), before: minutes(1) + "2024-01-01T00:00:00Z",
            text: "day " + 1 } -> out { key: .id }
  }
  run A
}
`);
    expect(out).toEqual({
      t: { id: 't', tomorrow: '2026-03-02T00:00:00.000Z', later: '2024-01-01T01:00:00.000Z', before: '2024-01-01T00:01:00.000Z', text: 'day 1' },
    });
  });

  it('rounds halves away from zero, on the decimal digits', async () => {
    const out = await runToCompletion(`mission RoundNeg {
  store out: memory("out")
  action A {
    store { id: "r", a: round(1.005, 2), b: round(-1.005, 2), c: round(2.5), d: round(-2.5), e: round(1.45, 1), f: round(-1.45, 1) } -> out { key: .id }
  }
  run A
}
`);
    expect(out).toEqual({ r: { id: 'r', a: 1.01, b: -1.01, c: 3, d: -3, e: 1.5, f: -1.5 } });
  });

  it('takes an absent value for null in `is null`, and names it absent when a loop needs a list', async () => {
    const files = c.mission(
      'isnull',
      `mission IsNull {
  store out: memory("out")
  action A {
    let r = { n: null }
    store { id: "x", eq: r.nope == null, isn: r.nope is null, isu: r.nope is undefined, nIsU: r.n is undefined } -> out { key: .id }
    for x in r.nope { store x -> out { key: .id } }
  }
  run A
}
`,
    );
    const result = await c.start(files);
    expect(await c.store(result.runId, 'out')).toEqual({ x: { id: 'x', eq: true, isn: true, isu: true, nIsU: false } });
    expect(result.status === 'failed' ? result.error.message : result.status).toBe(
      'For loop collection must be an array, but `r.nope` is absent (no value); loop over `(r.nope ?? [])` to run zero times when it has none',
    );
    await c.expectVerified(result.runId);
  });

  it('fails on a number beyond a 64-bit float rather than store it as null, and reads "1e999" as no number', async () => {
    const result = await c.start(
      c.mission(
        'overflow',
        `mission Overflow {
  store out: memory("out")
  action A {
    let big = parseNumber("1e300")
    store { id: "ok", big: big, p: parseNumber("1e999") } -> out { key: .id }
    store { id: "over", v: big * big } -> out { key: .id }
  }
  run A
}
`,
      ),
    );
    expect(result.status === 'failed' ? result.error.message : result.status).toBe(
      '1e+300 * 1e+300 gives Infinity, beyond what a number can hold (a 64-bit float); a run cannot store, send or log it',
    );
    // Before, the run completed with `v: null` stored, and a replay read null back.
    expect(await c.store(result.runId, 'out')).toEqual({ ok: { id: 'ok', big: 1e300, p: null } });
    await c.expectVerified(result.runId);
  });
});

