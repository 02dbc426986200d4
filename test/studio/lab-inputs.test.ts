/**
 * The crash lab takes each value now()/random() returned to a run out of what it compares
 * (engine/server/lab-inputs.ts). Two now() calls in one millisecond return one value, so a value
 * cannot say which call it came from: a body built from the second call must compare equal across
 * two runs whether or not that run's two calls shared a millisecond. Before, a value stood for the
 * first place it was recorded at, and the ledger mission of e2e/crash-lab-changing-api.spec.ts
 * (`sentAt: now()` in a loop's POST) was judged "not fully checked" whenever the reference's
 * calls shared a millisecond and the armed run's did not.
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { varyingInputs, withoutRunSpecifics } from '../../engine/server/lab-inputs.js';

function recorded(seq: number, stepPath: string, source: string, value: unknown): StoredEvent {
  return { runId: 'r', seq, type: 'value.recorded', stepPath, payload: { source, value }, recordedAt: 0 } as StoredEvent;
}

describe('crash lab: the values now() and random() returned', () => {
  it('a value from the second of two now() calls compares equal whether or not the calls shared a millisecond', () => {
    const shared = [recorded(1, 'A/0', 'now', 1_000), recorded(2, 'A/1', 'now', 1_000)];
    const apart = [recorded(1, 'A/0', 'now', 1_000), recorded(2, 'A/1', 'now', 1_001)];
    const body = (ms: number) => ({ sentAt: new Date(ms).toISOString(), at: ms, n: 7 });
    const reference = withoutRunSpecifics(body(1_000), 'run-a', varyingInputs(shared));
    const armed = withoutRunSpecifics(body(1_001), 'run-b', varyingInputs(apart));
    expect(armed).toEqual(reference);
    expect(reference).toEqual({ sentAt: '<now()>', at: '<now()>', n: 7 });
  });

  it('takes out run ids and random() values, and leaves every other value as it is', () => {
    const events = [recorded(1, 'A/0', 'random', 0.25)];
    const value = withoutRunSpecifics({ id: 'ord-run-a-1', r: 0.25, other: 0.5, when: '2026-01-01T00:00:00.000Z' }, 'run-a', varyingInputs(events));
    expect(value).toEqual({ id: 'ord-<run>-1', r: '<random()>', other: 0.5, when: '2026-01-01T00:00:00.000Z' });
  });
});
