/**
 * Reading a run's events in bulk (the `read` of the log), fast enough for a resume to replay a
 * 100k-event run in a fraction of a second.
 *
 * Events are read in chunks of at most CHUNK_EVENTS. A chunk whose payloads are small enough
 * arrives as one JSON array text built by SQLite and is decoded by one JSON.parse; a chunk with
 * big payloads (pages of a large sync) falls back to row-by-row decoding, so no single string
 * grows past CHUNK_BYTES. All chunks are read inside one read transaction: the result is one
 * consistent snapshot, exactly as a single SELECT would give.
 *
 * Invariant: the result equals, event for event and field for field (same key order), what
 * `toStoredEvent` gives for `SELECT * … ORDER BY seq` — each payload is its stored JSON text,
 * parsed once.
 */
import type Database from 'better-sqlite3';
import type { EventType, StoredEvent } from '../events.js';
import { toStoredEvent } from './rows.js';
import type { Statements } from './statements.js';

const CHUNK_EVENTS = 4096;
const CHUNK_BYTES = 16 * 1024 * 1024;

/** `[seq, type, step_path, payload, recorded_at]`, as eventsChunkJson builds it. */
type PackedEvent = [number, string, string, StoredEvent['payload'], number];

/** Events of `runId` with fromSeq <= seq <= toSeq in seq order, at most `limit` (negative: all). */
export function readEvents(db: Database.Database, sql: Statements, runId: string, fromSeq: number, toSeq: number, limit: number): StoredEvent[] {
  const out: StoredEvent[] = [];
  const read = () => {
    let from = fromSeq;
    while (from <= toSeq && (limit < 0 || out.length < limit)) {
      const want = limit < 0 ? CHUNK_EVENTS : Math.min(CHUNK_EVENTS, limit - out.length);
      const [count, bytes] = sql.eventsChunkSize.get(runId, from, toSeq, want)!;
      if (count === 0) break;
      if ((bytes ?? 0) > CHUNK_BYTES) {
        for (const row of sql.readEvents.all(runId, from, toSeq, want)) out.push(toStoredEvent(row));
      } else {
        const packed = JSON.parse(sql.eventsChunkJson.get(runId, from, toSeq, want)!) as PackedEvent[];
        if (!ascending(packed)) packed.sort((a, b) => a[0] - b[0]);
        for (const [seq, type, stepPath, payload, recordedAt] of packed) {
          out.push({ runId, seq, type: type as EventType, stepPath, payload, recordedAt } as StoredEvent);
        }
      }
      if (count < want) break;
      from = out[out.length - 1]!.seq + 1;
    }
  };
  // One snapshot across chunks; inside a transaction already (a savepoint), the same holds.
  db.transaction(read)();
  return out;
}

/** group_concat's order is the subquery's in practice, but SQLite does not promise it: check. */
function ascending(packed: PackedEvent[]): boolean {
  for (let i = 1; i < packed.length; i++) if (packed[i]![0] <= packed[i - 1]![0]) return false;
  return true;
}
