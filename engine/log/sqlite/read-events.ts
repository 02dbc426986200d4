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
 * A resume's reader (`lazyPayloads`) reads each chunk without its payloads, in one statement;
 * an event reads the payloads of its chunk's events of its type when its own is first used
 * (ChunkPayloads).
 *
 * Invariant: the result equals, event for event and field for field (same key order), what
 * `toStoredEvent` gives for `SELECT * … ORDER BY seq` — each payload is its stored JSON text,
 * parsed once (lazily: when used). Every decoded chunk is checked (each list has the chunk's
 * count, seqs ascend inside the range, no type or path held a NUL); a chunk that fails a check is
 * read row by row.
 */
import type Database from 'better-sqlite3';
import { STORED_PAYLOAD_JSON, type EventType, type StoredEvent } from '../events.js';
import { isPayloadObject, parsePayload, toStoredEvent } from '../rows.js';
import type { Statements } from './statements.js';

const CHUNK_EVENTS = 4096;
const CHUNK_BYTES = 16 * 1024 * 1024;
/** The separator of the type, step_path and payload text lists (group_concat(…, char(0))). */
const NUL = '\u0000';

/**
 * The payloads of one chunk, read from the log type by type, when the first of a type is used: a
 * resume reads every event, but consumes most by type and path alone (finished loop iterations
 * are taken as recorded; a marker such as step.started is taken by its type), so reading and
 * parsing every payload up front was most of its read. A walk that does use a type's payloads (a
 * store's writes, checked against the log) gets the texts of all of that type in the chunk at
 * once, in one statement (row by row when they are too big for one string, or one holds a NUL),
 * and parses each when it is used — a write whose text is the one the step would record is
 * never parsed (storedPayloadJson). Events are never updated, so read later, the range holds the
 * same payloads.
 */
class ChunkPayloads {
  /** Per event: its payload's stored text once its type is read; undefined before, and once taken. */
  private readonly texts: (string | undefined)[];
  /** Per event: 0 not read yet, 1 read (its text held), 2 taken. */
  private readonly state: Uint8Array;

  constructor(
    private readonly sql: Statements,
    private readonly runId: string,
    private readonly seqs: readonly number[],
    private readonly types: readonly EventType[],
    /** The size of all the chunk's payloads; null when unknown. */
    private readonly bytes: number | null,
  ) {
    this.texts = new Array<string | undefined>(seqs.length);
    this.state = new Uint8Array(seqs.length);
  }

  /** The stored text of the chunk's `index`th event's payload (of `type`), while it is not taken. */
  text(index: number, type: EventType): string | undefined {
    if (this.state[index] === 0) this.load(type);
    return this.texts[index];
  }

  /** The parsed payload of the chunk's `index`th event (of `type`); each is taken once (LazyPayloadEvent keeps it). */
  take(index: number, type: EventType): StoredEvent['payload'] {
    if (this.state[index] === 0) this.load(type);
    if (this.state[index] === 2) throw new Error(`internal: the payload of event ${this.seqs[index]} of run '${this.runId}' was taken already`);
    const text = this.texts[index]!;
    this.texts[index] = undefined;
    this.state[index] = 2;
    return parsePayload(text, this.runId, this.seqs[index]!, type);
  }

  /** Reads the payload texts of the chunk's events of `type` (none of them read yet: a type is read whole, once). */
  private load(type: EventType): void {
    const at: number[] = [];
    for (let i = 0; i < this.types.length; i++) if (this.types[i] === type) at.push(i);
    const seqs = at.map((i) => this.seqs[i]!);
    const range = { run: this.runId, from: seqs[0]!, to: seqs[seqs.length - 1]!, type };
    const small = this.bytes !== null && this.bytes <= CHUNK_BYTES;
    if (small || (this.sql.eventsChunkPayloadBytes.get(range)![0] ?? 0) <= CHUNK_BYTES) {
      const [seqList, payloadList] = this.sql.eventsChunkPayloadList.get(range)!;
      // A NUL inside a payload (only a foreign file holds one: JSON text escapes it) adds a piece.
      const texts = seqList !== null && payloadList !== null && seqList === seqs.join(',') ? payloadList.split(NUL) : [];
      if (texts.length === at.length) {
        this.hold(at, texts);
        return;
      }
    }
    const rows = this.sql.eventsChunkPayloads.all(range);
    if (rows.length !== at.length || rows.some(([seq], k) => seq !== seqs[k])) {
      throw new Error(`run '${this.runId}': events ${range.from}–${range.to} changed since they were read (the log is append-only; is another program writing to it?)`);
    }
    this.hold(
      at,
      rows.map(([, payload]) => payload),
    );
  }

