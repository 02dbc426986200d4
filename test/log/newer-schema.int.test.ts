/**
 * A log database written by a newer engine (a schema version this one does not know) is refused
 * by every command in one line, exit 2 — never "internal error" with a stack — and left as it was.
 * SQLite only: it sets SQLite's schema version (user_version) through better-sqlite3. PostgreSQL's
 * refusal of a newer database is tested at openLog (test/log/log.int.test.ts, "migrations: …"),
 * not command by command.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../engine/log/sqlite/migrations.js';
import { builtCli, runCli } from '../durability/support/cli-build.js';

let dir: string;
let db: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-newer-schema-'));
  db = path.join(dir, 'reqon.db');
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  action A { let x = 1 }\n  run A\n}\n');
  const raw = new Database(db);
  raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  raw.close();
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a log of a newer engine', () => {
  for (const args of [['runs'], ['show', 'r1'], ['run', 'm.vague'], ['studio', '--no-open'], ['worker', '--once']]) {
    it(`reqon ${args.join(' ')} refuses it cleanly, exit 2`, async () => {
      const result = await runCli(builtCli(), [...args, '--db', db], { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this engine knows \\(${SCHEMA_VERSION}\\); upgrade reqon`));
      expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
      const raw = new Database(db, { readonly: true });
      expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1);
      raw.close();
    });
  }
});
