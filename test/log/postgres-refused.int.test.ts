/**
 * GUARANTEES, "What is not promised": the log runs on SQLite; `--db postgres://…` (or
 * `$REQON_DB=postgres://…`) is refused with one clear line and exit 2 — not "internal error
 * (please report it)" with a stack trace — and `--help` does not advertise PostgreSQL as working.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

let dir: string;
const URL = 'postgres://user:s3cret@127.0.0.1:5432/reqon';

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-pg-refused-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  action A { let x = 1 }\n  run A\n}\n');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function expectRefused(result: { code: number | null; stdout: string; stderr: string }): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(/^reqon: --db postgres:\/\/…: the PostgreSQL log backend is not available yet; give a SQLite file path/);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(result.stderr + result.stdout).not.toContain('s3cret');
}

describe('--db postgres://…', () => {
  for (const args of [['runs'], ['show', 'r1'], ['events', 'r1'], ['run', 'm.vague'], ['studio', '--no-open'], ['worker', '--once']]) {
    it(`reqon ${args.join(' ')} refuses it cleanly, exit 2`, async () => {
      expectRefused(await runCli(builtCli(), [...args, '--db', URL], { cwd: dir }));
    });
  }

  it('from $REQON_DB too, and nothing is created in the working directory', async () => {
    expectRefused(await runCli(builtCli(), ['runs'], { cwd: dir, env: { REQON_DB: URL } }));
    expect(fs.readdirSync(dir).sort()).toEqual(['m.vague']);
  });

  it('--help does not advertise PostgreSQL as a working backend', async () => {
    const help = await runCli(builtCli(), ['runs', '--help'], { cwd: dir });
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toMatch(/--db <path>/);
    expect(text).not.toMatch(/for PostgreSQL/);
    expect(text).toMatch(/PostgreSQL is not available yet: postgres:\/\/… is refused/);
  });
});