  private hold(at: readonly number[], texts: readonly string[]): void {
    for (let k = 0; k < at.length; k++) {
      this.texts[at[k]!] = texts[k];
      this.state[at[k]!] = 1;
    }
  }
}

/** A read event whose payload is read and parsed when first used (ChunkPayloads). Serialises like a plain event (toJSON). */
class LazyPayloadEvent {
  private parsed: StoredEvent['payload'] | undefined;
  private chunk: ChunkPayloads | undefined;

  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly type: EventType,
    readonly stepPath: string,
    readonly recordedAt: number,
    chunk: ChunkPayloads,
    private readonly index: number,
  ) {
    this.chunk = chunk;
  }

  get payload(): StoredEvent['payload'] {
    if (this.chunk !== undefined) {
      this.parsed = this.chunk.take(this.index, this.type);
      this.chunk = undefined;
    }
    return this.parsed!;
  }

  /** See storedPayloadJson: the text, until the payload is used. */
  [STORED_PAYLOAD_JSON](): string | undefined {
    return this.chunk?.text(this.index, this.type);
  }

  toJSON(): StoredEvent {
    const { runId, seq, type, stepPath, payload, recordedAt } = this;
    // Decoded from storage: the row's type names its payload's shape.
    return { runId, seq, type, stepPath, payload, recordedAt } as StoredEvent;
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
  const types = new Map<string, EventType>();
  const read = () => {
    const [first, last] = sql.eventsBounds.get({ run: runId, from: fromSeq, to: toSeq })!;
    if (first === null || last === null) return;
    let from: number | null = first;
    while (from !== null && from <= last && (limit < 0 || out.length < limit)) {
      const want = limit < 0 ? CHUNK_EVENTS : Math.min(CHUNK_EVENTS, limit - out.length);
      const to = Math.min(last, from + want - 1);
      let count: number;
      if (lazyPayloads) count = readChunkWithoutPayloads(sql, runId, from, to, types, out);
      else {
        const [n, bytes, firstAt]: [number, number | null, number | null] = sql.eventsChunkSize.get({ run: runId, from, to })!;
        count = n;
        if (count > 0) {
          const base = Number.isSafeInteger(firstAt) ? firstAt! : 0;
          if ((bytes ?? 0) > CHUNK_BYTES || !decodeChunk(sql, runId, from, to, count, base, types, out)) readRows(sql, runId, from, to, out);
        }
      }
      // A range holds fewer events than seqs only across a gap; jump it rather than step through it.
      from = count === to - from + 1 ? to + 1 : sql.eventsNextSeq.get({ run: runId, after: to, to: last }) ?? null;
    }
  };
  // One snapshot across chunks; inside a transaction already (a savepoint), the same holds.
  db.transaction(read)();
  return out;
}

