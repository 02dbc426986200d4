/**
 * The studio service: every protocol channel, independent of the transport that carries it
 * (Electron IPC in the desktop app, HTTP + WebSocket in the browser build).
 *
 * Reads go through the log (engine/log) and the inspector folds (engine/inspect); runs are
 * started, resumed and crashed as CLI child processes (cli-process.ts), never inside this
 * process. Live streaming polls the log: every ~100 ms one run-record read per watched run, and
 * a read of only the new events when its lastSeq moved; about once a second the run list, to
 * notice runs started elsewhere. Pushes announce what changed since the last push for that run
 * (`announced`), whichever read brought it into the views. At start the newest run is read and
 * its timeline folded in the background (`prefetchRuns`), since that is what the renderer opens
 * first. Invariant: handlers hold no business logic of their own beyond argument checks — views
 * come from folds, effects from the CLI — and every failure leaves as a StudioError
 * (studio-error.ts).
 */
import { asLogged, UnloggableValueError } from '../log/loggable.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock, Env, HttpTransport } from '../env/env.js';
import { createRealEnv, RealClock, UndiciTransport } from '../env/real-env.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import { openLog } from '../log/open-log.js';
import { diffStates } from '../inspect/state-diff.js';
import type {
  MissionSource,
  PushChannel,
  Pushes,
  RequestChannel,
  Requests,
  RunSummary,
  StudioInfo,
  VerifyReport,
} from '../protocol/protocol.js';
import { isRequestChannel } from '../protocol/channels.js';
import { outcomeOf, resumeArgs, runArgs, startCli, type CliLauncher, type CliProcess, type RunArgs } from './cli-process.js';
import { CrashLab } from './crash-lab.js';
import { missionFileFor } from './mission-request.js';
import { asFields, int, optInt, optStr, optStringMap, str, type Fields } from './request-fields.js';
import { timelineWindowQuery } from './timeline-window-query.js';
import { RunViews } from './run-views.js';
import { StudioError } from './studio-error.js';

export interface StudioServiceOptions {
  /** SQLite file of the event log. */
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
   * How many of the newest runs to read and fold in the background as soon as the service starts
   * (default 1): the renderer opens the newest run on its Timeline tab, and the browser or window
   * takes longer to start than a 100k-event run takes to load. 0 turns it off.
   */
  prefetchRuns?: number;
  clock?: Clock;
  http?: HttpTransport;
}

export type PushListener = <P extends PushChannel>(channel: P, payload: Pushes[P]) => void;

export interface StudioService {
  handle<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']>;
  subscribe(listener: PushListener): () => void;
  /** Waits for a crash lab to finish (used by `reqon studio --demo` and tests). */
  labSettled(labId: string): Promise<Requests['crashlab.verdict']['res']>;
  close(): Promise<void>;
}

/**
 * engine/executor/verify.ts's `verifyRun`. It takes the edited mission as `missionFiles` and an
 * `env`; `missionText` is passed as well for verifiers that take the text alone.
 */
type Verifier = (log: EventLog, runId: string, opts: { missionText?: string; missionFiles?: MissionFiles; env: Env }) => Promise<VerifyReport>;

/** How long `run.resume` waits for its process before answering 'running'. */
const RESUME_ANSWER_WAIT_MS = 2000;
const LIST_EVERY_TICKS = 10;

export async function createStudioService(options: StudioServiceOptions): Promise<StudioService> {
  const cwd = path.resolve(options.cwd);
  const dbPath = path.resolve(cwd, options.dbPath);
  const log = await openLog(dbPath);
  const service = new Service(log, { ...options, cwd, dbPath });
  service.startPolling();
  service.prefetch(options.prefetchRuns ?? 1);
  return service;
}

