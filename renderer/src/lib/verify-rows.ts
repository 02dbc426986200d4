/**
 * Aligns a VerifyReport's original and replayed entries by index for the side-by-side replay
 * diff. The engine decides where they diverge (and why); this only lays the two lists out so the
 * divergent row, and the rows after it, can be marked.
 */
import { everyEntryRederived, fullyVerified, unfinished, type VerifyEntry, type VerifyReport } from './protocol.js';

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


/**
 * The verdict chip: ✕ at a divergence; ✓ only when at least one entry was compared and every
 * entry was re-derived; otherwise partial — a run that has logged no step yet has nothing to
 * compare, and that is no ✓.
 */
export function verifyVerdict(report: VerifyReport): { kind: 'ok' | 'partial' | 'bad'; text: string } {
  if (!report.ok) {
    const text = report.divergence?.cause === 'edit' ? `✕ the edit diverges at entry ${report.divergence.index}` : `✕ diverges at entry ${report.divergence?.index ?? '?'}`;
    return { kind: 'bad', text };
  }
  if (report.original.length === 0) {
    return { kind: 'partial', text: `◐ nothing to compare: the run has logged no step${unfinished(report) ? ' yet' : ''}` };
  }
  if (fullyVerified(report)) return { kind: 'ok', text: `✓ replay matches (${report.original.length} entries)` };
  if (!everyEntryRederived(report)) {
    return { kind: 'partial', text: `◐ not fully verified: ${report.replayed.length} of ${report.original.length} entries re-derived, no divergence among them` };
  }
  // Every entry so far matched, but the run has more to do: no ✓ for what was not compared.
  return { kind: 'partial', text: `◐ no divergence so far (${report.original.length} entries): the run has not finished` };
}
