/**
 * The crash lab: kill a run at a named crash point, restart it, and judge the outcome.
 *
 * A lab is a small state machine: reference (a crash-free run of the same mission, unless one is
 * given) → armed (the run with `--crash-at POINT[:N]`; it dies by SIGKILL) → resuming (`resume`
 * until the run completes or fails, waiting out timers) → verifying → done | failed. Chaos mode
 * arms every process with `random` until the run gets through or `maxCrashes` processes were
 * started. The verdict holds when the run completed, its final stores equal the reference run's,
 * and — where the API exposes per-key counters (the demo API's `/__stats`) — every idempotency
 * key the run sent was applied exactly once.
 */
import type { Clock, HttpTransport } from '../env/env.js';
import type { StoredEvent } from '../log/events.js';
import type {
  CrashLabEffectCount,
  CrashLabStatus,
  CrashLabVerdict,
  RunStatus,
  StoreSnapshot,
} from '../protocol/protocol.js';
import { diffStoreContents } from '../inspect/state-diff.js';
import { outcomeOf, type CliProcess, type ExitInfo, type RunArgs } from './cli-process.js';
import type { RunViews } from './run-views.js';
import { StudioError } from './studio-error.js';

export interface CrashLabDeps {
  spawnRun(run: RunArgs): Promise<CliProcess>;
  spawnResume(runId: string, crashAt?: string): Promise<CliProcess>;
  views: RunViews;
  clock: Clock;
  http: HttpTransport;
  changed(status: CrashLabStatus): void;
  /** Lab ids must not be guessable across sessions only for tidiness; uniqueness is what matters. */
  newId(): string;
}

export interface LabPlan {
  mode: 'single' | 'chaos';
  run: RunArgs;
  crashAt: string;
  referenceRunId?: string;
  statsUrl?: string;
  maxCrashes: number;
}

/** Resumes after which a run that still has not finished is given up on. */
const MAX_RESUMES = 25;

export class CrashLab {
  private readonly labs = new Map<string, CrashLabStatus>();
  private readonly done = new Map<string, Promise<void>>();

  constructor(private readonly deps: CrashLabDeps) {}

  status(labId: string): CrashLabStatus {
    const lab = this.labs.get(labId);
    if (lab === undefined) throw new StudioError('not-found', `no crash lab "${labId}"; start one with crashlab.start`);
    return structuredClone(lab);
  }

  /** Resolves when the lab reached 'done' or 'failed' (tests and the CLI wait on it). */
  async settled(labId: string): Promise<CrashLabStatus> {
    await this.done.get(labId);
    return this.status(labId);
  }

  start(plan: LabPlan): CrashLabStatus {
    const lab: CrashLabStatus = {
      labId: this.deps.newId(),
      mode: plan.mode,
      phase: plan.referenceRunId === undefined ? 'reference' : 'armed',
      runId: null,
      referenceRunId: plan.referenceRunId ?? null,
      crashAt: plan.crashAt,
      processes: [],
      verdict: null,
      error: null,
    };
    this.labs.set(lab.labId, lab);
    const work = this.drive(lab, plan).catch((e: unknown) => {
      lab.phase = 'failed';
      lab.error = e instanceof Error ? e.message : String(e);
      this.emit(lab);
    });
    this.done.set(lab.labId, work);
    return structuredClone(lab);
  }

  private emit(lab: CrashLabStatus): void {
    this.deps.changed(structuredClone(lab));
  }

  private async drive(lab: CrashLabStatus, plan: LabPlan): Promise<void> {
    this.emit(lab);
    if (lab.referenceRunId === null) {
      const reference = await this.deps.spawnRun({ ...plan.run, crashAt: undefined });
      lab.referenceRunId = reference.runId;
      this.emit(lab);
      const status = await this.finish(reference, await reference.exited, null);
      if (status !== 'completed') {
        throw new StudioError('conflict', `the crash-free reference run ${reference.runId} ended "${status}", so there is nothing to compare with; fix the mission or its API first`);
      }
    }

    lab.phase = 'armed';
    const armed = await this.deps.spawnRun({ ...plan.run, crashAt: plan.crashAt });
    lab.runId = armed.runId;
    this.emit(lab);
    let exit = await this.record(lab, armed, plan.crashAt);

    lab.phase = 'resuming';
    this.emit(lab);
    let crashes = exit.signal === 'SIGKILL' ? 1 : 0;
    let processes = 1;
    while (exit.signal === 'SIGKILL') {
      const crashAt = plan.mode === 'chaos' && processes < plan.maxCrashes ? 'random' : undefined;
      const next = await this.deps.spawnResume(armed.runId, crashAt);
      processes += 1;
      exit = await this.record(lab, next, crashAt ?? null);
      if (exit.signal === 'SIGKILL') crashes += 1;
    }
    const finalStatus = await this.finish(armed, exit, lab);

    lab.phase = 'verifying';
    this.emit(lab);
    lab.verdict = await this.verdict(armed.runId, lab.referenceRunId!, finalStatus, crashes, plan.statsUrl);
    lab.phase = 'done';
    this.emit(lab);
  }

  private async record(lab: CrashLabStatus, proc: CliProcess, crashAt: string | null): Promise<ExitInfo> {
    const exit = await proc.exited;
    const view = await this.deps.views.get(proc.runId);
    lab.processes.push({
      pid: proc.pid,
      command: proc.args[0] === 'resume' ? 'resume' : 'run',
      crashAt,
      signal: exit.signal,
      code: exit.code,
      lastSeq: view.lastSeq,
    });
    this.emit(lab);
    return exit;
  }

