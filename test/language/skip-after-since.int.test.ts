/**
 * GUARANTEES 15: a `skip` or `queue` directive after a `since` fetch is the mission's verdict on
 * its records, not a failure — the checkpoint advances past them (the reference's §C.8: skip
 * flushes pending checkpoints) and the next run does not ask for them again; `abort` fails the
 * action and holds the checkpoint back, so the next run asks from where it was.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const mission = (directive: string) => `mission SkipAfterSince {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store orders: sql("skip_after_since_orders")
  action Sync {
    get "/orders" { since: lastSync { param: "since" } }
    match response {
      { mode: "leave" } -> ${directive},
      _ -> continue
    }
    store response.orders -> orders { key: .id }
  }
  run Sync
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('a directive after a since fetch, and its checkpoint', () => {
  for (const [directive, advances] of [['skip', true], ['abort "not now"', false]] as const) {
    it(`${directive.split(' ')[0]}: the next run asks ${advances ? 'from after this one' : 'from where this one started'}`, async () => {
      c = await openConformance();
      let calls = 0;
      c.api.on('GET /orders?*', () => (++calls === 1 ? { body: { mode: 'leave', orders: [{ id: 'o1' }] } } : { body: { mode: 'go', orders: [] } }));
      const first = await c.start(c.mission('m', mission(directive)));
      expect(first.status).toBe(advances ? 'completed' : 'failed');
      expect(await c.log.readTable('sql', 'skip_after_since_orders')).toEqual([]);
      await c.start(c.mission('m', mission(directive)));
      const since = c.api.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('since'));
      expect(since[0]).toBe('1970-01-01T00:00:00.000Z');
      if (advances) expect(since[1]).not.toBe(since[0]);
      else expect(since[1]).toBe(since[0]);
    });
  }
});
