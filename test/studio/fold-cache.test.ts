import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunFoldCache } from '../../engine/inspect/fold-cache.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { EventBuilder } from './event-builder.js';

/** A run with store writes, binds, responses, pauses and nested steps, deterministic in `n`. */
function syntheticRun(n: number): EventBuilder {
  const log = new EventBuilder('run-fc');
  log.add('run.started', '', { mission: 'Synthetic', missionHash: 'h' });
  let i = 0;
  while (log.lastSeq < n) {
    const action = i % 50 === 0 ? `A${i % 3}` : null;
    if (action !== null) log.add('action.started', action, { action, attempt: 1 });
    const path = `A${i % 3}.${i % 7}`;
    log.add('step.started', path, { stepType: 'store', line: 10 + (i % 7) });
    switch (i % 5) {
      case 0:
        // Every 3rd write a delete (of a key written before, or never): the store history's two cases.
        if (i % 3 === 0) log.add('store.write', path, { effectId: `s${i}`, store: `st${i % 4}`, key: `k${i % 41}`, record: null, op: 'delete' });
        else log.add('store.write', path, { effectId: `s${i}`, store: `st${i % 4}`, key: `k${i % 37}`, record: { i, v: i * 2, nested: { at: i } }, op: 'set' });
        break;
      case 1:
        log.add('fetch.completed', path, { effectId: `f${i}`, pages: 1, status: 200, value: { page: i } });
        break;
      case 2:
        log.add('checkpoint.advanced', path, { key: `c${i % 3}`, syncedAt: i });
        break;
      case 3:
        log.add('pause.created', path, { pauseId: `p${i}`, dueAt: i + 100 });
        break;
      default:
        log.add('pause.resumed', path, { pauseId: `p${i - 1}`, by: 'timer' });
    }
    if (i % 4 !== 3) log.add('step.completed', path, { stepType: 'store', bind: { name: `v${i % 5}`, value: i } });
    i += 1;
  }
  return log;
}

describe('RunFoldCache', () => {
  const log = syntheticRun(3000);
  const cache = new RunFoldCache('run-fc', { storeKinds: { st0: 'sql' } }, 64);
  cache.append(log.events);

  it('equals a fresh fold at random seqs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: log.lastSeq }), (seq) => {
        const fresh = runFold(new StateAtHandler({ storeKinds: { st0: 'sql' } }, 'run-fc'), log.events.slice(0, seq));
        expect(cache.stateAt(seq)).toEqual(fresh);
      }),
      { numRuns: 150 },
    );
  });

  it('ignores repeated events from overlapping polls and rejects other runs', () => {
    cache.append(log.events.slice(-10));
    expect(cache.size).toBe(log.events.length);
    const other = new EventBuilder('other');
    other.add('run.started', '', { mission: 'X', missionHash: 'h' });
    expect(() => new RunFoldCache('run-fc').append(other.events)).toThrow(/event of run other/);
  });

  it('slices events by seq range and limit', () => {
    expect(cache.slice(10, 14).map((e) => e.seq)).toEqual([10, 11, 12, 13, 14]);
    expect(cache.slice(10, Infinity, 2).map((e) => e.seq)).toEqual([10, 11]);
  });

  it('rejects a bad interval and a negative seq', () => {
    expect(() => new RunFoldCache('r', {}, 0)).toThrow(/positive integer/);
    expect(() => cache.stateAt(-1)).toThrow(/>= 0/);
  });
});
