/**
 * Which errors are the log's own failure (the walk stops, the run stays resumable) and which are a
 * step's (its onError decides): isLogFailure, and isEngineError that builds on it.
 */
import { describe, expect, it } from 'vitest';
import { isLogFailure, LogClosedError, LogConnectionError } from '../../engine/log/errors.js';
import { isEngineError } from '../../engine/steps/signals.js';

function coded(name: string, code: string, message = 'x'): Error {
  const e = new Error(message) as Error & { code: string };
  e.name = name;
  e.code = code;
  return e;
}

describe('a failure of the log itself', () => {
  it.each([
    ['an unreachable server', new LogConnectionError('postgres://h/db', 'connect ECONNREFUSED')],
    ['a closed log', new LogClosedError('commit')],
    ['a PostgreSQL admin shutdown (57P01)', coded('error', '57P01', 'terminating connection due to administrator command')],
    ['a PostgreSQL connection failure (08006)', coded('error', '08006')],
    ['a full disk on PostgreSQL (53100)', coded('error', '53100', 'could not extend file')],
    ['a PostgreSQL I/O error (58030)', coded('error', '58030')],
    // Limits an administrator set on the role or database, or a cancel: the statement, not the step, failed.
    ['a PostgreSQL statement_timeout or pg_cancel_backend (57014)', coded('error', '57014', 'canceling statement due to statement timeout')],
    ['a PostgreSQL lock_timeout (55P03)', coded('error', '55P03', 'canceling statement due to lock timeout')],
    ['a PostgreSQL idle_in_transaction_session_timeout (25P03)', coded('error', '25P03')],
    ['a full disk on SQLite', coded('SqliteError', 'SQLITE_FULL', 'database or disk is full')],
    ['a SQLite I/O error', coded('SqliteError', 'SQLITE_IOERR_WRITE')],
    ['a read-only SQLite file', coded('SqliteError', 'SQLITE_READONLY')],
    ['a broken socket', coded('Error', 'ECONNRESET')],
    ['pg\'s own "Connection terminated"', new Error('Connection terminated unexpectedly')],
  ])('%s is one, and so an engine error no onError tolerates', (_what, error) => {
    expect(isLogFailure(error)).toBe(true);
    expect(isEngineError(error)).toBe(true);
  });

  it.each([
    ['a reserved table name', new Error("sql store table name 'reqon_runs' is reserved")],
    ['a SQLite constraint', coded('SqliteError', 'SQLITE_CONSTRAINT_UNIQUE')],
    ['a generic SQLite error (too many columns)', coded('SqliteError', 'SQLITE_ERROR')],
    ['a value PostgreSQL cannot hold (22P05)', coded('error', '22P05', 'unsupported Unicode escape sequence')],
    ['a step error', coded('StepError', 'R4010')],
    // A step's failure as the log recorded it, replayed on resume: what counted then stands, so a
    // run an older engine recorded so still resumes (it was stopped here for ever).
    ['a recorded statement timeout, replayed', coded('StepError', '57014', 'canceling statement due to statement timeout')],
    ['a recorded full disk, replayed', coded('StepError', '53100', 'could not extend file')],
    ['a recorded broken connection, replayed', coded('StepError', '08006', 'Connection terminated unexpectedly')],
    ['not an error at all', 'a string'],
  ])('%s is not: it is the step\'s failure', (_what, error) => {
    expect(isLogFailure(error)).toBe(false);
    expect(isEngineError(error)).toBe(false);
  });
});
