/**
 * How `run`, `resume` and the worker report a run's end: one human line (or one JSON object with
 * `--json`) and the contract's exit code — 0 completed, 1 failed, 10 suspended.
 */
import type { RunResult } from '../executor/run-mission.js';
import type { CliIo } from './command-module.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_OWNED_ELSEWHERE, EXIT_SUSPENDED, EXIT_USAGE, type ExitCode } from './exit-codes.js';
import { instantText } from '../env/instant-text.js';
import { failureText } from '../log/events.js';
import { isLogFailure, LOG_LOCKED_TEXT, logBusy, logUnreachable } from '../log/errors.js';

export function reportRun(result: RunResult, json: boolean, io: CliIo): ExitCode {
  // An armed crash point the run never reached killed nothing: say so, or a crash test that
  // exits 0 reads as a crash survived.
  const missed = result.crashNotReached;
  if (missed) {
    const end = missed.alreadyEnded
      ? `at all: the run had already ${result.status}`
      : result.status === 'suspended'
        ? 'before the run suspended'
        : `before the run ${result.status === 'completed' ? 'completed' : 'failed'}`;
    const why = missed.alreadyEnded
      ? 'nothing of it ran again'
      : missed.passed >= missed.occurrence
        ? `its occurrence ${missed.occurrence} lies in what the log already held, which is replayed and never killed`
        : `the run passed ${missed.point} ${missed.passed} time${missed.passed === 1 ? '' : 's'}`;
    io.stderr(`crash point ${missed.point}:${missed.occurrence} was not reached ${end} — nothing was killed (${why})\n`);
  }
  if (result.payloadNotTaken !== undefined) {
    io.stderr(
      result.status === 'suspended'
        ? `your payload was not taken by the wait on ${result.payloadNotTaken}: its eventFilter refused it; it stays unclaimed in that path's inbox, and the run waits on\n`
        : `your payload was not taken by the wait on ${result.payloadNotTaken}: it stays unclaimed in that path's inbox\n`,
    );
  }
  if (json) {
    io.stdout(`${JSON.stringify(result)}\n`);
  } else {
    for (const t of result.tolerated) io.stderr(`  tolerated failure at ${t.stepPath}: ${failureText(t)}\n`);
    for (const f of result.otherFailures ?? []) io.stderr(`  failure at ${f.stepPath}: ${failureText(f)}\n`);
    switch (result.status) {
      case 'completed': {
        // Failures a loop tolerated (onError continue, queue) are part of the end, as `reqon runs`
        // and `reqon show` say: "completed with N failures", not a bare "completed".
        const failures = result.tolerated.length;
        const end = failures === 0 ? 'completed' : `completed with ${failures} failure${failures === 1 ? '' : 's'} (tolerated, listed above)`;
        io.stdout(`${end}: ${result.actionsRun.length} action(s) run (${result.actionsRun.join(', ') || 'none'})\n`);
        break;
      }
      case 'failed':
        io.stdout(`failed: ${failureText(result.error)}\n`);
        break;
      case 'suspended':
        io.stdout(`suspended: waiting on ${result.waitingOn}${result.wakeAt !== null ? ` until ${instantText(result.wakeAt)}` : ''}; ${wakesIt(result.runId, result)}\n`);
        break;
    }
  }
  return result.status === 'completed' ? EXIT_OK : result.status === 'failed' ? EXIT_FAILED : EXIT_SUSPENDED;
}

/**
 * Who carries a suspended run on. A plain `reqon worker` takes no deliveries: it was named for a
 * pause only a webhook resumes, which it never does (helper 80); a wait it only times out.
 */
function wakesIt(runId: string, { waitingOn, wakeAt, webhookPath }: { waitingOn: string; wakeAt: number | null; webhookPath?: string }): string {
  const resume = `\`reqon resume ${runId}\``;
  if (waitingOn.startsWith('wait:')) {
    return `a delivery to ${waitingOn.slice('wait:'.length)} at \`reqon worker --listen PORT\` completes it (a worker without --listen only times it out), or ${resume} --payload JSON`;
  }
  const delivery = `a delivery to ${webhookPath ?? 'its webhook path'} at \`reqon worker --listen PORT\``;
  if (wakeAt === null) return `${delivery} resumes it, or ${resume}`;
  if (webhookPath !== undefined) return `${delivery} resumes it sooner, else \`reqon worker\` wakes it then; or ${resume}`;
  return `\`reqon worker\` wakes it then, or ${resume}`;
}

