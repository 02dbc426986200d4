/**
 * Which of two summaries of one run to keep. Answers (HTTP, or IPC) and pushes (WebSocket) travel
 * separate channels, so an answer composed before a push can arrive after it. The record decides
 * first (updatedAt, then lastSeq); between summaries of the same record, the one the engine
 * composed later (`composedAt`) — a run found orphaned changes no row, only that stamp.
 */
import type { RunSummary } from './protocol.js';

export function isNewerSummary(a: RunSummary, b: RunSummary): boolean {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt;
  if (a.lastSeq !== b.lastSeq) return a.lastSeq > b.lastSeq;
  return (a.composedAt ?? 0) > (b.composedAt ?? 0);
}

/** `known` when it is newer than `incoming`, else `incoming` (ties go to what arrived last). */
export function fresherSummary(known: RunSummary | undefined, incoming: RunSummary): RunSummary {
  return known !== undefined && isNewerSummary(known, incoming) ? known : incoming;
}
