/**
 * A run's events a page at a time, each page bounded by its count and by the bytes of its payloads:
 * what `reqon log copy` and `reqon events` hold at once, however long the run and however large its
 * answers (a page of 2,000 answers of some megabytes each would not fit in memory).
 */
import type { StoredEvent } from './events.js';
import type { EventLog } from './log.js';

/** About the most payload text one page holds (one event larger than that is a page alone). */
export const PAGE_BYTES = 32 * 1024 * 1024;

export interface EventPaging {
  /** Events a page holds at most. */
  size: number;
  /** A first page this small, each next one four times the last up to `size` (`reqon events | head` wants its lines soon). */
  first?: number;
  /** About the most payload a page holds (default PAGE_BYTES). */
  bytes?: number;
  /** The first seq to read (default 1). */
  fromSeq?: number;
  /**
   * The run's last seq as the caller knows it: a short page that reaches it is the last, where one
   * cut short by its bytes is not. Without it, pages are read until one comes back empty.
   */
  lastSeq?: number;
}

export async function* eventPages(log: EventLog, runId: string, paging: EventPaging): AsyncGenerator<StoredEvent[]> {
  const bytes = paging.bytes ?? PAGE_BYTES;
  for (let fromSeq = paging.fromSeq ?? 1, size = paging.first ?? paging.size; ; size = Math.min(paging.size, size * 4)) {
    const page = await log.read(runId, { fromSeq, limit: size, maxBytes: bytes });
    // Rows missing from where the last page ended: a prune may have taken the run between two
    // pages. Then the pages read are cut, and a reader must not take them for the run (probe 112
    // K8, K12: an export exited 0 with a bundle cut short, `events --json` with a holed stream).
    const cut = page.length === 0 ? paging.lastSeq !== undefined && fromSeq <= paging.lastSeq : page.some((e, i) => e.seq !== fromSeq + i);
    if (cut && (await log.getRun(runId)) === undefined) throw new RunPrunedWhileReadError(runId, fromSeq - 1);
    if (page.length === 0) return;
    yield page;
    const last = page[page.length - 1]!.seq;
    if (page.length < size && paging.lastSeq !== undefined && last >= paging.lastSeq) return;
    fromSeq = last + 1;
  }
}

/** The run was pruned (its row deleted, its events queued for deletion) while its pages were read. */
export class RunPrunedWhileReadError extends Error {
  override readonly name = 'RunPrunedWhileReadError';
  constructor(
    readonly runId: string,
    /** The last seq read whole. */
    readonly readTo: number,
  ) {
    super(`run ${runId} was pruned while it was being read (reqon prune, or a worker's --prune-completed-before), after seq ${readTo}: what was read of it is incomplete`);
  }
}