export function progressTo(io: CliIo, quiet: boolean): (line: string) => void {
  return quiet ? () => {} : (line) => io.stderr(`${line}\n`);
}

/** Expected ways a run command ends without a run result; anything else is a bug. */
export function reportRunError(e: unknown, io: CliIo): ExitCode | undefined {
  if (!(e instanceof Error)) return undefined;
  switch (e.name) {
    case 'MissionInvalidError':
      io.stderr(`${(e as { rendered?: string }).rendered ?? e.message}\n`);
      return EXIT_USAGE;
    case 'CredentialsError':
      io.stderr(`reqon: ${e.message}\n`);
      return EXIT_USAGE;
    case 'RunUnavailableError':
      io.stderr(`reqon: ${e.message}\n`);
      // A run id that names no run is a bad argument, like an unknown flag, and so is a payload or
      // an edit for a run that can take none (finished, or not waiting on a pause): refused, the
      // run as it was — not "the run failed"; a run another process has (or resumed first) goes
      // on there; an imported run is read-only (refused, as it was); the others (damaged…) are
      // about the run as it stands.
      switch ((e as { reason?: string }).reason) {
        case 'not-found':
        case 'ambiguous':
        case 'finished':
        case 'not-suspended':
        case 'repeated':
        case 'late':
        case 'imported':
          return EXIT_USAGE;
        case 'owned':
        case 'already-resumed':
          return EXIT_OWNED_ELSEWHERE;
        default:
          return EXIT_FAILED;
      }
    case 'LeaseLostError':
      // Stalled past its lease (a paused VM, a long GC), this process was fenced out: another took
      // the run over and carries it on, or has ended it — not "the run failed" (probe 106 K7).
      io.stderr(`reqon: ${e.message}\nreqon: the run goes on in the process that took it over: \`reqon show RUN_ID\` says how it stands\n`);
      return EXIT_OWNED_ELSEWHERE;
    case 'ResumeOutcomeUnknownError':
    case 'RunCreationUnknownError':
      // Interrupted, as a run the log failed under; the message names the run to look up.
      io.stderr(`reqon: ${e.message}\n`);
      return EXIT_INTERRUPTED;
    case 'NondeterminismError':
    case 'DamagedLogError':
      io.stderr(`reqon: ${e.message}\n`);
      return EXIT_FAILED;
    default:
      return undefined;
  }
}

/**
 * The log failed under a run this command carried (a full disk, a lock held past the wait, the
 * database gone): the run is `running` in the log, resumable — not failed. Said with its id, and
 * with `--json` as the result line a script reads last (`status: "running"`, `interrupted`), so
 * that "interrupted, resumable" is told apart from "failed" (helper 86): exit 12, not 1. Undefined
 * for any other error.
 */
export function reportInterrupted(e: unknown, runId: string | undefined, json: boolean, io: CliIo): ExitCode | undefined {
  if (runId === undefined || !isLogFailure(e)) return undefined;
  const reason = e instanceof Error ? e.message : String(e);
  const what = logUnreachable(e) ? 'lost the log database' : 'the log database failed';
  io.stderr(
    `reqon: ${what} mid-run: ${reason}\n` +
      `reqon: run ${runId} is interrupted, not failed: nothing after its last commit was written, and it stays resumable — \`reqon resume ${runId}\` (or a worker, once its lease expires) carries it on when the database is back\n`,
  );
  if (json) io.stdout(`${JSON.stringify({ runId, status: 'running', interrupted: { code: logUnreachable(e) ? 'log-unreachable' : 'log-failed', message: reason }, resumable: true })}\n`);
  return EXIT_INTERRUPTED;
}

/**
 * The log failed before `resume` changed anything of the run (its pause's compare-and-set, its
 * lease): the run is as it was and the payload unused — not "interrupted" (helper 88: exit 12
 * with a hint whose plain resume would have spent the pause without the payload). Exit 2, as for
 * a log locked when the command opened it; said in LOG_LOCKED_TEXT's words when it was the lock.
 */
export function reportUntouched(e: unknown, runId: string, payloadGiven: boolean, io: CliIo): ExitCode | undefined {
  if (!isLogFailure(e)) return undefined;
  const reason = e instanceof Error ? e.message : String(e);
  const what = logBusy(e) ? LOG_LOCKED_TEXT : logUnreachable(e) ? 'the log database could not be reached' : 'the log database failed';
  io.stderr(`reqon: ${what} (${reason}) before run ${runId} was resumed: nothing was changed${payloadGiven ? ' and your payload was not used' : ''} — try again once the log is back\n`);
  return EXIT_USAGE;
}
