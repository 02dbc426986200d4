/**
 * A crashed sync run carried on after a later run of the same sync completed (helper 95): its
 * resume replays the answers it recorded — older than what the later run fetched and stored —
 * and stored them over the later run's records in a store that outlives runs, while the
 * checkpoint stayed past their changes for good (`reqon resume`, and a worker taking the
 * abandoned run over unasked). Such a run now fails at its resume, writing nothing more, and says
 * why — after a crash or at the end of its pause, whatever clock dated the later checkpoint, but
 * not for a later run that synced the same key from another API;
 * resumed before any later run synced, it carries on as before (the contrast).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forkRun } from '../../engine/executor/fork-run.js';
import { openConformance, recordsOf, type Conformance } from '../conformance/harness.js';
import { FakeApi } from '../support/fake-api.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const MISSION = `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store recs: sql("recs")
  action Pull {
    get "/recs" { since: lastSync("recs") }
    for r in response {
      store r -> recs { key: .id }
    }
  }
  run Pull
}
`;

/** A sync that fetches, pauses for an approval, then stores what it fetched (`records`: where the answer holds them). */
const pausedSync = (since: string, records: string) => `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store recs: sql("recs")
  action Pull {
    get "/recs" { ${since} }
    let fetched = ${records}
    pause { resumeOn: webhook "/approve" }
    for r in fetched {
      store r -> recs { key: .id }
    }
  }
  run Pull
}
`;

