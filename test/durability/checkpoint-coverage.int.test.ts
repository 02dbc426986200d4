/**
 * A sync checkpoint advances only when every record of the fetch it covers has completed every
 * step of its action without failure (GUARANTEES 15). Two shapes broke it before: a mission that
 * stores the raw page (`store response -> raw`) and then each cleaned record in a loop — the
 * checkpoint rode on the `raw` store, so a run killed inside the loop and started again sent the
 * advanced `since` and `clean` kept some records for ever; and a record whose step failed and was
 * tolerated (`onError continue`) — the checkpoint advanced past it, so it was never fetched again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const RECORDS = Array.from({ length: 7 }, (_, i) => ({ id: `r${i}`, name: ` Name ${i} ` }));

describe.each(backends)('%s log', (backend) => {
let h: Conformance;

beforeEach(async () => {
  h = await openConformance({ backend });
  // Records exist only for a sync from the beginning; a sync from an advanced `since` finds none.
  h.api.on('GET /records?since=0', { body: RECORDS });
});

afterEach(async () => {
  await h.close();
});

function write(name: string, text: string): string {
  const entry = path.join(h.dir, `${name}.vague`);
  fs.writeFileSync(entry, text);
  return entry;
}

function files(name: string, text: string) {
  const entry = write(name, text);
  return { entry, files: [{ path: entry, text }] };
}

const TWO_STORES = `mission TwoStores {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store raw: sql("raw")
  store clean: sql("clean")
  action Sync {
    get "/records" { since: lastSync("records") { param: "since", format: unix } }
    store response -> raw { key: .id }
    let recs = response
    for r in recs {
      map r -> Clean { id: .id, name: trim(.name) }
      store response -> clean { key: .id }
    }
  }
  run Sync
}
`;

function sinceSent(): string[] {
  return h.api.requests.filter((r) => r.method === 'GET').map((r) => r.url);
}

describe('two stores per record: the raw page, then each cleaned record in a loop', () => {
  it('a run killed inside the loop, then a new run: every cleaned record is stored (the checkpoint did not ride on the raw store)', async () => {
    const cli = builtCli();
    const entry = write('two', TWO_STORES);
    const db = ['--db', h.dbPath, '--source', `Api=${h.api.url}`];
    // mid-store 1 is the raw store, 2.. the cleaned records: die at the 4th cleaned one.
    const killed = await runCli(cli, ['run', entry, ...db, '--crash-at', 'mid-store:5'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const first = runIdOf(killed);
    // Abandon it: a new run of the same sync starts from the last checkpoint of earlier runs.
    const again = await runCli(cli, ['run', entry, ...db], { cwd: h.dir });
    expect(again.code, describeResult(again)).toBe(0);
    expect(first).not.toBe(runIdOf(again));
    expect(sinceSent()).toEqual(['/records?since=0', '/records?since=0']);
    expect(Object.keys(recordsOf(await h.log.readTable('sql', 'clean'))).sort()).toEqual(RECORDS.map((r) => r.id));
    expect(recordsOf(await h.log.readTable('sql', 'clean'))['r3']).toEqual({ id: 'r3', name: 'Name 3' });
  });

  it('the checkpoint is committed after the last cleaned record', async () => {
    const result = await h.start(files('two', TWO_STORES));
    expect(result.status).toBe('completed');
    const events = await h.events(result.runId);
    const lastClean = Math.max(...events.filter((e) => e.type === 'store.write' && (e.payload as { store: string }).store === 'clean').map((e) => e.seq));
    const checkpoint = events.find((e) => e.type === 'checkpoint.advanced');
    expect(checkpoint).toBeDefined();
    expect(checkpoint!.seq).toBeGreaterThan(lastClean);
    await h.expectVerified(result.runId);
  });
});

describe('a tolerated failure holds the checkpoint back', () => {
  const TOLERATED = (onError: string) => `mission Tolerated {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: sql("out")
  action Sync {
    get "/records" { since: lastSync("records") { param: "since", format: unix } }
    let recs = response
    for r in recs${onError} {
      post "/push" { body: { id: r.id } }
      store r -> out { key: .id }
    }
  }
  run Sync
}
`;

  for (const onError of ['', ' onError continue', ' onError queue failed']) {
    it(`a record whose POST fails${onError === '' ? ' (onError continue, the default)' : ` (${onError.trim()})`} is fetched again by the next run`, async () => {
      let failNext = true;
      h.api.on('POST /push', (req) => {
        if ((req.body as { id: string }).id === 'r2' && failNext) return { status: 400, body: { error: 'refused' } };
        return { body: { ok: true } };
      });
      const progress: string[] = [];
      const text = TOLERATED(onError).replace('store out: sql("out")', `store out: sql("out")${onError.includes('queue') ? '\n  store failed: memory("failed")' : ''}`);
      const first = await h.start(files('tolerated', text), {}, { progress: (line) => progress.push(line) });
      expect(first.status).toBe('completed');
      expect(first.tolerated.map((t) => t.stepPath)).toEqual(['Sync/2[2]']);
      // The run says so.
      expect(progress.join('\n')).toMatch(/checkpoint "records" held back/);
      expect((await h.events(first.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(false);
      await h.expectVerified(first.runId);

      failNext = false;
      const second = await h.start(files('tolerated', text));
      expect(second.status).toBe('completed');
      expect(second.tolerated).toEqual([]);
      expect(sinceSent()).toEqual(['/records?since=0', '/records?since=0']);
      expect(Object.keys(recordsOf(await h.log.readTable('sql', 'out'))).sort()).toEqual(RECORDS.map((r) => r.id));
      expect((await h.events(second.runId)).filter((e) => e.type === 'checkpoint.advanced')).toHaveLength(1);
    });
  }

  // The checkpoint of a fetch whose records go on to another action through a memory store: they
  // live only in the run, so a failure in that action (the run failed, or a loop tolerated it)
  // must leave the next run asking from where it was. It advanced at the end of the fetch's action.
  const STAGED = (onError: string) => `mission Staged {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store staging: memory("staging")
  store out: sql("out")
  action Fetch {
    get "/records" { since: lastSync("records") { param: "since", format: unix } }
    store response -> staging { key: .id }
  }
  action Load {
    for r in staging${onError} {
      post "/push" { body: { id: r.id } }
      store r -> out { key: .id }
    }
  }
  run Fetch then Load
}
`;
  for (const [onError, status] of [[' onError abort', 'failed'], ['', 'completed']] as const) {
    it(`a checkpoint before a later action's ${status === 'failed' ? 'failure' : 'tolerated failure'} (records staged in a memory store) counts for no later run`, async () => {
      let failNext = true;
      h.api.on('POST /push', (req) => {
        if ((req.body as { id: string }).id === 'r2' && failNext) return { status: 400, body: { error: 'refused' } };
        return { body: { ok: true } };
      });
      const first = await h.start(files('staged', STAGED(onError)));
      expect(first.status).toBe(status);
      expect((await h.events(first.runId)).some((e) => e.type === 'checkpoint.advanced')).toBe(true);
      failNext = false;
      const second = await h.start(files('staged', STAGED(onError)));
      expect(second.status).toBe('completed');
      expect(sinceSent()).toEqual(['/records?since=0', '/records?since=0']);
      expect(Object.keys(recordsOf(await h.log.readTable('sql', 'out'))).sort()).toEqual(RECORDS.map((r) => r.id));
      // That run completed whole: the one after it asks from its checkpoint.
      await h.start(files('staged', STAGED(onError)));
      expect(sinceSent()[2]).toMatch(/^\/records\?since=[1-9]\d*$/);
    });
  }
});
});
