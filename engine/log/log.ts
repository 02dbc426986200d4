/**
 * The run log's contract: the single source of truth of every run (see README.md in this folder
 * for the model in thirty lines).
 *
 * Records: one row per run (what it was started with, its status, its lease, what it waits on)
 * and its append-only events `(run_id, seq, type, step_path, payload, recorded_at)`. Writers are
 * the process that holds the run's lease (`commit`), and — for a suspended run only — whoever
 * resumes it (`resumeSuspended`, a compare-and-set). Readers (studio, CLI, inspector) only read.
 *
 * Invariants every backend keeps:
 * - `seq` starts at 1 and is contiguous per run; the database assigns it inside the writing
 *   transaction, in the same statement that checks the lease's epoch (the fencing token).
 * - A `commit` is atomic: its events, its sql/nosql table writes and its status change land
 *   together or not at all. Events are never updated, nor deleted but with their whole finished
 *   run, by retention (RunRetention), after that run's row is gone.
 * - A durable commit (or createRun / resumeSuspended) is on disk before its promise resolves;
 *   a non-durable one survives `kill -9` and rides on the next fsync.
 * - Per lease, callers await each `commit` before starting the next one; the log keeps the
 *   order of commits, and debug builds reject a second commit while one is in flight.
 *
 * The interface is asynchronous so that PostgreSQL can implement it (postgres/); SQLite
 * implements it on better-sqlite3, synchronously inside, with transactions that never await.
 * This file is the contract alone: backends import it, and open-log.ts picks one by URL.
 */
import type { EventType, NewEvent, StoredEvent } from './events.js';

export { DeliveryClaimedError, LeaseLostError, RunNotFoundError, LogClosedError, LogConnectionError, LogSetupError, LogTargetError, LogVersionError } from './errors.js';

export interface RunOptions {
  sources: Record<string, string>;
  env: Record<string, string>;
  authFile?: string;
  crashAt?: string;
  /**
   * The data folder (absolute) of the process that started the run, where its file stores are:
   * every later resume reads and writes those, whichever folder its process runs in. (A resume by
   * a worker started elsewhere read an empty file store and completed with nothing done.) Absent
   * in runs recorded before: they resume in their resumer's folder, as they did.
   */
  dataDir?: string;
}

/** The mission's text as it was when the run started; folder missions have several files. */
export interface MissionFiles {
  entry: string;
  files: { path: string; text: string }[];
  /**
   * Files the mission reads besides its own, as they were when the run started: the OpenAPI
   * document of each `source S from "…"`. A resume, a verify and a fork read these, not the disk
   * (where the document may have changed or moved since). Absent in runs recorded before.
   */
  attachments?: { path: string; text: string }[];
}

export type RunStatus = 'running' | 'suspended' | 'completed' | 'failed';

export const RUN_STATUSES: readonly RunStatus[] = ['running', 'suspended', 'completed', 'failed'];

/**
 * The owner of every run imported from a bundle (`reqon import`): no `host:pid`, so never presumed
 * dead; its lease never expires. Such a run is another log's record, read-only here: nothing of it
 * counts as this log's (its checkpoints are no checkpoints of this log's syncs).
 */
export const IMPORTED_OWNER = 'imported:bundle';

export interface RunRecord {
  runId: string;
  mission: string;
  missionHash: string;
  missionFiles: MissionFiles;
  options: RunOptions;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  lastSeq: number;
  owner: string | null;
  leaseEpoch: number;
  leaseExpiresAt: number | null;
  /** Due instant of the timer a suspended run waits on. */
  wakeAt: number | null;
  /** What a suspended run waits on, e.g. 'pause:<pauseId>', 'webhook:/approved', 'wait:/hooks/payment'. */
  waitingOn: string | null;
}

export interface NewRun {
  runId: string;
  mission: string;
  missionHash: string;
  missionFiles: MissionFiles;
  options: RunOptions;
  createdAt: number;
}

/** The right to append to one run: valid while `(owner, epoch)` is still the run's. */
export interface Lease {
  runId: string;
  owner: string;
  epoch: number;
  expiresAt: number;
}

/** A lease just taken, with the run's row as it stands under it (read in the same statement). */
export interface AcquiredLease extends Lease {
  run: RunRecord;
}

