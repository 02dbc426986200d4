/**
 * The EventLog on PostgreSQL (`pg`), for a log shared by many processes on many machines.
 *
 * Invariants, as on SQLite (engine/log/README.md), with PostgreSQL's means:
 * - seq: `UPDATE reqon_runs SET last_seq = last_seq + n … WHERE run_id AND owner AND lease_epoch`
 *   inside the appending transaction is both the allocator and the fence. The row lock it takes
 *   is held to COMMIT, so concurrent appenders of one run on any connection take turns, and a
 *   waiting one re-checks the fence on the row as the winner left it (READ COMMITTED re-evaluates
 *   a locked row's WHERE): seqs are contiguous, and a fenced-out holder writes nothing.
 * - the compare-and-set operations (createRun, resumeSuspended, webhook delivery and claim,
 *   schedule firings) are each one transaction, deciding by a conditional UPDATE / INSERT … ON
 *   CONFLICT DO NOTHING (or a row lock) that the database serialises.
 * - leases expire by the database's clock (`reqon_now_ms()`, i.e. clock_timestamp()): the `now`
 *   callers pass to acquire/renew/createRun is not used for leases, so a worker whose clock is
 *   wrong can neither steal a live lease nor keep a dead one. Timers (`wakeAt`) stay in the
 *   callers' time, as the worker computed them.
 * - group commit and durability: group-commit.ts and commit-batch.ts (two writer connections,
 *   one with synchronous_commit off for non-durable groups, one with it on for durable groups).
 * Lease operations and reads run on the pool outside the group; writes that decide something go
 * through the group.
 */
import pg from 'pg';
import { isSummaryRead, SUMMARY_EVENT_TYPES, type EventType, type NewEvent, type StoredEvent } from '../events.js';
import { checkEventTypes, checkMaxBytes, checkFiringsPage, checkId, checkLimit, checkPruneQuery, checkPruneRuns, checkStatus, checkStoreKind, checkTtl, planEntry, type PlannedEntry, planRestoredRows, planResume, planResumeDelivery } from '../checks.js';
import { DeliveryClaimedError, LeaseLostError, LogClosedError, LogConnectionError, LogSetupError, LogTargetError, logUnreachable, RunNotFoundError } from '../errors.js';
import {
  IMPORTED_OWNER,
  type AcquiredLease,
  type CommitEntry,
  type CommitOptions,
  type EventCounts,
  type DeliveryOutcome,
  type EventLog,
  type FireOutcome,
  type FireRequest,
  type InboxDelivery,
  type InboxLimits,
  type Lease,
  type LeaseHeld,
  type LogStats,
  type NewRun,
  type NewSchedule,
  type OpenLogOptions,
  type ReadOptions,
  type RetryCandidate,
  type RunRecord,
  type RunStatus,
  type ListRunsOptions,
  type RunQuery,
  type ScheduleFiring,
  type ScheduleRecord,
  type StatusChange,
  type StoredDelivery,
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
import { checkInstant, describe, prepareEvent, storedFrom, storeWritePayloadJson, eventCountsColumns, toEventCounts, toRunRecord, toStoredDelivery, toStoredEvent, DELIVERY_COLUMNS, type DeliveryRow, type EventRow, type PreparedEvent, type RunRow } from '../rows.js';
import { checkTableName } from '../store-rules.js';
import { type BatchedCommit, type BatchedCreate, type BatchItem, type CreatedRun, runBatch, writesInOneStatement } from './commit-batch.js';
import { PgGroupCommitter } from './group-commit.js';
import { migrate } from './migrations.js';
import { pgConfigOf, PgUrlError, redactPgUrl } from './pg-url.js';
import { insertEvents } from './run-sql.js';
import { listRunsPage, runQuerySql, runsAfterSql } from '../run-query.js';
import * as retention from './retention.js';
import * as schedules from './schedules.js';
import { listStoreTables } from './table-catalog.js';
import { openTableReader } from './table-reader.js';
import { PgTableStores } from './table-store.js';
import { listenForWork, notifyWork, WORK_CHANNEL } from './work-signals.js';

const INT8_OID = 20;
/** How many times `acquire` asks again when another acquire changed the run under its statement. */
const ACQUIRE_ATTEMPTS = 5;

/** BIGINT columns (instants, seqs, epochs) come back as numbers: every value the engine writes is a safe integer. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * An http.response payload's status from its first characters: flat top-level members (strings,
 * numbers, literals — no object or array before it), then "response" whose first key is
 * "status", a 3-digit integer. The one capture group is the status.
 */
const RESPONSE_STATUS_PREFIX = String.raw`^\{(?:"(?:[^"\\]|\\.)*":(?:"(?:[^"\\]|\\.)*"|[-+.0-9eE]+|true|false|null),)*"response":\{"status":([1-9][0-9]{2})[,}]`;

/** The URL as it may be printed: without its password. */

export const redactUrl = redactPgUrl;

export async function openPostgresLog(url: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  const target = redactUrl(url);
  // Read as libpq reads it (pg-url.ts): a %2F in the database name, a socket folder as ?host=.
  let connection: pg.ClientConfig;
  try {
    connection = pgConfigOf(url);
  } catch (error) {
    if (error instanceof PgUrlError) throw new Error(error.message);
    throw error;
  }
  // The connections being opened, so that one left mid-authentication can be cut (passwordAsked).
  const opening = new Set<pg.Client>();
  class OpeningClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super(config);
      opening.add(this);
      this.once('end', () => opening.delete(this));
    }
  }
  // The URL's own settings last: they win, as they did given as `connectionString`.
  const pool = new pg.Pool({
    Client: OpeningClient,
    max: Math.max(1, (opts.poolSize ?? 8) - 2), // and two writers: poolSize connections in all (besides LISTEN)
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    application_name: 'reqon',
    types,
    ...connection,
  });
  // The group commit's two connections (group-commit.ts), each in a pool of its own so that its
  // session setting (connectWriter) — synchronous_commit off for the lazy one, on for the durable
  // one — never reaches the statements of the main pool (leases, reads) nor the other writer.
  const writer = (durable: boolean) =>
    new pg.Pool({
      Client: OpeningClient,
      max: 1,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      application_name: durable ? 'reqon-writer-durable' : 'reqon-writer',
      types,
      ...connection,
    });
  const writers = { lazy: writer(false), durable: writer(true) };
  // An idle connection that breaks (server restart) is dropped by the pool and reported here;
  // unheard, that 'error' would kill the process. The next query opens a new connection.
  for (const p of [pool, writers.lazy, writers.durable]) p.on('error', () => undefined);
  const log = new PostgresEventLog(pool, writers, target, opts.debugChecks ?? process.env['NODE_ENV'] !== 'production', {
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    application_name: 'reqon-listen',
    ...connection,
  });
  try {
    const client = await log.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
  } catch (error) {
    if (passwordAsked(error)) {
      // The driver gives up but leaves its socket to the server's authentication_timeout (a
      // minute by default), which held the process that long: cut it.
      for (const client of opening) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
    for (const p of [pool, writers.lazy, writers.durable]) await p.end().catch(() => undefined);
    if (passwordAsked(error)) {
      throw new LogTargetError(target, 'the server asks for a password and none was given; put it in the URL (postgres://USER:PASSWORD@HOST:PORT/DB, percent-encoded), in $PGPASSWORD or in ~/.pgpass');
    }
    // The server refused the migration itself (no CREATE on the schema, no schema on the
    // search_path): one line naming the database, as for one that cannot be reached.
    const code = (error as { code?: unknown } | null)?.code;
    if (!logUnreachable(error) && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) throw new LogSetupError(target, reasonOf(error), { cause: error });
    throw error;
  }
  return log;
}

