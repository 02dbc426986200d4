/**
 * GUARANTEES 14: an edited store record is a divergence, for an upsert and for a write to a file
 * store too. Their `store.write` events record what was stored — an upsert's merge, what the file
 * holds — so a replay used to check only that the planned fields were contained in it: an edit
 * that dropped fields from an upsert (or emptied a nested object), or from a file store's `set`,
 * verified clean though a fresh run of it stores another record. The event now records the
 * planned record too, compared exactly; a log from before that names such writes not checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { startFakePostgrest } from '../stores/helpers/fake-postgrest.js';

const mission = (decl: string, second: string) => `mission Records {
  store s: ${decl}
  action A {
    store { id: "x", v: 1 } -> s { key: .id }
    store ${second} -> s { key: .id, upsert: true }
  }
  run A
}
`;

const fileMission = (record: string) => `mission FileRecords {
  store f: file("records_edit")
  action A {
    store ${record} -> f { key: .id }
  }
  run A
}
`;

const UPSERT = '{ id: "x", status: "shipped", meta: { carrier: "dhl" } }';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: an edited store record', (backend) => {
  for (const decl of ['sql("records_edit")', 'nosql("records_edit")', 'memory("records_edit")']) {
    for (const [what, edited] of [
      ['fields dropped', '{ id: "x" }'],
      ['a nested object emptied', '{ id: "x", status: "shipped", meta: {} }'],
    ] as const) {
      it(`${decl.split('(')[0]} upsert with ${what} diverges at the write`, async () => {
        c = await openConformance({ backend });
        const result = await c.start(c.mission('records', mission(decl, UPSERT)));
        expect(result.status).toBe('completed');
        expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
        const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission(decl, edited)) });
        expect(report.ok).toBe(false);
        expect(report.divergence).toMatchObject({ stepPath: 'A/1', cause: 'edit' });
        expect(report.divergence!.change).toContain('the record written under key "x"');
      });
    }
  }

  it('a file store set with a field dropped diverges at the write', async () => {
    c = await openConformance({ backend });
    const result = await c.start(c.mission('file', fileMission('{ id: "x", v: 1, status: "shipped" }')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', fileMission('{ id: "x", v: 1 }')) });
    expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'edit' });
  });

  it('a PostgREST store set with a field dropped diverges at the write', async () => {
    const pg = await startFakePostgrest({ table: 'people' });
    try {
      c = await openConformance({ backend, vars: { REQON_STORE_PEOPLE_URL: pg.url } });
      const postgrest = (record: string) => `mission PgRecords {
  store people: postgrest("people")
  action A {
    store ${record} -> people { key: .id }
  }
  run A
}
`;
      const result = await c.start(c.mission('pg', postgrest('{ id: "x", v: 1, status: "shipped" }')));
      expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
      expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', postgrest('{ id: "x", v: 1 }')) });
      expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'edit' });
    } finally {
      await pg.close();
    }
  });

  it('a log from before planned records names its upserts not checked, and still catches a changed value', async () => {
    c = await openConformance({ backend });
    const result = await c.start(c.mission('records', mission('sql("records_old")', UPSERT)));
    expect(result.status).toBe('completed');
    // The same run as an older engine recorded it: its upsert's event without `planned`.
    const events = (await c.log.read(result.runId)).map((e) => {
      if (e.type !== 'store.write') return e;
      const { planned: _planned, ...payload } = (e as StoredEvent<'store.write'>).payload;
      return { ...e, payload } as StoredEvent;
    });
    expect(events.some((e) => e.type === 'store.write' && 'planned' in (e.payload as object))).toBe(false);
    const own = await verifyRun(c.log, result.runId, { env: c.env, events });
    expect(own.divergence).toBeNull();
    expect(fullyVerified(own)).toBe(false);
    expect(own.unchecked).toEqual([expect.stringMatching(/^store records: 1 upsert\(s\) or write\(s\) to file or PostgREST stores were recorded by an engine before their planned records were logged/)]);
    const changed = await verifyRun(c.log, result.runId, { env: c.env, events, missionFiles: c.mission('edited', mission('sql("records_old")', '{ id: "x", status: "lost", meta: { carrier: "dhl" } }')) });
    expect(changed.divergence).toMatchObject({ stepPath: 'A/1' });
  });
});
