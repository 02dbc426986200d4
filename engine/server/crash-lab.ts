/**
 * The crash lab: kill a run at a named crash point, restart it, and judge the outcome.
 *
 * A lab is a small state machine: reference (a crash-free run of the mission) → armed (a fresh
 * run with `--crash-at POINT:N`; it dies by SIGKILL) → resuming (`resume` until the run completes
 * or fails, waiting out timers) → verifying → done | failed. Both runs talk to the API through the
 * lab's answer proxy (crash-lab-proxy.ts): the reference run's answers are recorded and the armed
 * run is served the same ones, so the verdict holds for an API whose answers change between calls,
 * and the proxy counts every write per Idempotency-Key. Chaos mode arms a sequence of points the
 * reference run reached (its crash-point passes, in the order it passed them), one per process.
 *
 * The verdict lists each check it made — run completed, stores equal to the reference, every
 * write applied once, no request the reference did not make, the log replays to itself — and a
 * check it could not make is "not checked", never passed. A lab in which no crash happened is
 * "not tested".
 */
import { CRASH_POINT_FIRED } from '../journal/crash-points.js';
import type { Clock } from '../env/env.js';
import type { StoredEvent } from '../log/events.js';
import { CrashPointsHandler } from '../inspect/crash-points.js';
import type { CrashLabCheck, CrashLabStatus, CrashLabVerdict, RunStatus, StoreSnapshot, VerifyReport } from '../protocol/protocol.js';
import { fullyVerified, unfinished } from '../executor/verify-report.js';
import { diffStoreContents } from '../inspect/state-diff.js';
import { ownerGoneUnder, parseOwner } from '../executor/owner.js';
import { outcomeOf, type CliProcess, type ExitInfo, type RunArgs } from './cli-process.js';
import { AnswerProxy, type ProxyReport } from './crash-lab-proxy.js';
import { RunSpecifics, withoutRunSpecifics } from './lab-inputs.js';
import type { RunViews } from './run-views.js';
import { StudioError } from './studio-error.js';

export interface CrashLabDeps {
  /** The host id the lab's processes run under (REQON_HOST_ID): their owners name it. */
  labHost: string;
  spawnRun(run: RunArgs): Promise<CliProcess>;
  spawnResume(runId: string, crashAt?: string): Promise<CliProcess>;
  views: RunViews;
  clock: Clock;
  /** A scheduler (the studio's worker) wakes due timers: the lab then leaves timers to it and follows. */
  scheduler: boolean;
  /**
   * Keeps the scheduler from waking a suspended run's timer until `untilMs` (a lease on the run,
   * which the compare-and-set of the run's next resume clears); false when the run is no longer
   * suspended or another process holds it. Without it, the scheduler wakes every timer.
   */
  holdTimer?(runId: string, untilMs: number): Promise<boolean>;
  /** Replays a run against its own log without effects (engine/executor/verify.ts). */
  verify(runId: string): Promise<VerifyReport>;
  /**
   * Ends a run of a lab that gave up, unless it has ended or a live process holds it: failed, with
   * `why`. Its sources are the lab's proxy, closed once the lab ends, so a process that carried it
   * on (the worker taking over its dead owner, waking its timer) would only make a run of junk
   * failures against a closed port. True when it was ended here.
   */
  stopRun?(runId: string, why: string): Promise<boolean>;
  changed(status: CrashLabStatus): void;
  /** Lab ids need only be unique in this studio session. */
  newId(): string;
  /** How long a run another process just resumed is left to it (HANDOVER_GRACE_MS unless a test shortens it). */
  handoverGraceMs?: number;
  /** Chaos picks; Math.random unless a test fixes it. */
  random?: () => number;
}

export interface LabPlan {
  mode: 'single' | 'chaos';
  /** The mission and its `--source`/`--env`; every source must resolve to a base URL (`upstreams`). */
  run: RunArgs;
  /** Source name → the real base URL the proxy forwards the reference run to. */
  upstreams: Record<string, string>;
  /** `POINT[:N]` in single mode; ignored in chaos mode. */
  crashAt: string;
  maxCrashes: number;
  /** The run the lab was started from (CrashLabStatus.startedFrom). */
  startedFrom?: string;
}

