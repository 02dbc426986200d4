/**
 * Reading a run's events in bulk (the `read` of the log), fast enough for a resume to replay a
 * 100k-event run in a fraction of a second.
 *
 * Events are read in chunks of at most CHUNK_EVENTS consecutive seqs. A chunk whose texts are
 * small enough arrives as five strings built by SQLite, one per column (statements.ts
 * `eventsChunkColumns`): payloads and numbers are decoded by one JSON.parse each, type and step
 * path by one split each. A chunk with big payloads (pages of a large sync) is read row by row,
 * so no single string grows past CHUNK_BYTES. All chunks are read inside one read transaction:
 * the result is one consistent snapshot, exactly as a single SELECT would give.
 *
 * Invariant: the result equals, event for event and field for field (same key order), what
 * `toStoredEvent` gives for `SELECT * … ORDER BY seq` — each payload is its stored JSON text,
 * parsed once. Every decoded chunk is checked (each list has the chunk's count, seqs ascend
 * inside the range, no type or path held a NUL); a chunk that fails a check is read row by row.
 */
import type Database from 'better-sqlite3';
import type { EventType, StoredEvent } from '../events.js';
import { toStoredEvent } from './rows.js';
import type { Statements } from './statements.js';

const CHUNK_EVENTS = 4096;
const CHUNK_BYTES = 16 * 1024 * 1024;
/** The separator of the type and step_path lists (group_concat(…, char(0))). */
const NUL = '\u0000';

/**
 * A read event whose payload is parsed when first used, for a resume: it reads every event, but a
 * replay consumes most of them by type and path alone (finished loop iterations are taken as
 * recorded), so parsing every payload up front was most of its read. Serialises like a plain
 * event (toJSON); a payload that is not JSON throws on first use, naming the event.
 */
class LazyPayloadEvent {
  private text: string | undefined;
  private parsed: StoredEvent['payload'] | undefined;

  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly type: EventType,
    readonly stepPath: string,
    payloadText: string,
    readonly recordedAt: number,
  ) {
    this.text = payloadText;
  }

  get payload(): StoredEvent['payload'] {
    if (this.text !== undefined) {
      try {
        this.parsed = JSON.parse(this.text) as StoredEvent['payload'];
      } catch (error) {
        throw new Error(`event ${this.seq} (${this.type}) of run '${this.runId}': its stored payload is not JSON (${String(error)})`);
      }
      this.text = undefined;
    }
    return this.parsed!;
  }

  toJSON(): StoredEvent {
    const { runId, seq, type, stepPath, payload, recordedAt } = this;
    return { runId, seq, type, stepPath, payload, recordedAt };
  }
}

/**
 * Events of `runId` with fromSeq <= seq <= toSeq in seq order, at most `limit` (negative: all).
 * With `lazyPayloads`, payloads of the column-wise read are parsed on first use (LazyPayloadEvent).
 */
export function readEvents(
  db: Database.Database,
  sql: Statements,
  runId: string,
  fromSeq: number,
  toSeq: number,
  limit: number,
  lazyPayloads = false,
): StoredEvent[] {
  const out: StoredEvent[] = [];
  // One string per distinct type, shared by all events of the read (a handful, not one per event).
  const types = new Map<string, EventType>();
  const read = () => {
    const [first, last] = sql.eventsBounds.get({ run: runId, from: fromSeq, to: toSeq })!;
    if (first === null || last === null) return;
    let from: number | null = first;
    while (from !== null && from <= last && (limit < 0 || out.length < limit)) {
      const want = limit < 0 ? CHUNK_EVENTS : Math.min(CHUNK_EVENTS, limit - out.length);
      const to = Math.min(last, from + want - 1);
      const [count, bytes, firstAt]: [number, number | null, number | null] = sql.eventsChunkSize.get({ run: runId, from, to })!;
      if (count > 0) {
        const base = Number.isSafeInteger(firstAt) ? firstAt! : 0;
        if ((bytes ?? 0) > CHUNK_BYTES || !decodeChunk(sql, runId, from, to, count, base, types, lazyPayloads, out)) readRows(sql, runId, from, to, out);
      }
      // A range holds fewer events than seqs only across a gap; jump it rather than step through it.
      from = count === to - from + 1 ? to + 1 : sql.eventsNextSeq.get({ run: runId, after: to, to: last }) ?? null;
    }
  };
  // One snapshot across chunks; inside a transaction already (a savepoint), the same holds.
  db.transaction(read)();
  return out;
}

/** The plain decoding, row by row: the reference the packed decoding must equal. */
function readRows(sql: Statements, runId: string, from: number, to: number, out: StoredEvent[]): void {
  for (const row of sql.readEvents.all(runId, from, to, -1)) out.push(toStoredEvent(row));
}

/**
 * Appends the chunk [from, to] (`count` events) decoded from its column lists, recorded_at sent
 * as the difference to `base`; false (and nothing appended) when a check fails and the chunk
 * must be read row by row.
 */
function decodeChunk(
  sql: Statements,
  runId: string,
  from: number,
  to: number,
  count: number,
  base: number,
  typeStrings: Map<string, EventType>,
  lazyPayloads: boolean,
  out: StoredEvent[],
): boolean {
  const statement = lazyPayloads ? sql.eventsChunkColumnsTexts : sql.eventsChunkColumns;
  const [seqList, typeList, pathList, payloadList, atList] = statement.get({ run: runId, from, to, base: BigInt(base) })!;
  if (seqList === null || typeList === null || pathList === null || payloadList === null || atList === null) return false;
  const seqs = JSON.parse(`[${seqList}]`) as number[];
  // A NUL inside a value would add a piece: equal counts mean every value came back whole.
  const types = typeList.split(NUL);
  const paths = pathList.split(NUL);
  const ats = JSON.parse(`[${atList}]`) as number[];
  let payloads: (StoredEvent['payload'] | string)[];
  if (lazyPayloads) payloads = payloadList.split(NUL);
  else {
    try {
      payloads = JSON.parse(`[${payloadList}]`) as StoredEvent['payload'][];
    } catch {
      return false; // a payload that is not JSON: the row-by-row read reports it as it always did
    }
  }
  if (seqs.length !== count || types.length !== count || paths.length !== count || payloads.length !== count || ats.length !== count) {
    return false;
  }
  // Rows in seq order, inside the range; recorded_at back exactly (a safe integer, as written).
  let previous = from - 1;
  for (let i = 0; i < count; i++) {
    const seq = seqs[i]!;
    if (seq <= previous || !Number.isSafeInteger(base + ats[i]!)) return false;
    previous = seq;
  }
  if (previous > to) return false;
  for (let i = 0; i < count; i++) {
    const text = types[i]!;
    let type = typeStrings.get(text);
    if (type === undefined) typeStrings.set(text, (type = text as EventType));
    out.push(
      lazyPayloads
        ? (new LazyPayloadEvent(runId, seqs[i]!, type, paths[i]!, payloads[i] as string, base + ats[i]!) as unknown as StoredEvent)
        : ({ runId, seq: seqs[i]!, type, stepPath: paths[i]!, payload: payloads[i]!, recordedAt: base + ats[i]! } as StoredEvent),
    );
  }
  return true;
}
