/**
 * The studio service: every protocol channel, independent of the transport that carries it
 * (Electron IPC in the desktop app, HTTP + WebSocket in the browser build). This file is the
 * dispatch — argument checks, then a view, a process or the lab — and each other job has its
 * own file:
 *   run-views.ts      reads through the log into the inspector folds (engine/inspect)
 *   run-processes.ts  `reqon run`/`resume` children the studio starts, resumes and kills
 *   studio-worker.ts  the one scheduler: a `reqon worker` child (timers, dead owners, webhooks)
 *   live-poll.ts      polling the log and the pushes it announces
 *   run-verify.ts     `run.verify` through the executor's verifier
 *   crash-lab.ts      the crash lab, with its answer proxy
 * Runs never execute inside this process. At start the newest run is read and its timeline
 * folded in the background (`prefetch`), since that is what the renderer opens first.
 * Invariant: handlers hold no business logic of their own beyond argument checks, and every
 * failure leaves as a StudioError (studio-error.ts).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import type { Clock } from '../env/env.js';
import { RealClock } from '../env/real-env.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import { LAB_STOPPED_CODE } from '../log/events.js';
import { isPostgresUrl, openLog, otherUrlScheme } from '../log/open-log.js';
import { redactPgUrl } from '../log/postgres/pg-url.js';
import { hostId, ownerGoneUnder, ownerIsDead } from '../executor/owner.js';
import { diffStates } from '../inspect/state-diff.js';
import { sliceState } from '../inspect/state-slice.js';
import type { MissionSource, PushChannel, Pushes, RequestChannel, Requests, RunsPage, RunSummary, StudioInfo } from '../protocol/protocol.js';
import { isRequestChannel } from '../protocol/channels.js';
import { CliRefusedError, type CliLauncher, type CliProcess, type RunArgs } from './cli-process.js';
import { CrashLab } from './crash-lab.js';
import { declaredSources, labUpstreams } from './lab-upstreams.js';
import { AnswerProxy } from './crash-lab-proxy.js';
import { LivePoll } from './live-poll.js';
import { missionFileFor, saveMissionFiles } from './mission-request.js';
import { checkCrashAt, checkRunArgs } from './run-request-check.js';
import { asFields, int, optInt, optStr, optStringMap, str, valueWindows, type Fields } from './request-fields.js';
import { RunProcesses } from './run-processes.js';
import { forkTextDir, RunSharing } from './run-sharing.js';
import { verifyInStudio } from './run-verify.js';
import { timelineWindowQuery } from './timeline-window-query.js';
import { eventSearchQuery, searchEvents } from './event-search-query.js';
import { RunViews } from './run-views.js';
import { runsListQuery } from './runs-list-query.js';
import { StudioError } from './studio-error.js';
import { StudioWorker } from './studio-worker.js';

export interface StudioServiceOptions {
  /** The event log: a SQLite file, or a postgres:// URL (a log shared with workers elsewhere). */
  dbPath: string;
  /** The compiled CLI (dist/engine/cli/main.js) that runs, resumes and crashes runs. */
  cliPath: string;
  /** Working directory of CLI processes; relative mission paths resolve against it. */
  cwd: string;
  /** Base URL of the demo API, when the studio started one (`--demo`). */
  demoApiUrl?: string;
  demoMissionPath?: string;
  /**
   * Folders whose missions `run.start` and the crash lab may start by path (default: `cwd`, and
   * the demo mission's folder); anything else is refused (mission-request.ts).
   */
  missionRoots?: string[];
  pollIntervalMs?: number;
  /**
   * Host the scheduler, a `reqon worker` child over this log (default true): it wakes due timers
   * and takes over runs whose owner died. Off, suspended and crashed runs wait for Resume.
   */
  worker?: boolean;
  /** The worker's `--poll` in ms (default 200). */
  workerPollMs?: number;
  /**
   * How many of the newest runs to read and fold in the background as soon as the service starts
   * (default 1): the renderer opens the newest run on its Timeline tab, and the browser or window
   * takes longer to start than a 100k-event run takes to load. 0 turns it off.
   */
  prefetchRuns?: number;
  /** About the most payload JSON one `run.events` page holds (EVENT_PAGE_BYTES unless a test says). */
  eventPageBytes?: number;
  clock?: Clock;
}

/** A `run.events` page stops short of its limit past this much payload JSON (the first event always comes). */
export const EVENT_PAGE_BYTES = 64 * 1024 * 1024;

