/**
 * A run id that names no run in the log is a usage error — exit 2, one line naming the id and how
 * to list runs — on every command that takes one. Before, it was exit 1, the code of a failed run,
 * so a script that alerts on a failed run alerted on a typo (and `fork` gave 2 for a seq the run
 * lacks but 1 for a run the log lacks). A run that exists but cannot be taken (owned elsewhere) is
 * about the run, not the arguments: 11 (test/durability/ownership.int.test.ts).
 *
 * So is a `$REQON_HOST_ID` that cannot name this machine: one line, exit 2, before the command
 * does anything (it was an internal error from inside the run, exit 1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-unknown-run-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('a run id the log does not hold', () => {
  it('is exit 2 on every command that takes one, naming the id, and changes nothing', async () => {
    const made = await reqon('run', 'm.vague', '--quiet');
    expect(made.code, made.stderr).toBe(0);
    const runsBefore = (await reqon('runs', '--json')).stdout;
    for (const args of [
      ['show', 'run_nope'],
      ['events', 'run_nope'],
      ['store', 'run_nope', 's'],
      ['verify', 'run_nope'],
      ['resume', 'run_nope'],
      ['fork', 'run_nope', '--at', '1'],
      ['export', 'run_nope'],
    ]) {
      const result = await reqon(...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr, args[0]).toMatch(/no run run_nope in this log/);
      expect(result.stderr, args[0]).not.toMatch(/internal error|\n\s+at /);
    }
    expect((await reqon('runs', '--json')).stdout).toBe(runsBefore);
  }, 120_000);
});

describe('a $REQON_HOST_ID that cannot name this machine', () => {
  it('is exit 2 on a command, saying what it must be, and no run is made', async () => {
    const db = path.join(dir, 'host.db');
    const bad = await runCli(cli, ['run', 'm.vague', '--db', db], { cwd: dir, env: { REQON_HOST_ID: 'worker 1', REQON_DATA_DIR: path.join(dir, 'data') } });
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toBe(`reqon: REQON_HOST_ID must be 1–64 letters, digits, '.', '_' or '-' (it names this machine in run owners), got "worker 1"\n`);
    expect(bad.stdout).toBe('');
    expect(fs.existsSync(db)).toBe(false);
  });
});