/** Returned by `acquire` when someone else holds a live lease. */
export interface LeaseHeld {
  heldBy: string;
  expiresAt: number;
}

export type CommitEntry =
  | { kind: 'event'; event: NewEvent }
  /** Applied to the table and recorded as a 'store.write' event, in order with the other entries. */
  | { kind: 'store'; write: TableStoreWrite }
  /** Claims an inbox delivery for this run; fails the whole commit if someone claimed it first. */
  | { kind: 'claim-webhook'; path: string; eventId: string; waitId: string };

/** The webhook inbox's bounds for one delivery (see `deliverWebhook`). */
export interface InboxLimits {
  maxPerPath: number;
  expireBefore: number;
  bindId: boolean;
}

export type DeliveryOutcome = 'accepted' | 'duplicate' | 'full' | 'other-path';

/** A webhook delivery waiting in the inbox. */
export interface InboxDelivery {
  eventId: string;
  payload: unknown;
  receivedAt: number;
}

export interface TableStoreWrite {
  storeKind: 'sql' | 'nosql';
  table: string;
  store: string;
  key: string;
  /** Ignored by a 'delete' (the record under `key` is removed; its event records null). */
  record: Record<string, unknown>;
  op: 'set' | 'upsert' | 'delete';
  stepPath: string;
  effectId: string;
  recordedAt: number;
  /** On the first write of a batch: the batch's id, recorded in its `store.write` event. */
  batch?: string;
}

/**
 * The run's new status. `wakeAt` and `waitingOn` describe the wait completely: left out, they
 * become null. A 'suspended' run must say what it waits on (`waitingOn`): that string is the
 * compare-and-set token of `resumeSuspended`.
 */
export interface StatusChange {
  status: RunStatus;
  wakeAt?: number | null;
  waitingOn?: string | null;
  /** Clear the owner after this commit (the lease used for it is then spent). */
  releaseLease?: boolean;
}

export interface CommitOptions {
  /** fsync before the promise resolves: required before anything leaves the process. */
  durable: boolean;
  status?: StatusChange;
  /**
   * false: resolve with [] instead of the stored events. The engine never looks at what it just
   * wrote, and building those objects cost as much as inserting the rows.
   */
  returnEvents?: boolean;
  /**
   * The run's mission from now on (an edit that replayed its log and carried on): the run row's
   * mission files and hash change in this commit, so later resumes use it.
   */
  mission?: { missionHash: string; missionFiles: MissionFiles };
}

/** See EventLog.replayReader. */
export interface ReplayReader {
  /** How many events the reader yields in all. */
  readonly total: number;
  /** The next events in seq order, at most `max` ([] once all are read). */
  next(max: number): StoredEvent[];
  /**
   * Optional. Measures, without reading them into memory, the run of consecutive events of `type`
   * at `stepPath` that `next` would yield next (a page's store writes; skipped types between them
   * are passed over, as `next` drops them), and the event `next` would yield after them.
   * `passOver()` then moves past that run, as if `next` had read and dropped it; the reader may not
   * have been read from in between. For a resume that takes finished pages as recorded.
   */
  measureRun?(type: EventType, stepPath: string): { length: number; after: Pick<StoredEvent, 'type' | 'stepPath'> | undefined; passOver(): void };
}

export interface ReadOptions {
  fromSeq?: number;
  toSeq?: number;
  limit?: number;
  /**
   * Only events of these types, in seq order (their seqs keep the gaps between them): a reader
   * that needs a few types of a long run reads those rows, not every one.
   */
  types?: readonly EventType[];
  /**
   * Stops once the events read hold this many bytes of stored payload text, about (the event that
   * crosses it included, so a read from a seq that holds an event returns at least that one): a
   * page of a run whose answers are tens of megabytes is bounded by what it holds, not only by
   * `limit`. Not combined with `types`.
   */
  maxBytes?: number;
}

/** See EventTable.eventCounts. */
export interface EventCounts {
  /** The newest event's seq; 0 without events. */
  lastSeq: number;
  /** recorded_at of the first event (lowest seq) and the latest recorded_at of any; null without events. */
  firstRecordedAt: number | null;
  latestRecordedAt: number | null;
  /** Events of each type asked for (0 for one the run has none of). */
  byType: Partial<Record<EventType, number>>;
  /** With 'http.response' asked for: those events by their `response.status` as stored (a number, as the engine writes it). */
  responseStatuses: { status: unknown; count: number }[];
}