const LAB_HOST = `${hostId().slice(0, 50)}.crash-lab`;
/** The lease under which a crash lab that gave up ends its run: long enough for one commit. */
const STOP_LEASE_MS = 30_000;

export type PushListener = <P extends PushChannel>(channel: P, payload: Pushes[P]) => void;

export interface StudioService {
  handle<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']>;
  subscribe(listener: PushListener): () => void;
  /** Waits for a crash lab to finish (used by `reqon studio --demo` and tests). */
  labSettled(labId: string): Promise<Requests['crashlab.verdict']['res']>;
  close(): Promise<void>;
}

export async function createStudioService(options: StudioServiceOptions): Promise<StudioService> {
  const cwd = path.resolve(options.cwd);
  // A URL (of any scheme) as given: resolved as a path, `sqlite:///x.db` became a folder and a log.
  const dbPath = isPostgresUrl(options.dbPath) || otherUrlScheme(options.dbPath) !== undefined ? options.dbPath : path.resolve(cwd, options.dbPath);
  const log = await openLog(dbPath);
  const service = new Service(log, { ...options, cwd, dbPath });
  service.start();
  service.prefetch(options.prefetchRuns ?? 1);
  return service;
}

class Service implements StudioService {
  private readonly views: RunViews;
  private readonly listeners = new Set<PushListener>();
  private readonly lab: CrashLab;
  private readonly sharing: RunSharing;
  private readonly live: LivePoll;
  private readonly processes: RunProcesses;
  private readonly worker: StudioWorker | null;
  private readonly clock: Clock;
  private closed = false;
  private labCounter = 0;

  constructor(
    private readonly log: EventLog,
    private readonly options: StudioServiceOptions & { cwd: string; dbPath: string },
  ) {
    this.views = new RunViews(log, () => this.clock.now());
    const launcher: CliLauncher = { cliPath: path.resolve(options.cwd, options.cliPath), cwd: options.cwd, dbPath: options.dbPath };
    this.clock = options.clock ?? new RealClock();
    this.live = new LivePoll({
      log,
      views: this.views,
      push: (channel, payload) => this.push(channel, payload),
      listening: () => this.listeners.size > 0,
      hasProcess: (runId) => this.processes.has(runId),
      ...(options.pollIntervalMs !== undefined ? { intervalMs: options.pollIntervalMs } : {}),
    });
    this.worker = options.worker === false ? null : new StudioWorker({ launcher, clock: this.clock, ...(options.workerPollMs !== undefined ? { pollMs: options.workerPollMs } : {}) });
    this.processes = new RunProcesses({
      launcher,
      views: this.views,
      clock: this.clock,
      worker: this.worker,
      started: (runId) => this.live.watch(runId),
      exited: async (runId, pid, code, signal) => {
        if (this.closed) return;
        // Read what the process wrote before saying it is gone, so the renderer sees the final events first.
        await this.live.pollRun(runId).catch(() => undefined);
        this.push('process.exited', { runId, pid, signal, code });
      },
    });
    // The lab's processes name a host of their own in their owner strings: the studio's worker
    // (which takes over dead owners of its own host at once) leaves a crashed lab run to the lab
    // and takes it over only if its lease expires — the studio died mid-lab.
    const labEnv = { REQON_HOST_ID: LAB_HOST };
    this.sharing = new RunSharing({ log, launcher, textDir: forkTextDir(options.dbPath, options.cwd), spawn: (args) => this.refusedOrUnreachable(this.processes.spawnCommand(args)) });
    this.lab = new CrashLab({
      labHost: LAB_HOST,
      scheduler: this.worker !== null,
      holdTimer: (runId, untilMs) => this.holdTimer(runId, untilMs),
      spawnRun: (run) => this.processes.spawnRun(run, labEnv),
      spawnResume: (runId, crashAt) => this.processes.spawnResume(runId, crashAt === undefined ? {} : { crashAt }, labEnv),
      views: this.views,
      clock: this.clock,
      verify: (runId) => verifyInStudio(this.log, runId),
      stopRun: (runId, why) => this.stopLabRun(runId, why),
      changed: (status) => this.push('crashlab.changed', status),
      // Not replayed engine state: a per-session label, so node:crypto directly is fine here.
      newId: () => `lab-${++this.labCounter}-${crypto.randomBytes(4).toString('hex')}`,
    });
  }