class PostgresEventLog implements EventLog {
  private readonly tables = new PgTableStores();
  private readonly committer: PgGroupCommitter<BatchItem>;
  private readonly inFlight = new Set<string>();
  private commits = 0;
  private durableCommits = 0;
  private singleTransactions = 0;
  private closed = false;
  private readonly heard = new WeakSet<pg.PoolClient>();
  /** Writer connections whose session's synchronous_commit is already set. */
  private readonly setWriters = new WeakSet<pg.PoolClient>();

  constructor(
    private readonly pool: pg.Pool,
    /** The group commit's connections (see openPostgresLog). */
    private readonly writers: { lazy: pg.Pool; durable: pg.Pool },
    private readonly target: string,
    private readonly debugChecks: boolean,
    /** For the dedicated LISTEN connection of watchWork. */
    private readonly listenConfig: pg.ClientConfig,
  ) {
    this.committer = new PgGroupCommitter(
      (durable) => this.connectWriter(durable),
      () => this.tables.invalidate(),
      (client, items) => runBatch(client, this.tables, items, (lease, on) => this.leaseLost(lease, on)),
      writesInOneStatement,
    );
  }

  /** A pooled connection; a failure to connect is a LogConnectionError naming the server. */
  async connect(pool: pg.Pool = this.pool): Promise<pg.PoolClient> {
    try {
      const client = await pool.connect();
      // A connection that breaks while checked out but between queries (a server restart)
      // emits 'error' on itself, which unheard would kill the process; its next query fails.
      if (!this.heard.has(client)) {
        client.on('error', () => undefined);
        this.heard.add(client);
      }
      return client;
    } catch (error) {
      throw new LogConnectionError(this.target, reasonOf(error), { cause: error });
    }
  }

  /**
   * A group commit's connection, its session's synchronous_commit set once per physical
   * connection (see openPostgresLog): `on` for the durable writer whatever the server's default.
   */
  private async connectWriter(durable: boolean): Promise<pg.PoolClient> {
    const client = await this.connect(durable ? this.writers.durable : this.writers.lazy);
    if (!this.setWriters.has(client)) {
      try {
        await client.query(`SET synchronous_commit = ${durable ? 'on' : 'off'}`);
      } catch (error) {
        client.release(error instanceof Error ? error : new Error(String(error)));
        throw new LogConnectionError(this.target, reasonOf(error), { cause: error });
      }
      this.setWriters.add(client);
    }
    return client;
  }

