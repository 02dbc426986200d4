/**
 * A sync checkpoint belongs to the API the run fetched from. A run whose `--source` points its source
 * at another URL (a test server, staging) keeps its checkpoint apart from the mission's own base
 * URL's, so the first production sync after a trial asks for everything.
 *
 * Before: a checkpoint (`Api:/items`) named only the mission and the source, so a trial run against
 * a test server set the checkpoint the production run then started from — it asked only for records
 * changed since the trial, and every older production record was skipped, the run "completed".
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli, runIdOf } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let production: LocalServer;
let trial: LocalServer;

const mission = (base: string) => `mission Orders {
  source Api { auth: none, base: "${base}" }
  store items: sql("checkpoint_per_api_items")
  action Sync {
    get "/items" { since: lastSync { param: "since" } }
    store response -> items { key: .id }
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-checkpoint-api-'));
  production = await startServer((_req, res) => json(res, 200, [{ id: 'p-1' }]));
  trial = await startServer((_req, res) => json(res, 200, [{ id: 't-1' }]));
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(production.base));
}, 180_000);

afterAll(async () => {
  await production?.close();
  await trial?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
const since = (server: LocalServer, i: number) => new URL(server.requests[i]!.url, 'http://x').searchParams.get('since');

describe('a sync checkpoint per API', () => {
  it('a trial against --source does not move the checkpoint of the mission base URL, and each carries on from its own', async () => {
    expect((await reqon('run', 'm.vague', '--source', `Api=${trial.base}`)).code).toBe(0);
    const never = since(trial, 0); // what a run with no checkpoint sends
    expect(never).toBe('1970-01-01T00:00:00.000Z');

    // The first run against the mission's own API starts from nothing, not from the trial.
    expect((await reqon('run', 'm.vague')).code).toBe(0);
    expect(since(production, 0)).toBe(never);

    // Each API carries on from its own checkpoint (a trailing slash is the same URL).
    expect((await reqon('run', 'm.vague', '--source', `Api=${trial.base}/`)).code).toBe(0);
    expect(since(trial, 1)).not.toBe(never);
    expect((await reqon('run', 'm.vague')).code).toBe(0);
    expect(since(production, 1)).not.toBe(never);
    // The trial's second run went on from the trial's first, production's from production's first.
    expect(Date.parse(since(trial, 1)!)).toBeLessThan(Date.parse(since(production, 1)!));
    // --source naming the mission's own base URL is that API: it goes on from production's last run.
    expect((await reqon('run', 'm.vague', '--source', `Api=${production.base}`)).code).toBe(0);
    expect(Date.parse(since(production, 2)!)).toBeGreaterThan(Date.parse(since(production, 1)!));
  });
});

describe('whose checkpoint a run reads (helper 75)', () => {
  const on = (db: string) => (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, db)], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, `data-${db}`) } });
  const asked = (server: LocalServer) => server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('since'));
  const NEVER = '1970-01-01T00:00:00.000Z';

  it('a base edited from staging to production starts from nothing, and each base goes on from its own', async () => {
    const reqon = on('edited.db');
    fs.writeFileSync(path.join(dir, 'staging.vague'), mission(trial.base));
    const [fromTrial, fromProduction] = [trial.requests.length, production.requests.length];
    expect((await reqon('run', 'staging.vague')).code).toBe(0);
    expect((await reqon('run', 'm.vague')).code).toBe(0);
    expect(asked(production).slice(fromProduction)).toEqual([NEVER]);
    expect((await reqon('run', 'staging.vague')).code).toBe(0);
    expect(asked(trial).slice(fromTrial)[1]).not.toBe(NEVER);
  });

  it("an imported run's checkpoint is none of this log's, nor a fork's copy of it", async () => {
    const theirs = on('theirs.db');
    const mine = on('mine.db');
    const made = await theirs('run', 'm.vague');
    expect(made.code).toBe(0);
    const runId = runIdOf(made);
    const bundle = path.join(dir, 'shared.reqonrun');
    fs.writeFileSync(bundle, (await theirs('export', runId)).stdout);
    expect((await mine('import', bundle)).code).toBe(0);
    // Nor is the checkpoint a fork of it copied (helper 75: `reqon resume` of the import advises a fork).
    const events = (await mine('events', runId, '--json')).stdout.trim().split('\n');
    const forked = await mine('fork', runId, '--at', String(events.length - 1), '--quiet');
    expect(forked.code, forked.stderr).toBe(0);
    const before = production.requests.length;
    expect((await mine('run', 'm.vague')).code).toBe(0);
    expect(asked(production).slice(before)).toEqual([NEVER]);
  });

  it('a checkpoint that names no API (recorded before checkpoints named theirs) is read by a run against the mission base, not by a trial', async () => {
    const reqon = on('legacy.db');
    expect((await reqon('run', 'm.vague')).code).toBe(0);
    // As a log written before checkpoints named their API holds it.
    const db = new Database(path.join(dir, 'legacy.db'));
    db.exec('DROP TRIGGER IF EXISTS reqon_events_append_only_update');
    const updated = db.prepare("UPDATE reqon_events SET payload = json_remove(payload, '$.api') WHERE type = 'checkpoint.advanced'").run();
    db.close();
    expect(updated.changes).toBe(1);
    const [fromTrial, fromProduction] = [trial.requests.length, production.requests.length];
    expect((await reqon('run', 'm.vague')).code).toBe(0);
    expect(asked(production).slice(fromProduction)[0]).not.toBe(NEVER);
    expect((await reqon('run', 'm.vague', '--source', `Api=${trial.base}`)).code).toBe(0);
    expect(asked(trial).slice(fromTrial)).toEqual([NEVER]);
  });
  it("a fork that carries a failed run to its end counts the checkpoint it copied (helper 76: the next sync started over)", async () => {
    const reqon = on('recovered.db');
    let notified = 0;
    const notify = await startServer((_req, res) => (++notified === 1 ? json(res, 500, { error: 'down' }) : json(res, 201, { ok: true })));
    try {
      fs.writeFileSync(
        path.join(dir, 'notify.vague'),
        mission(production.base)
          .replace('  run Sync', `  source Hook { auth: none, base: "${notify.base}" }\n  action Notify {\n    post "/done" { source: Hook, body: { ok: true }, retry: { maxAttempts: 1 } }\n  }\n  run Sync then Notify`),
      );
      const failed = await reqon('run', 'notify.vague', '--quiet');
      expect(failed.code, failed.stderr).toBe(1);
      const runId = runIdOf(failed);
      const events = (await reqon('events', runId, '--json')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string; stepPath: string });
      const synced = events.find((e) => e.type === 'action.completed' && e.stepPath === 'Sync')!;
      const forked = await reqon('fork', runId, '--at', String(synced.seq), '--quiet');
      expect(forked.code, forked.stderr).toBe(0);
      const before = production.requests.length;
      expect((await reqon('run', 'notify.vague', '--quiet')).code).toBe(0);
      expect(asked(production).slice(before)[0]).not.toBe(NEVER);
    } finally {
      await notify.close();
    }
  }, 60_000);
  it("a key in the base URL's query is no part of the checkpoint's API: rotated, the sync goes on, and it is never logged (helper 76)", async () => {
    const reqon = on('keyed.db');
    const [first, second] = ['key-one-1234567', 'key-two-7654321'];
    expect((await reqon('run', 'm.vague', '--source', `Api=${trial.base}?code=${first}`)).code).toBe(0);
    const before = trial.requests.length;
    expect((await reqon('run', 'm.vague', '--source', `Api=${trial.base}?code=${second}`)).code).toBe(0);
    expect(asked(trial).slice(before)[0]).not.toBe(NEVER);
    const runs = JSON.parse((await reqon('runs', '--json')).stdout) as { runId: string }[];
    for (const { runId } of runs) {
      const events = (await reqon('events', runId, '--json')).stdout;
      expect(events).toContain('checkpoint.advanced');
      expect(events).not.toContain(first);
      expect(events).not.toContain(second);
    }
  });
});
