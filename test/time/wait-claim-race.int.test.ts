/**
 * Two runs waiting on one webhook path, each woken for the deliveries in its inbox: the one whose
 * claim of a delivery loses to the other (the other's commit took it first; the claim wrote
 * nothing) claims the next unclaimed delivery, or waits on — it is no failure of the run. Before,
 * the loser's wait failed with "webhook delivery … was already claimed by another wait" and the
 * run failed (seen with two workers on one PostgreSQL log, a delivery per waiting run: three of
 * twelve runs failed, and the deliveries meant for them were then 404). On every log backend.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { continueRun, resumeSuspendedRun, startRun } from '../../engine/executor/run-mission.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { backends, openTempLog } from '../support/temp-log.js';

const WAIT = `mission Shared {
  store got: memory("got")
  action A {
    wait { path: "/hooks/shared", timeout: 86400000 }
    store response -> got { key: .n }
  }
  run A
}
`;

describe.each(backends)('%s: a wait whose claim loses the race', (backend) => {
  it('claims the next unclaimed delivery instead of failing; with none left, waits on', async () => {
    const t = await openTempLog(backend);
    try {
      const env = createFakeEnv();
      const file = path.join(t.dir, 'shared.vague');
      const files = { entry: file, files: [{ path: file, text: WAIT }] };
      const deps = { log: t.log, env, dataDir: path.join(t.dir, 'data') };
      const [a, b, c] = [await startRun(files, { sources: {}, env: {} }, deps), await startRun(files, { sources: {}, env: {} }, deps), await startRun(files, { sources: {}, env: {} }, deps)];
      expect([a.status, b.status, c.status]).toEqual(['suspended', 'suspended', 'suspended']);
      expect(await t.log.deliverWebhook('/hooks/shared', 'd1', { n: 1 }, env.clock.now())).toBe('accepted');
      expect(await t.log.deliverWebhook('/hooks/shared', 'd2', { n: 2 }, env.clock.now())).toBe('accepted');
      // b and c read the inbox before a claims d1 (as a worker woke all three for it).
      const stale = await t.log.webhookInbox('/hooks/shared');
      expect(stale.map((d) => d.eventId)).toEqual(['d1', 'd2']);
      const wake = async (runId: string) => {
        await resumeSuspendedRun((await t.log.getRun(runId))!, { by: 'webhook' }, deps);
        return continueRun(runId, {}, deps);
      };
      expect((await wake(a.runId)).status).toBe('completed');

      const real = t.log.webhookInbox.bind(t.log);
      let reads = 0;
      t.log.webhookInbox = async (p) => (++reads === 1 ? stale : real(p));
      const second = await wake(b.runId);
      expect(second.status, JSON.stringify(second)).toBe('completed');
      expect(MemoryStoreState.fromEvents(await t.log.read(b.runId)).list('got')).toEqual([{ key: '2', record: { n: 2 } }]);

      // c too read d1 and d2 as unclaimed, both gone by now: it suspends again, nothing failed.
      reads = 0;
      t.log.webhookInbox = async (p) => (++reads === 1 ? stale : real(p));
      const third = await wake(c.runId);
      expect(third.status, JSON.stringify(third)).toBe('suspended');
      expect((await t.log.getRun(c.runId))?.waitingOn).toBe('wait:/hooks/shared');
    } finally {
      await t.close();
    }
  });
});