  /** One statement on a pooled connection (autocommit). */
  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      return await client.query<R>(text, values);
    } catch (error) {
      if ((error as { code?: string }).code === undefined) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      return await work(client);
    } finally {
      client.release();
    }
  }

  async createRun(run: NewRun, owner: string, ttlMs: number, first: NewEvent[]): Promise<{ lease: Lease; events: StoredEvent[] }> {
    this.open('createRun');
    checkId(run?.runId, 'createRun: runId');
    checkId(owner, 'createRun: owner');
    checkInstant(run.createdAt, 'createRun: createdAt');
    checkTtl(ttlMs, 'createRun');
    if (!Array.isArray(first)) throw new Error(`createRun: first events must be an array but got: ${describe(first)}`);
    const prepared = first.map((event) => prepareEvent(event, `createRun '${run.runId}'`));
    const create: BatchedCreate = { create: true, run, owner, ttlMs, events: prepared };
    return this.committer.submit(true, async (client) => this.aloneInBatch(client, create) as Promise<CreatedRun>, { batch: create });
  }

  /** One batch item alone (in its savepoint, when its group re-runs with savepoints): its value, or its error thrown. */
  private async aloneInBatch(client: pg.PoolClient, item: BatchItem): Promise<unknown> {
    const [outcome] = await runBatch(client, this.tables, [item], (lost, on) => this.leaseLost(lost, on));
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.value;
  }

  async acquire(runId: string, owner: string, now: number, ttlMs: number, opts: { takeOverFrom?: string } = {}): Promise<AcquiredLease | LeaseHeld> {
    this.open('acquire');
    checkId(runId, 'acquire: runId');
    checkId(owner, 'acquire: owner');
    checkInstant(now, 'acquire: now');
    checkTtl(ttlMs, 'acquire');
    const previous = opts.takeOverFrom ?? null;
    // The UPDATE re-checks a row another acquire just took (and skips it), but the SELECT beside it
    // reads the statement's snapshot: the row as it was, takeable — no owner, or an expired or
    // dead one. Such an answer means the run changed hands meanwhile: ask again, and the new
    // statement sees who holds it now (or takes it, if that holder has let go already).
    for (let attempt = 1; ; attempt++) {
      this.singleTransactions++;
      const { rows } = await this.query<RunRow & { held_by: string | null; held_until: number | null; taken: boolean; takeable: boolean }>(
        `WITH taken AS (
           UPDATE reqon_runs SET owner = $2, lease_epoch = lease_epoch + 1, lease_expires_at = reqon_now_ms() + $3
            WHERE run_id = $1 AND (owner IS NULL OR lease_expires_at <= reqon_now_ms() OR ($4::text IS NOT NULL AND owner = $4))
           RETURNING *)
         SELECT taken.*, true AS taken, NULL AS held_by, NULL AS held_until, false AS takeable FROM taken
         UNION ALL
         SELECT r.*, false, r.owner, r.lease_expires_at,
                (r.owner IS NULL OR r.lease_expires_at <= reqon_now_ms() OR ($4::text IS NOT NULL AND r.owner = $4))
           FROM reqon_runs r WHERE r.run_id = $1 AND NOT EXISTS (SELECT 1 FROM taken)`,
        [runId, owner, ttlMs, previous],
      );
      const row = rows[0];
      if (row === undefined) throw new RunNotFoundError(runId);
      if (row.taken) return { runId, owner, epoch: row.lease_epoch, expiresAt: row.lease_expires_at!, run: toRunRecord(row) };
      if (!row.takeable || attempt === ACQUIRE_ATTEMPTS) return { heldBy: row.held_by ?? '', expiresAt: row.held_until ?? now };
    }
  }

  async renew(lease: Lease, now: number, ttlMs: number): Promise<Lease> {
    this.open('renew');
    checkInstant(now, 'renew: now');
    checkTtl(ttlMs, 'renew');
    this.singleTransactions++;
    const { rows } = await this.query<{ lease_expires_at: number }>(
      `UPDATE reqon_runs SET lease_expires_at = reqon_now_ms() + $4
        WHERE run_id = $1 AND owner = $2 AND lease_epoch = $3 RETURNING lease_expires_at`,
      [lease.runId, lease.owner, lease.epoch, ttlMs],
    );
    if (rows[0] === undefined) throw await this.leaseLost(lease);
    return { ...lease, expiresAt: rows[0].lease_expires_at };
  }

  async release(lease: Lease): Promise<void> {
    this.open('release');
    this.singleTransactions++;
    // One statement: the NOTIFY goes out with the release's commit, and only if it released.
    await this.query(
      `WITH released AS (UPDATE reqon_runs SET owner = NULL, lease_expires_at = NULL WHERE run_id = $1 AND owner = $2 AND lease_epoch = $3 RETURNING 1)
       SELECT pg_notify('${WORK_CHANNEL}', '') FROM released`,
      [lease.runId, lease.owner, lease.epoch],
    );
  }

  async commit(lease: Lease, entries: CommitEntry[], opts: CommitOptions): Promise<StoredEvent[]> {
    this.open('commit');
    if (!Array.isArray(entries)) throw new Error(`commit on run '${lease.runId}': entries must be an array but got: ${describe(entries)}`);
    const where = `commit on run '${lease.runId}'`;
    const plan = entries.map((entry) => planEntry(entry, where, checkTableName));
    const status = opts.status === undefined ? undefined : checkStatus(opts.status, where);
    const latest = plan.reduce((max, step) => Math.max(max, step.kind === 'event' ? step.event.recordedAt : step.kind === 'store' ? step.write.recordedAt : 0), 0);
    if (this.debugChecks) {
      if (this.inFlight.has(lease.runId)) {
        throw new Error(`${where}: a previous commit on this run has not settled yet; await each commit before the next (commits under one lease are sequential)`);
      }
      this.inFlight.add(lease.runId);
    }
    try {
      const mission = opts.mission === undefined ? undefined : { hash: opts.mission.missionHash, filesJson: JSON.stringify(opts.mission.missionFiles) };
      const commit: BatchedCommit = {
        lease,
        entries: plan.filter((entry): entry is BatchedCommit['entries'][number] => entry.kind !== 'claim'),
        latest,
        status,
        mission,
        returnEvents: opts.returnEvents !== false,
      };
      const claims = plan.filter((entry): entry is Extract<PlannedEntry, { kind: 'claim' }> => entry.kind === 'claim');
      const alone = async (client: pg.PoolClient): Promise<StoredEvent[]> => {
        const events = (await this.aloneInBatch(client, commit)) as StoredEvent[];
        await this.claim(client, lease, claims);
        return events;
      };
      // A claim must undo the commit's other writes when it fails: only claim-free commits batch.
      const events = await this.committer.submit(opts.durable, alone, claims.length === 0 ? { batch: commit } : {});
      this.commits++;
      if (opts.durable) this.durableCommits++;
      return events;
    } finally {
      if (this.debugChecks) this.inFlight.delete(lease.runId);
    }
  }

  /** Claims inbox deliveries for the run; the first one taken by someone else fails the whole commit. */
  private async claim(client: pg.PoolClient, lease: Lease, claims: Extract<PlannedEntry, { kind: 'claim' }>[]): Promise<void> {
    for (const entry of claims) {
      const claimed = await client.query(
        'UPDATE reqon_webhook_inbox SET claimed_run = $3, claimed_wait = $4 WHERE path = $1 AND event_id = $2 AND claimed_run IS NULL',
        [entry.path, entry.eventId, lease.runId, entry.waitId],
      );
      if (claimed.rowCount !== 1) throw new DeliveryClaimedError(entry.path, entry.eventId);
    }
  }

  async read(runId: string, opts: ReadOptions = {}): Promise<StoredEvent[]> {
    this.open('read');
    const from = opts.fromSeq ?? 1;
    const to = opts.toSeq ?? Number.MAX_SAFE_INTEGER;
    const limit = opts.limit ?? -1;
    for (const [name, value] of [['fromSeq', from], ['toSeq', to], ['limit', limit]] as const) {
      if (!Number.isSafeInteger(value)) throw new Error(`read '${runId}': ${name} must be an integer but got: ${describe(value)}`);
    }
    if (opts.types !== undefined) checkEventTypes(opts.types, `read '${runId}': types`);
    if (opts.maxBytes !== undefined) {
      checkMaxBytes(runId, opts);
      // The running size is counted by the server (octet_length reads a stored value's size without
      // its text), so no payload past the budget is sent.
      const { rows } = await this.query<EventRow>(
        `SELECT run_id, seq, type, step_path, payload, recorded_at FROM (
           SELECT run_id, seq, type, step_path, payload, recorded_at,
                  sum(octet_length(payload)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - octet_length(payload) AS before
             FROM reqon_events WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4
         ) page WHERE before < $5 ORDER BY seq`,
        [runId, from, to, limit < 0 ? null : limit, opts.maxBytes],
      );
      return rows.map(toStoredEvent);
    }
    if (opts.types !== undefined && isSummaryRead(opts.types)) {
      // The literal list of the partial index reqon_events_summary (migration 5), which a bound array cannot use.
      const { rows } = await this.query<EventRow>(
        `SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events WHERE run_id = $1 AND seq >= $2 AND seq <= $3
            AND type IN (${SUMMARY_EVENT_TYPES.map((t) => `'${t}'`).join(', ')}) ORDER BY seq LIMIT $4`,
        [runId, from, to, limit < 0 ? null : limit],
      );
      return rows.map(toStoredEvent);
    }
    const { rows } = await this.query<EventRow>(
      'SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events WHERE run_id = $1 AND seq >= $2 AND seq <= $3 AND ($5::text[] IS NULL OR type = ANY($5::text[])) ORDER BY seq LIMIT $4',
      [runId, from, to, limit < 0 ? null : limit, opts.types ?? null],
    );
    return rows.map(toStoredEvent);
  }

  async lastOfTypes(runId: string, types: readonly EventType[]): Promise<StoredEvent | undefined> {
    this.open('lastOfTypes');
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string')) {
      throw new Error(`lastOfTypes '${runId}': types must be an array of event types but got: ${describe(types)}`);
    }
    const { rows } = await this.query<EventRow>(
      'SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events WHERE run_id = $1 AND type = ANY($2::text[]) ORDER BY seq DESC LIMIT 1',
      [runId, types],
    );
    return rows[0] === undefined ? undefined : toStoredEvent(rows[0]);
  }

  async eventCounts(runId: string, types: readonly EventType[]): Promise<EventCounts> {
    this.open('eventCounts');
    checkEventTypes(types, `eventCounts '${runId}': types`);
    const { rows } = await this.query<Record<string, unknown>>(`SELECT ${eventCountsColumns(types, (i) => `$${i + 2}`, '$1')} FROM reqon_events WHERE run_id = $1`, [runId, ...types]);
    const row = Array.from({ length: types.length + 3 }, (_, i) => rows[0]![`c${i}`]);
    const lastSeq = Number(row[types.length] ?? 0);
    const responses = types.includes('http.response') ? Number(row[types.indexOf('http.response')]) : 0;
    let statuses: [unknown, string][] = [];
    if (responses > 0) {
      // The status as jsonb, so the caller sees it typed as stored; bounded by the seq counted.
      // Read from the payload's first 512 characters (left() detoasts only that slice) where a
      // regular expression proves it is response.status: a run of flat top-level members, then
      // "response":{"status":NNN — the engine's order (fetch-step.ts). payload::jsonb parsed the
      // whole body (20 MB on every runs-list call); any other payload still goes through it, so
      // the counts are those of the full parse. The same rule as SQLite's responseStatuses.
      const result = await this.query<{ status: unknown; n: string }>(
        `SELECT coalesce(to_jsonb(substring(left(payload, 512) FROM $3)::int), payload::jsonb -> 'response' -> 'status') AS status, count(*) AS n
           FROM reqon_events WHERE run_id = $1 AND seq <= $2 AND type = 'http.response' GROUP BY 1`,
        [runId, lastSeq, RESPONSE_STATUS_PREFIX],
      );
      statuses = result.rows.map((r) => [r.status, r.n]);
    }
    return toEventCounts(types, row, statuses);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.open('getRun');
    const { rows } = await this.query<RunRow>('SELECT * FROM reqon_runs WHERE run_id = $1', [runId]);
    return rows[0] === undefined ? undefined : toRunRecord(rows[0]);
  }

  async listRuns(opts: ListRunsOptions = {}): Promise<RunRecord[]> {
    this.open('listRuns');
    const { limit, offset } = listRunsPage(opts, 'listRuns');
    const values: unknown[] = [];
    const where = pgRunQuery(opts, 'listRuns', values);
    const after = runsAfterSql(opts, 'listRuns', (v) => (values.push(v), `$${values.length}`), 'run_id COLLATE "C"');
    const filter = after === '' ? where : where === '' ? `WHERE ${after}` : `${where} AND ${after}`;
    const order = opts.oldestFirst === true ? 'created_at ASC, run_id COLLATE "C" DESC' : 'created_at DESC, run_id COLLATE "C"';
    values.push(limit < 0 ? null : limit, offset);
    const { rows } = await this.query<RunRow>(`SELECT * FROM reqon_runs ${filter} ORDER BY ${order} LIMIT $${values.length - 1} OFFSET $${values.length}`, values);
    return rows.map(toRunRecord);
  }

  async countRuns(query: RunQuery = {}): Promise<number> {
    this.open('countRuns');
    const values: unknown[] = [];
    const where = pgRunQuery(query, 'countRuns', values);
    const { rows } = await this.query<{ n: string }>(`SELECT count(*) AS n FROM reqon_runs ${where}`, values);
    return Number(rows[0]!.n);
  }

  async dueRuns(now: number, limit: number): Promise<RunRecord[]> {
    this.open('dueRuns');
    checkInstant(now, 'dueRuns: now');
    if (!Number.isSafeInteger(limit) || limit <= 0) throw new Error(`dueRuns: limit must be a positive integer but got: ${describe(limit)}`);
    // Timers by the caller's clock (it set them); leases by the database's.
    const { rows } = await this.query<RunRow>(
      `SELECT * FROM (
         SELECT *, wake_at AS due FROM reqon_runs
          WHERE status = 'suspended' AND wake_at <= $1 AND (owner IS NULL OR lease_expires_at <= reqon_now_ms())
         UNION ALL
         SELECT *, coalesce(lease_expires_at, updated_at) AS due FROM reqon_runs
          WHERE status = 'running' AND (owner IS NULL OR lease_expires_at <= reqon_now_ms())
       ) d ORDER BY due, run_id COLLATE "C" LIMIT $2`,
      [now, limit],
    );
    return rows.map(toRunRecord);
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
      .submit(true, async (client) => {
        const { rows } = await client.query<{ last_seq: number }>(
          `UPDATE reqon_runs SET status = 'running', wake_at = NULL, waiting_on = NULL, owner = NULL, lease_expires_at = NULL,
                  last_seq = last_seq + 1, updated_at = greatest(updated_at, $4)
            WHERE run_id = $1 AND status = 'suspended' AND waiting_on = $2 AND ($3::bigint IS NULL OR last_seq = $3)
           RETURNING last_seq`,
          [runId, expectedWaitingOn, expectedLastSeq ?? null, prepared.recordedAt],
        );
        if (rows[0] === undefined) {
          const exists = await client.query('SELECT 1 FROM reqon_runs WHERE run_id = $1', [runId]);
          if (exists.rowCount === 0) throw new RunNotFoundError(runId);
          return 'not-waiting' as const;
        }
        if (claim) {
          const claimed = await client.query(
            'UPDATE reqon_webhook_inbox SET claimed_run = $3, claimed_wait = $4 WHERE path = $1 AND event_id = $2 AND claimed_run IS NULL',
            [claim.path, claim.eventId, runId, claim.waitId],
          );
          // Taken already: thrown, so the savepoint undoes the resume too.
          if (claimed.rowCount !== 1) throw notWaiting;
        }
        if (delivery && !(await insertDelivery(client, delivery.path, delivery.eventId, delivery.json, delivery.receivedAt))) throw notWaiting;
        await insertEvents(client, runId, rows[0].last_seq, [prepared]);
        await notifyWork(client);
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
    return this.withClient((client) => this.tables.list(client, storeKind, table));
  }

  async tableReader(storeKind: 'sql' | 'nosql', table: string): Promise<TableReader> {
    this.open('tableReader');
    checkStoreKind(storeKind, 'tableReader');
    checkTableName(table, storeKind);
    return openTableReader(await this.connect(), this.tables, storeKind, table);
  }

  async tableRows(storeKind: 'sql' | 'nosql', table: string, keys: readonly string[]): Promise<PlacedRow[]> {
    this.open('tableRows');
    checkStoreKind(storeKind, 'tableRows');
    checkTableName(table, storeKind);
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) throw new Error(`tableRows: keys must be an array of strings but got: ${describe(keys)}`);
    return this.withClient((client) => this.tables.rowsOf(client, storeKind, table, keys));
  }

  async listTables(): Promise<StoreTableRef[]> {
    this.open('listTables');
    return this.withClient((client) => listStoreTables(client));
  }

  async restoreTable(storeKind: 'sql' | 'nosql', table: string, rows: readonly TableRow[]): Promise<void> {
    this.open('restoreTable');
    const writes = planRestoredRows(storeKind, table, rows, checkTableName);
    for (const write of writes) this.tables.check(write);
    await this.committer.submit(true, async (client) => {
      await this.tables.applyWrites(client, writes);
    });
  }

  async lastCheckpoint(mission: string, key: string, api?: string): Promise<LastCheckpoint | undefined> {
    this.open('lastCheckpoint');
    const { rows } = await this.query<{ synced: string | null; query: string | null; query_sha256: string | null; advanced_at: string | null }>(
      `SELECT (e.payload::jsonb ->> 'syncedAt')::numeric AS synced, e.payload::jsonb ->> 'query' AS query,
              e.payload::jsonb ->> 'querySha256' AS query_sha256, e.recorded_at AS advanced_at
         FROM reqon_events e JOIN reqon_runs r ON r.run_id = e.run_id
        WHERE e.type = 'checkpoint.advanced' AND r.mission = $1 AND e.payload::jsonb ->> 'key' = $2
          AND (e.payload::jsonb ->> 'api') IS NOT DISTINCT FROM $3 AND r.status = 'completed' AND r.owner IS DISTINCT FROM '${IMPORTED_OWNER}'
          AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
          AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND (s.payload::jsonb #>> '{forkedFrom,imported}') = 'true' AND (s.payload::jsonb #>> '{forkedFrom,atSeq}')::bigint >= e.seq)
        ORDER BY synced DESC LIMIT 1`,
      [mission, key, api ?? null],
    );
    const row = rows[0];
    if (row?.synced === null || row?.synced === undefined) return undefined;
    return {
      syncedAt: Number(row.synced),
      ...(typeof row.query === 'string' ? { query: row.query } : {}),
      ...(typeof row.query_sha256 === 'string' ? { querySha256: row.query_sha256 } : {}),
      ...(row.advanced_at !== null ? { advancedAt: Number(row.advanced_at) } : {}),
    };
  }

  async deliverWebhook(path: string, eventId: string, payload: unknown, receivedAt: number, limits?: InboxLimits): Promise<DeliveryOutcome> {
    this.open('deliverWebhook');
    checkId(path, 'deliverWebhook: path');
    checkId(eventId, 'deliverWebhook: eventId');
    checkInstant(receivedAt, 'deliverWebhook: receivedAt');
    const json = JSON.stringify(payload ?? null);
    return this.committer.submit(true, async (client): Promise<DeliveryOutcome> => {
      if (limits) {
        // The limits are counted under locks on the path and the id, so concurrent deliveries
        // on other connections cannot both find room (SQLite gets this from its one writer).
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1)), pg_advisory_xact_lock(hashtext($2))', [`reqon-inbox-path:${path}`, `reqon-inbox-id:${eventId}`]);
        const known = await client.query('SELECT 1 FROM reqon_webhook_inbox WHERE path = $1 AND event_id = $2', [path, eventId]);
        if (known.rowCount !== 0) return 'duplicate';
        if (limits.bindId) {
          const other = await client.query('SELECT 1 FROM reqon_webhook_inbox WHERE event_id = $1 AND path <> $2 LIMIT 1', [eventId, path]);
          if (other.rowCount !== 0) return 'other-path';
        }
        await client.query('DELETE FROM reqon_webhook_inbox WHERE path = $1 AND claimed_run IS NULL AND received_at < $2', [path, limits.expireBefore]);
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM reqon_webhook_inbox WHERE path = $1 AND claimed_run IS NULL', [path]);
        if (rows[0]!.n >= limits.maxPerPath) return 'full';
      }
      if (!(await insertDelivery(client, path, eventId, json, receivedAt))) return 'duplicate';
      await notifyWork(client);
      return 'accepted';
    });
  }

  async expireWebhooks(receivedBefore: number): Promise<number> {
    this.open('expireWebhooks');
    checkInstant(receivedBefore, 'expireWebhooks: receivedBefore');
    return this.committer.submit(true, async (client) => {
      const deleted = await client.query('DELETE FROM reqon_webhook_inbox WHERE claimed_run IS NULL AND received_at < $1', [receivedBefore]);
      return deleted.rowCount ?? 0;
    });
  }

  async webhookDelivered(path: string, eventId: string): Promise<boolean> {
    this.open('webhookDelivered');
    const { rowCount } = await this.query('SELECT 1 FROM reqon_webhook_inbox WHERE path = $1 AND event_id = $2', [path, eventId]);
    return rowCount !== 0;
  }

  async webhookInbox(path: string): Promise<InboxDelivery[]> {
    this.open('webhookInbox');
    const { rows } = await this.query<{ event_id: string; payload: string; received_at: number }>(
      'SELECT event_id, payload, received_at FROM reqon_webhook_inbox WHERE path = $1 AND claimed_run IS NULL ORDER BY received_at, event_id COLLATE "C"',
      [path],
    );
    return rows.map((r) => ({ eventId: r.event_id, payload: JSON.parse(r.payload) as unknown, receivedAt: r.received_at }));
  }

  async allDeliveries(): Promise<StoredDelivery[]> {
    this.open('allDeliveries');
    const { rows } = await this.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox ORDER BY path COLLATE "C", received_at, event_id COLLATE "C"`);
    return rows.map(toStoredDelivery);
  }

  async deliveryPage(page: { after?: { path: string; eventId: string }; limit: number }): Promise<StoredDelivery[]> {
    this.open('deliveryPage');
    checkLimit(page?.limit, 'deliveryPage: limit');
    if (page.after !== undefined) {
      checkId(page.after.path, 'deliveryPage: after.path');
      checkId(page.after.eventId, 'deliveryPage: after.eventId');
    }
    // The primary key's own collation (not "C"), so each page is a seek on it; a page only has to follow the one before.
    const { rows } =
      page.after === undefined
        ? await this.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox ORDER BY path, event_id LIMIT $1`, [page.limit])
        : await this.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox WHERE (path, event_id) > ($1, $2) ORDER BY path, event_id LIMIT $3`, [
            page.after.path,
            page.after.eventId,
            page.limit,
          ]);
    return rows.map(toStoredDelivery);
  }

  async claimedDeliveries(runId: string): Promise<StoredDelivery[]> {
    this.open('claimedDeliveries');
    checkId(runId, 'claimedDeliveries: runId');
    const { rows } = await this.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM reqon_webhook_inbox WHERE claimed_run = $1 ORDER BY path COLLATE "C", received_at, event_id COLLATE "C"`,
      [runId],
    );
    return rows.map(toStoredDelivery);
  }

  async upsertSchedule(schedule: NewSchedule): Promise<ScheduleRecord> {
    this.open('upsertSchedule');
    return this.committer.submit(true, async (client) => {
      const record = await schedules.upsertSchedule(client, schedule);
      await notifyWork(client);
      return record;
    });
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.open('listSchedules');
    return this.withClient((client) => schedules.listSchedules(client));
  }

  async getSchedule(mission: string): Promise<ScheduleRecord | undefined> {
    this.open('getSchedule');
    return this.withClient((client) => schedules.getSchedule(client, mission));
  }

  async removeSchedule(mission: string): Promise<boolean> {
    this.open('removeSchedule');
    return this.committer.submit(true, (client) => schedules.removeSchedule(client, mission));
  }

  async fireSchedule(request: FireRequest): Promise<FireOutcome> {
    this.open('fireSchedule');
    checkId(request?.owner, 'fireSchedule: owner');
    checkTtl(request.ttlMs, 'fireSchedule');
    checkId(request.run?.runId, 'fireSchedule: runId');
    checkInstant(request.run.createdAt, 'fireSchedule: createdAt');
    const events = schedules.prepareFire(request);
    return this.committer.submit(true, (client) => schedules.fireSchedule(client, request, events));
  }

  async scheduleFirings(mission: string, page?: { after?: { dueAt: number; attempt: number }; limit?: number }): Promise<ScheduleFiring[]> {
    this.open('scheduleFirings');
    checkFiringsPage(page);
    return this.withClient((client) => schedules.scheduleFirings(client, mission, page));
  }

  async retryCandidates(mission: string, maxRetries: number): Promise<RetryCandidate[]> {
    this.open('retryCandidates');
    return this.withClient((client) => schedules.retryCandidates(client, mission, maxRetries));
  }

  async restoreFirings(firings: ScheduleFiring[]): Promise<void> {
    this.open('restoreFirings');
    if (!Array.isArray(firings)) throw new Error(`restoreFirings: firings must be an array but got: ${describe(firings)}`);
    return this.committer.submit(true, (client) => schedules.restoreFirings(client, firings));
  }

  async prunableRuns(query: PruneQuery): Promise<PrunableRun[]> {
    this.open('prunableRuns');
    checkPruneQuery(query);
    return this.withClient((client) => retention.prunableRuns(client, query));
  }

  async checkpointMarks(): Promise<CheckpointMark[]> {
    this.open('checkpointMarks');
    return this.withClient((client) => retention.checkpointMarks(client));
  }

  async pruneRuns(runs: readonly PrunableRun[], finishedBefore: number, now: number): Promise<PrunedRuns> {
    this.open('pruneRuns');
    checkPruneRuns(runs, finishedBefore, now);
    this.singleTransactions++;
    return this.withClient((client) => retention.inTransaction(client, () => retention.pruneRuns(client, runs, finishedBefore, now)));
  }

  async queuedPrunedEvents(): Promise<{ runs: number; events: number }> {
    this.open('queuedPrunedEvents');
    return this.withClient((client) => retention.queuedPrunedEvents(client));
  }

  async deletePrunedEvents(maxEvents: number): Promise<DeletedEvents> {
    this.open('deletePrunedEvents');
    checkLimit(maxEvents, 'deletePrunedEvents: maxEvents');
    this.singleTransactions++;
    return this.withClient((client) => retention.inTransaction(client, () => retention.deletePrunedEvents(client, maxEvents)));
  }

  async reclaimSpace(opts: { vacuum: boolean }): Promise<SpaceReport> {
    this.open('reclaimSpace');
    return this.withClient((client) => retention.reclaimSpace(client, opts.vacuum === true));
  }

  async watchWork(listener: () => void): Promise<() => Promise<void>> {
    this.open('watchWork');
    try {
      return await listenForWork(this.listenConfig, listener);
    } catch (error) {
      throw new LogConnectionError(this.target, reasonOf(error), { cause: error });
    }
  }

  stats(): LogStats {
    return {
      transactions: this.committer.transactions + this.singleTransactions,
      // One WAL flush per durable group; PostgreSQL also flushes for each single lease statement.
      fsyncs: this.committer.durableGroups,
      commits: this.commits,
      durableCommits: this.durableCommits,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.idle();
    await Promise.all([this.pool.end(), this.writers.lazy.end(), this.writers.durable.end()]);
  }

  private async leaseLost(lease: Lease, client?: pg.PoolClient): Promise<Error> {
    const text = 'SELECT owner, lease_epoch FROM reqon_runs WHERE run_id = $1';
    const { rows } = client ? await client.query<{ owner: string | null; lease_epoch: number }>(text, [lease.runId]) : await this.query<{ owner: string | null; lease_epoch: number }>(text, [lease.runId]);
    const current = rows[0];
    if (current === undefined) return new RunNotFoundError(lease.runId);
    return new LeaseLostError(lease.runId, lease.owner, lease.epoch, { owner: current.owner, epoch: current.lease_epoch });
  }

  private open(operation: string): void {
    if (this.closed) throw new LogClosedError(operation);
  }
}

