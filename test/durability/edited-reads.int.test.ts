/**
 * What a step read when it ran is compared on replay with what the edited mission reads (helper
 * 78: both verified as full matches): a loop over a sql store edited to iterate another store, and
 * a fetch whose checkpoint key was edited where the run held its checkpoint back (no
 * `checkpoint.advanced` named the key). Each now diverges at the read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { insertStoredRun, openTempLog } from './support/stored-log.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('an edited read', () => {
  it('of another store by a loop diverges at the loop', async () => {
    c = await openConformance();
    c.api.on('POST /ship', { status: 201, body: { ok: true } });
    const mission = (loop: string) => `mission Reads {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store orders: sql("reads_orders")
  store archive: sql("reads_archive")
  action A {
    store { id: "o1" } -> orders { key: .id }
    store { id: "a1" } -> archive { key: .id }
    for o in ${loop} {
      post "/ship" { body: { id: o.id } }
    }
  }
  run A
}
`;
    const result = await c.start(c.mission('reads', mission('orders')));
    expect(result.status).toBe('completed');
    expect((await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', mission('orders')) })).ok).toBe(true);
    const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission('archive')) });
    expect(edited.ok).toBe(false);
    expect(edited.divergence).toMatchObject({ stepPath: 'A/2', cause: 'edit' });
    expect(edited.divergence!.change).toContain('the loop iterates store `archive`, where the run iterated `orders`');
    // A log recorded before reads named their store compares the value alone, and says so: never a ✓.
    const events = (await c.log.read(result.runId)).map((e) => {
      if (e.type !== 'value.recorded') return e;
      const { store: _store, ...payload } = e.payload as { store?: string };
      return { ...e, payload } as StoredEvent;
    });
    const recorded = (await c.log.getRun(result.runId))!;
    const temp = await openTempLog('sqlite', {}, 'reqon-edited-reads-');
    try {
      const runId = await insertStoredRun(temp.log, { events, missionFiles: recorded.missionFiles, options: recorded.options });
      const old = await verifyRun(temp.log, runId, { env: c.env, missionFiles: c.mission('edited', mission('archive')) });
      expect(old.divergence).toBeNull();
      expect(fullyVerified(old)).toBe(false);
      expect(old.unchecked.join('\n')).toContain("recorded read(s) read (a loop's store, a fetch's checkpoint key)");
    } finally {
      await temp.close();
    }
  });

  it('of another checkpoint by a fetch diverges at the fetch, where no checkpoint advanced', async () => {
    c = await openConformance();
    c.api.on('GET /items?*', { body: [{ id: 1, n: 0 }] });
    const mission = (since: string) => `mission Keys {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/items" { since: ${since} { param: "since" } }
    for i in response onError continue {
      validate i { assume .n > 0 }
      store i -> out { key: .id }
    }
  }
  run A
}
`;
    const result = await c.start(c.mission('keys', mission('lastSync')));
    expect(result.status).toBe('completed');
    expect((await c.log.read(result.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(false);
    const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission('lastSync("other")')) });
    expect(edited.ok).toBe(false);
    expect(edited.divergence!.change).toContain('the checkpoint this fetch reads changed');
  });
});
