/**
 * Named failures of the run log. Each message quotes the run and ends with what to do, because
 * these reach workers' logs and the CLI as they are.
 */

/**
 * The fencing check failed: the lease `(owner, epoch)` is no longer the run's. Nothing of the
 * failed operation was written. The holder must stop working on the run; it must not retry.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(
    readonly runId: string,
    readonly owner: string,
    readonly epoch: number,
    /** Who holds the run now, when known. */
    readonly current?: { owner: string | null; epoch: number },
  ) {
    const now =
      current === undefined
        ? ''
        : current.owner === null
          ? ` (the run has no owner now, epoch ${current.epoch})`
          : ` (now held by '${current.owner}' at epoch ${current.epoch})`;
    super(
      `lease on run '${runId}' lost: owner '${owner}' at epoch ${epoch} is no longer current${now}; ` +
        'nothing was written — stop working on this run and leave it to its current owner',
    );
  }
}

/**
 * A stored event whose payload is not a JSON object: the log was edited or damaged outside the engine
 * (the engine writes every payload through JSON.stringify, and events are never updated).
 */
export class UnreadableEventError extends Error {
  override readonly name = 'UnreadableEventError';
  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly type: string,
    reason: string,
  ) {
    super(`the log of run '${runId}' is damaged: the payload of its event ${seq} (${type}) is not a JSON object (${reason}); it was changed outside the engine — restore the log from a backup`);
  }

  /** What is wrong, without the run (a report that names it already). */
  get detail(): string {
    return `the payload of its event ${this.seq} (${this.type}) is not a JSON object (changed outside the engine)`;
  }
}

export class RunNotFoundError extends Error {
  override readonly name = 'RunNotFoundError';
  constructor(readonly runId: string) {
    super(`run '${runId}' not found in this log; check the run id (reqon runs lists them) and the --db path`);
  }
}

export class LogClosedError extends Error {
  override readonly name = 'LogClosedError';
  constructor(operation: string) {
    super(`the run log is closed; '${operation}' was called after close() — open the log again`);
  }
}

/** The database was written by a newer engine (a schema version this one does not know). */
export class LogVersionError extends Error {
  override readonly name = 'LogVersionError';
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(`the log database has schema version ${found}, newer than this engine knows (${known}); upgrade reqon to open it`);
  }
}

/**
 * What `--db` names is no log this engine can open, and nothing was written to it: a URL of a
 * scheme other than postgres:// (a typo must not become a local file), or a SQLite database of
 * another program (its tables are not a Reqon log's, and migrating it would change that program's
 * file), or something that is not a file.
 */
export class LogTargetError extends Error {
  override readonly name = 'LogTargetError';
  constructor(
    /** Where, without a password. */
    readonly target: string,
    reason: string,
  ) {
    super(`${target}: ${reason}`);
  }
}

/** A commit claimed an inbox delivery that another run (or wait, or pause) claimed first: nothing of it was written. */
export class DeliveryClaimedError extends Error {
  override readonly name = 'DeliveryClaimedError';
  constructor(
    readonly path: string,
    readonly eventId: string,
  ) {
    super(`webhook delivery '${eventId}' on ${path} was already claimed by another wait; nothing of this commit was written`);
  }
}

/** The log's database cannot be reached (or the connection broke): nothing of the operation is known to be written unless it answered. */
export class LogConnectionError extends Error {
  override readonly name = 'LogConnectionError';
  constructor(
    /** Where, without a password. */
    readonly target: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach the log database ${target}: ${reason}; check that the server is running and that --db (or $REQON_DB) names it`, options);
  }
}

/**
 * The log database answered but refused to set up or open the run log's tables (a role without
 * CREATE on the schema, a search_path naming no schema): a problem of the deployment, said in one
 * line, not an internal error.
 */
export class LogSetupError extends Error {
  override readonly name = 'LogSetupError';
  constructor(
    /** Where, without a password. */
    readonly target: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    // The hint only where it helps: no privilege (42501), no schema to create in (3F000).
    const code = (options?.cause as { code?: unknown } | undefined)?.code;
    const hint =
      code === '42501' || code === '3F000'
        ? '; the role --db (or $REQON_DB) connects as needs CREATE on the schema its search_path names (the engine creates its tables there on first use)'
        : '';
    super(`cannot set up the run log in ${target}: ${reason}${hint}`, options);
  }
}

/**
 * True for an error that says the log database cannot be reached (refused, broken connection,
 * server shutting down or starting up), not that something is wrong with what was asked.
 */
export function logUnreachable(error: unknown): boolean {
  if (error instanceof LogConnectionError) return true;
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^(08|57P0[1-3])/.test(e.code)) return true;
  if (typeof e?.code === 'string' && /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT)$/.test(e.code)) return true;
  return typeof e?.message === 'string' && /Connection terminated|connection (?:is )?closed|Client has encountered a connection error/i.test(e.message);
}

/**
 * True when the log's database refused for now because another holds a lock longer than it waits
 * (SQLite's SQLITE_BUSY/SQLITE_LOCKED past its busy timeout — a backup, a `sqlite3` shell in a
 * write transaction —, PostgreSQL's lock_timeout 55P03): nothing was written, and asking again
 * later works. Like an unreachable log, never a reason for a long-running process to exit.
 */
export function logBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(SQLITE_BUSY|SQLITE_LOCKED|55P03$)/.test(code);
}

/**
 * How the CLI says, in the line it exits 2 with, that the log stayed locked (logBusy): the studio,
 * which runs the CLI as a child, reads it to answer 503 retryable rather than a 400.
 */
export const LOG_LOCKED_TEXT = 'the log is locked by another process and stayed locked';

/** An unreachable or busy log (logUnreachable, logBusy): wait and ask again. */
export function logUnavailable(error: unknown): boolean {
  return logUnreachable(error) || logBusy(error);
}

/** SQLite result codes that say the database itself failed (disk, file, lock), not the write asked of it. */
const SQLITE_INFRASTRUCTURE = /^SQLITE_(IOERR|FULL|CORRUPT|NOTADB|READONLY|CANTOPEN|BUSY|LOCKED|NOMEM|PROTOCOL)/;
/**
 * PostgreSQL SQLSTATEs of the same: insufficient resources (a full disk), system errors, operator
 * intervention (a statement_timeout or a cancel, 57014), a lock_timeout (55P03) and an
 * idle-in-transaction timeout (25P03) — limits on the log's statements, which a step's onError
 * tolerated before, skipping every iteration whose commit they cut.
 */
const PG_INFRASTRUCTURE = /^(53|58|57|55P03|25P03)/;

/**
 * True for an error of the log itself — unreachable, closed, out of disk, failing I/O — rather than
 * of what a step asked it to do (a table name, a value a column cannot hold). Such an error is
 * never a step's failure: no `onError` may tolerate it and no run is failed for it; the walk
 * stops, nothing after the last commit counts, and the run stays resumable once the log is back.
 */
export function isLogFailure(error: unknown): boolean {
  // A step's failure, maybe replayed from the log with the code it was recorded with (an older
  // engine recorded some log failures so): it is the step's, or that run could never resume.
  if (error instanceof Error && error.name === 'StepError') return false;
  if (logUnreachable(error)) return true;
  if (!(error instanceof Error)) return false;
  if (error.name === 'LogClosedError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return error.name === 'SqliteError' ? SQLITE_INFRASTRUCTURE.test(code) : PG_INFRASTRUCTURE.test(code);
}
