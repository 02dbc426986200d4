/**
 * The checks every backend makes on a caller's arguments before a transaction starts, so bad
 * input gets a message naming it instead of a constraint error (and the write lock is held only
 * for the SQL).
 */
import type { EventType, NewEvent } from './events.js';
import { RUN_STATUSES, type CommitEntry, type PrunableRun, type PruneQuery, type ResumeDelivery, type StatusChange, type TableRow, type TableStoreWrite } from './log.js';
import { checkInstant, describe, prepareEvent, type PreparedEvent } from './rows.js';

export type PlannedEntry =
  | { kind: 'event'; event: PreparedEvent }
  | { kind: 'store'; write: TableStoreWrite }
  | { kind: 'claim'; path: string; eventId: string; waitId: string };

/** Checks and serialises one commit entry before any transaction; `checkTable` is the backend's table-name rule. */
export function planEntry(entry: CommitEntry, where: string, checkTable: (table: unknown, storeKind: string) => void): PlannedEntry {
  switch (entry?.kind) {
    case 'event':
      return { kind: 'event', event: prepareEvent(entry.event, where) };
    case 'store': {
      const { write } = entry;
      if (write.storeKind !== 'sql' && write.storeKind !== 'nosql') {
        throw new Error(`${where}: store kind must be 'sql' or 'nosql' but got: ${describe(write.storeKind)}`);
      }
      checkTable(write.table, write.storeKind);
      checkInstant(write.recordedAt, `${where}: recordedAt of the write to '${write.store}'`);
      for (const field of ['store', 'key', 'effectId', 'stepPath'] as const) {
        if (typeof write[field] !== 'string') throw new Error(`${where}: ${field} of a store write must be a string but got: ${describe(write[field])}`);
      }
      return { kind: 'store', write };
    }
    case 'claim-webhook':
      return { kind: 'claim', path: entry.path, eventId: entry.eventId, waitId: entry.waitId };
    default:
      throw new Error(`${where}: an entry must be {kind: 'event'} or {kind: 'store'} but got: ${describe((entry as { kind?: unknown })?.kind)}`);
  }
}

/**
 * `restoreTable`'s arguments, checked, as the 'set' writes that put each row in place (they carry
 * no event: the effect id, step path and instant are left empty; the store is named by its table).
 */
export function planRestoredRows(storeKind: unknown, table: unknown, rows: readonly TableRow[], checkTable: (table: unknown, storeKind: string) => void): TableStoreWrite[] {
  if (storeKind !== 'sql' && storeKind !== 'nosql') throw new Error(`restoreTable: store kind must be 'sql' or 'nosql' but got: ${describe(storeKind)}`);
  checkTable(table, storeKind);
  if (!Array.isArray(rows)) throw new Error(`restoreTable: rows must be an array of {key, record} but got: ${describe(rows)}`);
  return rows.map((row, i) => {
    if (typeof row?.key !== 'string' || row.key === '') throw new Error(`restoreTable ${String(table)}: row ${i}'s key must be a non-empty string but got: ${describe(row?.key)}`);
    const record = row.record;
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      throw new Error(`restoreTable ${String(table)}: the record under key ${JSON.stringify(row.key)} must be an object but got: ${describe(record)}`);
    }
    return { storeKind, table: table as string, store: table as string, key: row.key, record, op: 'set', stepPath: '', effectId: '', recordedAt: 0 };
  });
}

export function checkStatus(change: StatusChange, where: string): Required<StatusChange> {
  if (!RUN_STATUSES.includes(change.status)) {
    throw new Error(`${where}: unknown status ${JSON.stringify(change.status)}; expected one of ${RUN_STATUSES.join(', ')}`);
  }
  const wakeAt = change.wakeAt ?? null;
  const waitingOn = change.waitingOn ?? null;
  if (wakeAt !== null) checkInstant(wakeAt, `${where}: wakeAt`);
  if (change.status === 'suspended' && (typeof waitingOn !== 'string' || waitingOn === '')) {
    throw new Error(
      `${where}: a suspended run must say what it waits on (status.waitingOn, e.g. 'pause:<pauseId>'); it is the token resumeSuspended compares`,
    );
  }
  return { status: change.status, wakeAt, waitingOn, releaseLease: change.releaseLease === true };
}