/** The plain decoding, row by row: the reference the packed decoding must equal. Returns how many it read. */
function readRows(sql: Statements, runId: string, from: number, to: number, out: StoredEvent[]): number {
  const rows = sql.readEvents.all(runId, from, to, -1);
  for (const row of rows) out.push(toStoredEvent(row));
  return rows.length;
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
  out: StoredEvent[],
): boolean {
  const [seqList, typeList, pathList, payloadList, atList] = sql.eventsChunkColumns.get({ run: runId, from, to, base: BigInt(base) })!;
  if (seqList === null || typeList === null || pathList === null || payloadList === null || atList === null) return false;
  let payloads: StoredEvent['payload'][];
  try {
    payloads = JSON.parse(`[${payloadList}]`) as StoredEvent['payload'][];
  } catch {
    return false; // a payload that is not JSON: the row-by-row read reports it as it always did
  }
  const columns = checkedColumns(seqList, typeList, pathList, atList, from, to, count, base);
  if (!columns || payloads.length !== count) return false;
  // Every payload is an object; one that is not is reported, event by event, by the row read.
  if (!payloads.every(isPayloadObject)) return false;
  const { seqs, types, paths, ats } = columns;
  for (let i = 0; i < count; i++) {
    out.push({ runId, seq: seqs[i]!, type: sharedType(types[i]!, typeStrings), stepPath: paths[i]!, payload: payloads[i]!, recordedAt: base + ats[i]! } as StoredEvent);
  }
  return true;
}

/**
 * Appends the chunk [from, to] read without its payloads (LazyPayloadEvent reads them when used);
 * returns how many events the range holds. A chunk whose lists fail a check, or that SQLite
 * cannot build, is read row by row.
 */
function readChunkWithoutPayloads(sql: Statements, runId: string, from: number, to: number, typeStrings: Map<string, EventType>, out: StoredEvent[]): number {
  let row: [number, number | null, string | null, string | null, string | null, string | null, number | null];
  try {
    row = sql.eventsChunkWithoutPayloads.get({ run: runId, from, to })!;
  } catch {
    return readRows(sql, runId, from, to, out); // lists too long for one string: only a foreign file could hold such paths
  }
  const [count, firstAt, seqList, typeList, pathList, atList, payloadBytes] = row;
  if (count === 0) return 0;
  const base = firstAt ?? NaN;
  const columns =
    seqList === null || typeList === null || pathList === null || atList === null || !Number.isSafeInteger(base)
      ? undefined
      : checkedColumns(seqList, typeList, pathList, atList, from, to, count, base);
  if (!columns) return readRows(sql, runId, from, to, out);
  const { seqs, types, paths, ats } = columns;
  const shared = types.map((t) => sharedType(t, typeStrings));
  const payloads = new ChunkPayloads(sql, runId, seqs, shared, payloadBytes);
  for (let i = 0; i < count; i++) {
    out.push(new LazyPayloadEvent(runId, seqs[i]!, shared[i]!, paths[i]!, base + ats[i]!, payloads, i) as unknown as StoredEvent);
  }
  return count;
}

/**
 * A chunk's seq, type, step path and recorded_at lists decoded, or undefined when a check fails:
 * each list has the chunk's count (a NUL inside a value would add a piece), seqs ascend inside
 * [from, to], and every recorded_at comes back exactly (a safe integer, as written).
 */
function checkedColumns(
  seqList: string,
  typeList: string,
  pathList: string,
  atList: string,
  from: number,
  to: number,
  count: number,
  base: number,
): { seqs: number[]; types: string[]; paths: string[]; ats: number[] } | undefined {
  const seqs = JSON.parse(`[${seqList}]`) as number[];
  const types = typeList.split(NUL);
  const paths = pathList.split(NUL);
  const ats = JSON.parse(`[${atList}]`) as number[];
  if (seqs.length !== count || types.length !== count || paths.length !== count || ats.length !== count) return undefined;
  let previous = from - 1;
  for (let i = 0; i < count; i++) {
    const seq = seqs[i]!;
    if (seq <= previous || !Number.isSafeInteger(base + ats[i]!)) return undefined;
    previous = seq;
  }
  return previous > to ? undefined : { seqs, types, paths, ats };
}

/** One string per distinct type, shared by all events of a read (a handful, not one per event). */
function sharedType(text: string, typeStrings: Map<string, EventType>): EventType {
  let type = typeStrings.get(text);
  if (type === undefined) typeStrings.set(text, (type = text as EventType));
  return type;
}
