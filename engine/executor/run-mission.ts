/**
 * Starting and resuming runs: the one place that turns a mission and a log into a running
 * executor and commits how the run ended.
 *
 * A run remembers what it started with (mission text and hash, `--source`, `--env`, the auth
 * file's path — never its secrets), so `resume`, the worker and the studio need nothing else.
 * Resume is replay: take the lease, read the log, walk the mission from the top against it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Env } from '../env/env.js';
import { formatDiagnostics } from '../lang/format.js';
import { loadMissionFromFiles } from '../lang/loader.js';
import type { NewEvent, StoredEvent } from '../log/events.js';
import type { EventLog, Lease, MissionFiles, NewRun, RunOptions, RunRecord } from '../log/log.js';
import { Journal, META_EVENT_TYPES, type JournalOptions, type StreamedRecord } from '../journal/journal.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { loadCredentialsFile, type CredentialsMap } from '../steps/http/credentials.js';
import { HttpRuntime } from '../steps/http-runtime.js';
import { MissionModel } from '../steps/mission-model.js';
import { StopRequested } from '../steps/signals.js';
import { StoreRuntime } from '../steps/store-runtime.js';
import { CrashInjector, type CrashPlan } from '../journal/crash-points.js';
import { Executor, type RunEnd } from './executor.js';

export const DEFAULT_LEASE_TTL_MS = 30_000;

export interface EngineDeps {
  log: EventLog;
  env: Env;
  /** Where file stores live (default `.reqon-data` in the working directory). */
  dataDir: string;
  owner?: string;
  leaseTtlMs?: number;
  crash?: CrashPlan | null;
  progress?: (line: string) => void;
  /** Told the run id as soon as the run exists, before its first step. */
  onRunId?: (runId: string) => void;
  /** Checked before every step; true stops the run there and releases it (worker shutdown). */
  shouldStop?: () => boolean;
}

export type RunResult = RunEnd & { runId: string; tolerated: { stepPath: string; code: string; message: string }[] };

/** The mission could not be loaded or failed its checks: nothing was started. */
export class MissionInvalidError extends Error {
  constructor(readonly rendered: string) {
    super(rendered);
    this.name = 'MissionInvalidError';
  }
}

/** The run cannot be taken now (owned by a live process, finished, or not found). */
export class RunUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: 'not-found' | 'owned' | 'finished' | 'waiting' | 'already-resumed',
  ) {
    super(message);
    this.name = 'RunUnavailableError';
  }
}

export function defaultOwner(env: Env): string {
  return `${hostname()}:${process.pid}:${env.random.id('w').slice(-6)}`;
}

/**
 * True when `owner` names a process on this machine that no longer exists. Owners are
 * `host:pid:nonce`; an owner on another host is never presumed dead (its lease must expire).
 */
export function ownerIsDead(owner: string): boolean {
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export function missionHash(files: MissionFiles): string {
  const h = createHash('sha256');
  for (const f of files.files) h.update(f.path).update('\u0000').update(f.text).update('\u0000');
  return h.digest('hex');
}

/**
 * Checked missions by entry and content. A model is read-only once built, so runs of the same
 * mission share one: a worker starting many runs of a mission parses and checks it once.
 */
const models = new Map<string, MissionModel>();
const MAX_CACHED_MODELS = 64;

/** Parses and checks a run's mission files; throws MissionInvalidError with rendered diagnostics. */
export function modelFor(files: MissionFiles, hash: string = missionHash(files)): MissionModel {
  const key = `${files.entry}\u0000${hash}`;
  const cached = models.get(key);
  if (cached) return cached;
  const loaded = loadMissionFromFiles(files.files, dirname(files.entry));
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !loaded.unit?.mission) {
    const texts = new Map(files.files.map((f) => [f.path, f.text] as const));
    throw new MissionInvalidError(formatDiagnostics(errors.length > 0 ? errors : loaded.diagnostics, texts));
  }
  const model = new MissionModel(loaded.unit, loaded.unit.mission);
  if (models.size >= MAX_CACHED_MODELS) models.delete(models.keys().next().value!);
  models.set(key, model);
  return model;
}

export async function startRun(files: MissionFiles, options: RunOptions, deps: EngineDeps): Promise<RunResult> {
  const hash = missionHash(files);
  const model = modelFor(files, hash);
  const owner = deps.owner ?? defaultOwner(deps.env);
  const ttl = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const runId = deps.env.random.id('run');
  const now = deps.env.clock.now();
  const first: NewEvent[] = [{ type: 'run.started', stepPath: '', payload: { mission: model.mission.name.name, missionHash: hash }, recordedAt: now }];
  const { lease } = await deps.log.createRun(
    { runId, mission: model.mission.name.name, missionHash: hash, missionFiles: files, options, createdAt: now },
    owner,
    ttl,
    first,
  );
  deps.onRunId?.(runId);
  return execute(runId, model, options, lease, [], deps, null);
}

