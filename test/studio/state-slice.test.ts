/**
 * State cut to windows (engine/inspect/state-slice.ts): big arrays in the response, variables,
 * event payload and stores arrive as a window of SLICE_LIMIT items named in `slices`; a request
 * picks another window; small values pass through untouched (the same objects).
 */
import { describe, expect, it } from 'vitest';
import { sliceState } from '../../engine/inspect/state-slice.js';
import type { RunState } from '../../engine/protocol/protocol.js';

const records = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, lines: Array.from({ length: i === 7 ? 1200 : 2 }, (_, j) => j) }));

function state(over: Partial<RunState> = {}): RunState {
  return { runId: 'r', seq: 9, event: null, stores: [], variables: {}, response: null, checkpoints: [], pending: [], currentStep: null, ...over };
}

describe('sliceState', () => {
  it('sends the first window of a big response and names it, nested arrays too', () => {
    const response = records(25_000);
    const out = sliceState(state({ response }), [], 500);
    const sent = out.response as ReturnType<typeof records>;
    expect(sent).toHaveLength(500);
    expect(sent[0]).toBe(response[0]); // untouched items are the same objects
    expect(sent[7]!.lines).toHaveLength(500);
    expect(response[7]!.lines).toHaveLength(1200); // the fold's state is not changed
    expect(out.slices).toEqual([
      { where: 'response', path: '$', from: 0, count: 500, total: 25_000 },
      { where: 'response', path: '$[7].lines', from: 0, count: 500, total: 1200 },
    ]);
  });

  it('sends the window a request asks for, clamped to the array', () => {
    const response = records(25_000);
    const out = sliceState(state({ response }), [{ where: 'response', path: '$', from: 24_800 }], 500);
    expect((out.response as { id: string }[])[0]!.id).toBe('r24500');
    expect(out.slices![0]).toEqual({ where: 'response', path: '$', from: 24_500, count: 500, total: 25_000 });
    const nested = sliceState(state({ variables: { order: { items: records(2000) } } }), [{ where: 'variables', path: '$.order.items', from: 1000 }], 500);
    expect((nested.variables.order as { items: { id: string }[] }).items[0]!.id).toBe('r1000');
  });

  it('cuts a big store to a window and leaves small values as they are', () => {
    const big = { name: 'orders', kind: 'sql', records: records(1200).map((r) => ({ key: r.id, record: r })) };
    const small = { name: 'audit', kind: 'memory', records: [{ key: 'a', record: { id: 'a' } }] };
    const variables = { x: [1, 2, 3] };
    const out = sliceState(state({ stores: [big, small], variables }), [{ where: 'store:orders', path: '$', from: 500 }], 500);
    expect(out.stores[0]!.records.map((r) => r.key).slice(0, 2)).toEqual(['r500', 'r501']);
    expect(out.stores[1]).toBe(small);
    expect(out.variables).toBe(variables);
    expect(out.slices).toEqual([{ where: 'store:orders', path: '$', from: 500, count: 500, total: 1200 }]);
  });
});

describe('run.stateAt windows from a request', () => {
  it('takes well-formed windows and refuses others with the field named', async () => {
    const { valueWindows } = await import('../../engine/server/request-fields.js');
    expect(valueWindows('run.stateAt', {})).toEqual([]);
    expect(valueWindows('run.stateAt', { windows: [{ where: 'response', path: '$', from: 500 }] })).toEqual([{ where: 'response', path: '$', from: 500 }]);
    expect(() => valueWindows('run.stateAt', { windows: [{ where: 'response', path: '$', from: 1e308 }] })).toThrow(/windows\[0\]: "from" must be an integer/);
    expect(() => valueWindows('run.stateAt', { windows: 'all' })).toThrow(/"windows" must be an array/);
    expect(() => valueWindows('run.stateAt', { windows: [{ path: '$', from: 0 }] })).toThrow(/windows\[0\]: "where" must be a non-empty string/);
  });
});