/** Counters for tests and benches: how many write transactions and fsyncs this connection made. */
export interface LogStats {
  /** Write transactions committed (group commits count once). */
  transactions: number;
  /** Transactions committed with an fsync of the log (one per durable group). */
  fsyncs: number;
  /** `commit` calls that succeeded. */
  commits: number;
  /** Of those, the durable ones. */
  durableCommits: number;
  /**
   * SQLite: checkpoints of the WAL this process ran, off the main thread (its worker) and on it
   * (past four times the threshold, writes that never pause); `fellBack`: why the worker could not
   * do them, SQLite's own autocheckpoint doing them since (not counted). Absent on PostgreSQL.
   */
  walCheckpoints?: { offMainThread: number; onMainThread: number; fellBack?: string };
}

/** Which runs `listRuns` and `countRuns` take (run-query.ts builds it into SQL); every one when empty. */
export interface RunQuery {
  /** One status, or any of several — read in one statement, so a run moving between them is not missed. */
  status?: RunStatus | readonly RunStatus[];
  /** Only runs that logged a `step.failed` (true) or none (false): a completed run that went on after failures. */
  failedSteps?: boolean;
  /** Only runs whose mission or run id contains this text, ignoring case (ASCII letters' only, on SQLite). */
  text?: string;
}

export interface ListRunsOptions extends RunQuery {
  limit?: number;
  offset?: number;
  oldestFirst?: boolean;
  /** Keyset cursor: the runs after this one in the listing's order (pages of a long listing without OFFSET's rescans). */
  after?: { createdAt: number; runId: string };
}

/** The run rows and their leases: who may write a run, and what each run waits on. */
export interface RunTable {
  /** Creates the run owned by `owner`, with its first events; durable. */
  createRun(run: NewRun, owner: string, ttlMs: number, first: NewEvent[]): Promise<{ lease: Lease; events: StoredEvent[] }>;
  /**
   * Takes the run's lease if it has no owner or the lease expired at `now` (bumping the epoch, so
   * the previous holder is fenced out). A live lease, even one held by `owner` itself, is refused —
   * unless it is held by `takeOverFrom`, an owner the caller knows is dead (its process is gone).
   * A backend shared by many machines judges expiry by its own clock (see GUARANTEES.md).
   */
  acquire(runId: string, owner: string, now: number, ttlMs: number, opts?: { takeOverFrom?: string }): Promise<AcquiredLease | LeaseHeld>;
  /** Extends a lease that is still current; throws LeaseLostError otherwise. */
  renew(lease: Lease, now: number, ttlMs: number): Promise<Lease>;
  /** Gives the run up; a no-op when the lease was already lost. */
  release(lease: Lease): Promise<void>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** Newest first (by createdAt, then runId), or oldest first; at most `limit` after skipping `offset`. */
  listRuns(opts?: ListRunsOptions): Promise<RunRecord[]>;
  /** How many runs `query` takes (what `listRuns` pages through). */
  countRuns(query?: RunQuery): Promise<number>;
  /** Suspended runs whose wakeAt <= now, and running runs whose lease expired (owner died). */
  dueRuns(now: number, limit: number): Promise<RunRecord[]>;
  /**
   * Compare-and-set resume of a suspended run, with its event, in ONE transaction (durable). With
   * `expectedLastSeq`, the run must also still end at that seq: a run resumed and suspended again
   * on the same wait since the caller read it is 'not-waiting'.
   */
  resumeSuspended(
    runId: string,
    expectedWaitingOn: string,
    event: NewEvent,
    expectedLastSeq?: number,
    /** Claims this inbox delivery for the run in the same transaction; taken already → 'not-waiting'. */
    claim?: { path: string; eventId: string; waitId: string },
    /**
     * Puts this delivery in the inbox in the same transaction (`reqon resume --payload` of a run in
     * a `wait`): a resumer that loses the compare-and-set leaves nothing behind for the winner's
     * wait to take. Its id held already → 'not-waiting'.
     */
    deliver?: ResumeDelivery,
  ): Promise<'resumed' | 'not-waiting'>;
}

/** A delivery `resumeSuspended` puts in the webhook inbox with the resume. */
export interface ResumeDelivery {
  path: string;
  eventId: string;
  payload: unknown;
  receivedAt: number;
}

