/**
 * The worker: wakes what is due and takes over what was abandoned, from the database alone.
 *
 * Each tick asks the log for due runs — suspended runs whose timer is due, running runs whose
 * owner's lease expired — plus suspended waits that have unclaimed webhook deliveries (a delivery
 * that raced the run's suspension is never stranded). Waking is the log's compare-and-set, so
 * several workers on one database wake each run once; running it is a lease, so one proceeds.
 * No timer lives in memory: a 30-day pause is a `wake_at` column, polled.
 *
 * Between ticks it sleeps `pollMs`. On a log that signals new work (`watchWork`: PostgreSQL's
 * LISTEN/NOTIFY, from any process on any machine) it sleeps up to `idlePollMs` instead, woken
 * by a signal, by one of its own runs ending, or by the earliest instant it knows something
 * comes due (a timer, a lease, a schedule) — the tables stay the truth, the signal only says
 * when to look.
 *
 * Stopping (SIGTERM) lets each run finish its current step, then releases its lease; the run
 * stays `running` with no owner and any worker picks it up. A step that is only waiting — out a
 * retry's delay (an hour of `Retry-After`), for its rate limit — stops at once: its attempts are
 * in the log, and whoever carries the run on waits out the rest (fetch-step.ts).
 *
 * Each tick also fires the registered schedules that are due (schedules.ts): the firing and its
 * run are created in one transaction, and this worker executes the run it created.
 */
import type { Env } from '../env/env.js';
import {
  continueRun,
  ownerIsDead,
  pendingHooks,
  RunUnavailableError,
  resumeSuspendedRun,
  startRunFromSchedule,
  type EngineDeps,
  type RunResult,
} from '../executor/run-mission.js';
import { LeaseLostError, logUnavailable } from '../log/errors.js';
import { instantText } from '../env/instant-text.js';
import { failureText } from '../log/events.js';
import type { EventLog, RunRecord } from '../log/log.js';
import { describeTotals, pruneLog } from '../log/prune.js';
import { StopRequested } from '../steps/signals.js';
import { fireDueSchedules } from './schedules.js';
import { timerDueBy } from '../steps/pause-step.js';

export interface WorkerOptions {
  log: EventLog;
  env: Env;
  dataDir: string;
  owner: string;
  leaseTtlMs?: number;
  /** How often to look for due work, in ms of the env's clock (default 200). */
  pollMs?: number;
  /**
   * On a log that signals new work: the longest sleep between ticks, for what nothing signals
   * (a retry's delay, a lease expiring on another machine's log clock); default 5000.
   */
  idlePollMs?: number;
  /** At most this many runs in flight in this process (default 8). */
  concurrency?: number;
  progress?: (line: string) => void;
  onRunEnd?: (result: RunResult) => void;
  /** Told when carrying a run on erred (it is tried again later, or given up in a --once pass). */
  onRunError?: (runId: string, error: unknown) => void;
  /** Told when this worker's stop released a run it carried, unfinished (any worker carries it on). */
  onRunReleased?: (runId: string) => void;
  /** Fire the schedules registered in the log (default true). */
  schedules?: boolean;
  /**
   * Prune runs that finished more than `olderThanMs` ago, every `everyMs` (first at start), in
   * the background between ticks (log/prune.ts: short transactions, never a run that can resume).
   */
  prune?: { olderThanMs: number; everyMs: number };
}

/** How many suspended runs one tick looks at (see Worker.suspendedAfter). */
const SUSPENDED_WINDOW = 500;
/**
 * How often one suspended run's branches are looked at for deliveries left in the inbox (a
 * delivery that arrives at this worker wakes them at once; this is the net for one accepted while
 * the run still ran, or by a process that died): a concurrent loop of 50 waits is 50 inbox reads.
 */
const BRANCH_RECHECK_MS = 2_000;

