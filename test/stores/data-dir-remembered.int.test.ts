/**
 * A run's file stores are in the data folder of the process that started it, and a resume reads
 * and writes those whichever folder it runs in (helper 75: a worker started elsewhere resumed a
 * paused run, read an empty file store, and completed with nothing pushed). A fork's are in its
 * forker's folder, holding what the fork's copied prefix wrote (helper 94: they lacked it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

const MISSION = `mission Split {
  store inbox: file("inbox")
  store outbox: file("outbox")
  action Load {
    for i in [1, 2, 3] {
      store { id: i } -> inbox { key: .id }
    }
    pause { duration: "1s" }
    for item in inbox {
      store { id: item.id, pushed: true } -> outbox { key: .id }
    }
  }
  run Load
}
`;

let cli: string;
let dir: string;

/** The seq of the run's pause step's start: a fork there copies the three writes to `inbox` before it. */
async function pauseSeq(runId: string, db: string): Promise<number> {
  const events = await runCli(cli, ['events', runId, '--db', db, '--json'], { cwd: dir });
  return events.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { seq: number; type: string; payload: { stepType?: string } })
    .find((e) => e.type === 'step.started' && e.payload.stepType === 'Pause')!.seq;
}
beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-data-dir-'));
  fs.mkdirSync(path.join(dir, 'project'));
  fs.mkdirSync(path.join(dir, 'elsewhere'));
  fs.writeFileSync(path.join(dir, 'project', 'm.vague'), MISSION);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a paused run resumed from another folder', () => {
  it('reads and writes the file stores of the folder it started in', async () => {
    const db = path.join(dir, 'log.db');
    // A relative data folder, as by default: each process's is `.reqon-data` in its working directory.
    const env = { REQON_DATA_DIR: '.reqon-data' };
    const started = await runCli(cli, ['run', 'm.vague', '--db', db, '--quiet'], { cwd: path.join(dir, 'project'), env: { ...env } });
    expect(started.code, describeResult(started)).toBe(10);
    await new Promise((r) => setTimeout(r, 1_100));
    const resumed = await runCli(cli, ['resume', runIdOf(started), '--db', db, '--quiet'], { cwd: path.join(dir, 'elsewhere'), env: { ...env } });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const outbox = JSON.parse(fs.readFileSync(path.join(dir, 'project', '.reqon-data', 'outbox.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(outbox)).toEqual(['1', '2', '3']);
    expect(fs.existsSync(path.join(dir, 'elsewhere', '.reqon-data'))).toBe(false);
  }, 60_000);
  it("a fork's file stores are in the forker's folder, never its parent's (helper 76: it overwrote the parent's store)", async () => {
    const db = path.join(dir, 'fork.db');
    const env = { REQON_DATA_DIR: '.reqon-data' };
    fs.mkdirSync(path.join(dir, 'forker'));
    const started = await runCli(cli, ['run', 'm.vague', '--db', db, '--quiet'], { cwd: path.join(dir, 'project'), env });
    expect(started.code, describeResult(started)).toBe(10);
    const parentInbox = fs.readFileSync(path.join(dir, 'project', '.reqon-data', 'inbox.json'), 'utf8');
    const forked = await runCli(cli, ['fork', runIdOf(started), '--at', '2', '--db', db, '--quiet'], { cwd: path.join(dir, 'forker'), env });
    expect(forked.code, describeResult(forked)).toBe(10);
    expect(fs.existsSync(path.join(dir, 'forker', '.reqon-data', 'inbox.json'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'project', '.reqon-data', 'inbox.json'), 'utf8')).toBe(parentInbox);
  }, 60_000);
  it("a fork made in another folder finds there what its copied prefix wrote (helper 94: it read an empty store and pushed nothing)", async () => {
    const db = path.join(dir, 'fork-prefix.db');
    const env = { REQON_DATA_DIR: '.reqon-data' };
    fs.mkdirSync(path.join(dir, 'forker2'));
    const started = await runCli(cli, ['run', 'm.vague', '--db', db, '--quiet'], { cwd: path.join(dir, 'project'), env });
    expect(started.code, describeResult(started)).toBe(10);
    const parentInbox = fs.readFileSync(path.join(dir, 'project', '.reqon-data', 'inbox.json'), 'utf8');
    const pause = { seq: await pauseSeq(runIdOf(started), db) };
    // The three writes to `inbox` are in the copied prefix; the pause and the push are the fork's.
    const forked = await runCli(cli, ['fork', runIdOf(started), '--at', String(pause.seq), '--db', db, '--quiet'], { cwd: path.join(dir, 'forker2'), env });
    expect(forked.code, describeResult(forked)).toBe(10);
    const forkId = runIdOf(forked);
    const inbox = JSON.parse(fs.readFileSync(path.join(dir, 'forker2', '.reqon-data', 'inbox.json'), 'utf8')) as Record<string, unknown>;
    expect(inbox).toEqual({ '1': { id: 1 }, '2': { id: 2 }, '3': { id: 3 } });
    await new Promise((r) => setTimeout(r, 1_100));
    const resumed = await runCli(cli, ['resume', forkId, '--db', db, '--quiet'], { cwd: path.join(dir, 'elsewhere'), env });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const outbox = JSON.parse(fs.readFileSync(path.join(dir, 'forker2', '.reqon-data', 'outbox.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(outbox)).toEqual(['1', '2', '3']);
    expect(fs.readFileSync(path.join(dir, 'project', '.reqon-data', 'inbox.json'), 'utf8')).toBe(parentInbox);
  }, 60_000);

  it("a fork in its parent's own folder under another name (a symbolic link) leaves the parent's file alone; an imported run's fork gets its prefix's writes (helper 95)", async () => {
    const db = path.join(dir, 'fork-link.db');
    const env = { REQON_DATA_DIR: '.reqon-data' };
    fs.mkdirSync(path.join(dir, 'linked-parent'));
    fs.writeFileSync(path.join(dir, 'linked-parent', 'm.vague'), MISSION);
    fs.symlinkSync(path.join(dir, 'linked-parent'), path.join(dir, 'linked-alias'));
    const started = await runCli(cli, ['run', 'm.vague', '--db', db, '--quiet'], { cwd: path.join(dir, 'linked-parent'), env });
    expect(started.code, describeResult(started)).toBe(10);
    const inboxFile = path.join(dir, 'linked-parent', '.reqon-data', 'inbox.json');
    // The parent changes its store after the fork point: a seeding of its own folder would undo it.
    const changed = JSON.stringify({ '1': { id: 1, edited: true } });
    fs.writeFileSync(inboxFile, changed);
    const pause = { seq: await pauseSeq(runIdOf(started), db) };
    const forked = await runCli(cli, ['fork', runIdOf(started), '--at', String(pause.seq), '--db', db, '--quiet'], { cwd: path.join(dir, 'linked-alias'), env });
    expect(forked.code, describeResult(forked)).toBe(10);
    expect(fs.readFileSync(inboxFile, 'utf8')).toBe(changed);

    // Exported, imported into another log elsewhere and forked there: the prefix's writes are seeded.
    const bundle = path.join(dir, 'parent.reqonrun');
    const exported = await runCli(cli, ['export', runIdOf(started), '--db', db], { cwd: dir, env });
    expect(exported.code, describeResult(exported)).toBe(0);
    fs.writeFileSync(bundle, exported.stdout);
    fs.mkdirSync(path.join(dir, 'importer'));
    const otherDb = path.join(dir, 'importer', 'other.db');
    const imported = await runCli(cli, ['import', bundle, '--db', otherDb], { cwd: path.join(dir, 'importer'), env });
    expect(imported.code, describeResult(imported)).toBe(0);
    const fromImport = await runCli(cli, ['fork', runIdOf(started), '--at', String(pause.seq), '--db', otherDb, '--quiet'], { cwd: path.join(dir, 'importer'), env });
    expect(fromImport.code, describeResult(fromImport)).toBe(10);
    const seeded = JSON.parse(fs.readFileSync(path.join(dir, 'importer', '.reqon-data', 'inbox.json'), 'utf8')) as Record<string, unknown>;
    expect(seeded).toEqual({ '1': { id: 1 }, '2': { id: 2 }, '3': { id: 3 } });
  }, 60_000);
});