/** The append-only events of each run: written under a lease, read by everyone. */
export interface EventTable {
  /** Appends `entries` atomically under the lease; throws LeaseLostError (nothing written) if it was lost. */
  commit(lease: Lease, entries: CommitEntry[], opts: CommitOptions): Promise<StoredEvent[]>;
  read(runId: string, opts?: ReadOptions): Promise<StoredEvent[]>;
  /**
   * A synchronous reader of the run's events with seq <= `toSeq` whose type is not in `skip`, a
   * chunk at a time, for a resume that replays them without holding the whole log. Its events
   * may parse their payloads on first use (most of a replay never looks at them). Optional: a
   * log without it (one whose reads cannot be synchronous) is read whole before a resume.
   */
  replayReader?(runId: string, toSeq: number, skip: readonly EventType[]): ReplayReader;
  /** The run's newest event whose type is one of `types`, without reading the rest of its log. */
  lastOfTypes(runId: string, types: readonly EventType[]): Promise<StoredEvent | undefined>;
  /**
   * What the database counts of the run's events without handing any out: how many of each of
   * `types`, the newest seq and the instants (one statement, one scan of the run's rows; the
   * responses' statuses in a second one, bounded by that seq). A summary of a long run (`reqon
   * show`, the studio's runs list) takes these and reads only the few events whose order matters
   * (inspect/run-summary.ts). An unknown run counts nothing.
   */
  eventCounts(runId: string, types: readonly EventType[]): Promise<EventCounts>;
  /**
   * The latest `checkpoint.advanced` syncedAt under `key` across the completed runs of `mission`
   * (not imported ones: IMPORTED_OWNER; nor those a fork of an imported run copied from it, seq up
   * to its `forkedFrom.atSeq`), of `api` (its payload's `api`, the base URL fetched from;
   * undefined: the checkpoints that name none, recorded before every checkpoint named its API),
   * and of those only checkpoints no `step.failed` of their run follows. A run that
   * failed, or has not finished, advanced nothing for the runs after it, nor one whose loop
   * tolerated a failure after the checkpoint: the records it covers may have reached only the
   * run's memory stores, on their way to an action after the fetch's that failed on them.
   */
  lastCheckpoint(mission: string, key: string, api?: string): Promise<LastCheckpoint | undefined>;
}

/** A checkpoint as `lastCheckpoint` finds it: its instant, and the query of the request that advanced it. */
export interface LastCheckpoint {
  syncedAt: number;
  /** The advancing request's query (`?status=open`, '' for none), redacted, of a bare `lastSync`. */
  query?: string;
  /** sha256 of that query unredacted and normalised (checkpoint.advanced's `querySha256`). */
  querySha256?: string;
  /** When that checkpoint was committed (its event's recordedAt, this engine's clock; syncedAt may be the server's). */
  advancedAt?: number;
}

/** The webhook inbox: deliveries committed before their sender hears 2xx, claimed once by a run. */
export interface WebhookInbox {
  /**
   * Commits a webhook delivery durably; a second delivery with the same (path, eventId) is a
   * duplicate. With `limits`: 'full' when `path` already holds `maxPerPath` unclaimed deliveries
   * (those received before `expireBefore` are removed first), 'other-path' when `bindId` and the
   * id was delivered to another path.
   */
  deliverWebhook(path: string, eventId: string, payload: unknown, receivedAt: number, limits?: InboxLimits): Promise<DeliveryOutcome>;
  /** Removes unclaimed deliveries received before `receivedBefore` (no run took them in time); how many. */
  expireWebhooks(receivedBefore: number): Promise<number>;
  /** Whether (path, eventId) was ever delivered (claimed or not): a sender's late retry. */
  webhookDelivered(path: string, eventId: string): Promise<boolean>;
  /** Unclaimed deliveries on `path`, oldest first. */
  webhookInbox(path: string): Promise<InboxDelivery[]>;
  /**
   * Every delivery in the inbox, claimed or not, by path then receipt (for `reqon log copy`: a
   * claimed one is restored by its run's commit, with a 'claim-webhook' entry).
   */
  allDeliveries(): Promise<StoredDelivery[]>;
  /**
   * At most `limit` deliveries, claimed or not, after `after` in (path, eventId) order: the inbox a
   * page at a time, each page a seek on its primary key (`reqon log copy`, in bounded memory).
   */
  deliveryPage(page: { after?: { path: string; eventId: string }; limit: number }): Promise<StoredDelivery[]>;
  /** The deliveries `runId` claimed, by path then receipt (a few: one per wait it resumed on). */
  claimedDeliveries(runId: string): Promise<StoredDelivery[]>;
}

