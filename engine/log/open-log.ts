/**
 * Backend selection: the one place that knows which database a `--db` value names.
 * `postgres://…` / `postgresql://…` opens the shared PostgreSQL log; anything else is a SQLite
 * file path (the embedded default). Drivers load on demand, so importing the contract (log.ts)
 * or this file loads neither.
 */
import { LogTargetError } from './errors.js';
import type { EventLog, OpenLogOptions } from './log.js';

/** True when `target` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * `scheme:/…` of any other scheme (`postgress://`, `postgresql:/…`, `mysql://`, `sqlite:///…`): a
 * typo or another database's URL, which as a path would quietly become a new local SQLite log
 * under `./postgress:/…` — the run recorded where nobody looks. A one-letter scheme is a Windows
 * drive (`C:/…`), a path.
 */
export function otherUrlScheme(target: string): string | undefined {
  return /^([a-z][a-z0-9+.-]+):\//i.exec(target)?.[1];
}

/** Opens (creating and migrating if needed) the log at `target`: a SQLite file path or a postgres:// URL. */
export async function openLog(target: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  const scheme = typeof target === 'string' && !isPostgresUrl(target) ? otherUrlScheme(target) : undefined;
  if (scheme !== undefined) {
    throw new LogTargetError(
      target.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@'),
      `a "${scheme}:" URL is no log this engine opens; give a SQLite file path (such as .reqon/reqon.db) or a PostgreSQL URL, postgres://USER@HOST:PORT/DB`,
    );
  }
  if (typeof target === 'string' && isPostgresUrl(target)) {
    const { openPostgresLog } = await import('./postgres/postgres-log.js');
    return openPostgresLog(target, opts);
  }
  const { openSqliteLog } = await import('./sqlite/sqlite-log.js');
  return openSqliteLog(target, opts);
}
