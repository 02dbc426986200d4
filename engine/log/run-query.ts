/**
 * A RunQuery as SQL, the same on both backends but for their placeholders and text matching: the
 * filters of `listRuns` / `countRuns` (the studio's runs table pages through 100k runs with them).
 * Checked here first, so bad input from a request is a clear error and never reaches SQL.
 */
import { describe } from './rows.js';
import { RUN_STATUSES, type ListRunsOptions, type RunQuery, type RunStatus } from './log.js';

/** Longest filter text taken: a person types it. */
export const MAX_QUERY_TEXT = 200;

export interface RunQuerySql {
  /** `WHERE …` over reqon_runs (empty: every run). */
  where: string;
  values: unknown[];
}

/**
 * `param(value)` binds one value and returns its placeholder; `contains(column, placeholder)` is
 * the backend's case-insensitive substring test.
 */
export function runQuerySql(query: RunQuery, where: string, param: (value: unknown) => string, contains: (column: string, needle: string) => string): string {
  checkRunQuery(query, where);
  const clauses: string[] = [];
  if (typeof query.status === 'string') clauses.push(`status = ${param(query.status)}`);
  else if (query.status !== undefined) clauses.push(query.status.length === 0 ? 'FALSE' : `status IN (${query.status.map((s) => param(s)).join(', ')})`);
  if (query.failedSteps !== undefined) {
    // Answered by the partial index reqon_events_step_failed: a few rows per failing run, none per clean one.
    clauses.push(`${query.failedSteps ? '' : 'NOT '}EXISTS (SELECT 1 FROM reqon_events e WHERE e.run_id = reqon_runs.run_id AND e.type = 'step.failed')`);
  }
  const text = query.text?.trim();
  if (text) {
    // Bound once per use: SQLite's placeholders are positional.
    clauses.push(`(${contains('mission', param(text))} OR ${contains('run_id', param(text))})`);
  }
  return clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`;
}

export function checkRunQuery(query: RunQuery, where: string): void {
  if (typeof query !== 'object' || query === null) throw new Error(`${where}: expected an object of options but got: ${describe(query)}`);
  const statuses: unknown[] = query.status === undefined ? [] : Array.isArray(query.status) ? query.status : [query.status];
  for (const status of statuses) {
    if (!RUN_STATUSES.includes(status as RunStatus)) throw new Error(`${where}: unknown status ${JSON.stringify(status)}; expected one of ${RUN_STATUSES.join(', ')}`);
  }
  if (query.failedSteps !== undefined && typeof query.failedSteps !== 'boolean') throw new Error(`${where}: failedSteps must be true or false but got: ${describe(query.failedSteps)}`);
  if (query.text !== undefined && (typeof query.text !== 'string' || query.text.length > MAX_QUERY_TEXT)) {
    throw new Error(`${where}: text must be a string of at most ${MAX_QUERY_TEXT} characters but got: ${describe(query.text)}`);
  }
}

/** listRuns's limit (-1: none; any negative one means none) and offset, checked. */
export function listRunsPage(opts: ListRunsOptions, where: string): { limit: number; offset: number } {
  const limit = opts.limit ?? -1;
  const offset = opts.offset ?? 0;
  if (!Number.isSafeInteger(limit)) throw new Error(`${where}: limit must be a whole number (negative: no limit) but got: ${describe(opts.limit)}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`${where}: offset must be a whole number ≥ 0 but got: ${describe(opts.offset)}`);
  return { limit: limit < 0 ? -1 : limit, offset };
}

/**
 * listRuns's keyset clause (without WHERE): the runs after `opts.after` in the listing's order
 * (newest first: created_at DESC, run_id; oldest first: the reverse), or '' without one. `runId`
 * is the run_id column as the listing orders it (PostgreSQL: COLLATE "C", SQLite's own order).
 */
export function runsAfterSql(opts: ListRunsOptions, where: string, param: (value: unknown) => string, runId: string): string {
  const after = opts.after;
  if (after === undefined) return '';
  if (typeof after !== 'object' || after === null || !Number.isSafeInteger(after.createdAt) || typeof after.runId !== 'string') {
    throw new Error(`${where}: after must be a run's { createdAt, runId } but got: ${describe(after)}`);
  }
  const [time, id] = opts.oldestFirst === true ? ['>', '<'] : ['<', '>'];
  // Bound once per use: SQLite's placeholders are positional.
  return `(created_at ${time} ${param(after.createdAt)} OR (created_at = ${param(after.createdAt)} AND ${runId} ${id} ${param(after.runId)}))`;
}
