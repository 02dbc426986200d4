/**
 * Upstream's loop counter (circuit-breaker, scheduled-reports: `let n = n + 1` in a `for`), run as
 * docs/language.md says: in a sequential loop the `let` sets the outer `n`, so the loop counts and
 * the steps after it see the total — also after a resume, where the loop's finished iterations are
 * walked again rather than taken as recorded (they leave a variable behind, not only events). In a
 * concurrent loop (`concurrency 2`) each iteration binds its own `n` and the outer keeps its value,
 * which E3040 says at check time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../engine/journal/journal.js';
import { checkSource } from '../../engine/lang/loader.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const COUNT = `mission Count {
  source Api { auth: none, base: "https://api.test" }
  store out: memory("out")
  action Count {
    get "/events"
    let opens = 0
    let last = "none"
    for e in response.events where .type == "open" {
      let opens = opens + 1
      let last = e.id
      let mine = opens * 10
      store { id: e.id, seen: opens, mine: mine } -> out
    }
    store { id: "length", opens: length(response.events where .type == "open") } -> out
    pause { resumeOn: webhook "/count/go" }
    store { id: "loop", opens: opens, last: last, mine: mine ?? "unbound" } -> out
  }
  run Count
}
`;

const CONCURRENT = `mission Count {
  source Api { auth: none, base: "https://api.test" }
  store out: memory("out")
  action Count {
    get "/events"
    let opens = 0
    for e in response.events concurrency 2 {
      let opens = opens + 1
      store { id: e.id, seen: opens } -> out
    }
    store { id: "loop", opens: opens } -> out
  }
  run Count
}
`;

const EVENTS = [
  { id: 'a', type: 'open' },
  { id: 'b', type: 'close' },
  { id: 'c', type: 'open' },
  { id: 'd', type: 'open' },
];

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /events', { body: { events: EVENTS } });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await c.close();
});

function files(text: string) {
  const entry = path.join(c.dir, 'count.vague');
  fs.writeFileSync(entry, text);
  return { entry, files: [{ path: entry, text }] };
}

const codes = (text: string) => checkSource(text, 'count.vague').map((d) => `${d.code} ${text.slice(d.span.start, d.span.end)}`);

describe('a let in a loop body naming an outer variable', () => {
  it('in a sequential loop sets the outer variable: the loop counts, before and after a resume; a name new to the loop stays the iteration’s', async () => {
    expect(codes(COUNT)).toEqual([]);
    const first = await c.start(files(COUNT));
    expect(first.status === 'suspended' ? 'suspended' : JSON.stringify(first)).toBe('suspended');
    const skip = vi.spyOn(Journal.prototype, 'skipFinishedIteration');
    const resumed = await c.resume(first.runId, { payload: { go: true }, by: 'api' });
    expect(resumed.status === 'completed' ? 'completed' : JSON.stringify(resumed)).toBe('completed');
    // The counting loop's iterations are walked again on the resume, never taken as recorded.
    expect(skip.mock.results.filter((r) => r.type === 'return' && r.value !== undefined)).toEqual([]);
    expect(await c.store(resumed.runId, 'out')).toEqual({
      a: { id: 'a', seen: 1, mine: 10 },
      c: { id: 'c', seen: 2, mine: 20 },
      d: { id: 'd', seen: 3, mine: 30 },
      loop: { id: 'loop', opens: 3, last: 'd', mine: 'unbound' },
      length: { id: 'length', opens: 3 },
    });
    await c.expectVerified(resumed.runId);
  });

  it('in a concurrent loop binds per iteration and leaves the outer value, warned as E3040', async () => {
    expect(codes(CONCURRENT)).toEqual(['E3040 opens']);
    const result = await c.start(files(CONCURRENT));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({
      a: { id: 'a', seen: 1 },
      b: { id: 'b', seen: 1 },
      c: { id: 'c', seen: 1 },
      d: { id: 'd', seen: 1 },
      loop: { id: 'loop', opens: 0 },
    });
    await c.expectVerified(result.runId);
  });
});
