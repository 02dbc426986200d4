/**
 * Executing a run that holds its lease: build the journal and the runtimes, walk the mission,
 * and commit how the run ended. Starting (run-start.ts) and resuming (run-resume.ts) both end here.
 */
import { readFileSync } from 'node:fs';
import type { Env } from '../env/env.js';
import { credentialEnvValues, credentialSourceValues } from '../env/mission-env.js';
import { rememberedCredentialsOfRun } from '../http/given-credentials.js';
import { LOG_FORMAT, logFormatOf, SOURCE_SECRETS_FORMAT, type StoredEvent } from '../log/events.js';
import { credentialNamesOf } from '../env/credential-names.js';
import type { EventLog, Lease, MissionFiles, RunOptions } from '../log/log.js';
import { CrashInjector, type CrashPlan } from '../journal/crash-points.js';
import { identitiesOf } from '../journal/fork-identity.js';
import { Journal, type JournalOptions, type StreamedRecord } from '../journal/journal.js';
import { NondeterminismError, OWN_MISSION_ADVICE } from '../journal/nondeterminism-error.js';
import { CredentialsError, loadCredentialsFile, type CredentialsMap } from '../http/credentials.js';
import { HttpRuntime } from '../steps/http-runtime.js';
import type { MissionModel } from '../steps/mission-model.js';
import { StopRequested } from '../steps/signals.js';
import { StoreRuntime } from '../steps/store-runtime.js';
import { errorInfo, Executor, type RunEnd } from './executor.js';

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
  /**
   * Told the run id as soon as the run is this execution's: a new run once it exists, before its
   * first step; a resumed one once its pause is spent or its lease taken (maybe more than once).
   */
  onRunId?: (runId: string) => void;
  /** Checked before every step; true stops the run there and releases it (worker shutdown). */
  shouldStop?: () => boolean;
}

export type RunResult = RunEnd & {
  runId: string;
  tolerated: { stepPath: string; code: string; message: string; at?: string }[];
  /**
   * Resume of a run that had failed: the other failures its log holds, where they began (an
   * iteration in flight when its loop ended; one a loop went on after). Not told apart from the
   * log alone, so not called tolerated.
   */
  otherFailures?: { stepPath: string; code: string; message: string }[];
  /**
   * `resume --payload` of a run waiting in a `wait`: the payload, delivered on the wait's path, was
   * not taken (its eventFilter refused it) and stays unclaimed in the inbox; the path.
   */
  payloadNotTaken?: string;
  /** `--crash-at` was armed and the execution ended without reaching it: nothing was killed. */
  crashNotReached?: CrashPlan & { passed: number; /** The run had ended before: nothing ran at all. */ alreadyEnded?: true };
};

/**
 * The log was lost as a run's commit (its creation, a resume) went out, and could not be asked
 * after whether it landed: the message names the run to look up once the database is back.
 */
export class CommitOutcomeUnknownError extends Error {
  /** The lost connection's code, so that whatever tells a log outage by it still does. */
  readonly code: unknown;
  constructor(
    readonly runId: string,
    /** "created", "resumed" */
    doing: string,
    /** What "whether it was" concerns beyond the run, if anything. */
    detail: string,
    /** What to do once `reqon show` says. */
    then: string,
    cause: unknown,
  ) {
    super(
      `lost the log database as run ${runId} was being ${doing} (${cause instanceof Error ? cause.message : String(cause)}): whether it was${detail} is not known until the database is back; ` +
        `\`reqon show ${runId}\` then says${then}`,
      { cause },
    );
    this.code = (cause as { code?: unknown } | null)?.code;
  }
}

/** The run cannot be taken now (owned by a live process, finished, or not found). */
export class RunUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: 'not-found' | 'owned' | 'imported' | 'finished' | 'waiting' | 'already-resumed' | 'not-suspended' | 'unreadable' | 'ambiguous' | 'repeated' | 'late',
  ) {
    super(message);
    this.name = 'RunUnavailableError';
  }
}

export interface Execution {
  runId: string;
  model: MissionModel;
  options: RunOptions;
  lease: Lease;
  /** What the log already holds: nothing for a new run. */
  recorded: StoredEvent[] | StreamedRecord;
  /** A resume: the `run.resumed` marker rides on its first live commit. */
  resumed?: { reason: 'crash' | 'pause' | 'lease-expired' | 'manual'; owner: string };
  /** An edited mission that replays the log: it becomes the run's mission with the first commit. */
  adoptMission?: { missionHash: string; missionFiles: MissionFiles };
  /** An edited mission walks the log: the model of the mission that recorded it (StoreRuntime.redeclared). */
  recordedModel?: MissionModel;
  /**
   * The walk uses the mission that recorded the log: a divergence can never go away by trying
   * again, so it fails the run (once) instead of leaving it to be retried for ever.
   */
  ownMission: boolean;
  journal?: JournalOptions;
  /**
   * A schedule's new run: an --auth file that cannot be read fails its first request of a source
   * that declares auth (the schedule's `retry` sees a failed run) rather than the start.
   */
  credentialsAtRequest?: true;
}

