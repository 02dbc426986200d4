/**
 * Long strings in the state (engine/inspect/state-slice.ts): a run whose state held one 20 MB
 * string shipped it whole and froze the State tab ~40 s drawing it. A string past TEXT_LIMIT
 * now arrives as a window of characters named in `slices` (`unit: 'chars'`), in the response,
 * the variables, the event and inside a store's records; a request pages to other characters.
 */
import { describe, expect, it } from 'vitest';
import { sliceState, TEXT_LIMIT } from '../../engine/inspect/state-slice.js';
import type { RunState } from '../../engine/protocol/protocol.js';

function state(over: Partial<RunState> = {}): RunState {
  return { runId: 'r', seq: 9, event: null, stores: [], variables: {}, response: null, checkpoints: [], pending: [], currentStep: null, ...over };
}
const big = 'y'.repeat(3 * TEXT_LIMIT + 10);

describe('sliceState on long strings', () => {
  it('sends the first TEXT_LIMIT characters of a long string and says how long it is', () => {
    const out = sliceState(state({ response: { id: 'one', s: big }, variables: { v: big, short: 'ok' } }));
    expect((out.response as { s: string }).s).toHaveLength(TEXT_LIMIT);
    expect((out.response as { id: string }).id).toBe('one');
    expect(out.variables).toEqual({ v: 'y'.repeat(TEXT_LIMIT), short: 'ok' });
    expect(out.slices).toEqual([
      { where: 'response', path: '$.s', from: 0, count: TEXT_LIMIT, total: big.length, unit: 'chars' },
      { where: 'variables', path: '$.v', from: 0, count: TEXT_LIMIT, total: big.length, unit: 'chars' },
    ]);
  });

  it('pages to the characters asked for, clamped to the string; a whole-string value too', () => {
    const text = Array.from({ length: 3 * TEXT_LIMIT }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const out = sliceState(state({ response: text }), [{ where: 'response', path: '$', from: 10 * TEXT_LIMIT }]);
    expect(out.response).toBe(text.slice(2 * TEXT_LIMIT));
    expect(out.slices).toEqual([{ where: 'response', path: '$', from: 2 * TEXT_LIMIT, count: TEXT_LIMIT, total: text.length, unit: 'chars' }]);
  });

  it('never splits a surrogate pair', () => {
    const text = 'a'.repeat(TEXT_LIMIT - 1) + '😀'.repeat(10);
    const out = sliceState(state({ response: text }));
    expect(out.response).toBe('a'.repeat(TEXT_LIMIT - 1));
    expect(out.slices![0]!.count).toBe(TEXT_LIMIT - 1);
  });

  it('cuts strings inside a store\'s records, named by the record\'s place in the list', () => {
    const stores = [{ name: 'S', kind: 'memory', records: [{ key: 'a', record: { n: 1 } }, { key: 'b', record: { s: big } }] }] as unknown as RunState['stores'];
    const out = sliceState(state({ stores }));
    expect((out.stores[0]!.records[1]!.record as { s: string }).s).toHaveLength(TEXT_LIMIT);
    expect(out.stores[0]!.records[0]).toBe(stores[0]!.records[0]);
    expect(out.slices).toEqual([{ where: 'store:S', path: '$[1].record.s', from: 0, count: TEXT_LIMIT, total: big.length, unit: 'chars' }]);
    // Short strings, and a state without any, pass through as the same objects.
    const small = state({ response: { s: 'x'.repeat(TEXT_LIMIT) } });
    expect(sliceState(small).response).toBe(small.response);
  });
});
