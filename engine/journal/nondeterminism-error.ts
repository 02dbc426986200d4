/**
 * Raised when replay asks for something the log does not hold at that position: the mission was
 * edited (or its data source changed) in a way that moves a step, an effect or a request. The run
 * is left exactly as it was — nothing is appended after the divergence is found.
 */

import { NONDETERMINISM_CODE } from '../log/events.js';

/** What changed at the divergence, worded as the user would have edited it. */
export interface DivergenceDetail {
  /** The mission line of the step that diverged (1-based), when known. */
  line?: number;
  /** In a folder mission, the file that line is in. */
  file?: string;
  /** e.g. "POST /events became POST /audit". */
  change: string;
}

/** What to do about a divergence found resuming a run (the message's last sentence by default). */
export const RESUME_ADVICE =
  'The mission no longer matches the run it started. Resume with the original mission ' +
  '(omit --mission), or run `reqon verify RUN_ID --mission FILE` to see where they part.';

/** The same, for a run resumed with the very mission it started with: nothing was edited. */
export const OWN_MISSION_ADVICE =
  'The mission is the one the run started with: what this step asks for came from outside the log ' +
  '(a REQON_* variable unset when the run started, a file it reads), or the run was recorded by an engine release that evaluates it ' +
  'otherwise (GUARANTEES.md 13). Every resume would stop here, so the run is failed.';

export class NondeterminismError extends Error {
  readonly code = NONDETERMINISM_CODE;

  constructor(
    readonly runId: string,
    readonly stepPath: string,
    readonly seq: number | null,
    readonly recorded: string,
    readonly asked: string,
    readonly detail?: DivergenceDetail,
    /** What to do about it, where it was found other than resuming the run (a fork: fork-run.ts). */
    readonly advice: string = RESUME_ADVICE,
  ) {
    super(
      `Non-determinism in run ${runId} at step ${stepPath || '(run)'}` +
        (seq === null ? '' : ` (seq ${seq})`) +
        (detail
          ? `, ${lineText(detail)}${detail.change}. `
          : `: the log recorded ${recorded}, but the mission asked for ${asked}. `) +
        advice,
    );
    this.name = 'NondeterminismError';
  }

  /** This divergence, its message ending with other advice. */
  withAdvice(advice: string): NondeterminismError {
    return new NondeterminismError(this.runId, this.stepPath, this.seq, this.recorded, this.asked, this.detail, advice);
  }
}

/** `b.vague line 2: ` (the file only in a folder mission), or nothing without a line. */
export function lineText(detail: DivergenceDetail): string {
  return detail.line === undefined ? '' : `${detail.file !== undefined ? `${detail.file} ` : ''}line ${detail.line}: `;
}