export async function execute(run: Execution, deps: EngineDeps): Promise<RunResult> {
  const { runId, model, options } = run;
  const ttl = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const progress = deps.progress ?? (() => {});
  // The run's first event: its log format (a resumed run keeps the rules it was recorded by) and its identities.
  const first = isEmpty(run.recorded) ? undefined : (await deps.log.read(runId, { toSeq: 1 }))[0];
  const logFormat = first !== undefined ? logFormatOf([first]) : LOG_FORMAT;
  const journal = new Journal(deps.log, run.lease, runId, run.recorded, deps.env.clock, {
    ...run.journal,
    // A circuit breaker is told of every replayed attempt (fetch-step.ts). Finished pages taken as
    // recorded hold only answered first attempts (journal.ts) and loops with requests are walked
    // (MissionModel.iterationsSkippable); but in failureRate mode its successes count too, so a
    // mission with one walks every page.
    skipFinished: run.journal?.skipFinished === true && ![...model.sources.values()].some((s) => s.circuitBreaker?.failureRate !== undefined),
    identities: run.journal?.identities ?? (first === undefined ? [] : identitiesOf(first)),
  });
  if (run.resumed) {
    // Placed where live execution resumes: it rides on the first live commit.
    journal.pendingMeta({
      type: 'run.resumed',
      stepPath: '',
      payload: {
        reason: run.resumed.reason,
        owner: run.resumed.owner,
        replayFromSeq: journal.lastRecordedSeq,
        ...(run.adoptMission ? { missionHash: run.adoptMission.missionHash } : {}),
      },
      recordedAt: deps.env.clock.now(),
    });
  }
  if (run.adoptMission) journal.adoptMission(run.adoptMission);
  let credentials: CredentialsMap | undefined;
  let credentialsError: CredentialsError | undefined;
  try {
    credentials = loadCredentials(options, deps.env);
  } catch (error) {
    if (!(error instanceof CredentialsError) || !run.credentialsAtRequest) throw error;
    credentialsError = error;
  }
  const http = new HttpRuntime(model, deps.env, {
    sources: options.sources,
    credentials,
    ...(credentialsError ? { credentialsError } : {}),
    ...(options.authFile ? { credentialsFile: options.authFile } : {}),
    extraSecrets: [...credentialEnvValues(options.env, deps.env.vars, credentialNamesOf(logFormat)), ...(logFormat >= SOURCE_SECRETS_FORMAT ? credentialSourceValues(options.sources, credentialNamesOf(logFormat)) : [])],
    rememberedCredentials: rememberedCredentialsOfRun(first, options.env, deps.env.vars),
    progress,
    logFormat,
  });
  const stores = new StoreRuntime(model, deps.log, deps.env, {
    dataDir: options.dataDir ?? deps.dataDir,
    authJson: options.authFile && !credentialsError ? readJson(options.authFile) : undefined,
    httpTimeoutMs: 30_000,
    ...(run.recordedModel ? { recordedBy: run.recordedModel } : {}),
  });
  const crash = new CrashInjector(deps.crash ?? null);
  const unreached = () => {
    const plan = crash.unreached();
    return plan ? { crashNotReached: plan } : {};
  };
  const executor = new Executor({
    runId,
    model,
    journal,
    env: deps.env,
    crash,
    stores,
    http,
    runEnv: options.env,
    lastSync: (key, api) => deps.log.lastCheckpoint(model.mission.name.name, key, api),
    inbox: (path) => deps.log.webhookInbox(path),
    progress,
    ...(deps.shouldStop ? { shouldStop: deps.shouldStop } : {}),
  });
  // Renewed three times a lease: at a floor of 1 s, a TTL of 1 s or less lapsed between renewals.
  const heartbeat = setInterval(() => void journal.renewLease(ttl).catch(() => undefined), ttl / 3);
  heartbeat.unref();
  try {
    const end = await executor.run();
    if (end.status === 'suspended') {
      await journal.settle();
      journal.close();
      return { ...end, runId, tolerated: executor.tolerated, ...unreached() };
    }
    journal.assertFullyConsumed();
    if (end.status === 'completed') {
      journal.emit('run.completed', '', { actionsRun: end.actionsRun });
    } else {
      journal.emit('run.failed', '', { error: end.error });
    }
    // Telling anyone the run finished is an output: durable.
    await journal.commit({ durable: true, status: { status: end.status, releaseLease: true } });
    journal.close();
    return { ...end, runId, tolerated: executor.tolerated, ...unreached() };
  } catch (error) {
    if (error instanceof NondeterminismError && run.ownMission) {
      // Deterministic: every later resume would stop at the same place. Fail the run with it.
      await journal.settle().catch(() => undefined);
      const failure = errorInfo(error.withAdvice(OWN_MISSION_ADVICE));
      journal.pendingMeta({ type: 'run.failed', stepPath: '', payload: { error: failure }, recordedAt: deps.env.clock.now() });
      await journal.commit({ durable: true, status: { status: 'failed', releaseLease: true } });
      journal.close();
      return { status: 'failed', error: failure, actionsRun: [], runId, tolerated: executor.tolerated, ...unreached() };
    }
    // A graceful stop keeps what the walk buffered (redone on resume otherwise, but why redo it).
    if (error instanceof StopRequested && journal.hasPending) await journal.commit({ durable: false }).catch(() => undefined);
    await journal.settle().catch(() => undefined);
    const current = journal.currentLease;
    if (current) await deps.log.release(current).catch(() => undefined);
    journal.close();
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

function isEmpty(recorded: StoredEvent[] | StreamedRecord): boolean {
  return 'reader' in recorded ? recorded.lastSeq === 0 : recorded.length === 0;
}

/** The run's --auth file, read again from where the run was given it (its variables from `env`). */
export function loadCredentials(options: RunOptions, env: Env): CredentialsMap | undefined {
  if (!options.authFile) return undefined;
  return loadCredentialsFile(options.authFile, env.vars);
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}