class Service implements StudioService {
  private readonly views: RunViews;
  private readonly listeners = new Set<PushListener>();
  private readonly processes = new Map<string, CliProcess>();
  private readonly watched = new Set<string>();
  /**
   * Per run, what the pushes have announced: the last seq sent in 'run.appended' and the stamp
   * (status|updatedAt|lastSeq) last sent in 'runs.changed'. Polls compare against this, not against
   * the view before their own read: a request may have read the new events into the view first.
   */
  private readonly announced = new Map<string, { seq: number; stamp: string | null }>();
  private readonly lab: CrashLab;
  private readonly launcher: CliLauncher;
  private readonly clock: Clock;
  private readonly http: HttpTransport;
  private timer: NodeJS.Timeout | null = null;
  private readonly wakeTimers = new Set<NodeJS.Timeout>();
  private ticking = false;
  private ticks = 0;
  private closed = false;
  private labCounter = 0;
  private verifier: Promise<Verifier | null> | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly options: StudioServiceOptions & { cwd: string; dbPath: string },
  ) {
    this.views = new RunViews(log);
    this.launcher = { cliPath: path.resolve(options.cwd, options.cliPath), cwd: options.cwd, dbPath: options.dbPath };
    this.clock = options.clock ?? new RealClock();
    this.http = options.http ?? new UndiciTransport();
    this.lab = new CrashLab({
      spawnRun: (run) => this.spawnRun(run),
      spawnResume: (runId, crashAt) => this.spawnResume(runId, { crashAt }),
      views: this.views,
      clock: this.clock,
      http: this.http,
      changed: (status) => this.push('crashlab.changed', status),
      // Not replayed engine state: a per-session label, so node:crypto directly is fine here.
      newId: () => `lab-${++this.labCounter}-${crypto.randomBytes(4).toString('hex')}`,
    });
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
        return this.listRuns(optInt(channel, req, 'limit', 1) ?? 200);
      case 'run.get':
        return (await this.views.get(str(channel, req, 'runId'))).summaryData();
      case 'run.events': {
        const view = await this.views.get(str(channel, req, 'runId'));
        const limit = Math.min(optInt(channel, req, 'limit', 1) ?? 10_000, 50_000);
        return view.slice(optInt(channel, req, 'fromSeq', 0) ?? 1, limit);
      }
      case 'run.timeline':
        return (await this.views.get(str(channel, req, 'runId'))).timelineData();
      case 'run.timelineWindow': {
        const query = timelineWindowQuery(channel, req);
        return (await this.views.get(str(channel, req, 'runId'))).timelineWindow(query);
      }
      case 'run.stateAt': {
        const view = await this.views.get(str(channel, req, 'runId'));
        return view.cache.stateAt(Math.min(int(channel, req, 'seq'), view.lastSeq));
      }
      case 'run.stateDiff': {
        const view = await this.views.get(str(channel, req, 'runId'));
        const from = Math.min(int(channel, req, 'fromSeq'), view.lastSeq);
        const to = Math.min(int(channel, req, 'toSeq'), view.lastSeq);
        return diffStates(view.cache.stateAt(from), view.cache.stateAt(to));
      }
      case 'run.source': {
        const view = await this.views.get(str(channel, req, 'runId'));
        const source: MissionSource = { entry: view.record.missionFiles.entry, files: view.record.missionFiles.files.map((f) => ({ ...f })) };
        return source;
      }
      case 'run.verify':
        return this.verify(str(channel, req, 'runId'), optStr(channel, req, 'missionText'));
      case 'run.start': {
        const proc = await this.spawnRun(await this.runRequest(channel, req, optStr(channel, req, 'crashAt')), true);
        return { runId: proc.runId };
      }
      case 'run.resume':
        return this.resume(str(channel, req, 'runId'), req['payload']);
      case 'run.crash':
        return this.crash(str(channel, req, 'runId'), optStr(channel, req, 'crashAt'));
      case 'run.watch': {
        const view = await this.views.get(str(channel, req, 'runId'));
        this.watched.add(view.record.runId);
        // The caller has every event up to lastSeq from this answer; pushes carry on from there.
        if (!this.announced.has(view.record.runId)) this.announced.set(view.record.runId, { seq: view.lastSeq, stamp: null });
        return { runId: view.record.runId, lastSeq: view.lastSeq };
      }
      case 'crash.points':
        return (await this.views.get(str(channel, req, 'runId'))).crashPoints();
      case 'crashlab.start': {
        const crashAt = str(channel, req, 'crashAt');
        return this.lab.start({
          mode: 'single',
          run: await this.labRunRequest(channel, req),
          crashAt,
          referenceRunId: optStr(channel, req, 'referenceRunId'),
          statsUrl: optStr(channel, req, 'statsUrl') ?? this.defaultStatsUrl(),
          maxCrashes: 1,
        });
      }
      case 'crashlab.chaos':
        return this.lab.start({
          mode: 'chaos',
          run: await this.labRunRequest(channel, req),
          crashAt: 'random',
          referenceRunId: optStr(channel, req, 'referenceRunId'),
          statsUrl: optStr(channel, req, 'statsUrl') ?? this.defaultStatsUrl(),
          maxCrashes: optInt(channel, req, 'maxCrashes', 1) ?? 8,
        });
      case 'crashlab.verdict':
        return this.lab.status(str(channel, req, 'labId'));
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
    if (this.timer !== null) clearInterval(this.timer);
    for (const timer of this.wakeTimers) clearTimeout(timer);
    this.listeners.clear();
    // Runs started from the studio are independent processes; they outlive the window on purpose
    // (a durable run is not tied to its viewer). Only stop listening to them.
    await this.log.close();
  }

  // ── queries ────────────────────────────────────────────────────────────────────────────────

  private async listRuns(limit: number): Promise<RunSummary[]> {
    const records = await this.log.listRuns({ limit });
    const out: RunSummary[] = [];
    for (const record of records) out.push((await this.views.get(record.runId)).summaryData());
    return out;
  }

  private async info(): Promise<StudioInfo> {
    return {
      dbPath: this.options.dbPath,
      cwd: this.options.cwd,
      demoApiUrl: this.options.demoApiUrl ?? null,
      demoMissionPath: this.options.demoMissionPath ?? null,
      verifyAvailable: (await this.loadVerifier()) !== null,
    };
  }

  private defaultStatsUrl(): string | undefined {
    return this.options.demoApiUrl === undefined ? undefined : new URL('/__stats', this.options.demoApiUrl).toString();
  }

  private loadVerifier(): Promise<Verifier | null> {
    // The executor's verifier is loaded on demand so the studio works (minus verify) in builds
    // that do not have it yet; a variable specifier keeps the compiler from requiring the file.
    this.verifier ??= (async () => {
      const specifier = '../executor/verify.js';
      try {
        const mod = (await import(specifier)) as { verifyRun?: Verifier };
        return typeof mod.verifyRun === 'function' ? mod.verifyRun : null;
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return null;
        throw e;
      }
    })();
    return this.verifier;
  }

  private async verify(runId: string, missionText: string | undefined): Promise<VerifyReport> {
    const view = await this.views.get(runId);
    const verifyRun = await this.loadVerifier();
    if (verifyRun === null) {
      throw new StudioError('unavailable', 'replay verification is not available in this build (engine/executor/verify.ts is missing)');
    }
    // Verify sends nothing and writes nothing; the env only answers the clock for its bookkeeping.
    const env = createRealEnv({});
    if (missionText === undefined) return verifyRun(this.log, runId, { env });
    // An edited mission replaces the entry file; a folder mission's other files stay as recorded.
    const recorded = view.record.missionFiles;
    const missionFiles: MissionFiles = {
      entry: recorded.entry,
      files: recorded.files.map((f) => (f.path === recorded.entry ? { path: f.path, text: missionText } : f)),
    };
    return verifyRun(this.log, runId, { missionText, missionFiles, env });
  }

  // ── processes ──────────────────────────────────────────────────────────────────────────────

  /** The mission file for a start request: a path (resolved against cwd) or text saved to a file. */
  private async runRequest(channel: string, req: Fields, crashAt: string | undefined): Promise<RunArgs> {
    const { cwd, dbPath, demoMissionPath, missionRoots } = this.options;
    const file = missionFileFor(
      channel,
      { missionPath: optStr(channel, req, 'missionPath'), missionText: optStr(channel, req, 'missionText') },
      {
        roots: missionRoots ?? [cwd, ...(demoMissionPath === undefined ? [] : [path.dirname(demoMissionPath)])],
        cwd,
        textDir: path.join(path.dirname(dbPath), 'studio-missions'),
      },
    );
    return { missionPath: file, sources: optStringMap(channel, req, 'sources'), env: optStringMap(channel, req, 'env'), crashAt };
  }

  /**
   * A lab's run: with a reference run, the armed run inherits its `--source`/`--env` options
   * (the request's own win), so it talks to the same API as the run it is compared with.
   */
  private async labRunRequest(channel: string, req: Fields): Promise<RunArgs> {
    const run = await this.runRequest(channel, req, undefined);
    const referenceRunId = optStr(channel, req, 'referenceRunId');
    const reference = referenceRunId === undefined ? undefined : await this.log.getRun(referenceRunId);
    if (reference) {
      run.sources = { ...reference.options.sources, ...run.sources };
      run.env = { ...reference.options.env, ...run.env };
    }
    return run;
  }

  /** `wake`: resume the run when its timer is due (runs the renderer started; the lab drives its own). */
  private async spawnRun(run: RunArgs, wake = false): Promise<CliProcess> {
    return this.track(await startCli(this.launcher, runArgs(this.launcher, run)), wake);
  }

  private async spawnResume(runId: string, opts: { payload?: unknown; crashAt?: string }, wake = false): Promise<CliProcess> {
    return this.track(await startCli(this.launcher, resumeArgs(this.launcher, runId, opts), runId), wake);
  }

  /**
   * A run this studio started that suspends on a timer is resumed when the timer is due, so a
   * `pause { duration: … }` plays out in front of the user without a separate `reqon worker`.
   * The wait is a plain timer in the studio process: if the studio closes first, the run stays
   * suspended in the log and `reqon worker` (or the next resume) picks it up — nothing is lost.
   */
  private scheduleWake(runId: string): void {
    void this.views.get(runId).then((view) => {
      const { status, wakeAt } = view.record;
      if (status !== 'suspended' || wakeAt === null || this.closed) return;
      const delay = Math.max(0, wakeAt - this.clock.now()) + 25;
      const timer = setTimeout(() => {
        this.wakeTimers.delete(timer);
        if (this.closed || this.processes.has(runId)) return;
        void this.views.get(runId).then(async (now) => {
          if (now.record.status === 'suspended' && now.record.wakeAt === wakeAt) await this.spawnResume(runId, {}, true);
        }).catch(() => undefined);
      }, Math.min(delay, 2 ** 31 - 1));
      timer.unref();
      this.wakeTimers.add(timer);
    }).catch(() => undefined);
  }

  private track(proc: CliProcess, wake: boolean): CliProcess {
    this.processes.set(proc.runId, proc);
    this.watched.add(proc.runId);
    void proc.exited.then(async ({ code, signal }) => {
      if (this.processes.get(proc.runId) === proc) this.processes.delete(proc.runId);
      if (this.closed) return;
      // Read what the process wrote before saying it is gone, so the renderer sees the final events first.
      await this.pollRun(proc.runId).catch(() => undefined);
      this.push('process.exited', { runId: proc.runId, pid: proc.pid, signal, code });
      if (wake && outcomeOf({ code, signal }) === 'suspended') this.scheduleWake(proc.runId);
    });
    return proc;
  }

  private async resume(runId: string, payload: unknown): Promise<{ runId: string; outcome: string }> {
    // A payload the log cannot hold (JSON.parse made 1e400 Infinity) is refused, as the CLI refuses
    // it — never passed on as the `null` its JSON would become.
    try {
      if (payload !== undefined) asLogged(payload, 'the payload');
    } catch (error) {
      if (error instanceof UnloggableValueError) throw new StudioError('bad-request', error.message);
      throw error;
    }
    await this.views.get(runId);
    if (this.processes.has(runId)) {
      throw new StudioError('conflict', `run ${runId} already has a process (pid ${this.processes.get(runId)!.pid}); wait for it to exit`);
    }
    const proc = await this.spawnResume(runId, payload === undefined ? {} : { payload }, true);
    const exit = await Promise.race([proc.exited, this.clock.sleep(RESUME_ANSWER_WAIT_MS).then(() => null)]);
    if (exit === null) return { runId, outcome: 'running' };
    const outcome = outcomeOf(exit);
    if (outcome === 'usage-error') {
      throw new StudioError('conflict', `reqon resume ${runId} refused: ${proc.output().trim().slice(-600)}`);
    }
    return { runId, outcome };
  }

  private async crash(runId: string, crashAt: string | undefined): Promise<{ runId: string }> {
    await this.views.get(runId);
    const running = this.processes.get(runId);
    if (crashAt === undefined) {
      if (running === undefined) {
        throw new StudioError('conflict', `run ${runId} has no process started by this studio to kill; pass "crashAt" to resume it armed instead`);
      }
      running.kill('SIGKILL');
      return { runId };
    }
    if (running !== undefined) {
      throw new StudioError('conflict', `run ${runId} is still executing (pid ${running.pid}); arm a crash point on its next resume`);
    }
    await this.spawnResume(runId, { crashAt }, true);
    return { runId };
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

  // ── live streaming ─────────────────────────────────────────────────────────────────────────

  startPolling(): void {
    const every = this.options.pollIntervalMs ?? 100;
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      if (this.ticks++ % LIST_EVERY_TICKS === 0 && this.listeners.size > 0) await this.pollList();
      for (const runId of [...this.watched]) await this.pollRun(runId);
    } catch {
      // A transient read failure (database busy) is retried on the next tick.
    } finally {
      this.ticking = false;
    }
  }

  private async pollRun(runId: string): Promise<void> {
    const heldBefore = this.views.peek(runId)?.lastSeq ?? 0;
    const view = await this.views.get(runId);
    // Read after the await and updated in the same turn: two polls of one run (the tick's and a
    // process exit's) never announce the same events twice.
    const before = this.announced.get(runId) ?? { seq: heldBefore, stamp: null };
    if (view.lastSeq > before.seq) this.push('run.appended', { runId, events: view.slice(before.seq + 1, view.lastSeq - before.seq) });
    const stamp = stampOf(view.record.status, view.record.updatedAt, view.lastSeq);
    if (stamp !== before.stamp) this.push('runs.changed', view.summaryData());
    this.announced.set(runId, { seq: view.lastSeq, stamp });
    const finished = view.record.status === 'completed' || view.record.status === 'failed';
    if (finished && !this.processes.has(runId)) this.watched.delete(runId);
  }

  private async pollList(): Promise<void> {
    for (const record of await this.log.listRuns({ limit: 100 })) {
      if (this.announced.get(record.runId)?.stamp === stampOf(record.status, record.updatedAt, record.lastSeq)) continue;
      // A run seen for the first time: its history is for requests to read; pushes carry what comes after.
      if (!this.announced.has(record.runId)) this.announced.set(record.runId, { seq: record.lastSeq, stamp: null });
      if (record.status === 'running' || record.status === 'suspended') this.watched.add(record.runId);
      await this.pollRun(record.runId);
    }
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

function stampOf(status: string, updatedAt: number, lastSeq: number): string {
  return `${status}|${updatedAt}|${lastSeq}`;
}