/** A delivery as the inbox holds it, with the run and wait that claimed it (null: unclaimed). */
export interface StoredDelivery extends InboxDelivery {
  path: string;
  claimedRun: string | null;
  claimedWait: string | null;
}

/** Schedules (§B.8): registered by workers, fired by whichever worker claims the firing. */
export interface ScheduleTable {
  /** Inserts or replaces the mission's schedule; durable. An unchanged spec keeps its next_fire_at. */
  upsertSchedule(schedule: NewSchedule): Promise<ScheduleRecord>;
  listSchedules(): Promise<ScheduleRecord[]>;
  getSchedule(mission: string): Promise<ScheduleRecord | undefined>;
  /**
   * Removes the mission's schedule, durably: no worker fires it again (a firing being claimed
   * meanwhile finds it gone) until a worker given the mission registers it again. Its firings'
   * history and runs stay. False when there was none.
   */
  removeSchedule(mission: string): Promise<boolean>;
  /** Claims one firing and creates its run (with `first` events) in ONE durable transaction. */
  fireSchedule(request: FireRequest): Promise<FireOutcome>;
  /** Every firing of the mission's schedule, by due instant then attempt; with `page`, at most `limit` after `after`. */
  scheduleFirings(mission: string, page?: { after?: { dueAt: number; attempt: number }; limit?: number }): Promise<ScheduleFiring[]>;
  /** Started firings whose run failed and that have no later attempt, attempt < maxRetries. */
  retryCandidates(mission: string, maxRetries: number): Promise<RetryCandidate[]>;
  /**
   * Inserts firings as they were recorded elsewhere (`reqon log copy`), in one durable
   * transaction; a firing already there (same mission, dueAt, attempt) fails it, nothing written.
   */
  restoreFirings(firings: ScheduleFiring[]): Promise<void>;
}

/** sql/nosql store tables: written by `commit` ('store' entries), read here. */
export interface StoreTables {
  /** A sql/nosql store table's records in insertion order (a rewritten key keeps its place); empty if nothing was written yet. */
  readTable(storeKind: 'sql' | 'nosql', table: string): Promise<TableRow[]>;
  /**
   * A reader of the table's rows in insertion order, `max` at a time, that never holds the table
   * whole (`reqon log copy`); empty for a table never written. Close it when done: on PostgreSQL
   * it holds a connection.
   */
  tableReader(storeKind: 'sql' | 'nosql', table: string): Promise<TableReader>;
  /** The rows the table holds under `keys` (a key it lacks has none), each with its place in the table's order. */
  tableRows(storeKind: 'sql' | 'nosql', table: string, keys: readonly string[]): Promise<PlacedRow[]>;
  /** Every sql/nosql store table in the log's database, by name — also those no run left in the log names. */
  listTables(): Promise<StoreTableRef[]>;
  /**
   * Writes `rows` into the table as they were read elsewhere (`reqon log copy`), in order, each as
   * a 'set' write would (the table made if absent, a key already there overwritten in its place),
   * with no event: the copy of a table's rows whose runs may have been pruned. One durable
   * transaction; a row the table cannot take fails it, nothing written.
   */
  restoreTable(storeKind: 'sql' | 'nosql', table: string, rows: readonly TableRow[]): Promise<void>;
}

export interface TableRow {
  key: string;
  record: Record<string, unknown>;
}

/** See StoreTables.tableReader. */
export interface TableReader {
  /** The next rows in insertion order, at most `max` ([] once all are read). */
  next(max: number): Promise<TableRow[]>;
  close(): Promise<void>;
}

export interface PlacedRow extends TableRow {
  /** Where the row stands in the table's insertion order (`_seq`): a later row's is larger. Comparable within one table only. */
  place: number;
}

export interface StoreTableRef {
  storeKind: 'sql' | 'nosql';
  table: string;
}