export function checkId(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} must be a non-empty string but got: ${describe(value)}`);
}

export function checkTtl(ttlMs: unknown, operation: string): asserts ttlMs is number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new Error(`${operation}: ttlMs must be a positive whole number of milliseconds but got: ${describe(ttlMs)}`);
  }
}

/** The delivery `resumeSuspended` puts in the inbox, checked; its payload as the inbox stores it (JSON). */
export function planResumeDelivery(deliver: ResumeDelivery): { path: string; eventId: string; json: string; receivedAt: number } {
  checkId(deliver.path, 'resumeSuspended: deliver.path');
  checkId(deliver.eventId, 'resumeSuspended: deliver.eventId');
  checkInstant(deliver.receivedAt, 'resumeSuspended: deliver.receivedAt');
  return { path: deliver.path, eventId: deliver.eventId, json: JSON.stringify(deliver.payload ?? null), receivedAt: deliver.receivedAt };
}

/** The arguments of `resumeSuspended`, checked; the resume event, serialised. */
export function planResume(runId: unknown, expectedWaitingOn: unknown, event: NewEvent): PreparedEvent {
  checkId(runId, 'resumeSuspended: runId');
  if (typeof expectedWaitingOn !== 'string' || expectedWaitingOn === '') {
    throw new Error(`resumeSuspended '${runId}': expectedWaitingOn must be the run's waitingOn (e.g. 'pause:<id>') but got: ${describe(expectedWaitingOn)}`);
  }
  return prepareEvent(event, `resumeSuspended '${runId}'`);
}

/** The arguments of `prunableRuns`, checked. */
export function checkPruneQuery(query: PruneQuery): void {
  checkInstant(query?.finishedBefore, 'prunableRuns: finishedBefore');
  checkInstant(query.now, 'prunableRuns: now');
  checkLimit(query.limit, 'prunableRuns: limit');
  if (query.after !== undefined) {
    checkInstant(query.after.updatedAt, 'prunableRuns: after.updatedAt');
    if (typeof query.after.runId !== 'string') throw new Error(`prunableRuns: after.runId must be a string but got: ${describe(query.after.runId)}`);
  }
}

/** The arguments of `pruneRuns`, checked: each run as prunableRuns listed it. */
export function checkPruneRuns(runs: readonly PrunableRun[], finishedBefore: number, now: number): void {
  if (!Array.isArray(runs)) throw new Error(`pruneRuns: runs must be an array of listed runs but got: ${describe(runs)}`);
  checkInstant(finishedBefore, 'pruneRuns: finishedBefore');
  checkInstant(now, 'pruneRuns: now');
  for (const run of runs) {
    checkId(run?.runId, 'pruneRuns: runId');
    for (const field of ['lastSeq', 'leaseEpoch'] as const) {
      if (!Number.isSafeInteger(run[field])) throw new Error(`pruneRuns '${run.runId}': ${field} must be the whole number prunableRuns listed but got: ${describe(run[field])}`);
    }
  }
}

/** A list of event types, as `read`'s `types` option takes it. */
export function checkEventTypes(types: unknown, what: string): asserts types is readonly EventType[] {
  if (!Array.isArray(types) || types.some((t) => typeof t !== 'string')) throw new Error(`${what} must be an array of event types but got: ${describe(types)}`);
}

/** `read`'s `maxBytes`: a positive whole number, not with `types`. */
export function checkMaxBytes(runId: string, opts: { maxBytes?: number; types?: unknown }): void {
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes! < 1) throw new Error(`read '${runId}': maxBytes must be a positive whole number but got: ${describe(opts.maxBytes)}`);
  if (opts.types !== undefined) throw new Error(`read '${runId}': maxBytes cannot be combined with types`);
}

export function checkStoreKind(storeKind: unknown, operation: string): asserts storeKind is 'sql' | 'nosql' {
  if (storeKind !== 'sql' && storeKind !== 'nosql') throw new Error(`${operation}: store kind must be 'sql' or 'nosql' but got: ${describe(storeKind)}`);
}

/** A keyset page's `after` on a schedule's firings, checked. */
export function checkFiringsPage(page: { after?: { dueAt: number; attempt: number }; limit?: number } | undefined): void {
  if (page === undefined) return;
  if (typeof page !== 'object' || page === null) throw new Error(`scheduleFirings: page must be an object but got: ${describe(page)}`);
  if (page.limit !== undefined) checkLimit(page.limit, 'scheduleFirings: limit');
  if (page.after !== undefined && (!Number.isSafeInteger(page.after?.dueAt) || !Number.isSafeInteger(page.after?.attempt))) {
    throw new Error(`scheduleFirings: after must be a firing's { dueAt, attempt } but got: ${describe(page.after)}`);
  }
}

export function checkLimit(limit: unknown, what: string): asserts limit is number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit <= 0) throw new Error(`${what} must be a positive whole number but got: ${describe(limit)}`);
}