/** What `startRun` creates, for a caller that creates the run itself (a schedule firing). */
export interface PreparedRun {
  run: NewRun;
  first: NewEvent[];
  owner: string;
  ttlMs: number;
}

/** Checks the mission (MissionInvalidError) and builds the run row and first events of a new run. */
export function prepareNewRun(files: MissionFiles, options: RunOptions, deps: EngineDeps): PreparedRun {
  const hash = missionHash(files);
  const model = modelFor(files, hash);
  const now = deps.env.clock.now();
  return {
    run: { runId: deps.env.random.id('run'), mission: model.mission.name.name, missionHash: hash, missionFiles: files, options, createdAt: now },
    first: [{ type: 'run.started', stepPath: '', payload: { mission: model.mission.name.name, missionHash: hash }, recordedAt: now }],
    owner: deps.owner ?? defaultOwner(deps.env),
    ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
  };
}

/**
 * Executes a run that a schedule firing created (worker/schedules.ts) together with its lease,
 * from its first step — exactly what `startRun` does after `createRun`.
 */
export async function startRunFromSchedule(runId: string, lease: Lease, deps: EngineDeps): Promise<RunResult> {
  const run = await deps.log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  deps.onRunId?.(runId);
  return execute(runId, modelFor(run.missionFiles), run.options, lease, [], deps, null);
}

export interface ResumeOptions {
  /** Replay against an edited mission instead of the one the run started with. */
  missionFiles?: MissionFiles;
  /** For a paused run: the payload that becomes `response` after the pause. */
  payload?: unknown;
  by?: 'cli' | 'studio' | 'timer' | 'webhook' | 'api';
}

/**
 * Continues a run: after a crash (its owner's lease expired or was released), or a suspended run
 * (resuming its pause first, with a compare-and-set: exactly one of racing resumers wins).
 */
export async function resumeRun(runId: string, opts: ResumeOptions, deps: EngineDeps): Promise<RunResult> {
  const run = await deps.log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log; list runs with \`reqon runs\``, 'not-found');
  if (run.status === 'suspended') {
    // An edited mission must replay what the run already did before the pause is spent on it: a
    // divergent one leaves the run exactly as it was, still waiting on its pause.
    if (opts.missionFiles) await assertReplays(runId, opts.missionFiles, deps);
    await resumeSuspendedRun(run, opts, deps);
    return continueRun(runId, opts, deps);
  }
  // Not suspended (any more). If its pause was resumed by someone else and that resumer is (or
  // may still be) carrying it on, this caller lost the race: say so, and do not take the run
  // over from the winner between its compare-and-set and its lease.
  const resumed = await resumedPause(deps.log, run);
  const ownerLive = run.owner !== null && (run.leaseExpiresAt ?? 0) > deps.env.clock.now() && !ownerIsDead(run.owner);
  if (resumed && (run.status !== 'running' || ownerLive || (run.owner === null && resumed.last))) {
    const now = run.status === 'running' ? (ownerLive ? `is running in ${run.owner}` : 'is about to be carried on by its resumer') : `has since ${run.status}`;
    throw new RunUnavailableError(
      `run ${runId} was already resumed (by ${resumed.by} at ${new Date(resumed.at).toISOString()}) and ${now}; nothing was changed` +
        (run.status === 'running' && !ownerLive ? ' — if its resumer stopped, `reqon worker` continues it' : ''),
      'already-resumed',
    );
  }
  if (run.status === 'completed' || run.status === 'failed') {
    throw new RunUnavailableError(`run ${runId} has already ${run.status}; nothing to resume`, 'finished');
  }
  return continueRun(runId, opts, deps);
}

/**
 * The latest `pause.resumed` of the run if no pause was created after it; `last` when it ends the
 * log. Asked of the log directly: a crashed run is about to be read whole to replay it, once.
 */
async function resumedPause(log: EventLog, run: RunRecord): Promise<{ by: string; at: number; last: boolean } | undefined> {
  const e = await log.lastOfTypes(run.runId, ['pause.created', 'pause.resumed']);
  if (e?.type !== 'pause.resumed') return undefined;
  return { by: (e.payload as { by: string }).by, at: e.recordedAt, last: e.seq === run.lastSeq };
}

