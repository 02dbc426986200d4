/**
 * The studio's run processes: `reqon run` / `reqon resume` children it started (cli-process.ts)
 * and the worker child that hosts the scheduler (studio-worker.ts). Starting, resuming and
 * killing a run go through here; each exit is read into the views before it is announced, so the
 * renderer sees a process's last events before it hears that the process is gone.
 *
 * Who executes a run is the log's to say (its owner, `host:pid:nonce`): a run owned by a process
 * that no longer exists is the worker's to take over, and "Kill process" kills whichever of the
 * studio's children owns the run — a `run`/`resume` child, or the worker (its other runs die
 * with it and it takes them all over again on restart).
 */
import { ownerIsDead, parseOwner, hostId } from '../executor/owner.js';
import { asLogged, UnloggableValueError } from '../log/loggable.js';
import { isImported } from '../executor/run-bundle.js';
import type { RunRecord } from '../log/log.js';
import type { Clock } from '../env/env.js';
import { lockedLogError, outcomeOf, resumeArgs, runArgs, startCli, type CliLauncher, type CliProcess, type ExitInfo, type RunArgs } from './cli-process.js';
import type { RunViews } from './run-views.js';
import { StudioError } from './studio-error.js';
import type { StudioWorker } from './studio-worker.js';

/** How long `run.resume` waits for its process before answering 'running'. */
const RESUME_ANSWER_WAIT_MS = 2000;
/**
 * How much longer `run.resume` waits for a process that has not changed the run by then: one that
 * waits on a locked log gives up after its 5 s busy timeout, and that is said (503), never
 * answered 'running' for a resume that then changed nothing (helper 88).
 */
const RESUME_UNTOUCHED_WAIT_MS = 6500;
/** How long `run.resume` waits for the process that suspended the run to exit. */
const EXITING_WAIT_MS = 5000;

export interface RunProcessesDeps {
  launcher: CliLauncher;
  views: RunViews;
  clock: Clock;
  worker: StudioWorker | null;
  /** A process of this run started: its run is watched from now on. */
  started(runId: string): void;
  /** A process exited: read its last events, then announce the exit. */
  exited(runId: string, pid: number, code: number | null, signal: string | null): Promise<void>;
}

export class RunProcesses {
  private readonly processes = new Map<string, CliProcess>();

  constructor(private readonly deps: RunProcessesDeps) {}

  has(runId: string): boolean {
    return this.processes.has(runId);
  }

  /** `env`: the child's extra environment (the crash lab's own host id). */
  async spawnRun(run: RunArgs, env?: Record<string, string>): Promise<CliProcess> {
    return this.track(await startCli(this.deps.launcher, runArgs(this.deps.launcher, run), undefined, env));
  }

  async spawnResume(runId: string, opts: { payload?: unknown; crashAt?: string }, env?: Record<string, string>): Promise<CliProcess> {
    return this.track(await startCli(this.deps.launcher, resumeArgs(this.deps.launcher, runId, opts), runId, env));
  }

  /** Any other CLI command that starts a run and names it on its first line (`reqon fork …`). */
  async spawnCommand(args: string[]): Promise<CliProcess> {
    return this.track(await startCli(this.deps.launcher, args));
  }

  private track(proc: CliProcess): CliProcess {
    this.processes.set(proc.runId, proc);
    this.deps.started(proc.runId);
    void proc.exited.then(async ({ code, signal }) => {
      if (this.processes.get(proc.runId) === proc) this.processes.delete(proc.runId);
      await this.deps.exited(proc.runId, proc.pid, code, signal);
    });
    return proc;
  }

  /**
   * Resume a suspended run (with the payload for its pause or wait), or a running run whose owner
   * is gone. Answers the outcome if the process ends within a moment, else 'running'.
   */
  async resume(runId: string, payload: unknown): Promise<{ runId: string; outcome: string }> {
    // A payload the log cannot hold (JSON.parse made 1e400 Infinity) is refused, as the CLI refuses
    // it — never passed on as the `null` its JSON would become.
    try {
      if (payload !== undefined) asLogged(payload, 'the payload');
    } catch (error) {
      if (error instanceof UnloggableValueError) throw new StudioError('bad-request', error.message);
      throw error;
    }
    const view = await this.deps.views.get(runId);
    refuseEnded(view.record, 'nothing to resume');
    let running = this.processes.get(runId);
    if (running !== undefined && view.record.status === 'suspended') {
      // The process that suspended the run has released it and is only exiting (the page sees
      // 'suspended' before the exit): let it go rather than refuse the resume.
      await Promise.race([running.exited, this.deps.clock.sleep(EXITING_WAIT_MS)]);
      running = this.processes.get(runId);
    }
    if (running !== undefined) {
      throw new StudioError('conflict', `run ${runId} already has a process (pid ${running.pid}); wait for it to exit`);
    }
    const { status, owner } = view.record;
    if (status === 'running' && owner !== null && !ownerIsDead(owner)) {
      throw new StudioError('conflict', `run ${runId} is executing (owner ${owner}); nothing to resume`);
    }
    const proc = await this.spawnResume(runId, payload === undefined ? {} : { payload });
    const exit = await this.earlyExit(proc, view.record);
    if (exit === null) return { runId, outcome: 'running' };
    const outcome = outcomeOf(exit);
    if (outcome === 'usage-error' || outcome === 'failed') {
      const after = await this.deps.views.get(runId);
      // The worker may have taken the run over first: it is running, just not in our process.
      if (after.record.status === 'running' && after.record.owner !== null && !ownerIsDead(after.record.owner)) return { runId, outcome: 'running' };
      if (outcome === 'usage-error' || after.record.status !== 'failed') {
        throw new StudioError('conflict', `reqon resume ${runId} refused: ${proc.output().trim().slice(-600)}`);
      }
    }
    return { runId, outcome };
  }

