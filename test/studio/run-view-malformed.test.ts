/**
 * A run whose events a fold cannot read (an imported bundle is checked for event types, seqs and
 * loggable payloads, not each payload's fields: an http.request without its `request` imported)
 * took the whole studio server down: the State fold, warmed in the background once the run was
 * opened, threw in a setImmediate callback — an uncaught exception, the process exited, every
 * page lost its studio. The background warm-up now stops at the event it cannot fold; the
 * request that needs that state is answered with an error that names the run and the seq, and
 * the server keeps serving.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../engine/log/log.js';
import { RunView } from '../../engine/server/run-views.js';
import { EventBuilder } from './event-builder.js';

const record: RunRecord = {
  runId: 'run-1', mission: 'Orders', missionHash: 'h1',
  missionFiles: { entry: 'orders.vague', files: [{ path: 'orders.vague', text: 'mission Orders {}\n' }] },
  options: { sources: {}, env: {} }, status: 'completed', createdAt: 0, updatedAt: 0, lastSeq: 0, owner: null, leaseEpoch: 0,
  leaseExpiresAt: null, wakeAt: null, waitingOn: null,
};

describe('a run view over events its folds cannot read', () => {
  it('warms in the background without an uncaught exception, and says which event when asked', async () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
    log.add('step.started', 'Sync/0', { stepType: 'Fetch', line: 5 });
    log.add('http.request', 'Sync/0', {} as never);
    const view = new RunView(record);
    view.append(log.events);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.prependListener('uncaughtException', onUncaught);
    try {
      view.warmState();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
    expect(() => view.cache).toThrow(/run-1.*#3 \(http\.request\)/);
  });
});