  start(): void {
    this.live.start();
    this.worker?.start();
  }

  async handle<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']> {
    if (this.closed) throw new StudioError('unavailable', 'the studio service is closed');
    if (typeof channel !== 'string' || !isRequestChannel(channel)) {
      throw new StudioError('bad-request', `unknown channel "${String(channel)}"`);
    }
    const fields = asFields(channel, req);
    return (await this.dispatch(channel, fields)) as Requests[C]['res'];
  }

  private async dispatch(channel: RequestChannel, req: Fields): Promise<Requests[RequestChannel]['res']> {
    switch (channel) {
      case 'runs.list':
        return this.listRuns(runsListQuery(channel, req));
      // A run's page asks for these first: opening starts its state fold in the background.
      case 'run.get':
        return (await this.views.open(str(channel, req, 'runId'))).summaryData();
      case 'run.events': {
        const view = await this.views.get(str(channel, req, 'runId'));
        const limit = Math.min(optInt(channel, req, 'limit', 1) ?? 10_000, 50_000);
        return view.slice(optInt(channel, req, 'fromSeq', 0) ?? 1, limit, this.options.eventPageBytes ?? EVENT_PAGE_BYTES);
      }
      case 'run.eventSearch': {
        const query = eventSearchQuery(channel, req);
        const view = await this.views.get(str(channel, req, 'runId'));
        return searchEvents(view, view.all(), query);
      }
      case 'run.timeline':
        return (await this.views.open(str(channel, req, 'runId'))).timelineData();
      case 'run.timelineWindow': {
        const query = timelineWindowQuery(channel, req);
        return (await this.views.open(str(channel, req, 'runId'))).timelineWindow(query);
      }
      case 'run.stateAt': {
        const view = await this.views.get(str(channel, req, 'runId'));
        return sliceState(view.cache.stateAt(Math.min(int(channel, req, 'seq'), view.lastSeq)), valueWindows(channel, req));
      }
      case 'run.stateDiff': {
        const view = await this.views.get(str(channel, req, 'runId'));
        const from = Math.min(int(channel, req, 'fromSeq'), view.lastSeq);
        const to = Math.min(int(channel, req, 'toSeq'), view.lastSeq);
        return diffStates(view.cache.stateAt(from), view.cache.stateAt(to));
      }
      case 'run.source': {
        const { record } = await this.views.get(str(channel, req, 'runId'));
        const source: MissionSource = {
          entry: record.missionFiles.entry,
          files: record.missionFiles.files.map((f) => ({ ...f })),
          sources: { ...record.options.sources },
          declaredSources: declaredSources(record.missionFiles),
        };
        return source;
      }
      case 'run.verify': {
        const runId = str(channel, req, 'runId');
        const missionText = optStr(channel, req, 'missionText');
        // A folder mission's other files, edited: by their recorded paths.
        const files = optStringMap(channel, req, 'files');
        // A blank edit is no mission: verifying it as the recorded one gave a false ✓.
        if (missionText !== undefined && missionText.trim() === '') {
          throw new StudioError('bad-request', `${channel}: "missionText" is empty for run "${runId}": send the edited mission's text, or leave "missionText" out to verify the recorded mission`);
        }
        for (const [file, text] of Object.entries(files)) {
          if (text.trim() === '') throw new StudioError('bad-request', `${channel}: "files.${file}" is empty for run "${runId}": send the edited file's text, or leave it out to keep it as recorded`);
        }
        const view = await this.views.get(runId);
        const edited = missionText !== undefined || Object.keys(files).length > 0;
        return verifyInStudio(this.log, runId, edited ? { recorded: view.record.missionFiles, ...(missionText !== undefined ? { missionText } : {}), files } : undefined);
      }
      case 'run.start': {
        const run = this.runRequest(channel, req, optStr(channel, req, 'crashAt'));
        checkRunArgs(channel, run);
        const proc = await this.refusedOrUnreachable(this.processes.spawnRun(run));
        return { runId: proc.runId };
      }
      case 'run.fork':
        return this.sharing.fork(channel, req);
      case 'run.export':
        return this.sharing.export(channel, req);
      case 'run.import':
        return this.sharing.import(channel, req);
      case 'run.resume':
        return this.processes.resume(str(channel, req, 'runId'), req['payload']);
      case 'run.crash': {
        const crashAt = optStr(channel, req, 'crashAt');
        checkCrashAt(channel, crashAt);
        return this.processes.crash(str(channel, req, 'runId'), crashAt);
      }
      case 'run.watch': {
        const view = await this.views.get(str(channel, req, 'runId'));
        // The caller has every event up to lastSeq from this answer; pushes carry on from there.
        this.live.watch(view.record.runId, view.lastSeq);
        return { runId: view.record.runId, lastSeq: view.lastSeq };
      }
      case 'crash.points':
        return (await this.views.get(str(channel, req, 'runId'))).crashPoints();
      case 'crashlab.start': {
        const crashAt = str(channel, req, 'crashAt');
        checkCrashAt(channel, crashAt);
        const { run, upstreams, startedFrom } = await this.labRunRequest(channel, req);
        return this.lab.start({ mode: 'single', run, upstreams, crashAt, maxCrashes: 1, ...(startedFrom ? { startedFrom } : {}) });
      }
      case 'crashlab.chaos': {
        const { run, upstreams, startedFrom } = await this.labRunRequest(channel, req);
        return this.lab.start({ mode: 'chaos', run, upstreams, crashAt: 'random', maxCrashes: optInt(channel, req, 'maxCrashes', 1) ?? 8, ...(startedFrom ? { startedFrom } : {}) });
      }
      case 'crashlab.verdict':
        return this.lab.status(str(channel, req, 'labId'));
      case 'crashlab.ofRun':
        return this.lab.ofRun(str(channel, req, 'runId'));
      case 'studio.info':
        return this.info();
      default: {
        const never: never = channel;
        throw new StudioError('bad-request', `unknown channel "${String(never)}"`);
      }
    }
  }

  subscribe(listener: PushListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  labSettled(labId: string): Promise<Requests['crashlab.verdict']['res']> {
    return this.lab.settled(labId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.live.stop();
    this.listeners.clear();
    // The worker lets each of its runs finish the current step and releases it: the next worker
    // (this studio's next start, or `reqon worker`) takes them over. Runs started from the studio
    // are independent processes and outlive the window on purpose.
    await this.worker?.stop();
    await this.log.close();
  }

  /** A page of the runs table: the log filters, pages and counts; each summary comes from the log's counts (RunViews.summary). */
  private async listRuns(query: ReturnType<typeof runsListQuery>): Promise<RunsPage> {
    const { limit: _limit, offset: _offset, oldestFirst: _oldest, ...filter } = query;
    const records = await this.log.listRuns(query);
    const runs: RunSummary[] = [];
    for (const record of records) runs.push(await this.views.summary(record));
    // A page short of its limit is the end of the list: its total needs no second scan (a text filter scans every run).
    const ended = records.length < query.limit && (records.length > 0 || query.offset === 0);
    return { runs, total: ended ? query.offset + records.length : await this.log.countRuns(filter) };
  }

  private info(): StudioInfo {
    return {
      // What the studio shows of its log: a PostgreSQL URL's password is never sent to the page.
      dbPath: isPostgresUrl(this.options.dbPath) ? redactPgUrl(this.options.dbPath) : this.options.dbPath,
      cwd: this.options.cwd,
      demoApiUrl: this.options.demoApiUrl ?? null,
      demoMissionPath: this.options.demoMissionPath ?? null,
      verifyAvailable: true,
    };
  }

  /** The mission file for a start request: its text, or a path inside the studio's mission roots. */
  private runRequest(channel: string, req: Fields, crashAt: string | undefined, recorded?: MissionFiles): RunArgs {
    const { cwd, dbPath, demoMissionPath, missionRoots } = this.options;
    const given = { missionPath: optStr(channel, req, 'missionPath'), missionText: optStr(channel, req, 'missionText') };
    const textDir = forkTextDir(dbPath, cwd);
    // Neither given, with a run to start again: that run's mission as it recorded it.
    const file =
      given.missionPath === undefined && given.missionText === undefined && recorded !== undefined
        ? saveMissionFiles(channel, recorded, textDir)
        : missionFileFor(channel, given, { roots: missionRoots ?? [cwd, ...(demoMissionPath === undefined ? [] : [path.dirname(demoMissionPath)])], cwd, textDir });
    return { missionPath: file, sources: optStringMap(channel, req, 'sources'), env: optStringMap(channel, req, 'env'), crashAt };
  }

  /**
   * A lab's runs: with a `referenceRunId`, they inherit that run's `--source`/`--env` options (the
   * request's own win); each source's real base URL is what the lab's proxy forwards to.
   */
  private async labRunRequest(channel: string, req: Fields): Promise<{ run: RunArgs; upstreams: Record<string, string>; startedFrom?: string }> {
    const referenceRunId = optStr(channel, req, 'referenceRunId');
    const reference = referenceRunId === undefined ? undefined : await this.log.getRun(referenceRunId);
    if (referenceRunId !== undefined && !reference) throw new StudioError('not-found', `${channel}: no run "${referenceRunId}"`);
    const run = this.runRequest(channel, req, undefined, reference?.missionFiles);
    if (reference) {
      // A run a lab made went through that lab's proxy, gone now: its API is what the proxy forwarded to.
      const inherited = Object.fromEntries(Object.entries(reference.options.sources).map(([name, url]) => [name, AnswerProxy.upstreamBehind(url) ?? url]));
      run.sources = { ...inherited, ...run.sources };
      run.env = { ...reference.options.env, ...run.env };
    }
    const files = checkRunArgs(channel, run);
    const upstreams = labUpstreams(files, run.sources ?? {});
    return { run, upstreams, ...(referenceRunId !== undefined ? { startedFrom: referenceRunId } : {}) };
  }

  /**
   * A lease on a suspended run of the lab, so the worker (which wakes only timers nobody holds)
   * leaves its timer to the lab; the compare-and-set of the run's next resume clears it. Not held
   * (false) when the run is no longer suspended or another process holds it.
   */
  /** CrashLabDeps.stopRun: the run's end, `run.failed` with `why`, committed under a lease taken from its dead owner. */
  private async stopLabRun(runId: string, why: string): Promise<boolean> {
    const owner = `${LAB_HOST}:${process.pid}:labstop`;
    let got = await this.log.acquire(runId, owner, this.clock.now(), STOP_LEASE_MS);
    if (!('epoch' in got) && (ownerIsDead(got.heldBy) || ownerGoneUnder(got.heldBy, LAB_HOST))) got = await this.log.acquire(runId, owner, this.clock.now(), STOP_LEASE_MS, { takeOverFrom: got.heldBy });
    if (!('epoch' in got)) return false;
    const { run, ...lease } = got;
    if (run.status === 'completed' || run.status === 'failed') {
      await this.log.release(lease);
      return false;
    }
    const failed = { type: 'run.failed' as const, stepPath: '', payload: { error: { code: LAB_STOPPED_CODE, message: why } }, recordedAt: this.clock.now() };
    await this.log.commit(lease, [{ kind: 'event', event: failed }], { durable: true, status: { status: 'failed', wakeAt: null, waitingOn: null, releaseLease: true } });
    await this.live.pollRun(runId).catch(() => undefined);
    return true;
  }

  private async holdTimer(runId: string, untilMs: number): Promise<boolean> {
    const now = this.clock.now();
    const got = await this.log.acquire(runId, `${LAB_HOST}:${process.pid}:labhold`, now, Math.max(1, Math.ceil(untilMs - now)));
    if (!('epoch' in got)) return false;
    if (got.run.status === 'suspended') return true;
    await this.log.release(got);
    return false;
  }

  /**
   * A CLI child that exited 2 before naming its run refused what the request asked (a 400 with
   * its message) — unless it could not open the log: exit 2 says that too, and then this
   * service's own log cannot be reached either, which asking it shows (a 503 'unavailable').
   */
  private async refusedOrUnreachable(spawning: Promise<CliProcess>): Promise<CliProcess> {
    try {
      return await spawning;
    } catch (error) {
      if (error instanceof CliRefusedError) await this.log.listRuns({ limit: 1 });
      throw error;
    }
  }

  /** Loads the newest runs and their timelines while nobody waits; a failure only means no head start. */
  prefetch(count: number): void {
    if (count <= 0) return;
    void (async () => {
      for (const record of await this.log.listRuns({ limit: count })) {
        if (this.closed) return;
        (await this.views.get(record.runId)).timelineIndex();
      }
    })().catch(() => undefined);
  }

  private push<P extends PushChannel>(channel: P, payload: Pushes[P]): void {
    for (const listener of this.listeners) {
      try {
        listener(channel, payload);
      } catch {
        // One broken transport must not stop pushes to the others.
      }
    }
  }
}
