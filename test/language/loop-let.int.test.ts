/**
 * Upstream's loop counter (circuit-breaker, scheduled-reports: `let n = n + 1` in a `for`) run as
 * the reference says (§C.7): each iteration's `let` binds in that iteration's scope, reading the
 * outer `n`, so every iteration sees 0 + 1 and the outer `n` stays 0 — what E3040 warns about.
 * The form its help suggests (`length(xs where …)`) counts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkSource } from '../../engine/lang/loader.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const TEXT = `mission Count {
  source Api { auth: none, base: "https://api.test" }
  store out: memory("out")
  action Count {
    get "/events"
    let opens = 0
    for e in response.events where .type == "open" {
      let opens = opens + 1
      store { id: e.id, seen: opens } -> out
    }
    store { id: "loop", opens: opens } -> out
    store { id: "length", opens: length(response.events where .type == "open") } -> out
  }
  run Count
}
`;

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /events', { body: { events: [{ id: 'a', type: 'open' }, { id: 'b', type: 'close' }, { id: 'c', type: 'open' }] } });
});

afterEach(async () => {
  await c.close();
});

describe('a let in a loop body naming an outer variable', () => {
  it('is warned about (E3040), binds per iteration when run, and leaves the outer value; length(… where …) counts', async () => {
    expect(checkSource(TEXT, 'count.vague').map((d) => `${d.code} ${TEXT.slice(d.span.start, d.span.end)}`)).toEqual(['E3040 opens']);
    const entry = path.join(c.dir, 'count.vague');
    fs.writeFileSync(entry, TEXT);
    const result = await c.start({ entry, files: [{ path: entry, text: TEXT }] });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({
      a: { id: 'a', seen: 1 },
      c: { id: 'c', seen: 1 },
      loop: { id: 'loop', opens: 0 },
      length: { id: 'length', opens: 2 },
    });
    await c.expectVerified(result.runId);
  });
});
