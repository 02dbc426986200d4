/**
 * `--db PATH` naming something that is not a Reqon log — a text file, a folder, a truncated or
 * damaged SQLite file — is one line naming the path and what SQLite said, exit 2, and the file is
 * left exactly as it was. Before, every command printed "internal error (please report it)"
 * with a stack trace and exited 1, the code of a failed run.
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
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-db-option-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, args, { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('--db that is not a log', () => {
  it('a text file, a truncated log and a folder: exit 2, one line naming the path, nothing changed', async () => {
    const good = path.join(dir, 'good.db');
    const made = await reqon('run', 'm.vague', '--db', good, '--quiet');
    expect(made.code, made.stderr).toBe(0);
    const text = path.join(dir, 'notes.db');
    fs.writeFileSync(text, 'my notes, not a database\n');
    const truncated = path.join(dir, 'truncated.db');
    fs.writeFileSync(truncated, fs.readFileSync(good).subarray(0, 200));
    const folder = path.join(dir, 'folder.db');
    fs.mkdirSync(folder);

    for (const db of [text, truncated, folder]) {
      const before = fs.statSync(db).isFile() ? fs.readFileSync(db) : null;
      for (const args of [['runs'], ['run', 'm.vague', '--quiet'], ['show', 'run_x']]) {
        const result = await reqon(...args, '--db', db);
        expect(result.code, `${args[0]} --db ${path.basename(db)}: ${result.stderr}`).toBe(2);
        expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr).toContain(db);
        expect(result.stderr).toMatch(/cannot be opened as a Reqon log/);
        expect(result.stdout).not.toMatch(/^run /m);
      }
      if (before) expect(fs.readFileSync(db).equals(before)).toBe(true);
    }
  });
});
