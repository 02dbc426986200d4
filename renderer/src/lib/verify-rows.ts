/**
 * Aligns a VerifyReport's original and replayed entries by index for the side-by-side replay
 * diff. The engine decides where they diverge (and why); this only lays the two lists out so the
 * divergent row, and the rows after it, can be marked.
 */
import type { VerifyEntry, VerifyReport } from './protocol.js';

export type VerifyRowState = 'same' | 'divergent' | 'after-divergence' | 'only-original' | 'only-replayed';

export interface VerifyRow {
  index: number;
  original: VerifyEntry | null;
  replayed: VerifyEntry | null;
  state: VerifyRowState;
}

export function alignVerifyRows(report: VerifyReport): VerifyRow[] {
  const n = Math.max(report.original.length, report.replayed.length);
  const at = report.divergence?.index ?? null;
  const rows: VerifyRow[] = [];
  for (let index = 0; index < n; index++) {
    const original = report.original[index] ?? null;
    const replayed = report.replayed[index] ?? null;
    let state: VerifyRowState;
    if (at !== null && index === at) state = 'divergent';
    else if (at !== null && index > at) state = 'after-divergence';
    else if (original && !replayed) state = 'only-original';
    else if (!original && replayed) state = 'only-replayed';
    else state = 'same';
    rows.push({ index, original, replayed, state });
  }
  return rows;
}
