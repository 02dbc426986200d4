/**
 * The EventLog on one SQLite file (better-sqlite3, synchronous inside, async outside).
 *
 * Several processes may share the file: WAL mode, `busy_timeout`, and every write in a
 * `BEGIN IMMEDIATE` transaction (so a writer takes the lock up front instead of failing to
 * upgrade a read lock half-way). Within this process, writes go through the GroupCommitter.
 * Invariants: seq is reserved by `fenceAndReserve` inside the transaction that inserts the events;
 * a commit's events, table writes and status change share one savepoint, so they land together.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isSummaryRead, onlySummaryTypes, type EventType, type NewEvent, type StoredEvent } from '../events.js';
import { DeliveryClaimedError, LeaseLostError, LogClosedError, LogTargetError, RunNotFoundError } from '../errors.js';
import {
  type CommitEntry,
  type CommitOptions,
  type EventCounts,
  type EventLog,
  type FireOutcome,
  type FireRequest,
  type NewSchedule,
  type RetryCandidate,
  type ScheduleFiring,
  type ScheduleRecord,
  type DeliveryOutcome,
  type InboxDelivery,
  type StoredDelivery,
  type InboxLimits,
  type AcquiredLease,
  type Lease,
  type LeaseHeld,
  type LogStats,
  type NewRun,
  type OpenLogOptions,
  type ReadOptions,
  type ReplayReader,
  type RunRecord,
  type RunStatus,
  type ListRunsOptions,
  type RunQuery,
  type StatusChange,
  type TableStoreWrite,
  type CheckpointMark,
  type DeletedEvents,
  type PrunableRun,
  type PruneQuery,
  type PrunedRuns,
  type SpaceReport,
  type StoreTableRef,
  type ResumeDelivery,
  type TableRow,
  type PlacedRow,
  type TableReader,
  type LastCheckpoint,
} from '../log.js';
import { checkEventTypes, checkMaxBytes, checkId, checkLimit, checkPruneQuery, checkPruneRuns, checkStatus, checkStoreKind, checkTtl, planEntry, type PlannedEntry, planRestoredRows, planResume, planResumeDelivery } from '../checks.js';
import { GroupCommitter } from './group-commit.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { migrate, SCHEMA_VERSION } from './migrations.js';
import { readEvents } from './read-events.js';
import { listRunsPage, runQuerySql, runsAfterSql } from '../run-query.js';
import { checkInstant, describe, prepareEvent, storedFrom, storeWritePayloadJson, toEventCounts, toRunRecord, toStoredDelivery, toStoredEvent, eventCountsColumns, DELIVERY_COLUMNS, type DeliveryRow, type PreparedEvent, type RunRow } from '../rows.js';
import { RetentionTables } from './retention.js';
import { listStoreTables } from './table-catalog.js';
import { ScheduleTables } from './schedule-tables.js';
import { countEventsOfTypes, eventAfterRun, eventsOfTypes, INSERT_BATCH, insertEventRows, prepareStatements, type Statements } from './statements.js';
import { checkTableName } from '../store-rules.js';
import { TableStores } from './table-store.js';
import { WalSync } from './wal-sync.js';

/** journal_size_limit: the WAL is truncated to this when a checkpoint resets it. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export async function openSqliteLog(dbPath: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  if (typeof dbPath !== 'string' || dbPath === '') throw new Error('openLog: the database path is empty; pass a file path such as .reqon/reqon.db');
  if (dbPath !== ':memory:') {
    const folder = path.dirname(path.resolve(dbPath));
    try {
      fs.mkdirSync(folder, { recursive: true });
    } catch (e) {
      // A path through a file, a folder this user may not write: the user's to fix, in one line.
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a part of that path is a file, not a folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (e as Error).message;
      throw new LogTargetError(dbPath, `cannot be created: its folder ${folder} cannot be made (${why}); give --db a path in a folder you can write`);
    }
    const stat = fs.statSync(dbPath, { throwIfNoEntry: false });
    if (stat !== undefined && !stat.isFile()) {
      throw new LogTargetError(dbPath, `cannot be opened as a Reqon log: it is ${stat.isDirectory() ? 'a folder' : 'not a regular file'}; give --db the path of a SQLite file (created when absent)`);
    }
  }
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  const db = new Database(dbPath, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    // Before anything is changed (WAL mode, our tables): a database of another program stays as it is.
    refuseForeignDatabase(db, dbPath);
    if (dbPath !== ':memory:') {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`could not switch '${dbPath}' to WAL mode (got '${String(mode)}'); is the file on a filesystem without shared memory support?`);
    }
    db.pragma('synchronous = NORMAL');
    // A WAL a burst (a prune, a big batch) grew is cut back to this at its next reset, not kept
    // at its largest for as long as any process holds the log open.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // REPLACE deletes a conflicting row without firing delete triggers unless recursive triggers
    // are on: on, an INSERT OR REPLACE of an event hits the append-only delete trigger and is
    // refused. (A per-insert trigger that refused it on any connection cost 35–45 % of store-step
    // throughput, measured; GUARANTEES 2 says what this leaves to other tools.)
    db.pragma('recursive_triggers = ON');
    // 32 MiB of page cache instead of SQLite's 2 MiB: a big sync inserts store rows all over a
    // growing key index, and with the small cache every insert went to the OS for its pages
    // (measured: +50 % records/s on a 300k-record sync; the cache grows only as it is used).
    db.pragma('cache_size = -32768');
    if (opts.walAutocheckpoint !== undefined) db.pragma(`wal_autocheckpoint = ${Math.trunc(opts.walAutocheckpoint)}`);
    migrate(db);
    // A group commit runs each job in a savepoint, whose statement journal (the pages it touches,
    // kept to undo that job alone) spilled to a temp file past 64 KiB: created, written and deleted
    // per group. In memory it needs no file; it is no part of durability (the WAL is). Measured on
    // figure 3 (100 runs × 10 store steps and POSTs): 253,900 pwrite calls → 187,398, unlinks 86 → 8.
    // After the migrations, whose index builds sort a whole table; VACUUM sets FILE for its copy.
    db.pragma('temp_store = MEMORY');
  } catch (error) {
    db.close();
    throw error;
  }
  // The WAL sits beside the database file as SQLite names it (symbolic links resolved).
  const main = (db.pragma('database_list') as { name: string; file: string }[]).find((d) => d.name === 'main')?.file ?? '';
  const wal = main === '' ? null : new WalSync(`${main}-wal`);
  // An explicit wal_autocheckpoint (the power-loss tests' 0) is SQLite's, as asked.
  const checkpointer = main === '' || opts.walAutocheckpoint !== undefined ? null : new WalCheckpointer(db, main);
  return new SqliteEventLog(db, opts.debugChecks ?? process.env['NODE_ENV'] !== 'production', wal, checkpointer);
}

/**
 * A SQLite file that is not a Reqon log: tables but no schema version (a Reqon log gets its
 * tables and version 1 in one transaction), or a version without `reqon_runs` (another program's
 * `PRAGMA user_version`, which many set) — unless the version is newer than ours and every table
 * is ours (a newer engine's log, which `migrate` refuses by name). Migrating it would add our tables to that program's
 * database and switch it to WAL, and a version it happened to set would skip our migrations.
 */
