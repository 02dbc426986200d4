import { everyEntryRederived, fullyVerified, unfinished, type VerifyEntry, type VerifyReport } from './protocol.js';

export type VerifyRowState = 'same' | 'divergent' | 'after-divergence' | 'only-original' | 'only-replayed';

export interface VerifyRow {
  index: number;
  original: VerifyEntry | null;
  replayed: VerifyEntry | null;
  state: VerifyRowState;
}

/**
 * Lays a VerifyReport's original and replayed entries side by side for the replay diff: each
 * recorded entry (in log order) beside the replayed entry that re-derived it, paired by seq — a
 * replay asks in another order than the log inside concurrent branches, so pairing by position
 * put unrelated events side by side and called them the same. The engine decides where they part
 * (the recorded seq of its divergence); this only marks that row, and the recorded entries the
 * replay never re-derived.
 */
export function alignVerifyRows(report: VerifyReport): VerifyRow[] {
  const divergedAt = report.divergence?.seq ?? null;
  const bySeq = new Map<number, VerifyEntry>();
  const unpaired: VerifyEntry[] = [];
  for (const entry of report.replayed) {
    if (entry.seq > 0 && !bySeq.has(entry.seq)) bySeq.set(entry.seq, entry);
    else unpaired.push(entry);
  }
  const rows: VerifyRow[] = [];
  const push = (original: VerifyEntry | null, replayed: VerifyEntry | null, state: VerifyRowState) => rows.push({ index: rows.length, original, replayed, state });
  let marked = false;
  for (const original of report.original) {
    const replayed = bySeq.get(original.seq) ?? null;
    bySeq.delete(original.seq);
    if (divergedAt !== null && original.seq === divergedAt) {
      // What the replay asked for there is the divergence's `asked` (shown in its place), even
      // where it took the recorded event and then found its payload different (a pure step's result).
      marked = true;
      push(original, null, 'divergent');
    } else if (replayed) push(original, replayed, 'same');
    // Past the divergence the replay stopped; before it, an entry it never reached was not re-derived.
    else push(original, null, divergedAt !== null && original.seq > divergedAt ? 'after-divergence' : 'only-original');
  }
  // Replayed entries of no recorded seq (none in a verify, which sends nothing live) stay visible.
  for (const replayed of [...bySeq.values(), ...unpaired]) push(null, replayed, 'only-replayed');
  // A divergence at no recorded entry (the mission asked for more than the log holds): its own row.
  if (divergedAt !== null && !marked) push(null, null, 'divergent');
  return rows;
}

/**
 * The verdict chip: ✕ at a divergence; ✓ only when at least one entry was compared and every
 * entry was re-derived; otherwise partial — a run that has logged no step yet has nothing to
 * compare, and that is no ✓.
 */
export function verifyVerdict(report: VerifyReport): { kind: 'ok' | 'partial' | 'bad'; text: string } {
  if (!report.ok) {
    // Named by the recorded seq its row shows (#seq): a count of replayed entries matched no row.
    const seq = report.divergence?.seq ?? 0;
    const where = seq > 0 ? `at #${seq}` : 'past the end of the log';
    const cause = report.divergence?.cause;
    const text = cause === 'edit' ? `✕ the edit diverges ${where}` : cause === 'damaged-log' ? `✕ the log is damaged ${where}` : `✕ diverges ${where}`;
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
