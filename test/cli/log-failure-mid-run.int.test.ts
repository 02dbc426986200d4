/**
 * The log fails under a run the CLI carries (here: another process holds the SQLite file locked
 * past the CLI's wait, as a backup tool or a `sqlite3` shell left in a transaction does; a full
 * disk or a PostgreSQL restart end the same way). The run is `running` in the log and resumable:
 * `reqon run` says so with the run's id, exits 12 (interrupted), not 1 (failed), and with `--json`
 * prints a result line a script can read last. Helper 86: exit 1, no JSON line (the last line was
 * `run RUN_ID`), and a hint naming the literal `RUN_ID`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';
import { FakeApi } from '../support/fake-api.js';

let cli: string;
let dir: string;
let api: FakeApi;
const db = () => path.join(dir, 'log.db');

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-log-failure-'));
  api = new FakeApi();
  api.on('POST /slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { status: 201, body: { ok: true } };
  });
  await api.start();
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  action A {\n    for i in range(0, 4) {\n      post "/slow" { body: { i: i } }\n    }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(async () => {
  await api.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a log locked past the wait mid-run: exit 12, the JSON result says running and resumable, and resume finishes it with each POST once', async () => {
  const child = spawn(process.execPath, [cli, 'run', 'm.vague', '--json', '--source', `Api=${api.url}`, '--db', db()], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  // Once the first POST is on its way, hold the log's write lock longer than the CLI waits (5 s).
  for (let i = 0; i < 200 && api.lines().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(api.lines().length).toBeGreaterThan(0);
  const holder = new Database(db());
  holder.exec('BEGIN EXCLUSIVE');
  const code = await exited;
  holder.exec('ROLLBACK');
  holder.close();

  expect(code, `${stdout}\n${stderr}`).toBe(12);
  const lines = stdout.trim().split('\n');
  const runId = lines[0]!.replace(/^run /, '');
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ runId, status: 'running', interrupted: { code: 'log-failed' }, resumable: true });
  expect(stderr).toContain(`run ${runId} is interrupted, not failed`);
  expect(stderr).toContain(`\`reqon resume ${runId}\``);
  expect(stderr).not.toMatch(/RUN_ID|internal error/);

  const shown = await runCli(cli, ['show', runId, '--json', '--db', db()], { cwd: dir });
  expect((JSON.parse(shown.stdout) as { status: string }).status).toBe('running');
  const resumed = await runCli(cli, ['resume', runId, '--db', db()], { cwd: dir });
  expect(resumed.code, describeResult(resumed)).toBe(0);
  // Each iteration's POST applied once (a re-send after the interruption carries the same key).
  expect([...api.applied.values()]).toEqual([1, 1, 1, 1]);
}, 60_000);

it('a log locked before resume changed anything: exit 2, the run still suspended, never "interrupted" (helper 88)', async () => {
  // Before: exit 12 and a hint whose plain `reqon resume` would spend the pause without the payload.
  fs.writeFileSync(
    path.join(dir, 'paused.vague'),
    'mission P {\n  action A {\n    for i in range(0, 40000) {\n      let x = i\n    }\n    pause { resumeOn: webhook "/approve" }\n  }\n  run A\n}\n',
  );
  fs.writeFileSync(path.join(dir, 'edit.vague'), `// edited\n${fs.readFileSync(path.join(dir, 'paused.vague'), 'utf8')}`);
  const started = await runCli(cli, ['run', 'paused.vague', '--db', db(), '--quiet'], { cwd: dir });
  expect(started.code, describeResult(started)).toBe(10);
  const runId = started.stdout.split('\n')[0]!.replace(/^run /, '');
  // The edit's replay check of 40k iterations runs before the pause's compare-and-set: the lock
  // taken meanwhile (or, on a slow machine, before the log opened) is met before anything changed.
  const resume = runCli(cli, ['resume', runId, '--mission', 'edit.vague', '--payload', '{"ok":true}', '--json', '--db', db()], { cwd: dir });
  await new Promise((resolve) => setTimeout(resolve, 600));
  const holder = new Database(db());
  holder.exec('BEGIN EXCLUSIVE');
  const r = await resume;
  holder.exec('ROLLBACK');
  holder.close();
  expect(r.code, describeResult(r)).toBe(2);
  expect(r.stderr).toMatch(/the log is locked by another process and stayed locked/);
  expect(r.stderr).toMatch(/nothing was (changed|done)/);
  expect(r.stdout).not.toMatch(/interrupted/);
  const shown = await runCli(cli, ['show', runId, '--json', '--db', db()], { cwd: dir });
  expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'suspended' });
}, 60_000);
