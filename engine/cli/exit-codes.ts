/**
 * The CLI's exit codes (ARCHITECTURE.md, "Contracts"). Scripts and the studio rely on these
 * numbers: extend the list, never renumber it.
 */

/** The run completed, or `check` found no errors (warnings allowed). */
export const EXIT_OK = 0;
/** The run failed, or `check` found errors. */
export const EXIT_FAILED = 1;
/** Usage error (unknown command, bad flag, missing argument) or an unreadable/invalid mission path. */
export const EXIT_USAGE = 2;
/**
 * `verify` found no divergence but could not compare everything (an older log format's limits,
 * recorded events the replay never reached): no ✓, so a script gating on `reqon verify` stops.
 */
export const EXIT_NOT_FULLY_VERIFIED = 3;
/** The run is suspended: waiting on a timer, a webhook or a pause. */
export const EXIT_SUSPENDED = 10;
/**
 * `resume` changed nothing because the run is another process's: it holds the run's live lease,
 * or resumed the pause (or delivered the wait's payload) first; or `run`, `resume` or `fork` lost
 * the run's lease mid-run (stalled past it, fenced out) to a process that took it over. Not "the
 * run failed" (1): the run goes on there, and a script that waits for it should look again
 * (`reqon show`).
 */
export const EXIT_OWNED_ELSEWHERE = 11;
/**
 * `run`, `resume` or `fork`: the log failed under the run it carried (a full disk, a lock held past
 * the wait, the database gone). The run is `running` in the log, interrupted and resumable — not
 * failed (1): `reqon resume RUN_ID` carries it on once the log is back. `worker --once` stopped
 * (SIGTERM, SIGINT) with runs it carried released unfinished: resumable the same way.
 */
export const EXIT_INTERRUPTED = 12;

export type ExitCode =
  | typeof EXIT_OK
  | typeof EXIT_FAILED
  | typeof EXIT_USAGE
  | typeof EXIT_NOT_FULLY_VERIFIED
  | typeof EXIT_SUSPENDED
  | typeof EXIT_OWNED_ELSEWHERE
  | typeof EXIT_INTERRUPTED;
