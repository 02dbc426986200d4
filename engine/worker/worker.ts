/**
 * The worker: wakes what is due and takes over what was abandoned, from the database alone.
 *
 * Each tick asks the log for due runs — suspended runs whose timer is due, running runs whose
 * owner's lease expired — plus suspended waits that have unclaimed webhook deliveries (a delivery
 * that raced the run's suspension is never stranded). Waking is the log's compare-and-set, so
 * several workers on one database wake each run once; running it is a lease, so one proceeds.
 * No timer lives in memory: a 30-day pause is a `wake_at` column, polled.
 *
 * Stopping (SIGTERM) lets each run finish its current step, then releases its lease; the run
 * stays `running` with no owner and any worker picks it up.
 */
import type { Env } from '../env/env.js';
import { continueRun, RunUnavailableError, resumeSuspendedRun, type EngineDeps, type RunResult } from '../executor/run-mission.js';
import type { EventLog, RunRecord } from '../log/log.js';

export interface WorkerOptions {
  log: EventLog;
  env: Env;
  dataDir: string;
  owner: string;
  leaseTtlMs?: number;
  /** How often to look for due work, in ms of the env's clock (default 200). */
  pollMs?: number;
  /** At most this many runs in flight in this process (default 8). */
  concurrency?: number;
  progress?: (line: string) => void;
  onRunEnd?: (result: RunResult) => void;
}

export class Worker {
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(private readonly options: WorkerOptions) {}

  /** Runs currently executing in this process. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Ask every in-flight run to stop after its current step. */
  stop(): void {
    this.stopping = true;
  }

  get stopped(): boolean {
    return this.stopping;
  }

  private deps(): EngineDeps {
    return {
      log: this.options.log,
      env: this.options.env,
      dataDir: this.options.dataDir,
      owner: this.options.owner,
      ...(this.options.leaseTtlMs !== undefined ? { leaseTtlMs: this.options.leaseTtlMs } : {}),
      ...(this.options.progress ? { progress: this.options.progress } : {}),
      shouldStop: () => this.stopping,
    };
  }

  /** One pass: wake due runs and start them (without waiting for them to finish). Returns how many started. */
  async tick(): Promise<number> {
    if (this.stopping) return 0;
    const { log, env } = this.options;
    const room = (this.options.concurrency ?? 8) - this.inFlight.size;
    if (room <= 0) return 0;
    const now = env.clock.now();
    const due = await log.dueRuns(now, room * 2);
    const waits = (await log.listRuns({ status: 'suspended', limit: 500 })).filter((r) => r.waitingOn?.startsWith('wait:'));
    for (const run of waits) {
      if (due.some((d) => d.runId === run.runId)) continue;
      if ((await log.webhookInbox(run.waitingOn!.slice('wait:'.length))).length > 0) due.push(run);
    }
    let started = 0;
    for (const run of due) {
      if (started >= room) break;
      if (this.inFlight.has(run.runId)) continue;
      if (await this.start(run)) started++;
    }
    return started;
  }

  /** Wake (if suspended) and run one run in the background. False if someone else got it. */
  async start(run: RunRecord): Promise<boolean> {
    const deps = this.deps();
    try {
      if (run.status === 'suspended') {
        await resumeSuspendedRun(run, { by: run.waitingOn?.startsWith('pause:') ? 'timer' : 'webhook' }, deps);
      }
    } catch (error) {
      if (error instanceof RunUnavailableError) return false;
      throw error;
    }
    const task = continueRun(run.runId, {}, deps).then(
      (result) => {
        this.options.progress?.(`${run.runId}: ${result.status}`);
        this.options.onRunEnd?.(result);
      },
      (error: unknown) => {
        if (error instanceof RunUnavailableError) return;
        this.options.progress?.(`${run.runId}: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    const tracked = task.finally(() => this.inFlight.delete(run.runId));
    this.inFlight.set(run.runId, tracked);
    return true;
  }

  /** Wait for every run started by this worker to end (or stop). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
  }

  /** Poll until stopped; with `once`, until a tick finds nothing and nothing is in flight. */
  async loop(once: boolean): Promise<void> {
    const pollMs = this.options.pollMs ?? 200;
    for (;;) {
      const started = await this.tick();
      if (this.stopping) break;
      if (once && started === 0 && this.inFlight.size === 0) break;
      if (once && started === 0) await Promise.race([...this.inFlight.values()]);
      else await this.options.env.clock.sleep(pollMs);
    }
    await this.drain();
  }
}
