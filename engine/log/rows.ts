/**
 * Row shapes of reqon_runs / reqon_events / reqon_webhook_inbox (the same columns on every backend) and their mapping
 * to the log's records, with the checks every backend makes before a value reaches SQL.
 * Invariant: each row's JSON columns are parsed exactly once, here.
 */
import { UnreadableEventError } from './errors.js';
import type { EventType, NewEvent, StoredEvent } from './events.js';
import type { EventCounts, PrunableRun, RunRecord, RunStatus, StoredDelivery, TableStoreWrite } from './log.js';

export interface RunRow {
  run_id: string;
  mission: string;
  mission_hash: string;
  mission_files: string;
  options: string;
  status: RunStatus;
  created_at: number;
  updated_at: number;
  last_seq: number;
  owner: string | null;
  lease_epoch: number;
  lease_expires_at: number | null;
  wake_at: number | null;
  waiting_on: string | null;
}

/** A reqon_webhook_inbox row as DELIVERY_COLUMNS selects it. */
export interface DeliveryRow {
  path: string;
  event_id: string;
  payload: string;
  received_at: number;
  claimed_run: string | null;
  claimed_wait: string | null;
}

export const DELIVERY_COLUMNS = 'path, event_id, payload, received_at, claimed_run, claimed_wait';

export function toStoredDelivery(r: DeliveryRow): StoredDelivery {
  return {
    path: r.path,
    eventId: r.event_id,
    payload: JSON.parse(r.payload) as unknown,
    receivedAt: r.received_at,
    claimedRun: r.claimed_run,
    claimedWait: r.claimed_wait,
  };
}

export interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  step_path: string;
  payload: string;
  recorded_at: number;
}

export function toRunRecord(row: RunRow): RunRecord {
  return {
    runId: row.run_id,
    mission: row.mission,
    missionHash: row.mission_hash,
    missionFiles: JSON.parse(row.mission_files) as RunRecord['missionFiles'],
    options: JSON.parse(row.options) as RunRecord['options'],
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastSeq: row.last_seq,
    owner: row.owner,
    leaseEpoch: row.lease_epoch,
    leaseExpiresAt: row.lease_expires_at,
    wakeAt: row.wake_at,
    waitingOn: row.waiting_on,
  };
}

export function toStoredEvent(row: EventRow): StoredEvent {
  // Decoded from storage: the row's type names its payload's shape.
  return {
    runId: row.run_id,
    seq: row.seq,
    type: row.type as EventType,
    stepPath: row.step_path,
    payload: parsePayload(row.payload, row.run_id, row.seq, row.type),
    recordedAt: row.recorded_at,
  } as StoredEvent;
}

/** Every event payload is a JSON object: written so (prepareEvent), read so (parsePayload, the column-wise read). */
export function isPayloadObject(payload: unknown): boolean {
  return typeof payload === 'object' && payload !== null && !Array.isArray(payload);
}

/** A stored payload's JSON object, or UnreadableEventError naming the event (a log damaged outside the engine). */
export function parsePayload(text: string, runId: string, seq: number, type: string): StoredEvent['payload'] {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    throw new UnreadableEventError(runId, seq, type, error instanceof Error ? error.message : String(error));
  }
  if (!isPayloadObject(payload)) throw new UnreadableEventError(runId, seq, type, `it is ${payload === null ? 'null' : Array.isArray(payload) ? 'a list' : `a ${typeof payload}`}, not an object`);
  return payload as StoredEvent['payload'];
}

/** The `eventCounts` query's one row (the same columns on every backend): the count of each type asked for, in order, then lastSeq, latest and first recorded_at. */
export function toEventCounts(types: readonly EventType[], row: readonly unknown[], statuses: readonly (readonly [unknown, number | string])[]): EventCounts {
  const at = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const byType: Partial<Record<EventType, number>> = {};
  types.forEach((type, i) => (byType[type] = Number(row[i] ?? 0)));
  return {
    lastSeq: Number(row[types.length] ?? 0),
    firstRecordedAt: at(row[types.length + 2]),
    latestRecordedAt: at(row[types.length + 1]),
    byType,
    responseStatuses: statuses.map(([status, count]) => ({ status, count: Number(count) })),
  };
}

/** The SELECT list of an `eventCounts` query over `types` (`param(i)`: the placeholder of the ith type), and its run's first recorded_at: columns c0, c1, … in toEventCounts's order. */
export function eventCountsColumns(types: readonly EventType[], param: (i: number) => string, run: string): string {
  const counts = types.map((_, i) => `count(*) FILTER (WHERE type = ${param(i)})`);
  const all = [...counts, 'coalesce(max(seq), 0)', 'max(recorded_at)', `(SELECT recorded_at FROM reqon_events WHERE run_id = ${run} ORDER BY seq LIMIT 1)`];
  return all.map((column, i) => `${column} AS c${i}`).join(', ');
}

/** An event checked and serialised for insertion (prepareEvent). */
export interface PreparedEvent {
  type: string;
  stepPath: string;
  payloadJson: string;
  recordedAt: number;
}

