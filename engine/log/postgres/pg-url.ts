/**
 * A `--db postgres://…` URL as the `pg` driver's connection settings, read as libpq reads it, and
 * as it may be printed (without its password). Loads no driver: the CLI labels a URL with it.
 *
 * Two forms libpq takes that `pg`'s own reading (pg-connection-string) or the WHATWG URL parser
 * did not:
 * - a database name percent-encoded past what `decodeURI` decodes (`/reqon%2Fprod` names the
 *   database `reqon/prod`; pg-connection-string left `%2F`, `%3F`, `%23`… as they were);
 * - a URL with a user but no host, the host given as a query parameter — a Unix socket's folder
 *   (`postgres://reqon@/reqon?host=/var/run/postgresql`): the URL parser refuses `user@` before
 *   an empty host.
 * Every other setting is pg-connection-string's, as `connectionString` gave it before.
 */
import { parse } from 'pg-connection-string';
import type { ClientConfig } from 'pg';

/** Stands in for an empty host while the URL parser reads the rest (pg-connection-string does the same). */
const NO_HOST = '__reqon_no_host__';

/** A malformed `--db` URL; the message never holds the password. */
export class PgUrlError extends Error {
  override readonly name = 'PgUrlError';
}

/** The URL as the WHATWG parser reads it, an empty host (`user@/db`) stood in for by NO_HOST; undefined if malformed. */
function readUrl(url: string): { parsed: URL; noHost: boolean } | undefined {
  try {
    return { parsed: new URL(url), noHost: false };
  } catch {
    // Only the form the parser refuses and libpq takes: user info, then no host.
    const m = /^(postgres(?:ql)?:\/\/[^/?#]*@)(?=[/?#]|$)/i.exec(url);
    if (!m) return undefined;
    try {
      return { parsed: new URL(m[1] + NO_HOST + url.slice(m[1]!.length)), noHost: true };
    } catch {
      return undefined;
    }
  }
}

/** The URL as it may be printed: its password `***`; `postgres://…` if it cannot be read. */
export function redactPgUrl(url: string): string {
  const read = readUrl(url);
  if (!read) return 'postgres://…';
  if (read.parsed.password !== '') read.parsed.password = '***';
  // libpq takes the password as a query parameter too (`?password=…`).
  for (const name of [...read.parsed.searchParams.keys()]) if (name.toLowerCase() === 'password') read.parsed.searchParams.set(name, '***');
  const text = read.parsed.toString();
  return read.noHost ? text.replace(`@${NO_HOST}`, '@') : text;
}

/** The driver's connection settings for `url`; throws PgUrlError (saying how to write one) when it is malformed. */
export function pgConfigOf(url: string): ClientConfig {
  const read = readUrl(url);
  if (!read) {
    // Most often a password with a raw @ or / in it: say how to write one.
    throw new PgUrlError(
      `--db: '${redactPgUrl(url)}' is not a valid PostgreSQL URL; expected postgres://USER@HOST:PORT/DB, with @ : / ? # % in a user name or password percent-encoded (%40 %3A %2F %3F %23 %25)`,
    );
  }
  // sslmode as libpq reads it (`require`: encrypted, the certificate not checked unless a
  // sslrootcert is given), where pg-connection-string's own reading took `require` for
  // `verify-full` and printed an 11-line warning; a URL that sets `uselibpqcompat` itself keeps it.
  let config: ClientConfig & Record<string, unknown>;
  try {
    config = parse(url, /[?&]uselibpqcompat=/i.test(url) ? {} : { useLibpqCompat: true }) as ClientConfig & Record<string, unknown>;
  } catch (error) {
    // A setting the driver refuses (verify-ca without sslrootcert, an unreadable sslcert file).
    throw new PgUrlError(`--db: '${redactPgUrl(url)}': ${error instanceof Error ? error.message : String(error)}`);
  }
  const path = read.parsed.pathname.slice(1);
  if (path !== '' && path.includes('%')) {
    try {
      config.database = decodeURIComponent(path);
    } catch {
      // A stray % that encodes nothing: libpq would refuse it; the server will say it has no such database.
    }
  }
  return config;
}