  /**
   * Takes a run from its last exit to an end: waits out timers and resumes pauses, so a mission
   * with a `pause` finishes inside the lab. Returns the run's final status.
   */
  private async finish(proc: CliProcess, firstExit: ExitInfo, lab: CrashLabStatus | null): Promise<RunStatus> {
    let exit = firstExit;
    for (let resumes = 0; ; resumes += 1) {
      const outcome = outcomeOf(exit);
      if (outcome === 'completed') return 'completed';
      if (outcome === 'failed') return 'failed';
      if (outcome !== 'suspended' && outcome !== 'crashed') {
        throw new StudioError('conflict', `run ${proc.runId}: the CLI ${outcome === 'usage-error' ? 'rejected the request' : `exited with code ${exit.code}`}: ${proc.output().trim().slice(-600)}`);
      }
      if (resumes >= MAX_RESUMES) {
        throw new StudioError('conflict', `run ${proc.runId} did not finish after ${MAX_RESUMES} resumes; look at its timeline`);
      }
      const view = await this.deps.views.get(proc.runId);
      const wakeAt = view.record.wakeAt;
      if (outcome === 'suspended' && wakeAt !== null) {
        await this.deps.clock.sleep(Math.max(0, wakeAt - this.deps.clock.now()) + 20);
      }
      const next = await this.deps.spawnResume(proc.runId);
      exit = lab === null ? await next.exited : await this.record(lab, next, null);
    }
  }

  private async verdict(
    runId: string,
    referenceRunId: string,
    finalStatus: RunStatus,
    crashes: number,
    statsUrl: string | undefined,
  ): Promise<CrashLabVerdict> {
    const run = await this.deps.views.get(runId);
    const reference = await this.deps.views.get(referenceRunId);
    const stores = normaliseStores(run.cache.stateAt(run.lastSeq).stores, runId);
    const referenceStores = normaliseStores(reference.cache.stateAt(reference.lastSeq).stores, referenceRunId);
    const storeDiff = diffStoreContents(referenceStores, stores);
    const effects = statsUrl === undefined ? null : await this.effectCounts(statsUrl, run.cache.all());
    const duplicateEffects = effects?.filter((e) => e.effects > 1).length ?? 0;
    const lostEffects = effects?.filter((e) => e.effects === 0).length ?? 0;
    const completed = finalStatus === 'completed';
    const ok = completed && storeDiff.length === 0 && duplicateEffects === 0 && lostEffects === 0;
    const reasons: string[] = [];
    if (!completed) reasons.push(`the run ended "${finalStatus}"`);
    if (storeDiff.length > 0) reasons.push(`${storeDiff.length} store difference(s) from the reference run ${referenceRunId}`);
    if (duplicateEffects > 0) reasons.push(`${duplicateEffects} idempotency key(s) applied more than once`);
    if (lostEffects > 0) reasons.push(`${lostEffects} request(s) the API never applied`);
    const explanation = ok
      ? `survived ${crashes} crash(es): final stores equal the crash-free run ${referenceRunId}` +
        (effects === null ? '' : ` and all ${effects.length} effect(s) were applied exactly once`)
      : `not exactly-once: ${reasons.join('; ')}`;
    return { ok, storesEqual: storeDiff.length === 0, storeDiff, effects, duplicateEffects, crashes, finalStatus, explanation };
  }

  private async effectCounts(statsUrl: string, events: readonly StoredEvent[]): Promise<CrashLabEffectCount[]> {
    const keys = new Set<string>();
    for (const event of events) {
      if (event.type !== 'http.request') continue;
      const key = event.payload.idempotencyKey;
      if (key !== undefined) keys.add(key);
    }
    const response = await this.deps.http.send({ method: 'GET', url: statsUrl, headers: { accept: 'application/json' }, timeoutMs: 5000 });
    if (response.status !== 200) {
      throw new StudioError('unavailable', `the stats endpoint ${statsUrl} answered HTTP ${response.status}; is the demo API running?`, true);
    }
    const stats = parseStats(response.body, statsUrl);
    return [...keys].sort().map((key) => ({ idempotencyKey: key, requests: stats[key]?.requests ?? 0, effects: stats[key]?.effects ?? 0 }));
  }
}

/** `/__stats` → `{ keys: { [idempotencyKey]: { requests, effects } } }` (assets/demo/demo-api.mjs). */
function parseStats(body: string, url: string): Record<string, { requests: number; effects: number }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new StudioError('unavailable', `the stats endpoint ${url} did not answer JSON`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (typeof keys !== 'object' || keys === null) {
    throw new StudioError('unavailable', `the stats endpoint ${url} answered without a "keys" object`);
  }
  return keys as Record<string, { requests: number; effects: number }>;
}

/**
 * Two runs of one mission legitimately differ where a value embeds the run id (ids derived from
 * it); replacing the id with a placeholder compares what the mission stored, not who stored it.
 */
function normaliseStores(stores: StoreSnapshot[], runId: string): StoreSnapshot[] {
  const text = JSON.stringify(stores).split(runId).join('<run>');
  return JSON.parse(text) as StoreSnapshot[];
}