export function refuseForeignDatabase(db: Database.Database, dbPath: string): void {
  // One read transaction: another process migrating this new file between the two reads would
  // show version 0 with its tables, a foreign database, and the opener was refused.
  const { version, tables } = db.transaction(() => ({
    version: db.pragma('user_version', { simple: true }) as number,
    tables: db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`).pluck().all() as string[],
  }))();
  if (version === 0 && tables.length === 0) return; // a new file
  if (version > 0 && tables.includes('reqon_runs')) return; // a Reqon log (migrate refuses a newer one)
  // A newer engine's log, whatever tables it has come to have: migrate says so.
  if (version > SCHEMA_VERSION && tables.every((name) => name.startsWith('reqon_'))) return;
  const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, … (${tables.length} tables)` : '');
  throw new LogTargetError(
    dbPath,
    `cannot be opened as a Reqon log: it is a SQLite database of another program (${tables.length === 0 ? `no tables, schema version ${version}` : `tables ${shown}`}; no Reqon log), left as it is; give --db a new file or a Reqon log`,
  );
}

class SqliteEventLog implements EventLog {
  private readonly sql: Statements;
  private readonly tables: TableStores;
  private readonly committer: GroupCommitter;
  private readonly schedules: ScheduleTables;
  private readonly retention: RetentionTables;
  /** `insertRows[n]` inserts n events (insertEvents). */
  private readonly insertRows: Database.Statement<(string | number)[]>[] = [];
  /** Runs with a commit in flight (debug check of the "await each commit" rule). */
  private readonly inFlight = new Set<string>();
  private readonly shaped = new Map<string, Database.Statement>();
  private commits = 0;
  private durableCommits = 0;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly debugChecks: boolean,
    private readonly wal: WalSync | null,
    private readonly checkpointer: WalCheckpointer | null,
  ) {
    this.sql = prepareStatements(db);
    this.tables = new TableStores(db);
    this.committer = new GroupCommitter(db, this.sql, () => this.tables.invalidate(), wal, () => checkpointer?.afterCommit());
    this.schedules = new ScheduleTables(db);
    this.retention = new RetentionTables(db);
  }

  async createRun(run: NewRun, owner: string, ttlMs: number, first: NewEvent[]): Promise<{ lease: Lease; events: StoredEvent[] }> {
    this.open('createRun');
    checkId(run?.runId, 'createRun: runId');
    checkId(owner, 'createRun: owner');
    checkInstant(run.createdAt, 'createRun: createdAt');
    checkTtl(ttlMs, 'createRun');
    if (!Array.isArray(first)) throw new Error(`createRun: first events must be an array but got: ${describe(first)}`);
    const prepared = first.map((event) => prepareEvent(event, `createRun '${run.runId}'`));
    const expiresAt = run.createdAt + ttlMs;
    const row = {
      run_id: run.runId,
      mission: String(run.mission),
      mission_hash: String(run.missionHash),
      mission_files: JSON.stringify(run.missionFiles),
      options: JSON.stringify(run.options),
      created_at: run.createdAt,
      last_seq: prepared.length,
      owner,
      lease_expires_at: expiresAt,
    };
    return this.committer.submit(true, () => {
      if (this.sql.runExists.get(run.runId) !== undefined) {
        throw new Error(`run '${run.runId}' already exists in this log; run ids must be unique — generate a new one`);
      }
      this.sql.insertRun.run(row);
      const events = this.insertEvents(run.runId, 1, prepared);
      return { lease: { runId: run.runId, owner, epoch: 1, expiresAt }, events };
    });
  }

  async acquire(runId: string, owner: string, now: number, ttlMs: number, opts: { takeOverFrom?: string } = {}): Promise<AcquiredLease | LeaseHeld> {
    this.open('acquire');
    checkId(runId, 'acquire: runId');
    checkId(owner, 'acquire: owner');
    checkInstant(now, 'acquire: now');
    checkTtl(ttlMs, 'acquire');
    const expiresAt = now + ttlMs;
    return this.committer.now(() => {
      const taken =
        opts.takeOverFrom === undefined
          ? this.sql.acquire.get({ run_id: runId, owner, now, expires_at: expiresAt })
          : this.sql.acquireFrom.get({ run_id: runId, owner, previous: opts.takeOverFrom, now, expires_at: expiresAt });
      if (taken !== undefined) return { runId, owner, epoch: taken.lease_epoch, expiresAt, run: toRunRecord(taken) };
      const current = this.sql.leaseOf.get(runId);
      if (current === undefined) throw new RunNotFoundError(runId);
      // The CAS failed, so inside this transaction the lease is live and has an owner.
      return { heldBy: current.owner ?? '', expiresAt: current.lease_expires_at ?? now };
    });
  }

  async renew(lease: Lease, now: number, ttlMs: number): Promise<Lease> {
    this.open('renew');
    checkInstant(now, 'renew: now');
    checkTtl(ttlMs, 'renew');
    const expiresAt = now + ttlMs;
    const result = this.sql.renew.run({ run_id: lease.runId, owner: lease.owner, epoch: lease.epoch, expires_at: expiresAt });
    this.committer.transactions++;
    if (result.changes === 0) throw this.leaseLost(lease);
    return { ...lease, expiresAt };
  }

  async release(lease: Lease): Promise<void> {
    this.open('release');
    this.sql.release.run({ run_id: lease.runId, owner: lease.owner, epoch: lease.epoch });
    this.committer.transactions++;
  }

  async commit(lease: Lease, entries: CommitEntry[], opts: CommitOptions): Promise<StoredEvent[]> {
    this.open('commit');
    if (!Array.isArray(entries)) throw new Error(`commit on run '${lease.runId}': entries must be an array but got: ${describe(entries)}`);
    const where = `commit on run '${lease.runId}'`;
    // Validate and serialise outside the transaction: the group's lock is held as briefly as possible.
    const plan = entries.map((entry) => planEntry(entry, where, checkTableName));
    const status = opts.status === undefined ? undefined : checkStatus(opts.status, where);
    const latest = plan.reduce((max, step) => Math.max(max, step.kind === 'event' ? step.event.recordedAt : step.kind === 'store' ? step.write.recordedAt : 0), 0);
    if (this.debugChecks) {
      if (this.inFlight.has(lease.runId)) {
        throw new Error(
          `${where}: a previous commit on this run has not settled yet; await each commit before the next (commits under one lease are sequential)`,
        );
      }
      this.inFlight.add(lease.runId);
    }
    try {
      const returnEvents = opts.returnEvents !== false;
      // A run's own commits: no other process decides anything on them before this one answers
      // (see group-commit.ts), so their fsync runs off the main thread.
      const mission = opts.mission === undefined ? undefined : { missionHash: opts.mission.missionHash, missionFilesJson: JSON.stringify(opts.mission.missionFiles) };
      const events = await this.committer.submit(opts.durable, () => this.applyCommit(lease, plan, latest, status, returnEvents, mission), {
        visibleBeforeDurable: true,
      });
      this.commits++;
      if (opts.durable) this.durableCommits++;
      return events;
    } finally {
      if (this.debugChecks) this.inFlight.delete(lease.runId);
    }
  }

  async read(runId: string, opts: ReadOptions = {}): Promise<StoredEvent[]> {
    this.open('read');
    const from = opts.fromSeq ?? 1;
    const to = opts.toSeq ?? Number.MAX_SAFE_INTEGER;
    const limit = opts.limit ?? -1; // SQLite: a negative LIMIT means none
    for (const [name, value] of [['fromSeq', from], ['toSeq', to], ['limit', limit]] as const) {
      if (!Number.isSafeInteger(value)) throw new Error(`read '${runId}': ${name} must be an integer but got: ${describe(value)}`);
    }
    if (opts.maxBytes !== undefined) {
      checkMaxBytes(runId, opts);
      return this.db.transaction(() => {
        const out: StoredEvent[] = [];
        let bytes = 0;
        // Row by row, so that no more than the budget (and one event) is ever read into memory.
        for (const row of this.sql.readEvents.iterate(runId, from, to, limit)) {
          out.push(toStoredEvent(row));
          bytes += row.payload.length;
          if (bytes >= opts.maxBytes!) break;
        }
        return out;
      })();
    }
    if (opts.types === undefined) return readEvents(this.db, this.sql, runId, from, to, limit);
    checkEventTypes(opts.types, `read '${runId}': types`);
    if (opts.types.length === 0) return [];
    // Two reads of a few rows in a long run have partial indexes of their own.
    if (isSummaryRead(opts.types)) return this.sql.summaryEvents.all(runId, from, to, limit).map(toStoredEvent);
    if (opts.types.length === 1 && opts.types[0] === 'step.failed') return this.sql.failedSteps.all(runId, from, to, limit).map(toStoredEvent);
    return eventsOfTypes(this.db, opts.types.length).all(runId, from, to, ...opts.types, limit).map(toStoredEvent);
  }

  replayReader(runId: string, toSeq: number, skip: readonly EventType[]): ReplayReader {
    this.open('replayReader');
    if (!Number.isSafeInteger(toSeq)) throw new Error(`replayReader '${runId}': toSeq must be an integer but got: ${describe(toSeq)}`);
    const skipped = new Set<string>(skip);
    // seq is contiguous from 1 (GUARANTEES 1), so what is not skipped is toSeq minus what is —
    // counting the few skipped events is the cheaper read (through the summary index when every
    // skipped type is a summary type, as a resume's are). (A log with gaps, which this engine
    // never writes, makes the journal stop with "the log ended after N of M" instead.)
    const countSkipped = countEventsOfTypes(this.db, skip);
    const skippedUpTo = (seq: number): number => (skip.length === 0 ? 0 : countSkipped.get(runId, seq, ...skip)!);
    const total = Math.max(0, toSeq - skippedUpTo(toSeq));
    let from = 1;
    const next = (max: number): StoredEvent[] => {
      this.open('replayReader.next');
      const out: StoredEvent[] = [];
      // Chunks of seqs, skipped types dropped, until `max` events or the end.
      while (out.length < max && from <= toSeq) {
        const chunk = readEvents(this.db, this.sql, runId, from, toSeq, max - out.length, true);
        if (chunk.length === 0) break;
        from = chunk[chunk.length - 1]!.seq + 1;
        for (const event of chunk) if (!skipped.has(event.type)) out.push(event);
      }
      return out;
    };
    let afterRun: ReturnType<typeof eventAfterRun> | undefined;
    const measureRun = (type: EventType, stepPath: string) => {
      this.open('replayReader.measureRun');
      const start = from;
      afterRun ??= eventAfterRun(this.db, skip.length);
      const after = start > toSeq ? undefined : afterRun.get(runId, start, toSeq, type, stepPath, ...skip);
      const end = after === undefined ? toSeq + 1 : after[0];
      // Seqs are contiguous (as `total` above assumes): `next` would have yielded the rows between
      // but the skipped ones (a `run.resumed` written between a page's answer and its writes).
      const length = end - start - (skip.length === 0 || end === start ? 0 : skippedUpTo(end - 1) - skippedUpTo(start - 1));
      return {
        length,
        after: after === undefined ? undefined : { type: after[1] as EventType, stepPath: after[2] },
        passOver: () => {
          if (from !== start) throw new Error(`internal: replayReader '${runId}' was read from between measureRun and passOver`);
          from = end;
        },
      };
    };
    return { total, next, measureRun };
  }

  async lastOfTypes(runId: string, types: readonly EventType[]): Promise<StoredEvent | undefined> {
    this.open('lastOfTypes');
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string')) {
      throw new Error(`lastOfTypes '${runId}': types must be an array of event types but got: ${describe(types)}`);
    }
    const row = (onlySummaryTypes(types) ? this.sql.lastOfSummaryTypes : this.sql.lastOfTypes).get(runId, JSON.stringify(types));
    return row === undefined ? undefined : toStoredEvent(row);
  }

  async eventCounts(runId: string, types: readonly EventType[]): Promise<EventCounts> {
    this.open('eventCounts');
    checkEventTypes(types, `eventCounts '${runId}': types`);
    // Counted with FILTERs, not GROUP BY type: no sorter over the run's rows (half the time on a 100k-event run).
    const row = this.cachedStatement<unknown[]>(`SELECT ${eventCountsColumns(types, () => '?', '?')} FROM reqon_events WHERE run_id = ?`)
      .raw(true)
      .get(...types, runId, runId) as unknown[];
    const lastSeq = Number(row[types.length] ?? 0);
    const responses = types.includes('http.response') ? Number(row[types.indexOf('http.response')]) : 0;
    let statuses: [unknown, number][] = [];
    if (responses > 0) {
      try {
        statuses = this.sql.responseStatuses.all({ run: runId, to: lastSeq });
      } catch (error) {
        // json_extract of an http.response whose payload is not JSON (a file this engine did not write).
        throw new Error(`eventCounts '${runId}': ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return toEventCounts(types, row, statuses);
  }


  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.open('getRun');
    const row = this.sql.getRun.get(runId);
    return row === undefined ? undefined : toRunRecord(row);
  }

  async listRuns(opts: ListRunsOptions = {}): Promise<RunRecord[]> {
    this.open('listRuns');
    const { limit, offset } = listRunsPage(opts, 'listRuns');
    const { where, values } = this.runQuery(opts, 'listRuns');
    const after = runsAfterSql(opts, 'listRuns', (v) => (values.push(v), '?'), 'run_id');
    const filter = after === '' ? where : where === '' ? `WHERE ${after}` : `${where} AND ${after}`;
    const order = opts.oldestFirst === true ? 'created_at ASC, run_id DESC' : 'created_at DESC, run_id';
    return this.cachedStatement<RunRow>(`SELECT * FROM reqon_runs ${filter} ORDER BY ${order} LIMIT ? OFFSET ?`).all(...values, limit, offset).map(toRunRecord);
  }

  async countRuns(query: RunQuery = {}): Promise<number> {
    this.open('countRuns');
    const { where, values } = this.runQuery(query, 'countRuns');
    return (this.cachedStatement<{ n: number }>(`SELECT count(*) AS n FROM reqon_runs ${where}`).get(...values) as { n: number }).n;
  }

  private runQuery(query: RunQuery, where: string): { where: string; values: unknown[] } {
    const values: unknown[] = [];
    const sql = runQuerySql(query, where, (v) => (values.push(v), '?'), (column, needle) => `instr(lower(${column}), lower(${needle})) > 0`);
    return { where: sql, values };
  }

  /** A statement of a few shapes (listRuns's filters), prepared once per shape. */
  private cachedStatement<R>(text: string): Database.Statement<unknown[], R> {
    let statement = this.shaped.get(text);
    if (statement === undefined) this.shaped.set(text, (statement = this.db.prepare(text)));
    return statement as Database.Statement<unknown[], R>;
  }

  async dueRuns(now: number, limit: number): Promise<RunRecord[]> {
    this.open('dueRuns');
    checkInstant(now, 'dueRuns: now');
    if (!Number.isSafeInteger(limit) || limit <= 0) throw new Error(`dueRuns: limit must be a positive integer but got: ${describe(limit)}`);
    return this.sql.dueRuns.all({ now, limit }).map(toRunRecord);
  }

  async resumeSuspended(
    runId: string,
    expectedWaitingOn: string,
    event: NewEvent,
    expectedLastSeq?: number,
    claim?: { path: string; eventId: string; waitId: string },
    deliver?: ResumeDelivery,
  ): Promise<'resumed' | 'not-waiting'> {
    this.open('resumeSuspended');
    const prepared = planResume(runId, expectedWaitingOn, event);
    const delivery = deliver === undefined ? undefined : planResumeDelivery(deliver);
    const notWaiting = new Error('not waiting');
    return this.committer
      .submit(true, () => {
        const moved = this.sql.resumeSuspended.get({ run_id: runId, waiting_on: expectedWaitingOn, last_seq: expectedLastSeq ?? null, at: prepared.recordedAt });
        if (moved === undefined) {
          if (this.sql.runExists.get(runId) === undefined) throw new RunNotFoundError(runId);
          return 'not-waiting' as const;
        }
        // A delivery someone else took already: thrown, so the savepoint undoes the resume too.
        if (claim && this.sql.claimWebhook.run({ path: claim.path, event_id: claim.eventId, run_id: runId, wait_id: claim.waitId }).changes !== 1) {
          throw notWaiting;
        }
        if (delivery && this.sql.deliverWebhook.run({ path: delivery.path, event_id: delivery.eventId, payload: delivery.json, received_at: delivery.receivedAt }).changes !== 1) {
          throw notWaiting;
        }
        this.insertEvents(runId, moved.last_seq, [prepared]);
        return 'resumed' as const;
      })
      .catch((error: unknown) => {
        if (error === notWaiting) return 'not-waiting' as const;
        throw error;
      });
  }

  async readTable(storeKind: 'sql' | 'nosql', table: string): Promise<TableRow[]> {
    this.open('readTable');
    checkStoreKind(storeKind, 'readTable');
    checkTableName(table, storeKind);
    return this.tables.list(storeKind, table);
  }

  async tableReader(storeKind: 'sql' | 'nosql', table: string): Promise<TableReader> {
    this.open('tableReader');
    checkStoreKind(storeKind, 'tableReader');
    checkTableName(table, storeKind);
    this.tables.checkReadable(storeKind, table);
    // A seek from the last row's place each time: no statement stays open between pages.
    let after = Number.MIN_SAFE_INTEGER;
    let open = true;
    return {
      next: async (max) => {
        this.open('tableReader.next');
        checkLimit(max, 'tableReader.next: max');
        if (!open) throw new Error(`tableReader of '${table}': next() after close()`);
        const rows = this.tables.page(storeKind, table, after, max);
        if (rows.length > 0) after = rows[rows.length - 1]!.place;
        return rows.map(({ key, record }) => ({ key, record }));
      },
      close: async () => {
        open = false;
      },
    };
  }

  async tableRows(storeKind: 'sql' | 'nosql', table: string, keys: readonly string[]): Promise<PlacedRow[]> {
    this.open('tableRows');
    checkStoreKind(storeKind, 'tableRows');
    checkTableName(table, storeKind);
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) throw new Error(`tableRows: keys must be an array of strings but got: ${describe(keys)}`);
    return this.tables.rowsOf(storeKind, table, keys);
  }

  async listTables(): Promise<StoreTableRef[]> {
    this.open('listTables');
    return listStoreTables(this.db);
  }

  async restoreTable(storeKind: 'sql' | 'nosql', table: string, rows: readonly TableRow[]): Promise<void> {
    this.open('restoreTable');
    const writes = planRestoredRows(storeKind, table, rows, checkTableName);
    await this.committer.submit(true, () => {
      for (const write of writes) this.tables.apply(write);
    });
  }

  async lastCheckpoint(mission: string, key: string, api?: string): Promise<LastCheckpoint | undefined> {
    this.open('lastCheckpoint');
    const row = this.sql.lastCheckpoint.get({ mission, key, api: api ?? null });
    if (row?.synced === null || row?.synced === undefined) return undefined;
    return {
      syncedAt: row.synced,
      ...(typeof row.query === 'string' ? { query: row.query } : {}),
      ...(typeof row.query_sha256 === 'string' ? { querySha256: row.query_sha256 } : {}),
      ...(row.advanced_at !== null ? { advancedAt: row.advanced_at } : {}),
    };
  }

  async deliverWebhook(path: string, eventId: string, payload: unknown, receivedAt: number, limits?: InboxLimits): Promise<DeliveryOutcome> {
    this.open('deliverWebhook');
    checkId(path, 'deliverWebhook: path');
    checkId(eventId, 'deliverWebhook: eventId');
    checkInstant(receivedAt, 'deliverWebhook: receivedAt');
    const json = JSON.stringify(payload ?? null);
    return this.committer.submit(true, (): DeliveryOutcome => {
      if (limits) {
        // A retry of what we hold is a duplicate even when the inbox is full.
        if (this.sql.webhookDelivered.get(path, eventId)) return 'duplicate';
        if (limits.bindId && this.sql.webhookOnOtherPath.get(eventId, path)) return 'other-path';
        this.sql.expireOnPath.run(path, limits.expireBefore);
        if (this.sql.unclaimedOnPath.get(path)!.n >= limits.maxPerPath) return 'full';
      }
      return this.sql.deliverWebhook.run({ path, event_id: eventId, payload: json, received_at: receivedAt }).changes === 1 ? 'accepted' : 'duplicate';
    });
  }

  async expireWebhooks(receivedBefore: number): Promise<number> {
    this.open('expireWebhooks');
    checkInstant(receivedBefore, 'expireWebhooks: receivedBefore');
    return this.committer.submit(true, () => this.sql.expireWebhooks.run(receivedBefore).changes);
  }

  async webhookDelivered(path: string, eventId: string): Promise<boolean> {
    this.open('webhookDelivered');
    return this.sql.webhookDelivered.get(path, eventId) !== undefined;
  }

  async webhookInbox(path: string): Promise<InboxDelivery[]> {
    this.open('webhookInbox');
    return this.sql.webhookInbox.all(path).map((r) => ({ eventId: r.event_id, payload: JSON.parse(r.payload) as unknown, receivedAt: r.received_at }));
  }

  async allDeliveries(): Promise<StoredDelivery[]> {
    this.open('allDeliveries');
    return this.cachedStatement<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox ORDER BY path, received_at, event_id`).all().map(toStoredDelivery);
  }

  async deliveryPage(page: { after?: { path: string; eventId: string }; limit: number }): Promise<StoredDelivery[]> {
    this.open('deliveryPage');
    checkLimit(page?.limit, 'deliveryPage: limit');
    if (page.after === undefined) {
      return this.cachedStatement<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox ORDER BY path, event_id LIMIT ?`).all(page.limit).map(toStoredDelivery);
    }
    checkId(page.after.path, 'deliveryPage: after.path');
    checkId(page.after.eventId, 'deliveryPage: after.eventId');
    return this.cachedStatement<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox WHERE (path, event_id) > (?, ?) ORDER BY path, event_id LIMIT ?`)
      .all(page.after.path, page.after.eventId, page.limit)
      .map(toStoredDelivery);
  }

  async claimedDeliveries(runId: string): Promise<StoredDelivery[]> {
    this.open('claimedDeliveries');
    checkId(runId, 'claimedDeliveries: runId');
    return this.cachedStatement<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox WHERE claimed_run = ? ORDER BY path, received_at, event_id`).all(runId).map(toStoredDelivery);
  }

  async upsertSchedule(schedule: NewSchedule): Promise<ScheduleRecord> {
    this.open('upsertSchedule');
    return this.committer.submit(true, () => this.schedules.upsert(schedule));
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.open('listSchedules');
    return this.schedules.list();
  }

  async getSchedule(mission: string): Promise<ScheduleRecord | undefined> {
    this.open('getSchedule');
    return this.schedules.get(mission);
  }

  async removeSchedule(mission: string): Promise<boolean> {
    this.open('removeSchedule');
    return this.committer.submit(true, () => this.schedules.remove(mission));
  }

  async fireSchedule(request: FireRequest): Promise<FireOutcome> {
    this.open('fireSchedule');
    checkId(request?.owner, 'fireSchedule: owner');
    checkTtl(request.ttlMs, 'fireSchedule');
    checkId(request.run?.runId, 'fireSchedule: runId');
    checkInstant(request.run.createdAt, 'fireSchedule: createdAt');
    const { events } = ScheduleTables.prepareFire(request);
    return this.committer.submit(true, () => this.schedules.fire(this.sql, request, events));
  }

  async scheduleFirings(mission: string, page?: { after?: { dueAt: number; attempt: number }; limit?: number }): Promise<ScheduleFiring[]> {
    this.open('scheduleFirings');
    return this.schedules.firings(mission, page);
  }

  async retryCandidates(mission: string, maxRetries: number): Promise<RetryCandidate[]> {
    this.open('retryCandidates');
    return this.schedules.retryCandidates(mission, maxRetries);
  }

  async restoreFirings(firings: ScheduleFiring[]): Promise<void> {
    this.open('restoreFirings');
    const insert = this.db.prepare(`
      INSERT INTO reqon_schedule_firings (mission, due_at, attempt, fired_at, outcome, run_id, reason, missed)
      VALUES (@mission, @due_at, @attempt, @fired_at, @outcome, @run_id, @reason, @missed)`);
    for (const f of firings) {
      checkInstant(f.dueAt, 'restoreFirings: dueAt');
      checkInstant(f.firedAt, 'restoreFirings: firedAt');
    }
    await this.committer.submit(true, () => {
      for (const f of firings) {
        insert.run({ mission: f.mission, due_at: f.dueAt, attempt: f.attempt, fired_at: f.firedAt, outcome: f.outcome, run_id: f.runId, reason: f.reason, missed: f.missed });
      }
    });
  }

  async prunableRuns(query: PruneQuery): Promise<PrunableRun[]> {
    this.open('prunableRuns');
    checkPruneQuery(query);
    return this.retention.prunable(query);
  }

  async queuedPrunedEvents(): Promise<{ runs: number; events: number }> {
    this.open('queuedPrunedEvents');
    return this.retention.queuedPrunedEvents();
  }

  async checkpointMarks(): Promise<CheckpointMark[]> {
    this.open('checkpointMarks');
    return this.retention.checkpointMarks();
  }

  async pruneRuns(runs: readonly PrunableRun[], finishedBefore: number, now: number): Promise<PrunedRuns> {
    this.open('pruneRuns');
    checkPruneRuns(runs, finishedBefore, now);
    return this.committer.submit(true, () => this.retention.pruneRuns(runs, finishedBefore, now, now));
  }

  async deletePrunedEvents(maxEvents: number): Promise<DeletedEvents> {
    this.open('deletePrunedEvents');
    checkLimit(maxEvents, 'deletePrunedEvents: maxEvents');
    return this.committer.submit(true, () => this.retention.deletePrunedEvents(maxEvents));
  }

  async reclaimSpace(opts: { vacuum: boolean }): Promise<SpaceReport> {
    this.open('reclaimSpace');
    const before = this.retention.pages();
    if (opts.vacuum) {
      // VACUUM cannot run inside a transaction: commit what is queued, then rewrite the file.
      this.committer.flush();
      this.retention.vacuumIntoIncremental();
      this.tables.invalidate();
    } else if (before.autoVacuum === 'incremental') {
      // A step per transaction, so writers in this and other processes get the lock in between.
      while (this.retention.pages().freePages > 0) {
        if ((await this.committer.submit(false, () => this.retention.incrementalVacuumStep())) === 0) break;
      }
    }
    // The freed pages are in the WAL until a checkpoint writes them back: truncate it now, or the
    // files grow by what was pruned while another process keeps the log open (helper 91: 3 MB
    // to 6 MB for 112 KiB of log). Another process reading the log at this moment blocks it.
    this.committer.flush();
    const [checkpoint] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return RetentionTables.report(before, this.retention.pages(), opts.vacuum, checkpoint?.busy === 1);
  }

  stats(): LogStats {
    return {
      transactions: this.committer.transactions,
      fsyncs: this.committer.fsyncs,
      commits: this.commits,
      durableCommits: this.durableCommits,
      ...(this.checkpointer === null ? {} : { walCheckpoints: { ...this.checkpointer.checkpoints } }),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.committer.flush();
    this.closed = true;
    // Groups waiting for their fsync settle first; SQLite keeps the WAL until the connection closes.
    await this.committer.idle();
    await this.checkpointer?.close();
    this.db.close();
    this.wal?.close();
  }

  /** Runs inside the group's savepoint: fence + reserve seqs, table writes, events, status. */
  private applyCommit(
    lease: Lease,
    entries: PlannedEntry[],
    latest: number,
    status: Required<StatusChange> | undefined,
    returnEvents: boolean,
    mission?: { missionHash: string; missionFilesJson: string },
  ): StoredEvent[] {
    const plan = entries.filter((e): e is Exclude<PlannedEntry, { kind: 'claim' }> => e.kind !== 'claim');
    const reserved = this.sql.fenceAndReserve.get({
      run_id: lease.runId,
      owner: lease.owner,
      epoch: lease.epoch,
      count: plan.length,
      at: latest,
    });
    if (reserved === undefined) throw this.leaseLost(lease);
    const prepared: PreparedEvent[] = plan.map((step) => {
      switch (step.kind) {
        case 'event':
          return step.event;
        case 'store': {
          const { write } = step;
          // The JSON of {effectId, store, key, record, op}, spliced around the record's own text
          // instead of parsing it back and serialising it again (planEntry checked the strings).
          const payloadJson =
            write.op === 'delete' ? storeWritePayloadJson(write, 'null', this.tables.remove(write)) : storeWritePayloadJson(write, this.tables.apply(write));
          return { type: 'store.write', stepPath: write.stepPath, payloadJson, recordedAt: write.recordedAt };
        }
        default: {
          const never: never = step;
          throw new Error(`unknown commit entry ${JSON.stringify(never)}`);
        }
      }
    });
    const events = this.insertEvents(lease.runId, reserved.last_seq - plan.length + 1, prepared, returnEvents);
    for (const entry of entries) {
      if (entry.kind !== 'claim') continue;
      const claimed = this.sql.claimWebhook.run({ path: entry.path, event_id: entry.eventId, run_id: lease.runId, wait_id: entry.waitId });
      if (claimed.changes !== 1) {
        throw new DeliveryClaimedError(entry.path, entry.eventId);
      }
    }
    if (status !== undefined) {
      this.sql.setStatus.run({
        run_id: lease.runId,
        status: status.status,
        wake_at: status.wakeAt,
        waiting_on: status.waitingOn,
        release: status.releaseLease ? 1 : 0,
      });
    }
    if (mission !== undefined) {
      this.sql.setMission.run({ run_id: lease.runId, mission_hash: mission.missionHash, mission_files: mission.missionFilesJson });
    }
    return events;
  }

  private insertEvents(runId: string, firstSeq: number, events: PreparedEvent[], returnEvents = true): StoredEvent[] {
    // Up to INSERT_BATCH events a statement; statements for each row count are prepared once.
    for (let i = 0; i < events.length; i += INSERT_BATCH) {
      const rows = Math.min(INSERT_BATCH, events.length - i);
      const insert = (this.insertRows[rows] ??= insertEventRows(this.db, rows));
      const values = new Array<string | number>(rows * 6);
      for (let k = 0; k < rows; k++) {
        const event = events[i + k]!;
        const at = k * 6;
        values[at] = runId;
        values[at + 1] = firstSeq + i + k;
        values[at + 2] = event.type;
        values[at + 3] = event.stepPath;
        values[at + 4] = event.payloadJson;
        values[at + 5] = event.recordedAt;
      }
      insert.run(...values);
    }
    return returnEvents ? events.map((event, i) => storedFrom(runId, firstSeq + i, event)) : [];
  }

  private leaseLost(lease: Lease): Error {
    const current = this.sql.leaseOf.get(lease.runId);
    if (current === undefined) return new RunNotFoundError(lease.runId);
    return new LeaseLostError(lease.runId, lease.owner, lease.epoch, { owner: current.owner, epoch: current.lease_epoch });
  }

  private open(operation: string): void {
    if (this.closed) throw new LogClosedError(operation);
  }
}
