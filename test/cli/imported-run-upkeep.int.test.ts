/**
 * A log that imported a run (`reqon import`) can still be copied and pruned (helper 75: the
 * imported run's never-expiring lease read as a live worker, so `reqon log copy` refused the log
 * for good and `reqon prune` kept the run for ever). The copy keeps it imported.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

const MISSION = 'mission M {\n  store s: sql("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n';

let cli: string;
let dir: string;
beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-imported-upkeep-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, args, { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
const owners = (db: string) => {
  const file = new Database(path.join(dir, db), { readonly: true });
  try {
    return file.prepare('SELECT run_id, owner FROM reqon_runs ORDER BY run_id').all() as { run_id: string; owner: string | null }[];
  } finally {
    file.close();
  }
};

describe('a log holding an imported run', () => {
  it('is copied whole, the run still imported, and pruned like any other', async () => {
    const theirs = await reqon('run', 'm.vague', '--db', 'theirs.db', '--quiet');
    expect(theirs.code, describeResult(theirs)).toBe(0);
    const bundle = path.join(dir, 'shared.reqonrun');
    fs.writeFileSync(bundle, (await reqon('export', runIdOf(theirs), '--db', 'theirs.db')).stdout);
    expect((await reqon('import', bundle, '--db', 'mine.db')).code).toBe(0);
    const own = await reqon('run', 'm.vague', '--db', 'mine.db', '--quiet');
    expect(own.code, describeResult(own)).toBe(0);

    const copied = await reqon('log', 'copy', '--from', 'mine.db', '--to', 'copy.db');
    expect(copied.code, describeResult(copied)).toBe(0);
    expect(owners('copy.db')).toEqual(owners('mine.db'));
    expect(owners('copy.db').find((r) => r.run_id === runIdOf(theirs))!.owner).toBe('imported:bundle');

    await new Promise((r) => setTimeout(r, 1_100));
    const pruned = await reqon('prune', '--completed-before', '1s', '--db', 'mine.db');
    expect(pruned.code, describeResult(pruned)).toBe(0);
    expect(owners('mine.db').map((r) => r.run_id)).not.toContain(runIdOf(theirs));
  }, 90_000);
});