/**
 * Retention (`reqon prune`, driven by prune.ts): whole finished runs removed, a short transaction
 * at a time. A run's row goes first, under a compare-and-set on what the caller listed, and its
 * events after it, so a run that can still resume never loses an event (GUARANTEES.md, Retention).
 */
export interface RunRetention {
  /**
   * Runs that may be pruned now, oldest finish first (by updatedAt, then runId), after `after`:
   * completed or failed, last updated before `finishedBefore`, under no live lease (judged at
   * `now`; PostgreSQL by its own clock), and not a scheduled run whose failure a retry still waits
   * on. Each with its checkpoints, which prune.ts keeps when they are a mission's latest (of
   * their key and API).
   */
  prunableRuns(query: PruneQuery): Promise<PrunableRun[]>;
  /**
   * The newest checkpoint (`checkpoint.advanced` syncedAt) of each mission, key and API (its
   * payload's `api`, none for the mission's own base URL): what `lastCheckpoint` answers for each.
   */
  checkpointMarks(): Promise<CheckpointMark[]>;
  /**
   * In ONE durable transaction, deletes the row and the claimed inbox deliveries of each of `runs`
   * that is still as listed (same lastSeq and leaseEpoch: nobody took or wrote it since) and still
   * passes prunableRuns's rules, and queues its events for deletePrunedEvents.
   */
  pruneRuns(runs: readonly PrunableRun[], finishedBefore: number, now: number): Promise<PrunedRuns>;
  /** Deletes up to `maxEvents` events of pruned runs in one durable transaction. */
  deletePrunedEvents(maxEvents: number): Promise<DeletedEvents>;
  /** Runs pruned whose events are still queued for deletePrunedEvents (a prune stopped or died), and those events. */
  queuedPrunedEvents(): Promise<{ runs: number; events: number }>;
  /** Reports the space the log takes and, where the backend can do it safely, gives freed space back. */
  reclaimSpace(opts: { vacuum: boolean }): Promise<SpaceReport>;
}

export interface PruneQuery {
  finishedBefore: number;
  now: number;
  limit: number;
  /** Keyset cursor: list runs after this one in (updatedAt, runId) order. */
  after?: { updatedAt: number; runId: string };
}

export interface PrunableRun {
  runId: string;
  mission: string;
  status: 'completed' | 'failed';
  updatedAt: number;
  /** The compare-and-set token with leaseEpoch: a run written or taken since it was listed is not pruned. */
  lastSeq: number;
  leaseEpoch: number;
  /**
   * `api`: the URL the checkpoint was fetched from (checkpoint.advanced's; none in runs recorded
   * before checkpoints named theirs, and in sync_state's against the mission's own URLs). None for
   * an imported run: its checkpoints are no checkpoints of this log's, so they keep it from nothing.
   */
  checkpoints: { key: string; syncedAt: number; api?: string }[];
  // (Only those that count, as checkpointMarks reads them: a checkpoint a failure of its run
  // followed is no run's to carry on from, and keeps its run from nothing — helper 91.)
}

export interface CheckpointMark {
  mission: string;
  key: string;
  /** The checkpoints of this API (checkpoint.advanced's `api`); none: of the mission's own base URL. */
  api?: string;
  syncedAt: number;
}

export interface PrunedRuns {
  /** The runs whose rows went (their events are queued). */
  runIds: string[];
  /** Webhook deliveries those runs had claimed, deleted with them. */
  deliveries: number;
  /** Bytes of the deleted rows' text (run rows and deliveries). */
  bytes: number;
}

export interface DeletedEvents {
  events: number;
  /** Bytes of the deleted events' text (type, step path, payload). */
  bytes: number;
  /** Pruned runs none of whose events is left. */
  runsDone: number;
  /** Whether events of pruned runs remain. */
  left: boolean;
}

export interface SpaceReport {
  /** What the log's tables take in the database now, in bytes. */
  storedBytes: number;
  /** Of that, free for new writes to reuse (null when the backend cannot tell). */
  freeBytes: number | null;
  /** Given back to the file system by this call. */
  shrunkBytes: number;
  /** One line on how the backend reclaims space and what `vacuum` does (or did). */
  note: string;
}

