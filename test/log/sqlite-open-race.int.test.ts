/**
 * Several processes opening one new SQLite log at once (three `reqon worker`s started together):
 * one migrates it while another checks that it is not a foreign database. The check read the
 * schema version and the tables in two statements; a migration committed between them showed
 * version 0 with tables, "a SQLite database of another program", and that worker was refused
 * (seen in CI as a worker that never registered its schedule). Here the other process's
 * migration is committed, deterministically, right after the version is read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../engine/log/sqlite/migrations.js';
import { refuseForeignDatabase } from '../../engine/log/sqlite/sqlite-log.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-open-race-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('opening a new SQLite log while another process migrates it', () => {
  it('is not taken for a database of another program', () => {
    const file = path.join(dir, 'new.db');
    const other = new Database(file);
    other.pragma('journal_mode = WAL'); // as the first opener leaves it, before its migration
    const opener = new Database(file);
    let migrated = false;
    const pragma = opener.pragma.bind(opener);
    // The other process commits its migration just after this one has read the schema version.
    opener.pragma = ((source: string, options?: Database.PragmaOptions) => {
      const result = pragma(source, options);
      if (source === 'user_version' && !migrated) {
        migrated = true;
        migrate(other);
      }
      return result;
    }) as typeof opener.pragma;
    try {
      expect(() => refuseForeignDatabase(opener, file)).not.toThrow();
      expect(migrated).toBe(true);
      // And a later opener finds a Reqon log, not a foreign database.
      const later = new Database(file);
      try {
        expect(() => refuseForeignDatabase(later, file)).not.toThrow();
      } finally {
        later.close();
      }
    } finally {
      opener.close();
      other.close();
    }
  });
});
