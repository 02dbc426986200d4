/**
 * GUARANTEES 15: a `since` fetch (not paginated) answered 2xx with an in-band error and no list
 * (Slack's `{ "ok": false, "error": "ratelimited" }`) advances no checkpoint. It read as no
 * records: a mission that filters the answer (`response.items where …`) or skips it completed,
 * and its checkpoint advanced past records it never read. The mission still sees the answer (it
 * may match it and detour: upstream's `jump Refresh then retry`). A list beside the error is a
 * page (GraphQL's partial data), and a plain fetch's error body is the mission's to match.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const SYNC = (body: string) => `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("out")
  action A {
    get "/items" { since: lastSync("items") { param: "since", format: unix } }
    ${body}
  }
  run A
}
`;
const ITEMS = { ok: true, items: [{ id: 1 }, { id: 2 }] };

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: a since fetch answered with an in-band error', (backend) => {
  for (const body of ['store (response.items where .id > 0) -> out { key: .id }', 'match response { { ok: false } -> skip, _ -> continue }\n    for x in response.items { store x -> out { key: .id } }']) {
    it(`advances no checkpoint, and the next run asks from where it was: ${body.split('\n')[0]}`, async () => {
      c = await openConformance({ backend });
      let limited = true;
      c.api.on('GET /items?since=0', () => (limited ? { status: 200, body: { ok: false, error: 'ratelimited' } } : { status: 200, body: ITEMS }));
      const files = c.mission('sync', SYNC(body));
      const progress: string[] = [];
      const first = await c.start(files, {}, { progress: (line) => progress.push(line) });
      expect(first.status).toBe('completed');
      expect(progress).toContain('A/0: the answer holds an error under "error" and no list: its since checkpoint does not advance, so the next run asks from where it was');
      expect((await c.events(first.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(false);
      limited = false;
      const second = await c.start(files);
      expect(second.status).toBe('completed');
      expect(Object.keys(recordsOf(await c.log.readTable('sql', 'out'))).sort()).toEqual(['1', '2']);
    });
  }

  it('takes a list beside an error as records, and leaves a plain fetch\'s error body to the mission', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /items?since=0', { status: 200, body: { items: [{ id: 3 }], errors: [{ message: 'partial' }] } });
    expect((await c.start(c.mission('partial', SYNC('for x in response.items { store x -> out { key: .id } }')))).status).toBe('completed');
    c.api.on('GET /plain', { status: 200, body: { error: 'nothing here' } });
    const plain = `mission Plain {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/plain"
    store { id: "e", said: response.error } -> out { key: .id }
  }
  run A
}
`;
    const result = await c.start(c.mission('plain', plain));
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ e: { id: 'e', said: 'nothing here' } });
  });
});