export class Worker {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Inbox deliveries already offered to each suspended wait by this worker. */
  private readonly offered = new Map<string, Set<string>>();
  /**
   * Runs whose last attempt here ended in an error rather than a run result (a bug, a log this
   * engine cannot read): retried with a doubling delay, never in a tight loop — and a `--once`
   * worker gives up on one after its second such attempt, so it always ends.
   */
  private readonly erred = new Map<string, { count: number; until: number }>();
  private once = false;
  /**
   * A `--once` pass fires only the schedule firings (and retries) due when it started: a schedule
   * due every second comes due again while its run goes on, and the pass would never be idle.
   */
  private onceDueBy: number | undefined;
  /** When each suspended run's branches were last looked at for deliveries in the inbox (BRANCH_RECHECK_MS). */
  private readonly branchesCheckedAt = new Map<string, number>();
  /** `runId@lastSeq` of a suspended run → what its branches wait on that a delivery ends (pendingHooks). */
  private readonly hooks = new Map<string, Awaited<ReturnType<typeof pendingHooks>>>();
  private stopping = false;
  /** Aborted by `stop`: cuts short every wait of this worker's runs (runEnv). */
  private readonly stopSignal = new AbortController();
  /** The env the runs see: its clock's sleeps end with StopRequested once the worker stops. */
  private readonly runEnv: Env;
  /** Set by a work signal (or a run ending) that arrived while a tick ran: the next idle sleep is skipped. */
  private signalled = false;
  private wake: (() => void) | undefined;
  /** The earliest instant the last tick saw something come due later (env clock), if any. */
  private nextDueAt: number | undefined;
  /**
   * Suspended runs are looked at a window at a time (SUSPENDED_WINDOW, newest first): each tick
   * the window after the last one, back to the newest once it reaches the oldest. Every suspended
   * run is looked at within a pass, however many there are (the newest window alone left older
   * waits and webhook pauses deaf to their deliveries); `passWaits` are the waits a pass saw, and
   * `passQuiet` whether the pass so far started nothing (a `--once` worker stops only after a
   * whole quiet pass).
   */
  private suspendedAfter: { createdAt: number; runId: string } | undefined;
  private passWaits = new Set<string>();
  private passQuiet = true;
  private lastPassQuiet = false;
  /** The prune in progress (options.prune), and when the next one is due (env clock). */
  private pruning: Promise<void> | undefined;
  private nextPruneAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: WorkerOptions) {
    this.runEnv = stoppableEnv(options.env, this.stopSignal.signal);
  }

  /** Runs currently executing in this process. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Ask every in-flight run to stop after its current step. */
  stop(): void {
    this.stopping = true;
    if (!this.stopSignal.signal.aborted) this.stopSignal.abort(new StopRequested());
    this.signal();
  }

  /** New work may be there: end the current idle sleep (or skip the next one). */
  private signal(): void {
    this.signalled = true;
    this.wake?.();
  }

  get stopped(): boolean {
    return this.stopping;
  }

  private deps(): EngineDeps {
    return {
      log: this.options.log,
      env: this.runEnv,
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
    if (room <= 0) {
      // Nothing can start before a run ends, which signals: an instant an earlier tick saw come
      // due must not make idle() sleep 0 ms, again and again without yielding (every run starved).
      this.nextDueAt = undefined;
      return 0;
    }
    let started = 0;
    if (this.options.schedules !== false) {
      for (const fired of await fireDueSchedules(log, this.deps(), room, this.once ? this.onceDueBy : undefined)) {
        this.track(fired.runId, startRunFromSchedule(fired.runId, fired.lease, this.deps()));
        started++;
      }
    }
    const now = env.clock.now();
    const due = await log.dueRuns(now, room * 2);
    let nextDueAt: number | undefined;
    const later = (at: number | null) => {
      if (at !== null && at > now && (nextDueAt === undefined || at < nextDueAt)) nextDueAt = at;
    };
    // A run whose owner process is gone (killed on this machine) need not wait for its lease to expire.
    for (const run of await log.listRuns({ status: 'running', limit: 500 })) {
      if (run.owner === null || this.inFlight.has(run.runId) || due.some((d) => d.runId === run.runId)) continue;
      if (ownerIsDead(run.owner)) due.push(run);
      else later(run.leaseExpiresAt);
    }
    const from = this.suspendedAfter;
    const suspended = await log.listRuns({ status: 'suspended', limit: SUSPENDED_WINDOW, ...(from ? { after: from } : {}) });
    const last = suspended[suspended.length - 1];
    const wrapped = suspended.length < SUSPENDED_WINDOW || last === undefined;
    this.suspendedAfter = wrapped ? undefined : { createdAt: last.createdAt, runId: last.runId };
    for (const run of suspended) later(run.wakeAt);
    if (this.options.schedules !== false && log.watchWork) for (const s of await log.listSchedules()) later(s.nextFireAt);
    this.nextDueAt = nextDueAt;
    const waits = suspended.filter((r) => r.waitingOn?.startsWith('wait:'));
    for (const run of waits) this.passWaits.add(run.runId);
    if (wrapped) {
      // A whole pass is done: forget what was offered to waits it no longer saw.
      for (const runId of this.offered.keys()) {
        if (!this.inFlight.has(runId) && !this.passWaits.has(runId)) this.offered.delete(runId);
      }
      this.passWaits = new Set();
    }
    for (const run of waits) {
      if (due.some((d) => d.runId === run.runId)) continue;
      // Wake a wait for deliveries it has not been offered yet: one its `eventFilter` rejected
      // stays unclaimed in the inbox and must not wake it on every tick.
      if (this.offerDeliveries(run, await this.inboxOf([run.waitingOn!.slice('wait:'.length)]))) due.push(run);
    }
    // A delivery in the inbox unclaimed for a branch of a suspended run (it arrived while the run
    // was on its way there, or the process that took it died before resuming it): a pause resumed
    // by a webhook — the one the run waits on or another branch's — is resumed now, the delivery
    // claimed with it; another branch's wait than the one it suspended on wakes the run to take it.
    // Before, only the pause the run waited on was looked at, and a sibling's delivery waited for
    // the run's timer (helper 80).
    // A run whose timer is due too: a delivery that came before the timer was due resumes it, as
    // one in time for a wait is taken however late the run is woken (timerDueBy: a later one does not).
    for (const run of suspended) {
      if (started >= room) break;
      if (this.inFlight.has(run.runId) || this.backingOff(run.runId)) continue;
      const checkedAt = this.branchesCheckedAt.get(run.runId);
      // A due run is looked at whatever the throttle: its timer is about to be spent (helper 97:
      // an approval that came in time sat in the inbox while the timer resumed the pause).
      if (checkedAt !== undefined && env.clock.now() - checkedAt < BRANCH_RECHECK_MS && !due.some((d) => d.runId === run.runId)) continue;
      if (this.branchesCheckedAt.size > 10_000) this.branchesCheckedAt.clear();
      this.branchesCheckedAt.set(run.runId, env.clock.now());
      try {
        if (await this.takeBranchDelivery(run)) started++;
      } catch (error) {
        // The log is down or locked: the loop waits and looks again. Anything else is this run's
        // trouble (a damaged log), backed off as a failed resume is, never the worker's end.
        if (logUnavailable(error)) throw error;
        this.track(run.runId, Promise.reject(error));
        started++;
      }
    }
    for (const run of due) {
      if (started >= room) break;
      if (this.inFlight.has(run.runId) || this.backingOff(run.runId)) continue;
      if (await this.start(run)) started++;
    }
    if (started > 0) this.passQuiet = false;
    if (wrapped) {
      this.lastPassQuiet = this.passQuiet;
      this.passQuiet = true;
    }
    return started;
  }

  /** A run whose last start failed waits out its back-off (under `--once`, it is tried twice at most). */
  private backingOff(runId: string): boolean {
    const erred = this.erred.get(runId);
    return erred !== undefined && (this.options.env.clock.now() < erred.until || (this.once === true && erred.count >= 2));
  }

  /** Whether the last tick ended a pass over the suspended runs in which nothing was started. */
  private get passIdle(): boolean {
    return this.suspendedAfter === undefined && this.lastPassQuiet;
  }

  /**
   * Resumes a branch's webhook pause whose delivery is in the inbox (claimed with the resume), or
   * wakes the run for another branch's wait with a delivery not offered to it yet. True when the
   * run was started.
   */
  private async takeBranchDelivery(run: RunRecord): Promise<boolean> {
    const { log } = this.options;
    const { pauses, waitPaths } = await this.pendingHooksOf(run);
    for (const created of pauses) {
      const hookPath = created.payload.webhookPath!;
      const [delivery] = await log.webhookInbox(hookPath);
      if (!delivery || timerDueBy(created.payload.dueAt, delivery.receivedAt)) continue;
      try {
        await resumeSuspendedRun(run, { by: 'webhook', payload: delivery.payload, claim: { path: hookPath, eventId: delivery.eventId } }, this.deps(), created);
      } catch (error) {
        if (error instanceof RunUnavailableError) return false;
        throw error;
      }
      this.track(run.runId, continueRun(run.runId, {}, this.deps()));
      return true;
    }
    const siblings = waitPaths.filter((p) => run.waitingOn !== `wait:${p}`);
    if (siblings.length === 0) return false;
    this.passWaits.add(run.runId);
    if (!this.offerDeliveries(run, await this.inboxOf(siblings))) return false;
    return this.start(run, { wake: true });
  }

  /** The unclaimed deliveries on each of `paths`, as `path`/`eventId` pairs. */
  private async inboxOf(paths: readonly string[]): Promise<{ path: string; eventId: string }[]> {
    const out: { path: string; eventId: string }[] = [];
    for (const path of paths) for (const d of await this.options.log.webhookInbox(path)) out.push({ path, eventId: d.eventId });
    return out;
  }

  /**
   * Notes `deliveries` as offered to `run`'s waits; true when one was not offered before. Offered
   * once: a delivery a wait's `eventFilter` refuses stays in the inbox and must not wake it on every
   * tick. By path and id: ids are unique per path only (a sender's own ids repeat across paths).
   */
  private offerDeliveries(run: RunRecord, deliveries: readonly { path: string; eventId: string }[]): boolean {
    const offered = this.offered.get(run.runId) ?? new Set<string>();
    let fresh = false;
    for (const d of deliveries) {
      const key = `${d.path}\n${d.eventId}`;
      if (offered.has(key)) continue;
      offered.add(key);
      fresh = true;
    }
    this.offered.set(run.runId, offered);
    return fresh;
  }

  /** What the branches of suspended `run` wait on that a delivery ends (pendingHooks), read once per suspension. */
  async pendingHooksOf(run: RunRecord): Promise<Awaited<ReturnType<typeof pendingHooks>>> {
    const key = `${run.runId}@${run.lastSeq}`;
    let known = this.hooks.get(key);
    if (known === undefined) {
      known = await pendingHooks(this.options.log, run);
      if (this.hooks.size > 10_000) this.hooks.clear();
      this.hooks.set(key, known);
    }
    return known;
  }

  /**
   * Wake (if suspended) and run one run in the background. False if someone else got it. With
   * `wake`, what the run waits on is not resumed: a branch of it takes a delivery (ResumeOptions.wake).
   */
  async start(run: RunRecord, opts: { wake?: boolean } = {}): Promise<boolean> {
    const deps = this.deps();
    try {
      if (run.status === 'suspended') {
        await resumeSuspendedRun(run, opts.wake === true ? { by: 'webhook', wake: true } : { by: run.waitingOn?.startsWith('pause:') ? 'timer' : 'webhook' }, deps);
      }
    } catch (error) {
      // Taken by someone else, resumed first…; but a run this engine cannot read (a newer
      // format) is left as it is and backed off from, as when carrying it on (continueRun).
      if (error instanceof RunUnavailableError && error.reason !== 'unreadable') return false;
      // The log down or locked: what was offered to the run's waits is offered again once it is
      // back (the wake never happened), and the loop waits and looks again.
      if (logUnavailable(error)) {
        this.offered.delete(run.runId);
        throw error;
      }
      // One run that cannot be woken (its log damaged, or newer) is that run's trouble, backed off as a failed
      // resume is, never the worker's end (helper 77: the worker exited, and again each restart).
      this.track(run.runId, Promise.reject(error));
      return true;
    }
    this.track(run.runId, continueRun(run.runId, {}, deps));
    return true;
  }

  /** Keeps an executing run in `inFlight` until it ends, and reports how it ended. */
  private track(runId: string, execution: Promise<RunResult>): void {
    const task = execution.then(
      (result) => {
        this.options.progress?.(`${runId}: ${endText(result)}`);
        this.options.onRunEnd?.(result);
      },
      (error: unknown) => {
        if (error instanceof RunUnavailableError && error.reason !== 'unreadable') return;
        if (error instanceof StopRequested) {
          // This worker's own stop: the run is released, whole, for any worker; nothing erred.
          this.options.progress?.(`${runId}: released (the worker is stopping); any worker carries it on`);
          this.options.onRunReleased?.(runId);
          return;
        }
        if (error instanceof LeaseLostError) {
          // This worker stalled past the lease and was fenced out: the process that took the run
          // over carries it on (or has ended it) — nothing erred, nothing to try again (probe 109 K4).
          // One that has since let it go left it to any worker: counted as released (helper 106).
          if (error.current?.owner === null) {
            this.options.progress?.(`${runId}: lease lost, and the run has no owner now; any worker carries it on: ${error.message}`);
            this.options.onRunReleased?.(runId);
          } else this.options.progress?.(`${runId}: lease lost to the process that took it over, which carries it on: ${error.message}`);
          return;
        }
        const count = (this.erred.get(runId)?.count ?? 0) + 1;
        const delayMs = Math.min(60_000, 1000 * 2 ** (count - 1));
        this.erred.set(runId, { count, until: this.options.env.clock.now() + delayMs });
        const next =
          this.once && count >= 2
            ? 'giving up on it in this --once pass'
            : `next attempt in ${delayMs / 1000} s${this.once ? ', if this --once pass is still running then' : ''}`;
        this.options.progress?.(`${runId}: ${error instanceof Error ? error.message : String(error)} (${next})`);
        this.options.onRunError?.(runId, error);
      },
    );
    const tracked = task.finally(() => {
      this.inFlight.delete(runId);
      // Its slot is free: due work this worker had no room for may be waiting.
      this.signal();
    });
    this.inFlight.set(runId, tracked);
  }

  /** Wait for every run started by this worker to end (or stop), and for a prune in progress. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
    await this.pruning;
  }

  /** Starts a prune in the background when one is due and none is running. */
  private maybePrune(): void {
    const prune = this.options.prune;
    if (!prune || this.pruning || this.stopping) return;
    const { clock } = this.options.env;
    const now = clock.now();
    if (now < this.nextPruneAt) return;
    this.nextPruneAt = now + prune.everyMs;
    const progress = this.options.progress;
    this.pruning = pruneLog(this.options.log, {
      finishedBefore: now - prune.olderThanMs,
      now: () => clock.now(),
      // Small transactions: this process's runs commit between them.
      batchRuns: 100,
      batchEvents: 2000,
      shouldStop: () => this.stopping,
    })
      .then(
        (summary) => {
          if (summary.runs > 0 || summary.events > 0) progress?.(`prune: ${describeTotals(summary)}${summary.stopped ? ' (stopped)' : ''}`);
        },
        (error: unknown) => {
          // A failed prune costs nothing but space: say so, and try again at the next period.
          progress?.(`prune failed: ${error instanceof Error ? error.message : String(error)} (next attempt in ${prune.everyMs / 1000} s)`);
        },
      )
      .finally(() => {
        this.pruning = undefined;
      });
  }

  /**
   * Poll until stopped; with `once`, until a tick finds nothing and nothing is in flight — what
   * was due when the pass started and the runs it leads to. A schedule's firings due after the
   * start are left to the next pass (or a long-running worker).
   */
  async loop(once: boolean): Promise<void> {
    this.once = once;
    this.onceDueBy = once ? this.options.env.clock.now() : undefined;
    const { log } = this.options;
    const unwatch = log.watchWork ? await this.watch(log.watchWork.bind(log)) : undefined;
    try {
      let unreachable = 0;
      for (;;) {
        this.signalled = false;
        let started: number;
        try {
          this.maybePrune();
          started = await this.tick();
          if (unreachable > 0) this.options.progress?.('the log database is usable again');
          unreachable = 0;
        } catch (error) {
          if (!logUnavailable(error)) throw error;
          // The database is down, cut off or locked by another process past its busy timeout:
          // nothing can be woken or written; wait and look again (helper 80: a lock of a few
          // seconds while a tick claimed a delivery made the worker exit).
          unreachable++;
          const delayMs = Math.min(30_000, (this.options.pollMs ?? 200) * 2 ** unreachable);
          this.options.progress?.(`${(error as Error).message} (looking again in ${delayMs / 1000} s)`);
          if (once && unreachable >= 5) throw error;
          await this.runEnv.clock.sleep(delayMs).catch(() => undefined); // a stop ends the wait
          if (this.stopping) break;
          continue;
        }
        if (this.stopping) break;
        if (once && started === 0 && this.inFlight.size === 0) {
          if (this.passIdle) break;
          // More suspended runs to look at before this pass is whole: the next window at once.
          continue;
        }
        if (once && started === 0) await Promise.race([...this.inFlight.values()]);
        else await this.idle(unwatch !== undefined);
      }
      await this.drain();
    } finally {
      await unwatch?.();
    }
  }

  /** Listens for work signals; a log that cannot listen right now is polled, as SQLite is. */
  private async watch(watchWork: NonNullable<EventLog['watchWork']>): Promise<(() => Promise<void>) | undefined> {
    try {
      return await watchWork(() => this.signal());
    } catch (error) {
      this.options.progress?.(`not listening for new work (${error instanceof Error ? error.message : String(error)}): polling every ${this.options.pollMs ?? 200} ms`);
      return undefined;
    }
  }

  /** Sleeps until the next tick is due: `pollMs`, or (when signalled of work) up to `idlePollMs`, cut short by a signal. */
  private async idle(listening: boolean): Promise<void> {
    const { clock } = this.options.env;
    const pollMs = this.options.pollMs ?? 200;
    let ms = pollMs;
    if (listening) {
      ms = Math.max(pollMs, this.options.idlePollMs ?? 5000);
      if (this.nextDueAt !== undefined) ms = Math.max(0, Math.min(ms, this.nextDueAt - clock.now()));
    }
    if (this.signalled) return;
    const abort = new AbortController();
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      clock.sleep(ms, abort.signal).then(resolve, resolve);
    });
    this.wake = undefined;
    abort.abort();
  }
}

/** How a run this worker carried on ended, as its log says it (the failure with its place, not only "failed"). */
function endText(result: RunResult): string {
  switch (result.status) {
    case 'failed':
      return `failed: ${failureText(result.error)}`;
    case 'suspended':
      return `suspended, waiting on ${result.waitingOn}` + (result.wakeAt !== null ? ` until ${instantText(result.wakeAt)}` : '');
    case 'completed': {
      const failures = result.tolerated.length;
      return failures === 0 ? 'completed' : `completed with ${failures} tolerated failure${failures === 1 ? '' : 's'} (reqon show ${result.runId})`;
    }
  }
}

/** `env` whose clock's sleeps also end, rejected with the signal's reason, when `stop` aborts. */
function stoppableEnv(env: Env, stop: AbortSignal): Env {
  const clock = env.clock;
  return {
    ...env,
    clock: {
      now: () => clock.now(),
      sleep: (ms, signal) => clock.sleep(ms, signal ? AbortSignal.any([signal, stop]) : stop),
    },
  };
}