/** A connection failure in words (localhost fails as an AggregateError of its addresses, with no message of its own). */
/** The server asked for a password (SCRAM) and the URL, $PGPASSWORD and ~/.pgpass gave none. */
function passwordAsked(error: unknown): boolean {
  const cause = error instanceof LogConnectionError ? error.cause : error;
  return /client password must be a (non-empty )?string/.test(reasonOf(cause));
}

function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') return error.errors.map((e: unknown) => (e as Error)?.message ?? String(e)).join('; ');
  return error instanceof Error && error.message !== '' ? error.message : String(error);
}

/** A RunQuery's WHERE for PostgreSQL, its values appended to `values` ($1, $2, …). */
function pgRunQuery(query: RunQuery, where: string, values: unknown[]): string {
  return runQuerySql(query, where, (v) => (values.push(v), `$${values.length}`), (column, needle) => `strpos(lower(${column}), lower(${needle})) > 0`);
}

/** Puts a delivery in the webhook inbox; false when its (path, id) is there already. */
async function insertDelivery(client: pg.ClientBase, path: string, eventId: string, json: string, receivedAt: number): Promise<boolean> {
  const inserted = await client.query(
    'INSERT INTO reqon_webhook_inbox (path, event_id, payload, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT (path, event_id) DO NOTHING',
    [path, eventId, json, receivedAt],
  );
  return inserted.rowCount === 1;
}