/** Resumes, beyond one for each armed crash, after which a run that still has not finished is given up on. */
const MAX_RESUMES = 25;
/** How often the lab looks at a run another process (the studio's worker) is executing. */
const FOLLOW_MS = 100;
/** How long the lab follows a run it does not drive (past a timer's due instant) before giving up. */
const FOLLOW_LIMIT_MS = 10 * 60_000;
/**
 * How long past its timer's due instant the lab holds an armed run it wakes itself (holdTimer):
 * time for its `resume` process to start; should the studio die meanwhile, the worker wakes the
 * run once the hold has run out.
 */
const TIMER_HOLD_MARGIN_MS = 60_000;
/**
 * How long the lab leaves a run another process has just resumed (a pause or wait it woke, the
 * run `running` with no owner yet) to take its lease: that process carries the run on. Past it,
 * that process is taken to have died between its resume and its lease, and the lab carries it on.
 */
const HANDOVER_GRACE_MS = 10_000;

export class CrashLab {
  private readonly labs = new Map<string, CrashLabStatus>();
  private readonly done = new Map<string, Promise<void>>();

  constructor(private readonly deps: CrashLabDeps) {}

  status(labId: string): CrashLabStatus {
    const lab = this.labs.get(labId);
    if (lab === undefined) throw new StudioError('not-found', `no crash lab "${labId}"; start one with crashlab.start`);
    return structuredClone(lab);
  }

  /** The newest lab started from `runId` (labs are kept in the order they started), or null. */
  ofRun(runId: string): CrashLabStatus | null {
    const labs = [...this.labs.values()].filter((lab) => lab.startedFrom === runId);
    const newest = labs[labs.length - 1];
    return newest === undefined ? null : structuredClone(newest);
  }

  /** Resolves when the lab reached 'done' or 'failed' (tests and the CLI wait on it). */
  async settled(labId: string): Promise<CrashLabStatus> {
    await this.done.get(labId);
    return this.status(labId);
  }

