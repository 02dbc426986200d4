/**
 * What `verifyRun` (verify.ts) reports: the run's effect sequence as recorded and as replayed, and
 * the first divergence, and when a report is a ✓. Its own file, importing nothing, so the renderer
 * (it reads these types through engine/protocol, and runs fullyVerified) does not pull in the executor.
 */

export interface VerifyEntry {
  seq: number;
  stepPath: string;
  type: string;
  effectId: string | null;
}

export interface VerifyReport {
  runId: string;
  ok: boolean;
  original: VerifyEntry[];
  replayed: VerifyEntry[];
  divergence: null | {
    index: number;
    seq: number;
    stepPath: string;
    recorded: string;
    asked: string;
    explanation: string;
    /**
     * 'edit' when replayed against an edited mission; 'damaged-log' when the log lacks events its
     * run row counts on (rows deleted or the file damaged outside the engine); else the run's own
     * mission diverged.
     */
    cause: 'edit' | 'nondeterminism' | 'damaged-log';
    /** The mission line of the step that diverged, when known. */
    line?: number;
    /** In a folder mission, the file `line` is in. */
    file?: string;
    /** What changed, as the user would have edited it ("POST /events became POST /audit"). */
    change?: string;
  };
  /** What this verify could not check (said, never passed over): e.g. an older log format's limits. */
  unchecked: string[];
  /**
   * The run's status when verified: a run still `running` (or crashed with no owner) or
   * `suspended` has a log that ends where it stopped, so only what it has done so far was checked.
   */
  runStatus: 'running' | 'suspended' | 'completed' | 'failed';
  /** The run row's last seq when verified: a report of a run that has logged more since speaks for less than it now holds. */
  lastSeq?: number;
}

/**
 * Whether a verify that found no divergence compared everything the run will ever do: at least one
 * entry, nothing it says it could not check, every recorded entry re-derived, and a run that has
 * finished (an unfinished run's log ends where it stopped, so what it has yet to do was never
 * compared). Anything short of it is no ✓ — the one rule of `reqon verify`, the crash lab and the
 * studio's chip (the renderer runs this file: it imports nothing).
 */
export function fullyVerified(report: VerifyReport): boolean {
  return report.ok && report.original.length > 0 && everyEntryRederived(report) && !unfinished(report);
}

/** Every entry the log holds so far was re-derived, and nothing was left unchecked. */
export function everyEntryRederived(report: Pick<VerifyReport, 'original' | 'replayed' | 'unchecked'>): boolean {
  return report.unchecked.length === 0 && report.replayed.length >= report.original.length;
}

/**
 * A run still running (or crashed with no owner) or suspended: its log ends where it stopped, so a
 * verify compared what it has done so far, never what it has yet to do — no ✓ and no exit 0 for
 * it, in the CLI and the studio alike.
 */
export function unfinished(report: Pick<VerifyReport, 'runStatus'>): boolean {
  return report.runStatus === 'running' || report.runStatus === 'suspended';
}
