import { describe, expect, it } from 'vitest';
import { diffStates, diffStoreContents } from '../../engine/inspect/state-diff.js';
import type { RunState } from '../../engine/protocol/protocol.js';

function state(partial: Partial<RunState>): RunState {
  return {
    runId: 'r',
    seq: 1,
    event: null,
    stores: [],
    variables: {},
    response: null,
    checkpoints: [],
    pending: [],
    currentStep: null,
    ...partial,
  };
}

describe('diffStates', () => {
  it('is empty for equal states', () => {
    const s = state({ stores: [{ name: 'o', kind: 'sql', records: [{ key: 'a', record: { x: 1 } }] }], variables: { v: [1, 2] } });
    expect(diffStates(s, structuredClone(s))).toEqual([]);
  });

  it('lists store records by key and field, variables and response as flat paths', () => {
    const before = state({
      stores: [{ name: 'orders', kind: 'sql', records: [{ key: 'a', record: { total: 1, tag: 'x' } }, { key: 'o-2', record: { total: 2 } }] }],
      variables: { page: 1 },
      response: [{ id: 1 }],
    });
    const after = state({
      stores: [
        { name: 'orders', kind: 'sql', records: [{ key: 'a', record: { total: 5, tag: 'x' } }, { key: 'c', record: { total: 3 } }] },
        { name: 'audit', kind: 'memory', records: [{ key: 'k', record: { ok: true } }] },
      ],
      variables: { page: 2, next: 'n' },
      response: [{ id: 1 }, { id: 2 }],
      checkpoints: [{ key: 'orders', syncedAt: 9 }],
    });
    expect(diffStates(before, after)).toEqual([
      { path: 'stores.audit.k', before: null, after: { ok: true }, change: 'added' },
      { path: 'stores.orders.a.total', before: 1, after: 5, change: 'changed' },
      { path: 'stores.orders.c', before: null, after: { total: 3 }, change: 'added' },
      { path: 'stores.orders["o-2"]', before: { total: 2 }, after: null, change: 'removed' },
      { path: 'variables.next', before: null, after: 'n', change: 'added' },
      { path: 'variables.page', before: 1, after: 2, change: 'changed' },
      { path: 'response[1]', before: null, after: { id: 2 }, change: 'added' },
      { path: 'checkpoints.orders', before: null, after: 9, change: 'added' },
    ]);
  });

  it('compares store contents alone', () => {
    const a = [{ name: 's', kind: 'sql', records: [{ key: 'k', record: { n: [1] } }] }];
    const b = [{ name: 's', kind: 'sql', records: [{ key: 'k', record: { n: [1, 2] } }] }];
    expect(diffStoreContents(a, b)).toEqual([{ path: 'stores.s.k.n[1]', before: null, after: 2, change: 'added' }]);
  });
});
