/**
 * Backend selection: the one place that knows which database a `--db` value names.
 * `postgres://…` / `postgresql://…` opens the shared PostgreSQL log; anything else is a SQLite
 * file path (the embedded default). Drivers load on demand, so importing the contract (log.ts)
 * or this file loads neither.
 */
import type { EventLog, OpenLogOptions } from './log.js';

/** True when `target` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Opens (creating and migrating if needed) the log at `target`: a SQLite file path or a postgres:// URL. */
export async function openLog(target: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  if (typeof target === 'string' && isPostgresUrl(target)) {
    const { openPostgresLog } = await import('./postgres/postgres-log.js');
    return openPostgresLog(target, opts);
  }
  const { openSqliteLog } = await import('./sqlite/sqlite-log.js');
  return openSqliteLog(target, opts);
}
