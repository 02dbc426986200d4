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
import { derivedId } from '../../engine/journal/derived-id.js';
import { RunSpecifics, withoutRunSpecifics } from '../../engine/server/lab-inputs.js';
import { comparableStores } from '../../engine/server/crash-lab.js';
import { diffStoreContents } from '../../engine/inspect/state-diff.js';

function recorded(seq: number, stepPath: string, source: string, value: unknown): StoredEvent {
  return { runId: 'r', seq, type: 'value.recorded', stepPath, payload: { source, value }, recordedAt: 0 } as StoredEvent;
}

describe('crash lab: the values now() and random() returned', () => {
  it('a value from the second of two now() calls compares equal whether or not the calls shared a millisecond', () => {
    const shared = [recorded(1, 'A/0', 'now', 1_000), recorded(2, 'A/1', 'now', 1_000)];
    const apart = [recorded(1, 'A/0', 'now', 1_000), recorded(2, 'A/1', 'now', 1_001)];
    const body = (ms: number) => ({ sentAt: new Date(ms).toISOString(), at: ms, n: 7 });
    const reference = withoutRunSpecifics(body(1_000), [new RunSpecifics('run-a', shared)]);
    const armed = withoutRunSpecifics(body(1_001), [new RunSpecifics('run-b', apart)]);
    expect(armed).toEqual(reference);
    expect(reference).toEqual({ sentAt: '<now()>', at: '<now()>', n: 7 });
  });

  it('takes out run ids and random() values, and leaves every other value as it is', () => {
    const events = [recorded(1, 'A/0', 'random', 0.25)];
    const value = withoutRunSpecifics({ id: 'ord-run-a-1', r: 0.25, other: 0.5, when: '2026-01-01T00:00:00.000Z' }, [new RunSpecifics('run-a', events)]);
    expect(value).toEqual({ id: 'ord-<run>-1', r: '<random()>', other: 0.5, when: '2026-01-01T00:00:00.000Z' });
  });
});

describe('crash lab: a now() or random() value written into a text', () => {
  it('is taken out of it, so a key built from the clock is no store difference (probe 111 K1)', () => {
    const stored = (run: string, ms: number, r: number) => ({
      key: `p1-1@${new Date(ms).toISOString()}`,
      record: { id: `p1-1@${new Date(ms).toISOString()}`, note: `${run}: at ${ms}, draw ${r}` },
    });
    const reference = withoutRunSpecifics(stored('run-a', 1_733_450_000_000, 0.8123456), [
      new RunSpecifics('run-a', [recorded(1, 'A/0', 'now', 1_733_450_000_000), recorded(2, 'A/0', 'random', 0.8123456)]),
    ]);
    const armed = withoutRunSpecifics(stored('run-b', 1_733_450_009_999, 0.1234567), [
      new RunSpecifics('run-b', [recorded(1, 'A/0', 'now', 1_733_450_009_999), recorded(2, 'A/0', 'random', 0.1234567)]),
    ]);
    expect(armed).toEqual(reference);
    expect(reference).toEqual({ key: 'p1-1@<now()>', record: { id: 'p1-1@<now()>', note: '<run>: at <now()>, draw <random()>' } });
  });

  it('keeps records apart whose keys become one (a record a crash wrote twice, at two instants): a difference, never merged into a match (helper 110)', () => {
    const key = (ms: number) => `p1-1@${new Date(ms).toISOString()}`;
    const store = (...ms: number[]) => [{ name: 'f', kind: 'file', records: ms.map((t) => ({ key: key(t), record: { id: key(t), v: 1 } })) }];
    const reference = comparableStores(store(1_733_450_000_000), [new RunSpecifics('run-a', [recorded(1, 'A/0', 'now', 1_733_450_000_000)])]);
    const twice = comparableStores(store(1_733_450_009_000, 1_733_450_009_500), [
      new RunSpecifics('run-b', [recorded(1, 'A/0', 'now', 1_733_450_009_000), recorded(2, 'A/0', 'now', 1_733_450_009_500)]),
    ]);
    expect(twice[0]!.records.map((r) => r.key)).toEqual(['p1-1@<now()>', 'p1-1@<now()> (2)']);
    expect(diffStoreContents(reference, twice)).not.toEqual([]);
    // Written once, it matches.
    const once = comparableStores(store(1_733_450_009_000), [new RunSpecifics('run-b', [recorded(1, 'A/0', 'now', 1_733_450_009_000)])]);
    expect(diffStoreContents(reference, once)).toEqual([]);
  });

  it('leaves a text with another instant, a computed number or a short random() as it is: a difference the lab reports', () => {
    const run = new RunSpecifics('run-a', [recorded(1, 'A/0', 'now', 1_733_450_000_000), recorded(2, 'A/0', 'random', 0.5)]);
    const value = { later: `due ${new Date(1_733_450_000_000 + 3_600_000).toISOString()}`, sum: `t=${1_733_450_000_000 + 1}`, half: 'x 0.5 y', price: 'EUR 1733450000000.5' };
    expect(withoutRunSpecifics(value, [run])).toEqual(value);
  });
});

function step(seq: number, stepPath: string): StoredEvent {
  return { runId: 'r', seq, type: 'step.started', stepPath, payload: { stepType: 'Store', line: 1 }, recordedAt: 0 } as StoredEvent;
}

describe('crash lab: the ids generateId() derived', () => {
  const events = [step(1, 'A/1[0]/0'), step(2, 'A/1[0]/1'), step(3, 'A/1[1]/0')];
  const runA = new RunSpecifics('run-a', events);
  const runB = new RunSpecifics('run-b', events);

  it('an id generated at the same step, as its same nth, compares equal, prefix and all', () => {
    const stored = (run: string) => ({ id: derivedId(run, 'A/1[0]/1', 0), note: `n_${derivedId(run, 'A/1[0]/1', 1)}` });
    expect(withoutRunSpecifics(stored('run-b'), [runB])).toEqual(withoutRunSpecifics(stored('run-a'), [runA]));
    expect(withoutRunSpecifics(stored('run-a'), [runA])).toEqual({ id: '<generateId() at A/1[0]/1 #0>', note: 'n_<generateId() at A/1[0]/1 #1>' });
  });

  it('an id generated at another step, or another run\'s id, stays a difference', () => {
    expect(withoutRunSpecifics({ id: derivedId('run-b', 'A/1[1]/0', 0) }, [runB])).not.toEqual(withoutRunSpecifics({ id: derivedId('run-a', 'A/1[0]/0', 0) }, [runA]));
    // An id of a third run (or a UUID the API made up) is none of this run's.
    const foreign = derivedId('run-c', 'A/1[0]/0', 0);
    expect(withoutRunSpecifics({ id: foreign }, [runA])).toEqual({ id: foreign });
  });

  it('a run served the reference\'s answers is normalised with the reference\'s values too', () => {
    const reference = new RunSpecifics('run-a', [...events, recorded(4, 'A/1[0]/0', 'now', 5_000)]);
    const armed = new RunSpecifics('run-b', [...events, recorded(4, 'A/1[0]/0', 'now', 9_000)]);
    // The API echoed what the reference sent; the armed run was answered from its recording.
    const echo = { ref: derivedId('run-a', 'A/1[0]/0', 0), at: new Date(5_000).toISOString() };
    const storedByReference = withoutRunSpecifics(echo, [reference]);
    expect(withoutRunSpecifics(echo, [armed, reference])).toEqual(storedByReference);
    expect(withoutRunSpecifics(echo, [armed])).not.toEqual(storedByReference);
  });
});
