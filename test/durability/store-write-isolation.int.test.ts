/**
 * A store write that cannot be applied fails its own step, at once, and takes nothing else with
 * it (GUARANTEES 5 and 8). sql/nosql writes after a store's first are buffered and ride on the
 * run's next commit; before this was fixed, one that the table refused (a field name holding a
 * NUL, a table of the other store kind) rolled the whole commit back: earlier steps' store writes
 * and POST answers vanished although they had reported `step.completed`, and the run ended
 * "completed" with records missing — or, with the bad record last, stuck `running`.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

describe.each(backends)('%s log', (backend) => {
let h: Conformance;

beforeEach(async () => {
  h = await openConformance({ backend });
  h.api.on('POST /echo', (req) => ({ body: { echoed: (req.body as { id: number }).id } }));
});

afterEach(async () => {
  await h.close();
});


/** Each item: a POST (its answer must stay in the log), then a store of the item into `out`. */
function loopMission(name: string, store: string, onError = ''): string {
  return `mission ${name} {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: ${store}
  action Push {
    get "/items"
    let items = response
    for it in items${onError} {
      post "/echo" { body: { id: it.id } }
      store it -> out { key: .id }
    }
  }
  run Push
}
`;
}

const NUL_FIELD = 'we\u0000ird';

function items(badAt: number, count = 5): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => (i === badAt ? { id: i, [NUL_FIELD]: 'x', n: i } : { id: i, n: i }));
}

/** POSTs whose answer is in the run's log. */
async function postAnswers(runId: string): Promise<number> {
  const events = await h.events(runId);
  const posts = new Set(
    events.filter((e) => e.type === 'http.request' && (e.payload as { request: { method: string } }).request.method === 'POST').map((e) => (e.payload as { effectId: string }).effectId),
  );
  return events.filter((e) => e.type === 'http.response' && posts.has((e.payload as { effectId: string }).effectId)).length;
}

describe('a record whose field name holds a NUL', () => {
  for (const [where, badAt] of [['in the middle of the loop', 2], ['last', 4]] as const) {
    it(`is stored as it is when it comes ${where}; every earlier write and POST answer stays`, async () => {
      h.api.on('GET /items', { body: items(badAt) });
      for (const store of ['sql("out_sql")', 'nosql("out_nosql")']) {
        const result = await h.start(h.mission(`nul${badAt}`, loopMission(`Nul${badAt}`, store)));
        expect(result.status, JSON.stringify(result)).toBe('completed');
        expect(result.tolerated).toEqual([]);
        const table = store.startsWith('sql') ? 'sql' : 'nosql';
        const stored = recordsOf(await h.log.readTable(table, table === 'sql' ? 'out_sql' : 'out_nosql'));
        expect(Object.keys(stored).sort()).toEqual(['0', '1', '2', '3', '4']);
        expect(stored[String(badAt)]).toEqual({ id: badAt, [NUL_FIELD]: 'x', n: badAt });
        expect(await postAnswers(result.runId)).toBe(5);
        expect((await h.log.getRun(result.runId))?.status).toBe('completed');
        await h.expectVerified(result.runId);
      }
    });
  }
});

describe('a key the PostgreSQL log cannot hold, after the store\'s first write (a buffered write)', () => {
  const KEYS: [string, string, RegExp][] = [
    ['a NUL', 'c\u0000d', /holds a NUL character or a lone UTF-16 surrogate/],
    ['a lone surrogate', 'c\ud800d', /holds a NUL character or a lone UTF-16 surrogate/],
    // Random, so it does not compress: past what the primary key's btree index holds (2704 bytes).
    ['4,000 random characters', randomBytes(3000).toString('base64'), /index row size \d+ exceeds/],
  ];
  for (const [what, key, refusal] of KEYS) {
    it(`${what}: on PostgreSQL that write fails its own iteration, every other write and POST answer stays; on SQLite it is stored`, async () => {
      h.api.on('GET /items', { body: [0, 1, 2, 3, 4].map((i) => ({ id: i === 2 ? key : String(i), n: i })) });
      for (const store of ['sql("key_sql")', 'nosql("key_nosql")']) {
        const result = await h.start(h.mission('badkey', loopMission('BadKey', store)));
        const table = store.startsWith('sql') ? 'sql' : 'nosql';
        const stored = Object.keys(recordsOf(await h.log.readTable(table, table === 'sql' ? 'key_sql' : 'key_nosql'))).sort();
        expect(result.status, JSON.stringify(result)).toBe('completed');
        if (backend === 'postgres') {
          expect(result.tolerated.map((t) => t.stepPath)).toEqual(['Push/2[2]']);
          expect(result.tolerated[0]!.message).toMatch(refusal);
          expect(stored).toEqual(['0', '1', '3', '4']);
        } else {
          expect(result.tolerated).toEqual([]);
          expect(stored).toHaveLength(5);
        }
        expect(await postAnswers(result.runId)).toBe(5);
        expect((await h.log.getRun(result.runId))?.status).toBe('completed');
        await h.expectVerified(result.runId);
      }
    });
  }
});

describe('a table of the other store kind', () => {
  it('fails every write of the clashing store in its own step; the POSTs before them keep their answers; onError continue reports each', async () => {
    h.api.on('GET /items', { body: items(-1) });
    // Another mission made `out` a sql table in this log.
    const first = await h.start(h.mission('sqlside', loopMission('SqlSide', 'sql("out")')));
    expect(first.status).toBe('completed');
    const second = await h.start(h.mission('nosqlside', loopMission('NosqlSide', 'nosql("out")', ' onError continue')));
    // Not a silent "completed": every refused write is a tolerated failure of its own iteration.
    expect(second.tolerated.map((t) => t.stepPath)).toHaveLength(5);
    for (const t of second.tolerated) expect(t.message).toMatch(/sql store table/);
    const events = await h.events(second.runId);
    const failedStores = events.filter((e) => e.type === 'step.failed' && (e.payload as { stepType: string }).stepType === 'Store');
    expect(failedStores, JSON.stringify(events.filter((e) => e.type.startsWith('step')).map((e) => [e.type, e.stepPath, e.payload]))).toHaveLength(5);
    expect(await postAnswers(second.runId)).toBe(5);
    expect((await h.log.getRun(second.runId))?.status).toBe(second.status);
    await h.expectVerified(second.runId);
    // The sql table is untouched.
    expect(Object.keys(recordsOf(await h.log.readTable('sql', 'out'))).sort()).toEqual(['0', '1', '2', '3', '4']);
  });

  it('in one mission: the clashing store fails its own steps; the other store keeps every record written before and after', async () => {
    h.api.on('GET /items', { body: items(-1) });
    const text = `mission Clash {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store good: sql("shared")
  store bad: nosql("shared")
  action Push {
    get "/items"
    let items = response
    for it in items {
      post "/echo" { body: { id: it.id } }
      store it -> good { key: .id }
      store it -> bad { key: .id }
    }
  }
  run Push
}
`;
    const result = await h.start(h.mission('clash', text));
    expect(result.tolerated.map((t) => t.stepPath)).toEqual(['Push/2[0]', 'Push/2[1]', 'Push/2[2]', 'Push/2[3]', 'Push/2[4]']);
    expect(Object.keys(recordsOf(await h.log.readTable('sql', 'shared'))).sort()).toEqual(['0', '1', '2', '3', '4']);
    expect(await postAnswers(result.runId)).toBe(5);
    await h.expectVerified(result.runId);
  });
});
});