  /**
   * A resume process's exit if it ends within a moment (longer while the run is still as it was
   * `before`: a log held locked by another writer keeps it waiting), else null while it goes on.
   * A locked log is thrown as 503: asking again works once the other writer lets go.
   */
  private async earlyExit(proc: CliProcess, before: RunRecord): Promise<ExitInfo | null> {
    let exit = await Promise.race([proc.exited, this.deps.clock.sleep(RESUME_ANSWER_WAIT_MS).then(() => null)]);
    if (exit === null) {
      const now = (await this.deps.views.get(before.runId)).record;
      const untouched = now.lastSeq === before.lastSeq && now.status === before.status && now.owner === before.owner;
      if (untouched) exit = await Promise.race([proc.exited, this.deps.clock.sleep(RESUME_UNTOUCHED_WAIT_MS).then(() => null)]);
    }
    if (exit === null) return null;
    const locked = lockedLogError(exit, proc.output(), `reqon resume ${before.runId}`);
    if (locked) throw locked;
    return exit;
  }

  /**
   * Without `crashAt`: SIGKILL the process executing the run, if it is one of the studio's own.
   * With it: resume the (crashed or suspended) run armed with that crash point.
   */
  async crash(runId: string, crashAt: string | undefined): Promise<{ runId: string; note?: string }> {
    const view = await this.deps.views.get(runId);
    const mine = this.processes.get(runId);
    const { status, owner } = view.record;
    if (crashAt !== undefined) {
      // A resume of an ended run does nothing: the crash point would be armed in a process that never reaches it.
      refuseEnded(view.record, 'no crash point can fire in it');
      if (mine !== undefined || (status === 'running' && owner !== null && !ownerIsDead(owner))) {
        throw new StudioError('conflict', `run ${runId} is still executing${mine ? ` (pid ${mine.pid})` : ''}; arm a crash point on its next resume`);
      }
      const proc = await this.spawnResume(runId, { crashAt });
      // A resume that could not start (a locked log, a refusal) armed nothing: say so, not 200.
      const exit = await this.earlyExit(proc, view.record);
      if (exit !== null && outcomeOf(exit) === 'usage-error') {
        throw new StudioError('conflict', `reqon resume ${runId} --crash-at ${crashAt} refused: ${proc.output().trim().slice(-600)}`);
      }
      // Ended already, and not by the crash (an occurrence the log held is replayed, and a
      // replayed pass never kills; helper 98): said, not a bare 200. Not refused beforehand: an
      // effect in flight in the log is passed again live, under the same occurrence (helper 99).
      if (exit !== null && outcomeOf(exit) !== 'crashed') return { runId, note: `the resume ended (${outcomeOf(exit)}) without reaching ${crashAt}: nothing was killed` };
      return { runId };
    }
    if (mine !== undefined) {
      mine.kill('SIGKILL');
      return { runId };
    }
    if (status !== 'running') {
      throw new StudioError('conflict', `run ${runId} is ${status}: no process executes it, nothing to kill`);
    }
    if (owner === null || ownerIsDead(owner)) {
      return { runId, note: `run ${runId} has no live process${owner ? ` (its owner ${owner} is gone)` : ''}; the studio's worker takes it over` };
    }
    const parsed = parseOwner(owner);
    const worker = this.deps.worker;
    if (parsed !== null && parsed.host === hostId() && worker !== null && parsed.pid === worker.pid) {
      worker.kill();
      return { runId, note: `killed the studio's worker (pid ${parsed.pid}), which executed this run; it restarts and takes its runs over` };
    }
    throw new StudioError('conflict', `run ${runId} is executed by ${owner}, a process this studio did not start; stop it where it runs`);
  }
}

/** A run that cannot be continued — completed, failed, or imported (read-only) — refuses `what` a continuation would do. */
function refuseEnded(record: RunRecord, what: string): void {
  if (isImported(record)) throw new StudioError('conflict', `run ${record.runId} was imported from a bundle: it is read-only, ${what}`);
  if (record.status === 'completed' || record.status === 'failed') {
    throw new StudioError('conflict', `run ${record.runId} is ${record.status}: ${what}`);
  }
}