describe.each(backends)('%s log: a sync run resumed after a later run synced', (backend) => {
  let h: Conformance;
  let version = 1;
  beforeEach(async () => {
    h = await openConformance({ backend });
    version = 1;
    h.api.on('GET /recs?*', () => ({ body: ['a', 'b', 'c', 'd'].map((id) => ({ id, v: version })) }));
  });
  afterEach(async () => {
    await h.close();
  });

  async function crashedRun(): Promise<{ cli: string; entry: string; db: string[]; first: string }> {
    const cli = builtCli();
    const entry = path.join(h.dir, 'sync.vague');
    fs.writeFileSync(entry, MISSION);
    const db = ['--db', h.dbPath, '--source', `Api=${h.api.url}`];
    // Killed as it stores its third record.
    const killed = await runCli(cli, ['run', entry, ...db, '--crash-at', 'mid-store:3'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    return { cli, entry, db, first: runIdOf(killed) };
  }

  const stored = async () => recordsOf(await h.log.readTable('sql', 'recs'));

  it('fails instead of storing its older answers over the later run’s records', async () => {
    const { cli, entry, db, first } = await crashedRun();
    version = 2;
    const later = await runCli(cli, ['run', entry, ...db], { cwd: h.dir });
    expect(later.code, describeResult(later)).toBe(0);
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
    const resumed = await runCli(cli, ['resume', first, '--db', h.dbPath], { cwd: h.dir });
    expect(resumed.code, describeResult(resumed)).toBe(1);
    expect(resumed.stdout + resumed.stderr).toMatch(/this run fetched checkpoint "recs" at .+, and a later run has since synced it .+It fails here, with nothing more written/);
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
    expect((await h.log.getRun(first))?.status).toBe('failed');
    // Verify: its replay matches up to where the resume failed it, which no replay derives — not
    // checked, never a divergence nor a full ✓.
    const verified = await runCli(cli, ['verify', first, '--db', h.dbPath], { cwd: h.dir });
    expect(verified.code, describeResult(verified)).toBe(3);
    expect(verified.stdout + verified.stderr).toContain("its resume failed it at seq");
    // A worker finds nothing left to take over.
    const worker = await runCli(cli, ['worker', '--once', '--db', h.dbPath], { cwd: h.dir });
    expect(worker.code, describeResult(worker)).toBe(0);
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
  });

  it('a worker taking the abandoned run over fails it the same way', async () => {
    const { cli, entry, db, first } = await crashedRun();
    version = 2;
    expect((await runCli(cli, ['run', entry, ...db], { cwd: h.dir })).code).toBe(0);
    await runCli(cli, ['worker', '--once', '--db', h.dbPath], { cwd: h.dir });
    expect((await h.log.getRun(first))?.status).toBe('failed');
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
  });

  it('a run that fetched, then paused: ended after a later run synced, it fails the same way, not only after a crash (helper 98)', async () => {
    const paused = pausedSync('since: lastSync("recs")', 'response');
    const files = h.mission('paused', paused);
    const first = await h.start(files);
    expect(first.status).toBe('suspended');
    version = 2;
    const later = await h.start(files);
    expect(later.status).toBe('suspended');
    expect((await h.resume(later.runId, { payload: { ok: true } })).status).toBe('completed');
    const ended = await h.resume(first.runId, { payload: { ok: true } });
    expect(ended.status).toBe('failed');
    expect(ended.status === 'failed' && ended.error.code).toBe('sync-superseded');
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
  });

  it('a later checkpoint dated by a server whose clock is behind (updateFrom) still counts as later: by when it was committed (helper 98)', async () => {
    h.api.on('GET /recs?*', () => ({ body: { meta: { latest: new Date(Date.now() - 10 * 60_000).toISOString() }, data: ['a', 'b'].map((id) => ({ id, v: version })) } }));
    const behind = pausedSync('since: lastSync("recs") { updateFrom: "meta.latest" }', 'response.data');
    const files = h.mission('behind', behind);
    const first = await h.start(files);
    version = 2;
    const later = await h.start(files);
    expect((await h.resume(later.runId, { payload: { ok: true } })).status).toBe('completed');
    const ended = await h.resume(first.runId, { payload: { ok: true } });
    expect(ended.status === 'failed' && ended.error.code).toBe('sync-superseded');
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2]);
  });

  it('a sync kept by hand in sync_state (upstream\'s form) is checked the same way (helper 100)', async () => {
    const files = h.mission(
      'state',
      `mission Sync {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store recs: sql("recs")
  action Pull {
    let from = sync_state.get("recs")
    get "/recs" { params: { updated_after: from } }
    let fetched = response
    pause { resumeOn: webhook "/approve" }
    for r in fetched {
      store r -> recs { key: .id }
    }
    store { "recs": now() } -> sync_state { key: "recs" }
  }
  run Pull
}
`,
    );
    const first = await h.start(files);
    expect(first.status).toBe('suspended');
    version = 2;
    const later = await h.start(files);
    expect((await h.resume(later.runId, { payload: { ok: true } })).status).toBe('completed');
    const ended = await h.resume(first.runId, { payload: { ok: true } });
    expect(ended.status === 'failed' && ended.error.code).toBe('sync-superseded');
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([2, 2, 2, 2]);
  });

  it('a later run of the same key against another API (--source) does not supersede it: checkpoints are per API', async () => {
    const other = await new FakeApi().start();
    try {
      other.on('GET /recs?*', () => ({ body: ['a', 'b'].map((id) => ({ id, v: 'other' })) }));
      const files = h.mission('paused', pausedSync('since: lastSync("recs")', 'response'));
      const first = await h.start(files);
      expect(first.status).toBe('suspended');
      const elsewhere = await h.start(files, { sources: { Api: other.url } });
      expect(elsewhere.status).toBe('suspended');
      expect((await h.resume(elsewhere.runId, { payload: { ok: true } })).status).toBe('completed');
      // The other API's checkpoint moved; this run's API's did not: it carries on with its own answer.
      const ended = await h.resume(first.runId, { payload: { ok: true } });
      expect(ended.status, JSON.stringify(ended)).toBe('completed');
      expect((await stored())['a']).toEqual({ id: 'a', v: 1 });
      // The contrast on the same API: a later run of this one's API does supersede a paused run.
      const again = await h.start(files);
      version = 2;
      const later = await h.start(files);
      expect((await h.resume(later.runId, { payload: { ok: true } })).status).toBe('completed');
      const superseded = await h.resume(again.runId, { payload: { ok: true } });
      expect(superseded.status === 'failed' && superseded.error.code).toBe('sync-superseded');
    } finally {
      await other.stop();
    }
  });

  it('a fork of it is not held to syncs before it was made (time travel asked for stores the parent\'s answers), only to those after', async () => {
    const files = h.mission('paused', pausedSync('since: lastSync("recs")', 'response'));
    const parent = await h.start(files);
    expect(parent.status).toBe('suspended');
    version = 2;
    const later = await h.start(files);
    expect((await h.resume(later.runId, { payload: { ok: true } })).status).toBe('completed');
    // Cut just after the parent's fetch: the fork replays it and carries on live from there.
    const fetched = (await h.events(parent.runId)).find((e) => e.type === 'fetch.completed')!;
    const fork = await forkRun(parent.runId, { atSeq: fetched.seq }, h.deps());
    expect(fork.status, JSON.stringify(fork)).toBe('suspended');
    const ended = await h.resume(fork.runId, { payload: { ok: true } });
    expect(ended.status, JSON.stringify(ended)).toBe('completed');
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([1, 1, 1, 1]);
    // Held, as a resume is, to a sync completed after the fork was made. (Before, the copied read
    // counted from the parent's fetch, so the first fork above failed at its pause's end.)
    const second = await forkRun(parent.runId, { atSeq: fetched.seq }, h.deps());
    expect(second.status).toBe('suspended');
    version = 3;
    const newest = await h.start(files);
    expect((await h.resume(newest.runId, { payload: { ok: true } })).status).toBe('completed');
    const held = await h.resume(second.runId, { payload: { ok: true } });
    expect(held.status === 'failed' && held.error.code).toBe('sync-superseded');
    expect(held.status === 'failed' && held.error.message).toMatch(/^this fork took its parent's fetch of checkpoint "recs" when it was made at /);
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([3, 3, 3, 3]);
  });

  it('resumed before any later run synced, it carries on and completes (the contrast)', async () => {
    const { cli, first } = await crashedRun();
    version = 2;
    const resumed = await runCli(cli, ['resume', first, '--db', h.dbPath], { cwd: h.dir });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    // Its own recorded answer, as replay promises.
    expect(Object.values(await stored()).map((r) => (r as { v: number }).v)).toEqual([1, 1, 1, 1]);
  });
});