/** Validates an event before it reaches SQL, so bad input gets a message instead of a constraint error. */
export function prepareEvent(event: NewEvent, where: string): PreparedEvent {
  if (typeof event !== 'object' || event === null) throw new Error(`${where}: expected an event object but got: ${describe(event)}`);
  if (typeof event.type !== 'string' || (event.type as string) === '') {
    throw new Error(`${where}: event type must be a non-empty string but got: ${describe(event.type)}`);
  }
  if (typeof event.stepPath !== 'string') {
    throw new Error(`${where}: stepPath of '${event.type}' must be a string ('' for run-level events) but got: ${describe(event.stepPath)}`);
  }
  checkInstant(event.recordedAt, `${where}: recordedAt of '${event.type}'`);
  if (!isPayloadObject(event.payload)) {
    throw new Error(`${where}: payload of '${event.type}' must be an object but got: ${describe(event.payload)}`);
  }
  const payloadJson = JSON.stringify(event.payload);
  if (payloadJson === undefined) {
    throw new Error(`${where}: payload of '${event.type}' is not JSON-serialisable (got: ${describe(event.payload)})`);
  }
  return { type: event.type, stepPath: event.stepPath, payloadJson, recordedAt: event.recordedAt };
}

/**
 * The event as `read` will return it: the payload goes through JSON, so the live run and a later
 * replay see the same values (no `undefined` fields, no Date objects, no shared references).
 * The payload is parsed on first access: the engine's own writers never look at the events a
 * commit returns, and re-parsing every payload (a whole page of records, for a paginated fetch)
 * on the hot path cost time and doubled the memory a large commit holds. It is an own,
 * enumerable property, so spreading, comparing and serialising the event see it as before.
 */
export function storedFrom(runId: string, seq: number, event: PreparedEvent): StoredEvent {
  const stored = { runId, seq, type: event.type as EventType, stepPath: event.stepPath } as StoredEvent;
  let json: string | undefined = event.payloadJson;
  let payload: StoredEvent['payload'] | undefined;
  Object.defineProperty(stored, 'payload', {
    enumerable: true,
    configurable: true,
    get() {
      if (json !== undefined) {
        payload = JSON.parse(json) as StoredEvent['payload'];
        json = undefined;
      }
      return payload;
    },
    set(value: StoredEvent['payload']) {
      json = undefined;
      payload = value;
    },
  });
  stored.recordedAt = event.recordedAt;
  return stored;
}

export function checkInstant(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new Error(`${what} must be whole milliseconds since the epoch but got: ${describe(value)}`);
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array (${value.length} items)`;
  const text = typeof value === 'object' ? '' : ` (${String(value).slice(0, 40)})`;
  return `${typeof value}${text}`;
}

/**
 * The JSON of a table write's `store.write` payload {effectId, store, key, record, op, batch?,
 * removed?}, spliced around the record's own text (what the table now holds, `null` for a delete)
 * instead of parsing it back and serialising it again. Both logs record this same text — that of
 * JSON.stringify of the payload object, as a memory store's write event has it — and a replayed
 * write compares its recorded text with it (store-step.ts recordedAsPlanned).
 */
export function storeWritePayloadJson(write: Pick<TableStoreWrite, 'effectId' | 'store' | 'key' | 'op' | 'batch' | 'record'>, recordJson: string, removed?: boolean): string {
  const batch = write.batch === undefined ? '' : `,"batch":${jsonString(write.batch)}`;
  const gone = removed === undefined ? '' : `,"removed":${removed}`;
  // An upsert stores a merge: the fields it planned are recorded too, for a replay to compare.
  const planned = write.op === 'upsert' ? `,"planned":${JSON.stringify(write.record)}` : '';
  return `{"effectId":${jsonString(write.effectId)},"store":${jsonString(write.store)},"key":${jsonString(write.key)},"record":${recordJson},"op":${jsonString(write.op)}${batch}${gone}${planned}}`;
}

/** Printable ASCII but `"` and `\`: JSON.stringify of such a string only adds its quotes. */
const PLAIN_JSON_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify of a string, without the call for the usual one (an effect id, a store name, most keys). */
function jsonString(value: string): string {
  return typeof value === 'string' && PLAIN_JSON_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** The reqon_runs columns `prunableRuns` lists, on both backends. */
export interface PrunableRow {
  run_id: string;
  mission: string;
  status: 'completed' | 'failed';
  updated_at: number;
  last_seq: number;
  lease_epoch: number;
}

/** A listed run, with its checkpoints as the backend read them: [key, syncedAt] pairs. */
/** `checkpoints`: [key, syncedAt, api (null: the mission's base URL)] of each of the run's checkpoint.advanced. */
export function toPrunableRun(row: PrunableRow, checkpoints: readonly (readonly [string, number | string, (string | null)?])[]): PrunableRun {
  return {
    runId: row.run_id,
    mission: row.mission,
    status: row.status,
    updatedAt: row.updated_at,
    lastSeq: row.last_seq,
    leaseEpoch: row.lease_epoch,
    checkpoints: checkpoints.map(([key, syncedAt, api]) => ({ key, syncedAt: Number(syncedAt), ...(api == null ? {} : { api }) })),
  };
}