/** Throws the NondeterminismError of a replay of `runId` against `missionFiles`, if it diverges. */
async function assertReplays(runId: string, missionFiles: MissionFiles, deps: EngineDeps): Promise<void> {
  // Imported on demand: verify.ts builds on this module (modelFor), so a static import would be a cycle.
  const { verifyRun } = await import('./verify.js');
  const divergence = (await verifyRun(deps.log, runId, { env: deps.env, missionFiles })).divergence;
  if (divergence) throw new NondeterminismError(runId, divergence.stepPath, divergence.seq, divergence.recorded, divergence.asked);
}

/** Takes over a run that is `running` in the log (its process died or released it) and runs it on. */
export async function continueRun(
  runId: string,
  opts: ResumeOptions,
  deps: EngineDeps,
): Promise<RunResult> {
  const owner = deps.owner ?? defaultOwner(deps.env);
  const ttl = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const before = await deps.log.getRun(runId);
  if (!before) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  let acquired = await deps.log.acquire(runId, owner, deps.env.clock.now(), ttl);
  if (!('epoch' in acquired) && ownerIsDead(acquired.heldBy)) {
    // Its process is gone (killed, crashed): no need to wait for the lease to run out.
    acquired = await deps.log.acquire(runId, owner, deps.env.clock.now(), ttl, { takeOverFrom: acquired.heldBy });
  }
  if (!('epoch' in acquired)) {
    throw new RunUnavailableError(
      `run ${runId} is owned by ${acquired.heldBy} until ${new Date(acquired.expiresAt).toISOString()}; ` +
        'it is still running there (or will be taken over when that lease expires)',
      'owned',
    );
  }
  const run = (await deps.log.getRun(runId))!;
  if (run.status !== 'running') {
    await deps.log.release(acquired);
    throw new RunUnavailableError(
      run.status === 'suspended'
        ? `run ${runId} is waiting on ${run.waitingOn}${run.wakeAt ? ` until ${new Date(run.wakeAt).toISOString()}` : ''}`
        : `run ${runId} has already ${run.status}`,
      run.status === 'suspended' ? 'waiting' : 'finished',
    );
  }
  deps.onRunId?.(runId);
  const files = opts.missionFiles ?? run.missionFiles;
  const model = modelFor(files);
  // Replayed as the walk reaches it where the log can read synchronously (a window in memory,
  // not the whole log); otherwise read whole first.
  const recorded: StoredEvent[] | StreamedRecord = deps.log.replayReader
    ? { reader: deps.log.replayReader(runId, run.lastSeq, META_EVENT_TYPES), lastSeq: run.lastSeq }
    : await deps.log.read(runId);
  // A takeover from a process that died holding the lease (even one that had just resumed a
  // pause and died before its first commit); a pause that was just resumed; or a run whose
  // previous process gave it up without finishing it.
  const reason = before.owner !== null ? 'crash' : (await lastIsPauseResume(deps.log, run)) ? 'pause' : 'manual';
  // The mission that recorded the log replays it exactly: finished loop iterations may be taken
  // as recorded rather than walked again. An edited one is walked in full, so every divergence is
  // caught; so is any run under --crash-at, whose counts include replayed passes.
  const recordedMission = !opts.missionFiles || missionHash(opts.missionFiles) === run.missionHash;
  const journal = { skipFinishedIterations: recordedMission && !deps.crash };
  return execute(runId, model, run.options, acquired, recorded, deps, { reason, owner }, journal);
}

/** True when the run's newest event, `run.resumed` markers aside, is a `pause.resumed`. */
async function lastIsPauseResume(log: EventLog, run: RunRecord): Promise<boolean> {
  return (await findLast(log, run.runId, run.lastSeq, (e) => e.type !== 'run.resumed'))?.type === 'pause.resumed';
}

/** The compare-and-set that resumes a pause (or wakes a wait): one winner among racing resumers. */
export async function resumeSuspendedRun(run: RunRecord, opts: ResumeOptions, deps: EngineDeps): Promise<void> {
  const waitingOn = run.waitingOn ?? '';
  const by = opts.by ?? 'cli';
  let event: NewEvent;
  if (waitingOn.startsWith('pause:')) {
    const pauseId = waitingOn.slice('pause:'.length);
    const created = await pendingPause(deps.log, run);
    if (!created) throw new RunUnavailableError(`run ${run.runId} waits on ${waitingOn} but its log has no such pause`, 'waiting');
    event = {
      type: 'pause.resumed',
      stepPath: created.stepPath,
      payload: { pauseId, by, ...(opts.payload !== undefined ? { payload: opts.payload } : {}) },
      recordedAt: deps.env.clock.now(),
    };
  } else {
    event = { type: 'run.resumed', stepPath: '', payload: { reason: 'manual', owner: by, replayFromSeq: run.lastSeq }, recordedAt: deps.env.clock.now() };
  }
  const outcome = await deps.log.resumeSuspended(run.runId, waitingOn, event);
  if (outcome !== 'resumed') {
    throw new RunUnavailableError(`run ${run.runId} was already resumed (it no longer waits on ${waitingOn}); nothing was changed`, 'already-resumed');
  }
}