  start(plan: LabPlan): CrashLabStatus {
    const lab: CrashLabStatus = {
      labId: this.deps.newId(),
      ...(plan.startedFrom !== undefined ? { startedFrom: plan.startedFrom } : {}),
      mode: plan.mode,
      phase: 'reference',
      runId: null,
      referenceRunId: null,
      crashAt: plan.mode === 'single' ? plan.crashAt : null,
      picks: plan.mode === 'single' ? [plan.crashAt] : [],
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
    // Bodies are compared with each run's now()/random() values taken out: the proxy reads its log.
    const proxy = await AnswerProxy.start(plan.upstreams, async (runId) => (await this.deps.views.getAll(runId)).all());
    try {
      await this.runLab(lab, plan, proxy);
    } catch (e) {
      throw await this.stopLabRuns(lab, e);
    } finally {
      await proxy.close();
    }
  }

  /** The lab gave up with `error`: its runs that have not ended are stopped, and its message says so. */
  private async stopLabRuns(lab: CrashLabStatus, error: unknown): Promise<unknown> {
    const stop = this.deps.stopRun;
    if (!stop || !(error instanceof Error)) return error;
    const why = `the crash lab gave up on it (${error.message.replace(/\.$/, '')}); stopped so that nothing carries it on through the lab's proxy, closed with the lab`;
    const stopped: string[] = [];
    for (const runId of [lab.referenceRunId, lab.runId]) {
      if (runId !== null && (await stop(runId, why).catch(() => false))) stopped.push(runId);
    }
    if (stopped.length > 0) error.message += `. The lab stopped ${stopped.map((id) => `run ${id}`).join(' and ')} (failed), since its API was the lab's proxy`;
    return error;
  }

  private async runLab(lab: CrashLabStatus, plan: LabPlan, proxy: AnswerProxy): Promise<void> {
    const sources = { ...plan.run.sources, ...proxy.sources('reference') };
    this.emit(lab);
    const reference = await this.deps.spawnRun({ ...plan.run, sources, crashAt: undefined });
    proxy.recording(reference.runId);
    lab.referenceRunId = reference.runId;
    this.emit(lab);
    const { status: referenceStatus } = await this.finish(reference.runId, await reference.exited, reference, null);
    if (referenceStatus !== 'completed') {
      throw new StudioError('conflict', `the crash-free reference run ${reference.runId} ended "${referenceStatus}", so there is nothing to compare with; fix the mission or its API first`);
    }
    const referenceView = await this.deps.views.getAll(reference.runId);
    if (plan.mode === 'chaos') {
      lab.picks = pickCrashes(referenceView.cache.all(), plan.maxCrashes, this.deps.random ?? Math.random);
      if (lab.picks.length === 0) throw new StudioError('conflict', `the reference run ${reference.runId} reached no crash point: there is nothing to crash`);
    }

    lab.phase = 'armed';
    proxy.replay();
    const picks = [...lab.picks];
    const first = picks.shift()!;
    // Through URLs of its own: it must not start from the checkpoints the reference advanced.
    const armed = await this.deps.spawnRun({ ...plan.run, sources: { ...plan.run.sources, ...proxy.sources('armed') }, crashAt: first });
    proxy.replaying(armed.runId);
    lab.runId = armed.runId;
    this.emit(lab);
    const exit = await this.record(lab, armed, first);

    lab.phase = 'resuming';
    this.emit(lab);
    const { status: finalStatus, untested } = await this.finish(armed.runId, exit, armed, lab, picks, proxy, first);

    lab.phase = 'verifying';
    this.emit(lab);
    lab.verdict = await this.verdict(armed.runId, reference.runId, finalStatus, lab, proxy, untested);
    lab.phase = 'done';
    this.emit(lab);
  }

  private async record(lab: CrashLabStatus, proc: CliProcess, crashAt: string | null): Promise<ExitInfo> {
    const exit = await proc.exited;
    const view = await this.deps.views.getAll(proc.runId);
    lab.processes.push({
      pid: proc.pid,
      command: proc.args[0] === 'resume' ? 'resume' : 'run',
      crashAt,
      signal: exit.signal,
      code: exit.code,
      // Killed by its own point, not by a "Kill process" of the same run meanwhile (helper 78: a ✓).
      fired: crashAt !== null && exit.signal === 'SIGKILL' && proc.output().includes(CRASH_POINT_FIRED),
      lastSeq: view.lastSeq,
    });
    this.emit(lab);
    return exit;
  }

  /**
   * Takes a run from its last exit to an end, judged by the log rather than exit codes: waits out
   * timers, resumes pauses and crashes (armed with the next pick), and follows the run while
   * another process — the studio's worker, which takes over dead owners too — is executing it.
   *
   * A crash point stays armed until it fires: a process armed with `armedWith` that suspends the
   * run (a pause, a timer, a wait) before reaching it passes it on to the resume that carries the
   * run past its suspension, as the reference run was carried past it. With a scheduler, such a
   * timer is held (holdTimer) so the studio's worker does not wake it unarmed, and the lab resumes
   * it once due. Should another process carry the run on all the same (the worker woke the timer
   * before it could be held), `untested` says so.
   */
  private async finish(
    runId: string,
    firstExit: ExitInfo,
    firstProc: CliProcess,
    lab: CrashLabStatus | null,
    picks: string[] = [],
    proxy?: AnswerProxy,
    armedWith?: string,
  ): Promise<{ status: RunStatus; untested?: string }> {
    let exit: ExitInfo | null = firstExit;
    let proc = firstProc;
    let followingSince: number | null = null;
    // The crash point armed on a process that has not fired it yet; what the run waited on when such a process suspended it.
    let pending = armedWith;
    let suspendedOn: string | null = null;
    let carriedOnBy: string | null = null;
    // The run's last seq when the lab's last process exited, and since when a resume written after it waits for its resumer's lease.
    let seqAtExit = 0;
    let handoverSince: number | null = null;
    const follow = async (what: string) => {
      followingSince ??= this.deps.clock.now();
      if (this.deps.clock.now() - followingSince > FOLLOW_LIMIT_MS) {
        throw new StudioError('conflict', `run ${runId}: ${what} for ${FOLLOW_LIMIT_MS / 60_000} minutes without an end; look at its timeline`);
      }
      await this.deps.clock.sleep(FOLLOW_MS);
      exit = null;
    };
    // Each armed crash is one resume of its own, beyond the resumes the run's pauses ask for.
    const allowedResumes = MAX_RESUMES + picks.length;
    for (let resumes = 0; ; ) {
      if (exit !== null) {
        const outcome = outcomeOf(exit);
        if (outcome === 'usage-error' || outcome === 'exited' || outcome === 'interrupted') {
          throw new StudioError('conflict', `run ${runId}: the CLI ${outcome === 'usage-error' ? 'rejected the request' : `exited with code ${exit.code}`}: ${proc.output().trim().slice(-600)}`);
        }
        if (outcome === 'crashed') {
          pending = undefined;
          suspendedOn = null;
          if (proxy) await proxy.rewind((await this.deps.views.getAll(runId)).cache.all());
        }
      }
      const view = await this.deps.views.getAll(runId);
      const { status, owner, wakeAt, waitingOn } = view.record;
      if (exit !== null) seqAtExit = view.lastSeq;
      if (exit !== null && outcomeOf(exit) === 'suspended' && pending !== undefined) {
        if (status === 'suspended' && waitingOn !== null) suspendedOn = `${waitingOn}${wakeAt !== null ? `, due ${new Date(wakeAt).toISOString()}` : ''}`;
      }
      if (status === 'completed' || status === 'failed') {
        // Who else carried it on is the log's to say as well: a run woken and finished between two looks was never seen running.
        const elsewhere = pending !== undefined ? this.resumedElsewhere(view.all()) : null;
        carriedOnBy ??= elsewhere?.owner ?? null;
        suspendedOn ??= elsewhere?.suspended ?? null;
        if (pending === undefined || carriedOnBy === null) return { status };
        return {
          status,
          untested: `${suspendedOn !== null ? `the run suspended (waiting on ${suspendedOn}) before reaching ${pending}, and` : `before the run reached ${pending},`} ` +
            `another process (${carriedOnBy}) carried it on without the crash point armed`,
        };
      }
      if (status === 'running' && owner !== null && this.ownerAlive(owner)) {
        // Someone else executes it (the worker woke its timer, or took it over when the lab's lease expired): follow it in the log.
        if (pending !== undefined) carriedOnBy ??= owner;
        await follow('another process executed it');
        continue;
      }
      if (status === 'running' && owner === null && view.lastSeq > seqAtExit) {
        // Another process (the worker waking a timer) resumed the run since the lab's last process
        // exited and is about to take its lease: resuming it here too would only race that process.
        handoverSince ??= this.deps.clock.now();
        if (this.deps.clock.now() - handoverSince < (this.deps.handoverGraceMs ?? HANDOVER_GRACE_MS)) {
          await follow('another process resumed it');
          continue;
        }
      }
      handoverSince = null;
      if (status === 'suspended' && wakeAt !== null && wakeAt - this.deps.clock.now() > FOLLOW_LIMIT_MS) {
        // A timer hours away: following or holding it would leave the lab in its phase, silent,
        // until the follow limit said "not woken" of a timer not yet due. Said at once instead.
        const minutes = Math.round((wakeAt - this.deps.clock.now()) / 60_000);
        throw new StudioError(
          'conflict',
          `run ${runId} suspended on a timer due ${new Date(wakeAt).toISOString()} (in about ${minutes} minutes): the crash lab carries a run past timers due within ${FOLLOW_LIMIT_MS / 60_000} minutes only. ` +
            `Shorten the wait for the lab (a duration from env() lets one mission do both), or crash it from the CLI (reqon run --crash-at …) and resume it when it is due`,
        );
      }
      let held = false;
      if (status === 'suspended' && wakeAt !== null && this.deps.scheduler) {
        // A crash point still to fire: the lab wakes this timer itself, armed, and holds it so the worker does not wake it unarmed.
        held = pending !== undefined && this.deps.holdTimer !== undefined && (await this.deps.holdTimer(runId, wakeAt + TIMER_HOLD_MARGIN_MS));
        if (!held) {
          // One scheduler: the worker wakes due timers, the lab does not race it.
          await follow(`its timer (due ${new Date(wakeAt).toISOString()}) was not woken`);
          continue;
        }
      }
      followingSince = null;
      if (resumes >= allowedResumes) {
        throw new StudioError('conflict', `run ${runId} did not finish after ${allowedResumes} resumes; look at its timeline`);
      }
      if (status === 'suspended' && wakeAt !== null && (held || !this.deps.scheduler)) await this.deps.clock.sleep(Math.max(0, wakeAt - this.deps.clock.now()) + 20);
      const crashAt = pending ?? (status === 'running' ? picks.shift() : undefined);
      pending = crashAt;
      proc = await this.deps.spawnResume(runId, crashAt);
      resumes += 1;
      exit = lab === null ? await proc.exited : await this.record(lab, proc, crashAt ?? null);
    }
  }

  /**
   * The last resume of a run by a process that was not one of the lab's (the studio's worker): its
   * owner, and the suspension it carried the run on from as the log tells it. Null when none.
   */
  private resumedElsewhere(events: readonly StoredEvent[]): { owner: string; suspended: string | null } | null {
    let found: { owner: string; suspended: string | null } | null = null;
    let suspended: string | null = null;
    for (const event of events) {
      if (event.type === 'run.suspended') {
        const { reason, dueAt } = event.payload;
        suspended = `a ${reason}${dueAt !== undefined ? ` due ${new Date(dueAt).toISOString()}` : ''}`;
      } else if (event.type === 'run.resumed') {
        const parsed = parseOwner(event.payload.owner);
        if (parsed !== null && parsed.host !== this.deps.labHost) found = { owner: event.payload.owner, suspended };
      }
    }
    return found;
  }

  /** Whether a run's owner still executes it: the lab's own processes are checked by pid. */
  private ownerAlive(owner: string): boolean {
    return !ownerGoneUnder(owner, this.deps.labHost);
  }

  private async verdict(runId: string, referenceRunId: string, finalStatus: RunStatus, lab: CrashLabStatus, proxy: AnswerProxy, untested?: string): Promise<CrashLabVerdict> {
    const run = await this.deps.views.getAll(runId);
    const reference = await this.deps.views.getAll(referenceRunId);
    const referenceSpecifics = new RunSpecifics(referenceRunId, reference.cache.all());
    // The armed run was served the reference's answers: what the API echoed of the reference's is its too.
    const armedSpecifics = [new RunSpecifics(runId, run.cache.all()), referenceSpecifics];
    const stores = comparableStores(run.cache.stateAt(run.lastSeq).stores, armedSpecifics);
    const referenceStores = comparableStores(reference.cache.stateAt(reference.lastSeq).stores, [referenceSpecifics]);
    const verify = await this.deps.verify(runId).then(
      (r) => r,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    return judgeLab({
      referenceRunId,
      finalStatus,
      failures: run.summaryFold().failures,
      referenceFailures: reference.summaryFold().failures,
      crashes: lab.processes.filter((p) => p.signal === 'SIGKILL').length,
      picks: lab.picks,
      fired: lab.processes.filter((p) => p.fired).map((p) => p.crashAt!),
      storeDiff: diffStoreContents(referenceStores, stores),
      proxy: proxy.report(run.all()),
      verify,
      startDiffs: readsDiffer(reference.all(), [referenceSpecifics], run.all(), armedSpecifics),
      elsewhere: run.cache.all().filter((e) => e.type === 'http.request' && !proxy.carried(e.payload.request.url)).length,
      ...(untested !== undefined ? { untested } : {}),
    });
  }
}

/** What a lab observed, gathered from the two runs' logs, the proxy and a verify of the armed run. */
export interface LabObservations {
  referenceRunId: string;
  finalStatus: RunStatus;
  /** Steps the armed run, and the reference run, failed and went on after (a loop's `onError continue`). */
  failures: number;
  referenceFailures: number;
  /** Processes of the armed run killed by the lab. */
  crashes: number;
  picks: readonly string[];
  /** The picks that killed a process (each armed crash point that fired). */
  fired: readonly string[];
  storeDiff: CrashLabVerdict['storeDiff'];
  proxy: ProxyReport;
  /** The verify of the armed run, or why it could not be made. */
  verify: VerifyReport | string;
  /** Where the armed run read other persistent store state than the reference (readsDiffer). */
  startDiffs: readonly string[];
  /** Requests of the armed run that did not go through the proxy. */
  elsewhere: number;
  /** Why an armed crash point never fired, when it is not that the run never reached it. */
  untested?: string;
}

/**
 * The lab's verdict from what it observed: ✓ only when a crash happened and every check was made
 * and held; a check that could not be made is "not checked", never a pass.
 */
export function judgeLab(o: LabObservations): CrashLabVerdict {
  const { referenceRunId, finalStatus, crashes, storeDiff, proxy: report, verify, startDiffs, elsewhere } = o;
  const duplicateEffects = report.keys.filter((k) => k.effects > 1).length;
  // Why the armed run may not have been served what the reference was: then its requests are not
  // known to have got the answers they were owed, and a store difference may be the set-up's.
  const unservedReasons = [
    ...(report.bodyUnmatched.length > 0
      ? [`${report.bodyUnmatched.length} request(s) matched the reference's by method, URL and headers but none of its bodies (a value computed from now() or random() differs between the runs), so whether each got the answer it was owed is unknown: ${report.bodyUnmatched.slice(0, 3).join(', ')}`]
      : []),
    ...(report.offProxy.length > 0
      ? [`${report.offProxy.length} read(s) were redirected to another origin, which the runs reached past the lab's proxy, so what each was answered there was not held equal: ${report.offProxy.slice(0, 3).join(', ')}`]
      : []),
    ...(report.abandonedServed.length > 0
      ? [`${report.abandonedServed.length} request(s) were served an answer the crash-free run gave up on (its timeout) before it came, so it never saw it: ${report.abandonedServed.slice(0, 3).join(', ')}`]
      : []),
  ];
  const servedOtherData = report.offProxy.length > 0 || report.abandonedServed.length > 0;
  const checks: CrashLabCheck[] = [
    {
      name: 'completed',
      // A run that went on after failed steps ends as the crash-free run did, or it is no pass.
      ok: finalStatus === 'completed' && o.failures === o.referenceFailures,
      label:
        finalStatus !== 'completed' || o.failures === 0
          ? `the run ended "${finalStatus}"`
          : `the run ended "completed with ${o.failures} failure(s)"${o.failures === o.referenceFailures ? ', as the crash-free run did' : `, the crash-free run with ${o.referenceFailures}`}`,
    },
    {
      name: 'stores',
      // A difference where the runs were not served the same answers may be the API's, not the crash's.
      ok: storeDiff.length === 0 ? true : servedOtherData ? null : false,
      label: storeDiff.length === 0
        ? `final stores equal the crash-free run ${referenceRunId}${servedOtherData ? '' : ', which was served the same answers'} (run ids, the values now()/random() returned and the ids generateId() derived taken out)`
        : servedOtherData
          ? `not compared: ${storeDiff.length} store difference(s) from the crash-free run ${referenceRunId}, which was not served all the same answers (see requests)`
          : `${storeDiff.length} store difference(s) from the crash-free run ${referenceRunId}`,
    },
    {
      name: 'writes',
      ok: duplicateEffects === 0 && report.lost.length === 0,
      label: `${report.keys.length} write(s) by Idempotency-Key at the lab's proxy: ` +
        `${report.keys.filter((k) => k.effects === 1).length} matched one write of the reference run` +
        (report.lost.length > 0 ? `; ${report.lost.length} write(s) of the reference never made: ${report.lost.slice(0, 3).join(', ')}` : ''),
    },
    {
      name: 'requests',
      ok: report.unexpected.length > 0 ? false : unservedReasons.length > 0 ? null : true,
      label: report.unexpected.length > 0
        ? `${report.unexpected.length} request(s) the reference run never made (or a keyless write sent again, or a write sent again under its key with another body): ${report.unexpected.slice(0, 3).join(', ')}`
        : unservedReasons.length > 0
          ? `not checked: ${unservedReasons.join('; ')}`
          : `every request matched one the reference run made, by method, URL, headers and body, identical ones in order (${report.answered} answered from its recording` +
            `${report.matchedByInput.length > 0 ? `; ${report.matchedByInput.length} with a now()/timestamp() value of its own, recorded in its log, where the reference's had one` : ''})`,
    },
    typeof verify === 'string'
      ? { name: 'replay', ok: null, label: `replay of the log not checked: ${verify}` }
      : !verify.ok
        ? { name: 'replay', ok: false, label: `its log does not replay: ${verify.divergence?.explanation ?? 'diverged'}` }
        : fullyVerified(verify)
          ? { name: 'replay', ok: true, label: `its log replays to the same step paths and effect ids (${verify.original.length} events)` }
          : {
              name: 'replay',
              ok: null,
              label: `its log replays without a divergence, but not all of it was checked: ${verify.replayed.length} of ${verify.original.length} events re-derived${verify.unchecked.length > 0 ? `; not checked: ${verify.unchecked.join('; ')}` : ''}${unfinished(verify) ? `; not checked: what the run has yet to do — it is ${verify.runStatus}` : ''}`,
            },
  ];
  // Tables live in the log's database, shared by the two runs (checkpoints are per API URL, and
  // each run reaches the API through a proxy of its own): when the armed run
  // read other store state than the reference did, what they stored, wrote and asked differ for
  // that reason alone, and comparing them would judge the lab's set-up, not the mission.
  if (startDiffs.length > 0) {
    for (const check of checks) {
      // A write applied twice at the proxy is a failure whatever either run read first.
      if (check.name === 'writes' && duplicateEffects > 0) continue;
      if (check.name === 'stores' || check.name === 'writes' || check.name === 'requests') {
        check.ok = null;
        check.label = `not compared (${check.label})`;
      }
    }
    checks.push({
      name: 'same-start',
      ok: null,
      label: `not checked: the armed run did not start from the store state the reference did — ${startDiffs.slice(0, 3).join('; ')}` +
        ` — sql/nosql tables are shared by the runs of one log, so it read what the reference had just written`,
    });
  }
  if (elsewhere > 0) checks.push({ name: 'elsewhere', ok: null, label: `${elsewhere} request(s) went to URLs outside the mission's sources, not through the proxy: not compared` });
  // Chaos mode picks points in the order the crash-free run passed them; an armed run of a
  // concurrent loop may pass them in another order, and a point it passed before it was armed
  // never fires (nor is any pick after it armed). Those crashes were not survived: they never happened.
  const unfired = [...o.picks];
  for (const point of o.fired) {
    const at = unfired.indexOf(point);
    if (at >= 0) unfired.splice(at, 1);
  }
  if (crashes > 0 && unfired.length > 0) {
    checks.push({
      name: 'picks',
      ok: null,
      label: `not tested: ${unfired.length} of the ${o.picks.length} picked crash point(s) never fired (${unfired.slice(0, 5).join(', ')}${unfired.length > 5 ? ', …' : ''}): the armed run passed them before they were armed, or never reached them (a concurrent loop reaches its points in another order than the crash-free run)`,
    });
  }

  const failed = checks.filter((c) => c.ok === false);
  const unchecked = checks.filter((c) => c.ok === null);
  const tested = crashes > 0;
  // Never a ✓ for what was not checked: a check that could not be made leaves it "not fully checked".
  const ok = tested && failed.length === 0 && unchecked.length === 0;
  const passed = checks.filter((c) => c.ok === true).map((c) => c.label).join('; ');
  const explanation = !tested
    ? `not tested: ${o.untested ?? `no crash happened (${o.picks.join(', ') || 'no point'} was never reached by the run)`}`
    : failed.length > 0
      ? `not exactly-once after ${crashes} crash(es): ${failed.map((c) => c.label).join('; ')}`
      : unchecked.length > 0
        ? `not fully checked after ${crashes} crash(es): ${unchecked.map((c) => c.label).join('; ')}; what was checked held: ${passed}`
        : `survived ${crashes} crash(es): ${passed}`;
  return { ok, tested, storesEqual: storeDiff.length === 0, storeDiff, effects: report.keys, duplicateEffects, crashes, finalStatus, checks, explanation };
}

/**
 * Where the armed run read other persistent store state (a sql/nosql/file store, a sync_state
 * checkpoint) than the reference at the same step, each named; run ids and now()/random() values
 * taken out of both. Empty when every such read saw the same. A read only the reference made is
 * not counted: it excuses nothing (the armed run saw no other state), and what the armed run then
 * did differently stays for the other checks to judge.
 */
function readsDiffer(referenceEvents: readonly StoredEvent[], referenceSpecifics: readonly RunSpecifics[], runEvents: readonly StoredEvent[], armedSpecifics: readonly RunSpecifics[]): string[] {
  const reads = (events: readonly StoredEvent[], specifics: readonly RunSpecifics[]): Map<string, unknown> => {
    const out = new Map<string, unknown>();
    const seen = new Map<string, number>();
    for (const event of events) {
      if (event.type !== 'value.recorded' || (event.payload.source !== 'store-read' && event.payload.source !== 'last-sync')) continue;
      const n = (seen.get(event.stepPath) ?? 0) + 1;
      seen.set(event.stepPath, n);
      out.set(`${event.stepPath}#${n}`, withoutRunSpecifics(event.payload.value, specifics));
    }
    return out;
  };
  const before = reads(referenceEvents, referenceSpecifics);
  const after = reads(runEvents, armedSpecifics);
  const out: string[] = [];
  for (const [place, value] of after) {
    const was = before.get(place);
    if (JSON.stringify(was) === JSON.stringify(value)) continue;
    const at = place.replace(/#1$/, '');
    const v = value as { store?: unknown; key?: unknown; keys?: unknown[]; at?: unknown } | unknown[];
    if (Array.isArray(v)) out.push(`a store read at ${at}: ${v.length} record(s), the reference read ${Array.isArray(was) ? was.length : 'none'}`);
    else if (typeof v?.store === 'string') out.push(`store \`${v.store}\` at ${at}: ${v.keys?.length ?? 0} record(s), the reference read ${(was as { keys?: unknown[] } | undefined)?.keys?.length ?? 'none'}`);
    else out.push(`checkpoint "${String((v as { key?: unknown }).key)}" at ${at}: ${JSON.stringify((v as { at?: unknown }).at)}, the reference read ${JSON.stringify((was as { at?: unknown } | undefined)?.at ?? null)}`);
  }
  return out;
}

/**
 * Up to `max` crash points a run of the reference's mission and data reaches, in the order the
 * reference passed them (so each armed process gets past the previous pick before its own), from
 * the run's own crash-point fold (inspect/crash-points.ts, counted like the executor's injector).
 */
export function pickCrashes(events: readonly StoredEvent[], max: number, random: () => number): string[] {
  const fold = new CrashPointsHandler();
  for (const event of events) fold.handleEvent(event);
  const passes = fold.reached();
  const chosen = new Set<number>();
  while (chosen.size < Math.min(max, passes.length)) chosen.add(Math.floor(random() * passes.length));
  return [...chosen].sort((a, b) => a - b).map((i) => passes[i]!);
}

/** What the two runs stored, compared without what legitimately differs between them (lab-inputs.ts). */
export function comparableStores(stores: StoreSnapshot[], specifics: readonly RunSpecifics[]): StoreSnapshot[] {
  // Records whose keys become one once what differs is taken out (`p1-1@<now()>`, written at two
  // instants) stay apart, numbered in order: merged, a record a crash wrote twice would compare
  // equal to the reference's one (helper 110).
  return (withoutRunSpecifics(stores, specifics) as StoreSnapshot[]).map((store) => {
    const seen = new Map<string, number>();
    return {
      ...store,
      records: store.records.map((record) => {
        const n = (seen.get(record.key) ?? 0) + 1;
        seen.set(record.key, n);
        return n === 1 ? record : { ...record, key: `${record.key} (${n})` };
      }),
    };
  });
}