/** The connection itself. */
export interface LogConnection {
  stats(): LogStats;
  close(): Promise<void>;
  /**
   * Optional: calls `listener` (at least once, maybe more) after any process on the database
   * commits new work for a worker — a run created or released, a run suspended with a due timer,
   * a webhook delivered, a schedule registered. Resolves once listening; the function it gives
   * stops. A hint only: a worker still checks the tables itself, and polls (more slowly) for
   * what no signal names — a lease that expires, a timer that comes due. A log without it is
   * polled (SQLite).
   */
  watchWork?(listener: () => void): Promise<() => Promise<void>>;
}

/** The run database: every table the log owns, one connection to it. */
export type EventLog = RunTable & EventTable & WebhookInbox & ScheduleTable & StoreTables & RunRetention & LogConnection;

/**
 * When a registered schedule fires (§B.8), as the worker stored it. Instants are epoch ms; an
 * `at` schedule's instant is resolved (time zone applied) when it is registered.
 */
export interface ScheduleSpec {
  trigger: { kind: 'every'; everyMs: number } | { kind: 'cron'; expression: string } | { kind: 'at'; at: number };
  timezone?: string;
  /** Skip a firing while this many runs of the schedule are running or suspended. */
  maxConcurrency?: number;
  /** Skip a firing while any run of the schedule is running or suspended. */
  skipIfRunning?: boolean;
  /** Start a failed scheduled run again after `delaySeconds`, up to `maxRetries` times. */
  retry?: { maxRetries: number; delaySeconds: number };
}

/** What a schedule is: the mission it starts, when, and with which options. */
export interface ScheduleDefinition {
  mission: string;
  spec: ScheduleSpec;
  specHash: string;
  missionHash: string;
  missionFiles: MissionFiles;
  options: RunOptions;
}

/** A mission's schedule, one per mission name (the last registration wins). */
export interface ScheduleRecord extends ScheduleDefinition {
  /** The next firing's due instant; null when nothing is left to fire. */
  nextFireAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewSchedule extends ScheduleDefinition {
  /** next_fire_at for a new schedule or a changed spec; an unchanged spec keeps its own. */
  firstFireAt: number | null;
  at: number;
}

/** One firing (attempt 0) or retry (attempt n) of a schedule, and what it did. */
export interface ScheduleFiring {
  mission: string;
  dueAt: number;
  attempt: number;
  firedAt: number;
  outcome: 'started' | 'skipped';
  runId: string | null;
  reason: string | null;
  /** Ticks missed during downtime and coalesced into this firing. */
  missed: number;
}

/**
 * Claims a firing and creates its run in one transaction. Attempt 0 is a compare-and-set of the
 * schedule's next_fire_at from `dueAt` to `nextFireAt`; attempt n > 0 retries the failed run of
 * attempt n-1. Either way the (mission, dueAt, attempt) row is the firing's identity.
 */
export interface FireRequest {
  mission: string;
  dueAt: number;
  attempt: number;
  nextFireAt: number | null;
  missed: number;
  firedAt: number;
  run: NewRun;
  first: NewEvent[];
  owner: string;
  ttlMs: number;
}

export type FireOutcome =
  /** The run exists, owned by the caller's lease. */
  | { outcome: 'started'; lease: Lease; events: StoredEvent[] }
  /** The firing was consumed without a run (maxConcurrency / skipIfRunning). */
  | { outcome: 'skipped'; reason: 'skip-if-running' | 'max-concurrency'; active: number }
  /** A retry that must wait for room (nothing written; asked again later). */
  | { outcome: 'deferred'; reason: 'skip-if-running' | 'max-concurrency'; active: number }
  /** Someone else claimed this firing first, or the schedule changed: nothing written. */
  | { outcome: 'taken' };

/** A started firing whose run failed and has not been retried yet. */
export interface RetryCandidate {
  dueAt: number;
  attempt: number;
  runId: string;
  failedAt: number;
}

export interface OpenLogOptions {
  /** SQLite: how long a writer waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** SQLite's `wal_autocheckpoint` in pages (default 1000; 0 disables — for power-loss tests). */
  walAutocheckpoint?: number;
  /** Reject a second commit on a run while one is in flight (default: on unless NODE_ENV=production). */
  debugChecks?: boolean;
  /** PostgreSQL: how long to wait for a connection before failing with a clear error (default 10000 ms). */
  connectTimeoutMs?: number;
  /** PostgreSQL: connections in this process's pool (default 8). */
  poolSize?: number;
}
