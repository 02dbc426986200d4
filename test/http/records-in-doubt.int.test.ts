/**
 * A paginated `since` fetch whose first page holds several lists, its records taken from the
 * first (`warnings`) while a list under a usual name for records (`data`) looks like where they
 * are: the run warns and completes as before, but its checkpoint does not advance. It did, so
 * once the user added the `itemsPath: "data"` the warning asked for, the next run asked only for
 * changes since: the records in `data` were passed for good (helper 62).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const SYNC = (itemsPath: string) => `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("out")
  action A {
    get "/customers" { paginate: page(page, 10), since: lastSync("customers") { param: "since", format: unix }${itemsPath} }
    store response -> out { key: .id }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: records in doubt', (backend) => {
  it('advance no checkpoint until itemsPath says where the records are', async () => {
    c = await openConformance({ backend });
    // The records changed long ago: only a fetch since 0 returns them.
    c.api.on('GET /customers?*', (req) => {
      const since = new URL(req.url, 'http://x').searchParams.get('since');
      return { body: { warnings: [{ id: 'w1', message: 'v1 is deprecated' }], data: since === '0' ? [{ id: 'a' }, { id: 'b' }] : [] } };
    });
    const progress: string[] = [];
    const first = await c.start(c.mission('sync', SYNC('')), {}, { progress: (line) => progress.push(line) });
    expect(first.status).toBe('completed');
    expect(progress.some((l) => l.startsWith('warning: A/0: page 1') && l.includes('"data" (2 items) looks like where they are'))).toBe(true);
    expect(progress).toContain(
      'A/0: its records may be in "data" (see the warning): its since checkpoint does not advance until itemsPath says where they are, so the next run asks from where it was',
    );
    expect((await c.events(first.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(false);

    const fixed = c.mission('sync', SYNC(', itemsPath: "data"'));
    const second = await c.start(fixed);
    expect(second.status).toBe('completed');
    expect(Object.keys(recordsOf(await c.log.readTable('sql', 'out'))).sort()).toEqual(['a', 'b', 'w1']);
    expect((await c.events(second.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(true);
    await c.expectVerified(first.runId);
  });
});