/** The `pause.created` a run suspended on `pause:<id>` waits on (read from the end of its log). */
export async function pendingPause(log: EventLog, run: RunRecord): Promise<StoredEvent<'pause.created'> | undefined> {
  if (!run.waitingOn?.startsWith('pause:')) return undefined;
  const pauseId = run.waitingOn.slice('pause:'.length);
  const found = await findLast(log, run.runId, run.lastSeq, (e) => e.type === 'pause.created' && (e.payload as { pauseId: string }).pauseId === pauseId);
  return found as StoredEvent<'pause.created'> | undefined;
}

/**
 * The newest event at or before `lastSeq` that satisfies `match`, reading backwards a window at a
 * time: a pause is near the end of its run, so resuming one need not read the whole log (the
 * resume that follows reads it once, to replay).
 */
async function findLast(log: EventLog, runId: string, lastSeq: number, match: (event: StoredEvent) => boolean): Promise<StoredEvent | undefined> {
  const WINDOW = 256;
  for (let to = lastSeq; to >= 1; to -= WINDOW) {
    const events = await log.read(runId, { fromSeq: Math.max(1, to - WINDOW + 1), toSeq: to });
    for (let i = events.length - 1; i >= 0; i--) if (match(events[i]!)) return events[i];
  }
  return undefined;
}

async function execute(
  runId: string,
  model: MissionModel,
  options: RunOptions,
  lease: Lease,
  recorded: StoredEvent[] | StreamedRecord,
  deps: EngineDeps,
  resumed: { reason: 'crash' | 'pause' | 'lease-expired' | 'manual'; owner: string } | null,
  journalOptions: JournalOptions = {},
): Promise<RunResult> {
  const ttl = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const progress = deps.progress ?? (() => {});
  const journal = new Journal(deps.log, lease, runId, recorded, deps.env.clock, journalOptions);
  if (resumed) {
    // Placed where live execution resumes: it rides on the first live commit.
    journal.pendingMeta({
      type: 'run.resumed',
      stepPath: '',
      payload: { reason: resumed.reason, owner: resumed.owner, replayFromSeq: journal.lastRecordedSeq },
      recordedAt: deps.env.clock.now(),
    });
  }
  const credentials = loadCredentials(options, deps.env);
  const http = new HttpRuntime(model, deps.env, {
    sources: options.sources,
    credentials,
    ...(options.authFile ? { credentialsFile: options.authFile } : {}),
    progress,
  });
  const stores = new StoreRuntime(model, deps.log, deps.env, {
    dataDir: deps.dataDir,
    authJson: options.authFile ? readJson(options.authFile) : undefined,
    httpTimeoutMs: 30_000,
  });
  const executor = new Executor({
    runId,
    model,
    journal,
    env: deps.env,
    crash: new CrashInjector(deps.crash ?? null),
    stores,
    http,
    runEnv: options.env,
    lastSync: (key) => deps.log.lastCheckpoint(model.mission.name.name, key),
    inbox: (path) => deps.log.webhookInbox(path),
    progress,
    ...(deps.shouldStop ? { shouldStop: deps.shouldStop } : {}),
  });
  const heartbeat = setInterval(() => void journal.renewLease(ttl).catch(() => undefined), Math.max(1000, ttl / 3));
  heartbeat.unref();
  try {
    const end = await executor.run();
    if (end.status === 'suspended') {
      await journal.settle();
      return { ...end, runId, tolerated: executor.tolerated };
    }
    journal.assertFullyConsumed();
    if (end.status === 'completed') {
      journal.emit('run.completed', '', { actionsRun: end.actionsRun });
    } else {
      journal.emit('run.failed', '', { error: end.error });
    }
    // Telling anyone the run finished is an output: durable.
    await journal.commit({ durable: true, status: { status: end.status, releaseLease: true } });
    return { ...end, runId, tolerated: executor.tolerated };
  } catch (error) {
    // A graceful stop keeps what the walk buffered (redone on resume otherwise, but why redo it).
    if (error instanceof StopRequested && journal.hasPending) await journal.commit({ durable: false }).catch(() => undefined);
    await journal.settle().catch(() => undefined);
    const current = journal.currentLease;
    if (current) await deps.log.release(current).catch(() => undefined);
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

function loadCredentials(options: RunOptions, env: Env): CredentialsMap | undefined {
  if (!options.authFile) return undefined;
  return loadCredentialsFile(options.authFile, env.vars);
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}
