/**
 * GUARANTEES 14: replay compares the checkpoint an action advances with the one it recorded. An
 * edit of a `since` fetch's checkpoint key (`lastSync("orders-main")` to `lastSync("orders-other")`)
 * reads and advances another checkpoint; it verified clean, and a resume with it would have gone
 * on as if it had advanced the old one. On both backends, for a gathered and a streamed sync.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (key: string, streamed: boolean) => `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("out")
  action A {
    get "/recs" { since: lastSync("${key}") { param: "since", format: unix } }
    ${streamed ? 'store response -> out { key: .id }' : 'for r in response { store r -> out { key: .id } }'}
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: an edited checkpoint key', (backend) => {
  for (const streamed of [false, true]) {
    it(`diverges at the fetch that reads it (${streamed ? 'streamed' : 'gathered'})`, async () => {
      c = await openConformance({ backend });
      c.api.on('GET /recs?since=0', { body: [{ id: 1 }, { id: 2 }] });
      const result = await c.start(c.mission('sync', mission('orders-main', streamed)));
      expect(result.status).toBe('completed');
      expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission('orders-other', streamed)) });
      expect(report.ok).toBe(false);
      expect(report.divergence).toMatchObject({ cause: 'edit' });
      // At the read of the checkpoint, before the one it advances (edited-reads.int.test.ts).
      expect(report.divergence!.change).toMatch(/^the checkpoint this fetch reads changed: "orders-main" became "orders-other"/);
    });
  }
});

const fromAnswer = (updateFrom: string | undefined) => `mission Orders {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("out")
  action A {
    get "/orders" { since: lastSync("orders") { param: "since", format: unix${updateFrom ? `, updateFrom: "${updateFrom}"` : ''} } }
    for o in response.items { store o -> out { key: .id } }
  }
  run A
}
`;

describe.each(backends)('%s: an edited updateFrom', (backend) => {
  it('diverges where the checkpoint would advance to another instant; the mission as it was verifies whole', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /orders?since=0', { body: { items: [{ id: 1 }], meta: { latest: '2026-11-01T00:00:00Z', other: '2026-12-01T00:00:00Z' } } });
    const result = await c.start(c.mission('orders', fromAnswer('meta.latest')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    // Another field, or none (the fetch's start): the next run would ask from another instant,
    // past records it never read; both verified clean.
    for (const edit of ['meta.other', undefined]) {
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', fromAnswer(edit)) });
      expect(report.ok, String(edit)).toBe(false);
      expect(report.divergence!.change).toMatch(/^the instant checkpoint "orders" advances to changed \(its updateFrom, or the fetch's start, was edited\): 2026-11-01T00:00:00.000Z became /);
    }
  });
});
