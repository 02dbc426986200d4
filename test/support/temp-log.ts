/**
 * The one way tests open a temporary run log, on either backend:
 *
 *   describe.each(backends)('%s', (backend) => {
 *     it('…', async () => { const t = await openTempLog(backend); try { … } finally { await t.close(); } });
 *   });
 *
 * - sqlite: a file in a fresh temp dir.
 * - postgres: a fresh schema in the run's throwaway cluster (pg-global-setup.ts), named by the URL
 *   (`?options=-c search_path=…`, so a CLI child given it as `--db` sees the same), dropped on close.
 * `tempLogTarget` gives the same without opening it — a `--db` value for a CLI child process.
 *
 * `backends` is what `$REQON_TEST_BACKENDS` asks for (default both). When PostgreSQL was asked
 * for by default but has no cluster (binaries missing), it is left out and the reason is
 * printed once per test file; asked for explicitly, that is an error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { EventLog, OpenLogOptions } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
// Both backends loaded up front: under Vitest, concurrent first imports of one module graph can
// observe it half-initialised ("Cannot access … before initialization").
import '../../engine/log/sqlite/sqlite-log.js';
import '../../engine/log/postgres/postgres-log.js';
import { backendsExplicit, requestedBackends, type Backend } from './backends.js';

export type { Backend } from './backends.js';

function pgContext(): { url: string } | { missing: string } {
  try {
    return inject('reqonPg') ?? { missing: 'the PostgreSQL global setup did not run (test/vitest.config.ts globalSetup)' };
  } catch {
    const url = process.env['REQON_TEST_PG_URL'];
    return url ? { url } : { missing: 'not under Vitest and $REQON_TEST_PG_URL is unset' };
  }
}

function availableBackends(): Backend[] {
  const wanted = requestedBackends();
  if (!wanted.includes('postgres')) return wanted;
  const context = pgContext();
  if ('url' in context) return wanted;
  if (backendsExplicit()) throw new Error(`REQON_TEST_BACKENDS asks for postgres, but ${context.missing}`);
  console.warn(`[temp-log] PostgreSQL half of these tests SKIPPED: ${context.missing}`);
  return wanted.filter((b) => b !== 'postgres');
}

/** The backends this file's tests run on. */
export const backends: Backend[] = availableBackends();

export interface TempLogTarget {
  backend: Backend;
  /** What `--db` / openLog takes: a SQLite file path or a postgres:// URL. */
  target: string;
  /** A temp dir for the test's other files (the SQLite file lives here). */
  dir: string;
  /** Deletes the database and the dir; call once nothing has it open. */
  drop(): Promise<void>;
}

/** A fresh, empty (migrated) log database on `backend`, not opened. */
export async function tempLogTarget(backend: Backend, prefix = 'reqon-log-'): Promise<TempLogTarget> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (backend === 'sqlite') {
    return { backend, target: path.join(dir, 'reqon.db'), dir, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const context = pgContext();
  if (!('url' in context)) throw new Error(`no PostgreSQL for this test: ${context.missing}`);
  const name = `t_${randomBytes(6).toString('hex')}`;
  await admin(context.url, `CREATE SCHEMA ${name}`);
  return {
    backend,
    target: `${context.url}?options=${encodeURIComponent(`-c search_path=${name}`)}`,
    dir,
    drop: async () => {
      fs.rmSync(dir, { recursive: true, force: true });
      await admin(context.url, `DROP SCHEMA IF EXISTS ${name} CASCADE`);
    },
  };
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface TempLog extends TempLogTarget {
  log: EventLog;
  /** The SQLite file path, or the PostgreSQL URL (the same as `target`). */
  dbPath: string;
  /** Opens another connection to the same log (another process's view). */
  openAnother(opts?: OpenLogOptions): Promise<EventLog>;
  /** Closes the log (and any opened by openAnother) and drops the database. */
  close(): Promise<void>;
  /** Alias of close(). */
  cleanup(): Promise<void>;
}

export async function openTempLog(backend: Backend = 'sqlite', opts: OpenLogOptions = {}, prefix?: string): Promise<TempLog> {
  const t = await tempLogTarget(backend, prefix);
  const others: EventLog[] = [];
  let log: EventLog;
  try {
    log = await openLog(t.target, opts);
  } catch (error) {
    await t.drop();
    throw error;
  }
  const close = async (): Promise<void> => {
    for (const other of others) await other.close();
    await log.close();
    await t.drop();
  };
  return {
    ...t,
    log,
    dbPath: t.target,
    openAnother: async (more = opts) => {
      const other = await openLog(t.target, more);
      others.push(other);
      return other;
    },
    close,
    cleanup: close,
  };
}
