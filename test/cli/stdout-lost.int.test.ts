/**
 * A stdout that goes away or fails (found by helper 38). `reqon run m.vague | head -1` takes the
 * run id and closes the pipe: the run was cut short there, left `running`, and the command exited
 * 1 though nothing failed. stdout on a full disk (ENOSPC) crashed every command with a stack
 * trace. Now a command whose work is more than its output (run, resume, worker…) carries on
 * without it and exits as its work ended; a command that only prints stops; any failure other
 * than a closed pipe is one line on stderr.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
const db = () => path.join(dir, 'log.db');
const reqon = (...args: string[]) => runCli(cli, [...args, '--db', db()], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-stdout-lost-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  store s: sql("s")\n  action A {\n    for i in range(0, 200) {\n      store { id: i } -> s { key: .id }\n    }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI with its stdout a pipe that is closed as soon as the first line arrives (`| head -1`). */
function firstLineThenClose(args: string[]): Promise<{ first: string; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args, '--db', db()], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REQON_DATA_DIR: path.join(dir, 'data') } });
  let first = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    first += chunk.toString();
    if (first.includes('\n')) child.stdout.destroy();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ first: first.split('\n')[0]!, code, stderr })));
}

describe('stdout lost', () => {
  it('a run whose reader took its first line and left carries on to its end', async () => {
    const r = await firstLineThenClose(['run', 'm.vague', '--quiet']);
    expect(r.first).toMatch(/^run run_\S+$/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    const runId = r.first.slice('run '.length);
    const shown = await reqon('show', runId, '--json');
    expect((JSON.parse(shown.stdout) as { status: string }).status).toBe('completed');
  });

  it.skipIf(!fs.existsSync('/dev/full'))('a full stdout is one line on stderr, not a stack trace; a run still completes', async () => {
    const out = fs.openSync('/dev/full', 'w');
    try {
      const run = spawn(process.execPath, [cli, 'run', 'm.vague', '--quiet', '--db', db()], { cwd: dir, stdio: ['ignore', out, 'pipe'] });
      let stderr = '';
      run.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
      expect(code, stderr).toBe(0);
      expect(stderr).toMatch(/^reqon: cannot write to stdout \(ENOSPC\); the rest of the output is dropped$/m);
      expect(stderr).not.toMatch(/\n\s+at /);

      const listed = spawn(process.execPath, [cli, 'runs', '--db', db()], { cwd: dir, stdio: ['ignore', out, 'pipe'] });
      let listedErr = '';
      listed.stderr!.on('data', (c: Buffer) => (listedErr += c.toString()));
      // `runs` only prints: it stops, and a command cut short does not exit 0.
      expect(await new Promise<number | null>((resolve) => listed.on('exit', resolve)), listedErr).toBe(1);
      expect(listedErr.trim()).toBe('reqon: cannot write to stdout (ENOSPC); the rest of the output is dropped');
    } finally {
      fs.closeSync(out);
    }
    const runs = await reqon('runs', '--json');
    expect(describeResult(runs) && (JSON.parse(runs.stdout) as { status: string }[]).every((r) => r.status === 'completed')).toBe(true);
  });
});
