/**
 * Which mission a Replay diff verify checks, and whether a verdict still speaks for what is on
 * screen. A verdict once said "✓ replay matches" for an empty edit (it silently verified the
 * recorded mission) and stayed beside text edited after it: a verdict now names the mission it
 * checked, an empty edit is refused, and a verdict for other text than the box holds is stale.
 */
import type { VerifyReport } from './protocol.js';
import { verifyVerdict } from './verify-rows.js';

/** An edit: the texts of the mission's files it changes, by the run's recorded paths (a folder mission's action files too). */
export type VerifyTarget = { mission: 'recorded' } | { mission: 'edited'; files: Record<string, string> };

/** What "Verify" checks now, or why it cannot: an edit with no text is no mission. */
export function verifyTarget(editing: boolean, files: Record<string, string>): { target: VerifyTarget } | { refused: string } {
  if (!editing) return { target: { mission: 'recorded' } };
  const names = Object.keys(files);
  const blank = names.find((name) => files[name]!.trim() === '');
  if (names.length === 0 || blank !== undefined) {
    const which = blank !== undefined && names.length > 1 ? ` (${blank})` : '';
    return { refused: `The edited mission is empty${which}: paste or open a mission, or untick “use an edited mission” to verify the recorded one.` };
  }
  return { target: { mission: 'edited', files: { ...files } } };
}

/** The run.verify request for a target: an edit always carries its texts (the server refuses an empty one). */
export function verifyRequest(runId: string, target: VerifyTarget): { runId: string; files?: Record<string, string> } {
  return target.mission === 'edited' ? { runId, files: target.files } : { runId };
}

export function sameTarget(a: VerifyTarget, b: VerifyTarget): boolean {
  if (a.mission === 'recorded' || b.mission === 'recorded') return a.mission === b.mission;
  const names = Object.keys(a.files);
  return names.length === Object.keys(b.files).length && names.every((name) => b.files[name] === a.files[name]);
}

export interface VerdictView {
  kind: 'ok' | 'partial' | 'bad' | 'stale';
  text: string;
  /** Why the verdict no longer speaks for the mission on screen; null while it does. */
  stale: string | null;
}

/**
 * The chip for a report: the verdict, the mission it checked, and — when the box now holds
 * something else — that it is out of date (in its own colour, never ✓'s).
 */
export function verdictView(report: VerifyReport, checked: VerifyTarget, editing: boolean, files: Record<string, string>): VerdictView {
  const verdict = verifyVerdict(report);
  const against = checked.mission === 'recorded' ? 'against the recorded mission' : 'against the edited mission';
  const now = verifyTarget(editing, files);
  const stale =
    'target' in now && sameTarget(now.target, checked)
      ? null
      : checked.mission === 'edited' && editing
        ? 'the text changed since this verdict'
        : `out of date: it checked the ${checked.mission} mission`;
  return stale === null ? { ...verdict, text: `${verdict.text} · ${against}`, stale } : { kind: 'stale', text: `${verdict.text} · ${against} — ${stale}`, stale };
}
