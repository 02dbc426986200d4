/**
 * Resuming runs. Resume is replay: take the lease, read the log, walk the mission from the top
 * against it; live execution carries on where the log ends.
 *
 * A suspended run is resumed by a compare-and-set on what it waits on *and* the log position it
 * suspended at (`expectWaitingOn`, `lastSeq`): a resumer names the suspension it saw, so a racer
 * for the first pause can never resume a second one the winner reached meanwhile.
 *
 * Resume is idempotent: a run that already completed or failed answers with that end (no payload
 * to deliver); one whose own mission can no longer replay its log is failed once, with the error
 * (execute.ts), never left to be retried for ever.
 */
import { instantText } from '../env/instant-text.js';
import { hash } from 'node:crypto';
import { assertRememberedMission } from './remembered-mission.js';
import { LOG_FORMAT, logFormatOf, summaryPrefix, SYNC_SUPERSEDED_CODE, type EventPayloads, type NewEvent, type StoredEvent } from '../log/events.js';
import type { EventLog, MissionFiles, ResumeDelivery, RunRecord } from '../log/log.js';
import { readRunFailures, type RunFailure } from '../log/run-failures.js';
import { META_EVENT_TYPES, type StreamedRecord } from '../journal/journal.js';
import { canonicalJson } from '../eval/values.js';
import { CommitOutcomeUnknownError, DEFAULT_LEASE_TTL_MS, execute, loadCredentials, RunUnavailableError, type EngineDeps, type RunResult } from './execute.js';
import { MissionInvalidError, missionHash, modelFor, recordedModelOf, withRememberedSpecs } from './mission-cache.js';
import { defaultOwner, ownerIsDead } from './owner.js';
import { checkpointApiOf } from '../steps/http-runtime.js';
import { timerDueBy } from '../steps/pause-step.js';
import { isImported } from './run-bundle.js';
import { assertReplays } from './verify.js';
import { closingEvent } from './closing-event.js';
import { DamagedLogError } from '../journal/journal.js';
import { identitiesOf } from '../journal/fork-identity.js';
import { logUnreachable } from '../log/errors.js';

export interface ResumeOptions {
  /** Replay against an edited mission instead of the one the run started with. */
  missionFiles?: MissionFiles;
  /** For a paused run: the payload that becomes `response` after the pause (or a wait's delivery). */
  payload?: unknown;
  /**
   * The suspension this resumer means (`pause:<id>`, `wait:<path>`), as it read it: a run that
   * waits on something else by now is not resumed, and the caller is told its payload was unused.
   */
  expectWaitingOn?: string;
  by?: 'cli' | 'studio' | 'timer' | 'webhook' | 'api';
  /** A pause resumed by a webhook: the inbox delivery (its payload is `payload`), claimed with the resume. */
  claim?: { path: string; eventId: string };
  /**
   * A payload to a `wait`: the id of the event it is (`reqon resume --event-id`). Given, an equal
   * payload the wait took under another id is a new event (two equal votes), and the same id again
   * the same event; not given, the same content the wait took within a day is (refuseRepeatedPayload).
   */
  eventId?: string;
  /**
   * Wake a suspended run so that one of its branches takes a delivery waiting in the inbox (another
   * branch's `wait` than the one it suspended on): what it waits on is not resumed — that step
   * suspends anew when the run replays to it.
   */
  wake?: boolean;
}

/**
 * Continues a run: after a crash (its owner's lease expired or was released), or a suspended run
 * (resuming its pause first, with a compare-and-set: exactly one of racing resumers wins).
 */
export async function resumeRun(runId: string, opts: ResumeOptions, deps: EngineDeps): Promise<RunResult> {
  const run = await deps.log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log; list runs with \`reqon runs\``, 'not-found');
  // Before anything is spent on it (a pause's compare-and-set): this engine may misread the log.
  await assertReadableFormat(deps.log, runId);
  if (isImported(run) && run.status !== 'completed' && run.status !== 'failed') {
    // Its never-expiring lease keeps it from being carried on; say why, not "owned until 2126".
    throw new RunUnavailableError(
      `run ${runId} was imported from a bundle and is read-only: nothing continues it` +
        (opts.payload !== undefined ? ', and your payload was not used' : '') +
        ` (every view and \`reqon verify\` work on it); \`reqon fork ${runId} --at SEQ\` starts a new run from its log up to SEQ`,
      'imported',
    );
  }
  if (run.status === 'suspended') {
    // A pause named by the resumer that is not the one the run waits on, but another branch's
    // pause still pending in the same suspension (a parallel stage, a concurrent loop): that pause
    // is resumed, as asked (the compare-and-set is still on what the run waits on and its seq).
    const named = opts.expectWaitingOn?.startsWith('pause:') && opts.expectWaitingOn !== run.waitingOn ? await pendingPauseNamed(deps.log, run, opts.expectWaitingOn.slice('pause:'.length)) : undefined;
    if (opts.expectWaitingOn !== undefined && opts.expectWaitingOn !== run.waitingOn && named === undefined) throw await notWaitingOn(run, opts, deps.log);
    if (opts.payload !== undefined && opts.expectWaitingOn === undefined && run.waitingOn?.startsWith('pause:')) await refuseAmbiguousPayload(run, deps.log);
    if (opts.payload !== undefined && run.waitingOn?.startsWith('wait:')) await refuseRepeatedPayload(run, opts, deps);
    // An edited mission must replay what the run already did before the pause is spent on it: a
    // divergent one leaves the run exactly as it was, still waiting on its pause.
    if (opts.missionFiles) await assertReplays(deps.log, runId, { missionFiles: opts.missionFiles, env: deps.env });
    await resumeSuspendedRun(run, opts, deps, named);
    const result = await continueRun(runId, opts, deps, { editChecked: true });
    // A payload the wait did not take (its filter refused it): said, not only "suspended" or "completed".
    const waitPath = run.waitingOn?.startsWith('wait:') ? run.waitingOn.slice('wait:'.length) : undefined;
    if (opts.payload !== undefined && waitPath !== undefined) {
      const eventId = deliveryIdOf(run, opts.eventId);
      if ((await deps.log.webhookInbox(waitPath)).some((d) => d.eventId === eventId)) return { ...result, payloadNotTaken: waitPath };
    }
    return result;
  }
  if (opts.expectWaitingOn !== undefined) throw await notWaitingOn(run, opts, deps.log);
  // Not suspended (any more). If its pause was resumed by someone else and that resumer is (or
  // may still be) carrying it on, this caller lost the race: say so, and do not take the run
  // over from the winner between its compare-and-set and its lease.
  const resumed = await resumedSuspension(deps.log, run);
  const ownerLive = run.owner !== null && (run.leaseExpiresAt ?? 0) > deps.env.clock.now() && !ownerIsDead(run.owner);
  const finished = run.status === 'completed' || run.status === 'failed';
  if (finished && opts.missionFiles !== undefined) {
    // Nothing replays it, yet an edit given here is still checked (an invalid one is a usage
    // error, exit 2, as for `run`), and the answer says it was not used: a finished run's end
    // returned as if the edit had carried on would pass an edit nobody compared with the run.
    modelFor(opts.missionFiles);
    throw new RunUnavailableError(
      `run ${runId} has already ${run.status}; nothing to resume, and --mission was not used` +
        (opts.payload !== undefined ? ' (nor your payload)' : '') +
        ` — to compare the edit with what the run did: \`reqon verify ${runId} --mission FILE\`; to run it from a point of this run: \`reqon fork ${runId} --at SEQ --mission FILE\``,
      'finished',
    );
  }
  if (finished && opts.payload === undefined) {
    const ended = await finishedResult(deps.log, run);
    // An armed --crash-at killed nothing: say so, as for a run that never reached its point.
    return deps.crash ? { ...ended, crashNotReached: { ...deps.crash, passed: 0, alreadyEnded: true } } : ended;
  }
  if (resumed && (finished || ownerLive || (run.owner === null && resumed.last))) {
    const now = run.status === 'running' ? (ownerLive ? `is running in ${run.owner}` : 'is about to be carried on by its resumer') : `has since ${run.status}`;
    throw new RunUnavailableError(
      `run ${runId} was already resumed (by ${resumed.by} at ${new Date(resumed.at).toISOString()}) and ${now}; nothing was changed` +
        (opts.payload !== undefined ? ' and your payload was not used' : '') +
        (run.status === 'running' && !ownerLive ? ' — if its resumer stopped, `reqon worker` continues it' : ''),
      // Another resumer took the pause first: the run went on there, ended since or not (exit 11
      // either way — a loser's code must not hang on how fast the winner's run ends; helper 86).
      'already-resumed',
    );
  }
  if (finished) throw new RunUnavailableError(`run ${runId} has already ${run.status}; nothing to resume, and your payload was not used`, 'finished');
  if (opts.payload !== undefined) {
    // A payload is for a suspended run: this one is running — resumed already (a racer lost), or
    // never paused at all (a crashed run, which a resume without the payload carries on).
    const why = resumed
      ? 'it was already resumed'
      : `it does not wait on a pause (a payload answers one); \`reqon resume ${runId}\` without --payload carries it on`;
    throw new RunUnavailableError(
      `run ${runId} is not suspended (it ${ownerLive ? `is running in ${run.owner}` : 'is running'}): ${why}; nothing was changed and your payload was not used`,
      // Running in a live process: that process's (exit 11), whether or not a pause was resumed;
      // its process gone (a crash), nobody's: a plain resume carries it on.
      ownerLive ? (resumed ? 'already-resumed' : 'owned') : 'not-suspended',
    );
  }
  return continueRun(runId, opts, deps);
}

/**
 * A payload is for one pause: where branches of the run wait on more than one (an hour's timer
 * beside an approval), a resume that names none gave the approval to the timer — its branch went
 * on an hour early with it, and the approval stayed pending (helper 82). It names them instead.
 */
async function refuseAmbiguousPayload(run: RunRecord, log: EventLog): Promise<void> {
  const pending = await pendingPauses(log, run);
  if (pending.length < 2) return;
  throw new RunUnavailableError(
    `run ${run.runId} waits on ${pending.length} pauses, in branches of its own, and a payload goes to one: name it with --pause ID — ${pending.map(pendingPauseText).join('; ')}; nothing was changed`,
    'ambiguous',
  );
}

/** "ID at STEP (webhook PATH or timer INSTANT)": a pending pause as a user names it to `reqon resume --pause`. */
export function pendingPauseText(e: StoredEvent<'pause.created'>): string {
  const { pauseId, dueAt, webhookPath } = e.payload;
  const on = [webhookPath !== undefined ? `webhook ${webhookPath}` : undefined, dueAt !== undefined ? `timer ${instantText(dueAt)}` : undefined].filter(Boolean).join(' or ');
  return `${pauseId} at ${e.stepPath}${on ? ` (${on})` : ''}`;
}

/**
 * A payload the run's pending wait already took from `reqon resume` (its `expectedEvents` not yet
 * all in): the same event sent twice — an operator repeating a command they were not sure went
 * through — which the wait would take twice, and each effect after it twice (helper 85). Told by
 * the id given (`--event-id`), else by its content within the UTC day it was taken or the next, as
 * the webhook endpoint tells an unsigned body's retry (GUARANTEES 19). Refused, nothing taken.
 */
async function refuseRepeatedPayload(run: RunRecord, opts: ResumeOptions, deps: EngineDeps): Promise<void> {
  const path = run.waitingOn!.slice('wait:'.length);
  const pending = (await pendingSuspensions(deps.log, run)).waits.filter((e) => e.payload.path === path);
  if (pending.length === 0) return;
  const waits = new Set(pending.map((e) => e.payload.waitId));
  // What those waits took comes after they registered: a long run is not read from its start. An
  // id is one event whichever of the run's waits took it (the inbox holds it once per path).
  const fromSeq = opts.eventId !== undefined ? 1 : Math.min(...pending.map((e) => e.seq));
  const received = (await deps.log.read(run.runId, { types: ['webhook.received'], fromSeq, toSeq: run.lastSeq })) as StoredEvent<'webhook.received'>[];
  const given = opts.eventId === undefined ? canonicalJson(opts.payload) : undefined;
  const today = utcDay(deps.env.clock.now());
  const taken = received.find((e) => {
    if (opts.eventId !== undefined) return e.payload.eventId === deliveryIdOf(run, opts.eventId);
    if (!waits.has(e.payload.waitId)) return false;
    return e.payload.eventId.startsWith(`resume:${run.runId}:`) && today - utcDay(e.recordedAt) <= 1 && canonicalJson(e.payload.payload) === given;
  });
  if (taken) {
    const what = opts.eventId !== undefined ? `an event with the id ${opts.eventId}` : 'this payload';
    const where = waits.has(taken.payload.waitId) ? `its wait on ${path} already took ${what}` : `an earlier wait of the run took ${what}`;
    throw new RunUnavailableError(
      `run ${run.runId}: ${where} (seq ${taken.seq}, from \`reqon resume\`): sent again it would be the same event twice; nothing was changed and your payload was not used` +
        (opts.eventId === undefined ? ' — to send an equal event of its own, give it an id: `--event-id ID`' : ''),
      'repeated',
    );
  }
  // An id given before whose payload the wait's eventFilter refused: it waits in the path's inbox,
  // not taken — the same id again is that event (helper 92: the inbox's duplicate read as a lost race).
  if (opts.eventId !== undefined && (await deps.log.webhookInbox(path)).some((d) => d.eventId === deliveryIdOf(run, opts.eventId))) {
    throw new RunUnavailableError(
      `run ${run.runId}: an event with the id ${opts.eventId} is already in the inbox of ${path}, not taken (the wait's eventFilter refused it): sent again it would be the same event twice; nothing was changed and your payload was not used — give the new event an id of its own`,
      'repeated',
    );
  }
}

/** Days since the epoch, in UTC. */
function utcDay(ms: number): number {
  return Math.floor(ms / 86_400_000);
}

async function notWaitingOn(run: RunRecord, opts: ResumeOptions, log: EventLog): Promise<RunUnavailableError> {
  const now = run.status === 'suspended' ? `it waits on ${run.waitingOn} now` : `it is ${run.status}`;
  const unused = opts.payload !== undefined ? ' and your payload was not used' : '';
  // A pause the run never made (a typo in --pause) was not "already resumed": say which it has.
  const wanted = opts.expectWaitingOn?.replace(/^pause:/, '');
  const made = (await log.read(run.runId, { types: ['pause.created'] })).map((e) => (e.payload as EventPayloads['pause.created']).pauseId);
  if (wanted !== undefined && opts.expectWaitingOn!.startsWith('pause:') && !made.includes(wanted)) {
    return new RunUnavailableError(
      `run ${run.runId} has no pause ${wanted} (${made.length === 0 ? 'it made none' : `its pauses: ${made.join(', ')}`}; ${now}); nothing was changed${unused}`,
      'not-found',
    );
  }
  // A pause still pending while the run runs (another branch's resume carries it on): not "already
  // resumed" — it waits for the run to suspend again (helper 82).
  const resumed = wanted !== undefined && (await log.read(run.runId, { types: ['pause.resumed'] })).some((e) => (e.payload as EventPayloads['pause.resumed']).pauseId === wanted);
  // Ended with the pause never resumed (a sibling branch failed the run): nobody has it, nothing
  // goes on — not "already resumed", exit 11 (probe 106 K9).
  if ((run.status === 'completed' || run.status === 'failed') && !resumed) {
    return new RunUnavailableError(`run ${run.runId} has already ${run.status}, with ${opts.expectWaitingOn} never resumed: nothing resumes it now. Nothing was changed${unused}`, 'finished');
  }
  if (wanted !== undefined && !resumed && run.status === 'running') {
    return new RunUnavailableError(
      `run ${run.runId} is running (another resume carries it on), and its pause ${wanted} is still pending: resume it once the run suspends again; nothing was changed${unused}`,
      'owned',
    );
  }
  // Its carrier died (a crash): nobody's, a plain resume carries it on; else the resumer that won
  // has it, or had it to the run's end (exit 11).
  const orphaned = run.status === 'running' && run.owner !== null && ownerIsDead(run.owner);
  return new RunUnavailableError(
    `run ${run.runId} no longer waits on ${opts.expectWaitingOn} (${now}): it was already resumed; nothing was changed${unused}`,
    orphaned ? 'not-suspended' : 'already-resumed',
  );
}

/**
 * What a resume of a finished run answers: the end it already had, with the failures it went on
 * after (a loop's `onError continue`/`queue`), as its log tells them — where each began, as
 * `reqon runs` counts them — so the end line says "completed with N failures" as it did when the
 * run finished. Of a failed run, the failures that make up its error are its error; one in a loop
 * iteration whose loop went on (no `step.failed` of the loop after it) was tolerated; the others
 * are listed as failures, not as tolerated — the log does not say whether a loop that failed later
 * went on after one, or it was in flight when that loop ended (helper 73 found a parallel stage's
 * branches listed as tolerated).
 */
async function finishedResult(log: EventLog, run: RunRecord): Promise<RunResult> {
  const last = await closingEvent(log, run);
  if (last instanceof DamagedLogError) {
    // Its row says how it ended, its log does not: not "failed" with a made-up error (helper 86).
    throw new RunUnavailableError(`${last.message}; \`reqon verify ${run.runId}\` shows where`, 'unreadable');
  }
  const failures = await readRunFailures(log, run.runId);
  const shown = ({ stepPath, code, message }: RunFailure) => ({ stepPath, code, message });
  if (last.type === 'run.completed') {
    return { status: 'completed', actionsRun: last.payload.actionsRun, runId: run.runId, tolerated: failures.map(shown) };
  }
  const error = last.payload.error;
  // The failures list carries messages as summaries do (summaryMessage), the error its whole one;
  // a parallel stage's error is made of its branches' (`A: …; B: …`).
  const others = failures.filter((f) => !error.message.includes(summaryPrefix(f.message)));
  const failed = (await log.read(run.runId, { types: ['step.failed'] })).map((e) => ({ seq: e.seq, stepPath: e.stepPath }));
  const wentOn = (f: RunFailure): boolean => {
    const loop = f.stepPath.slice(0, Math.max(0, f.stepPath.lastIndexOf('[')));
    return loop !== '' && !failed.some((e) => e.stepPath === loop && e.seq > f.seq);
  };
  const tolerated = others.filter(wentOn).map(shown);
  const otherFailures = others.filter((f) => !wentOn(f)).map(shown);
  return { status: 'failed', error, actionsRun: [], runId: run.runId, tolerated, ...(otherFailures.length > 0 ? { otherFailures } : {}) };
}

/**
 * How the run's last suspension was ended by a resumer, if it was: the latest `pause.resumed` if
 * no pause was created after it, or — a `wait` resumed with a payload or a delivery — the
 * `run.resumed` that the resume's compare-and-set put right after the run's last `run.suspended`
 * (helper 88: a loser of a race on a wait was told "finished", exit 2, where a pause's got 11).
 * `last` when it ends the log. Asked of the log directly: a crashed run is about to be read whole
 * to replay it, once.
 */
async function resumedSuspension(log: EventLog, run: RunRecord): Promise<{ by: string; at: number; last: boolean } | undefined> {
  const pause = await log.lastOfTypes(run.runId, ['pause.created', 'pause.resumed']);
  const suspended = await log.lastOfTypes(run.runId, ['run.suspended']);
  if (suspended?.type === 'run.suspended' && suspended.payload.reason === 'wait' && (pause === undefined || pause.seq < suspended.seq)) {
    const [next] = await log.read(run.runId, { fromSeq: suspended.seq + 1, toSeq: suspended.seq + 1 });
    if (next?.type === 'run.resumed' && next.payload.reason === 'manual') return { by: next.payload.owner, at: next.recordedAt, last: next.seq === run.lastSeq };
    return undefined;
  }
  if (pause?.type !== 'pause.resumed') return undefined;
  return { by: (pause.payload as { by: string }).by, at: pause.recordedAt, last: pause.seq === run.lastSeq };
}

/** Refuses a run recorded by a newer engine, whose events this one may misread. */
export async function assertReadableFormat(log: EventLog, runId: string): Promise<void> {
  const format = logFormatOf(await log.read(runId, { toSeq: 1 }));
  if (format > LOG_FORMAT) {
    throw new RunUnavailableError(
      `run ${runId} was recorded in log format ${format} by a newer engine; this one reads formats 1–${LOG_FORMAT}. Resume it with the newer engine`,
      'unreadable',
    );
  }
}

/** Takes over a run that is `running` in the log (its process died or released it) and runs it on. */
export async function continueRun(runId: string, opts: ResumeOptions, deps: EngineDeps, { editChecked = false } = {}): Promise<RunResult> {
  const owner = deps.owner ?? defaultOwner(deps.env);
  const ttl = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const before = await deps.log.getRun(runId);
  if (!before) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  await assertReadableFormat(deps.log, runId);
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
  const { run, ...lease } = acquired;
  if (run.status !== 'running') {
    await deps.log.release(lease);
    throw new RunUnavailableError(
      run.status === 'suspended'
        ? `run ${runId} is waiting on ${run.waitingOn}${run.wakeAt ? ` until ${new Date(run.wakeAt).toISOString()}` : ''}`
        : `run ${runId} has already ${run.status}`,
      run.status === 'suspended' ? 'waiting' : 'already-resumed',
    );
  }
  deps.onRunId?.(runId);
  try {
    await assertRememberedMission(deps.log, run);
  } catch (error) {
    await deps.log.release(lease);
    throw error;
  }
  const asked = opts.missionFiles !== undefined ? withRememberedSpecs(opts.missionFiles, run.missionFiles) : undefined;
  const edited = asked !== undefined && missionHash(asked) !== run.missionHash;
  const files = edited ? asked : run.missionFiles;
  let model;
  try {
    model = modelFor(files);
    // An edit must replay everything the run did before it is adopted and the walk goes live. The
    // walk catches a divergence before it goes live only where it follows the log in order; in a
    // concurrent loop one iteration goes live (re-sends its in-flight request, commits the edit as
    // the run's mission) while a later recorded iteration is still to be compared.
    if (edited && !editChecked) await assertReplays(deps.log, runId, { missionFiles: files, env: deps.env });
  } catch (error) {
    if (error instanceof MissionInvalidError && !edited) return failInvalidMission(run, lease, error, deps);
    await deps.log.release(lease);
    throw error;
  }
  // A run a later run has synced past, however it is carried on (a crash's takeover, `reqon
  // resume`, the end of its pause or wait): it would store its older answers over the later run's.
  const superseded = await supersededSync(deps.log, run);
  if (superseded !== undefined) return failSuperseded(run, lease, superseded, deps);
  // Replayed as the walk reaches it where the log can read synchronously (a window in memory,
  // not the whole log); otherwise read whole first.
  const recorded: StoredEvent[] | StreamedRecord = deps.log.replayReader
    ? { reader: deps.log.replayReader(runId, run.lastSeq, META_EVENT_TYPES), lastSeq: run.lastSeq }
    : await deps.log.read(runId);
  // A takeover from a process that died holding the lease (even one that had just resumed a
  // pause and died before its first commit); a pause that was just resumed; or a run whose
  // previous process gave it up without finishing it.
  const reason = before.owner !== null ? 'crash' : (await lastIsPauseResume(deps.log, run)) ? 'pause' : 'manual';
  // A wait's compare-and-set wrote this resume's `run.resumed` already (resumeSuspendedRun): the
  // resumer carrying it on adds none, so one resume is one marker. An adopted edit still writes
  // its own, which names the mission it carries on with.
  const marked = before.owner === null && !edited && (await lastEvent(deps.log, run))?.type === 'run.resumed';
  return execute(
    {
      runId,
      model,
      options: run.options,
      lease,
      recorded,
      ...(marked ? {} : { resumed: { reason, owner } }),
      // An edit that replays the log carries on and becomes the run's mission (recorded with the
      // first commit), so a later crash resumes with it rather than with the original.
      ...(edited ? { adoptMission: { missionHash: missionHash(files), missionFiles: files }, recordedModel: recordedModelOf(run.missionFiles) } : {}),
      ownMission: !edited,
      // The mission that recorded the log replays it exactly: finished loop iterations and
      // finished pages of a streamed sync may be taken as recorded rather than walked again. An
      // edited one is walked in full, so every divergence is caught; so is any run under
      // --crash-at, whose counts include replayed passes.
      journal: { skipFinished: !edited && !deps.crash },
    },
    deps,
  );
}

/** The run's own mission no longer passes this engine's checks: no resume can ever succeed. */
async function failInvalidMission(run: RunRecord, lease: { runId: string; owner: string; epoch: number; expiresAt: number }, error: MissionInvalidError, deps: EngineDeps): Promise<RunResult> {
  return failBeforeReplay(run, lease, { code: 'mission-invalid', message: `the run's mission no longer passes this engine's checks:\n${error.rendered}` }, deps);
}

/** Ends the run failed with `failure` before anything is replayed: its run.failed is all it writes. */
async function failBeforeReplay(run: RunRecord, lease: { runId: string; owner: string; epoch: number; expiresAt: number }, failure: { code: string; message: string }, deps: EngineDeps): Promise<RunResult> {
  const event: NewEvent = { type: 'run.failed', stepPath: '', payload: { error: failure }, recordedAt: deps.env.clock.now() };
  await deps.log.commit(lease, [{ kind: 'event', event }], { durable: true, status: { status: 'failed', releaseLease: true }, returnEvents: false });
  return { status: 'failed', error: failure, actionsRun: [], runId: run.runId, tolerated: [] };
}

/** A sync a run fetched that a later run has since advanced past this run's fetch. */
interface SupersededSync {
  key: string;
  fetchedAt: number;
  syncedAt: number;
  /** The read was copied from the fork's parent: `fetchedAt` is when the fork was made. */
  copied: boolean;
}

/**
 * The first `since` fetch of `run` whose checkpoint another completed run has advanced since this
 * run read it (helper 95): that run fetched the records later, so they are newer than this run's
 * recorded answers, which a resume replays and stores — over them, in a store that outlives runs,
 * while the checkpoint stays past their changes for good. "Since" by when the checkpoint was
 * committed, this engine's clock, not by its instant, which `updateFrom` takes from the server's
 * (a server clock behind dated the later run's checkpoint before this run's read: helper 98).
 * Whatever this run did after the read: a fetch's action that ended, or advanced its own
 * checkpoint, may have staged the records for a later action (a memory store) that stores them
 * still; failing a run that had nothing older left to store costs its remaining steps, which the
 * next run does anew, never data. The checkpoint is the API's the fetch read (recorded with the
 * read from log format 9; before, any API the run's recorded sources fetch from). A
 * `sync_state.get` is such a read too. Only a mission that syncs (`since`, `sync_state`) is read.
 * A fork's copied reads count as made when the fork was (see forks in GUARANTEES.md).
 */
async function supersededSync(log: EventLog, run: RunRecord): Promise<SupersededSync | undefined> {
  if (!run.missionFiles.files.some((file) => /\bsince\s*:|\bsync_state\b/.test(file.text))) return undefined;
  const events = await log.read(run.runId, { types: ['run.started', 'value.recorded'] });
  // A fork's copied reads are its parent's, made before the fork: the fork, time travel asked for,
  // took them as of when it was made, and is held only to syncs completed after that.
  const identities = identitiesOf(events[0]);
  const copiedTo = identities.length > 0 ? identities[identities.length - 1]!.toSeq : 0;
  const forkedAt = copiedTo > 0 ? events[0]!.recordedAt : 0;
  const fallback = apisOf(run);
  const asked = new Set<string>();
  for (const event of events) {
    if (event.type !== 'value.recorded') continue;
    const read = event.payload as EventPayloads['value.recorded'];
    const readAt = event.seq <= copiedTo ? Math.max(event.recordedAt, forkedAt) : event.recordedAt;
    if (read.source !== 'last-sync') continue;
    // A fetch's read names its key; a `sync_state.get` read holds it in its value ({ key, at }).
    const key = read.key ?? (read.value as { key?: unknown } | null)?.key;
    if (typeof key !== 'string') continue;
    for (const api of read.api !== undefined ? [read.api] : fallback) {
      const query = `${key}\u0000${api ?? ''}`;
      if (asked.has(query)) continue;
      asked.add(query);
      const mark = await log.lastCheckpoint(run.mission, key, api);
      if (mark?.advancedAt !== undefined && mark.advancedAt > readAt) return { key, fetchedAt: readAt, syncedAt: mark.syncedAt, copied: event.seq <= copiedTo };
    }
  }
  return undefined;
}

/** The checkpoint APIs the run's recorded sources fetch from (their bases, or what --source points them at), and none. */
function apisOf(run: RunRecord): (string | undefined)[] {
  const apis = new Set<string | undefined>([undefined]);
  for (const source of modelFor(run.missionFiles).sources.values()) {
    const base = run.options.sources[source.name.name] ?? source.base?.value;
    try {
      if (base !== undefined) apis.add(checkpointApiOf(base));
    } catch {
      // No URL: the fetch fails on it, saying so.
    }
  }
  return [...apis];
}

/** Fails a run supersededSync found, writing nothing else: the next run syncs from the later checkpoint. */
async function failSuperseded(run: RunRecord, lease: { runId: string; owner: string; epoch: number; expiresAt: number }, found: SupersededSync, deps: EngineDeps): Promise<RunResult> {
  return failBeforeReplay(run, lease, {
    code: SYNC_SUPERSEDED_CODE,
    message:
      `${found.copied ? `this fork took its parent's fetch of checkpoint "${found.key}" when it was made at` : `this run fetched checkpoint "${found.key}" at`} ${instantText(found.fetchedAt)}, and a later run has since synced it (to ${instantText(found.syncedAt)}): ` +
      `carried on, this run would store its older answers over the records that run stored. It fails here, with nothing more written; the next run syncs from the later checkpoint`,
  }, deps);
}

/** The run's newest event. */
async function lastEvent(log: EventLog, run: RunRecord): Promise<StoredEvent | undefined> {
  return run.lastSeq < 1 ? undefined : (await log.read(run.runId, { fromSeq: run.lastSeq, toSeq: run.lastSeq }))[0];
}

/** True when the run's newest event, `run.resumed` markers aside, is a `pause.resumed`. */
async function lastIsPauseResume(log: EventLog, run: RunRecord): Promise<boolean> {
  return (await findLast(log, run.runId, run.lastSeq, (e) => e.type !== 'run.resumed'))?.type === 'pause.resumed';
}

/**
 * The compare-and-set that resumes a pause (or wakes a wait): one winner among racing resumers.
 * The token is what the run waits on and the seq it suspended at, so a run that was resumed and
 * suspended again — even on the same wait — is not resumed a second time by a late racer.
 */
export async function resumeSuspendedRun(run: RunRecord, opts: ResumeOptions, deps: EngineDeps, pending?: StoredEvent<'pause.created'>): Promise<void> {
  // Before its pause is spent: a run whose remembered mission was edited outside the engine, that
  // a newer engine records (a worker of a mixed fleet on a shared log: helper 86), or whose --auth
  // file cannot be read, is left as it is, waiting (its resume fails on it; a pause spent first
  // stayed spent).
  await assertReadableFormat(deps.log, run.runId);
  await assertRememberedMission(deps.log, run);
  // Its --auth file must still be readable (moved, unreadable, a variable it names unset): the run
  // could not be carried on past the pause, which would be spent, its payload taken (probe 106 K6).
  loadCredentials(run.options, deps.env);
  const waitingOn = run.waitingOn ?? '';
  const by = opts.by ?? 'cli';
  let event: NewEvent;
  let claim: { path: string; eventId: string; waitId: string } | undefined;
  let deliver: ResumeDelivery | undefined;
  if (opts.wake !== true && (pending !== undefined || waitingOn.startsWith('pause:'))) {
    // `pending`: another branch's pause than the one the run waits on (pendingHooks).
    const created = pending ?? (await pendingPause(deps.log, run));
    if (!created) throw new RunUnavailableError(`run ${run.runId} waits on ${waitingOn} but its log has no such pause`, 'waiting');
    const pauseId = created.payload.pauseId;
    if (opts.payload !== undefined && opts.claim === undefined) refusePausePayloadLate(run, created, deps.env.clock.now());
    event = {
      type: 'pause.resumed',
      stepPath: created.stepPath,
      payload: {
        pauseId,
        by,
        ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
        ...(opts.claim ? { eventId: opts.claim.eventId } : {}),
      },
      recordedAt: deps.env.clock.now(),
    };
    claim = opts.claim ? { ...opts.claim, waitId: pauseId } : undefined;
  } else {
    // A payload to a run in a `wait` is a delivery on the wait's path, identified by the
    // suspension (run and seq), put in the inbox by the same transaction as the resume: a racer
    // that loses leaves nothing there for the winner's wait to take (it did, helper 58).
    if (opts.payload !== undefined && waitingOn.startsWith('wait:')) {
      await refuseLateDelivery(deps.log, run, waitingOn.slice('wait:'.length), deps.env.clock.now());
      deliver = { path: waitingOn.slice('wait:'.length), eventId: deliveryIdOf(run, opts.eventId), payload: opts.payload, receivedAt: deps.env.clock.now() };
    }
    event = { type: 'run.resumed', stepPath: '', payload: { reason: 'manual', owner: by, replayFromSeq: run.lastSeq }, recordedAt: deps.env.clock.now() };
  }
  const outcome = await resumeResolved(deps.log, run, waitingOn, event, claim, deliver);
  // The pause is spent (the run is running, nobody's yet): from here the run is this resumer's to carry.
  if (outcome === 'resumed') deps.onRunId?.(run.runId);
  if (outcome !== 'resumed') {
    const mine = opts.payload === undefined ? '' : ` (sha256 ${hash('sha256', canonicalJson(opts.payload), 'hex').slice(0, 12)})`;
    throw new RunUnavailableError(
      `run ${run.runId} was already resumed (it no longer waits on ${waitingOn} at seq ${run.lastSeq}); nothing was changed` +
        (opts.payload !== undefined ? ` and your payload${mine} was not used` : ''),
      'already-resumed',
    );
  }
}

/**
 * The resume's compare-and-set. A connection lost as its commit went out leaves the outcome
 * unknown: the server may have committed it and the reply been lost (probe 113 K4: the CLI said
 * "nothing was changed and your payload was not used — try again", then "already resumed", while
 * a worker carried the run on with that payload). The resume's event is the one after the seq the
 * run was suspended at, so that seq is read once, on a new connection: this event there, it was
 * resumed; another, another resumer was first; none, nothing changed and the loss is thrown as it
 * was; the read failing too is ResumeOutcomeUnknownError.
 */
async function resumeResolved(
  log: EventLog,
  run: RunRecord,
  waitingOn: string,
  event: NewEvent,
  claim: { path: string; eventId: string; waitId: string } | undefined,
  deliver: ResumeDelivery | undefined,
): Promise<'resumed' | 'not-waiting'> {
  try {
    return await log.resumeSuspended(run.runId, waitingOn, event, run.lastSeq, claim, deliver);
  } catch (error) {
    if (!logUnreachable(error)) throw error;
    let next: StoredEvent | undefined;
    try {
      [next] = await log.read(run.runId, { fromSeq: run.lastSeq + 1, limit: 1 });
    } catch {
      throw new ResumeOutcomeUnknownError(run.runId, error);
    }
    if (next === undefined) throw error;
    const same = next.type === event.type && next.stepPath === event.stepPath && canonicalJson(next.payload) === canonicalJson(event.payload) && next.recordedAt === event.recordedAt;
    if (!same) return 'not-waiting';
    // A wait's resume carries its payload as an inbox delivery, not in the event: two resumers of
    // one millisecond write the same event, and only the delivery tells whose payload went in.
    if (deliver === undefined) return 'resumed';
    let delivered: { payload: unknown } | undefined;
    let claimed = false;
    try {
      delivered = (await log.webhookInbox(deliver.path)).find((d) => d.eventId === deliver.eventId);
      // Claimed already by the run's wait (the inbox lists only unclaimed ones): whose, it cannot say.
      claimed = delivered === undefined && (await log.webhookDelivered(deliver.path, deliver.eventId));
    } catch {
      throw new ResumeOutcomeUnknownError(run.runId, error);
    }
    if (claimed) throw new ResumeOutcomeUnknownError(run.runId, error);
    return delivered !== undefined && canonicalJson(delivered.payload) === canonicalJson(deliver.payload) ? 'resumed' : 'not-waiting';
  }
}

/** The log was lost as a resume was committed, and could not be asked after whether it was. */
export class ResumeOutcomeUnknownError extends CommitOutcomeUnknownError {
  override readonly name = 'ResumeOutcomeUnknownError';
  constructor(runId: string, cause: unknown) {
    super(runId, 'resumed', ' — with your payload, if you gave one —', ' (resumed: a worker carries it on; still waiting: resume it again)', cause);
  }
}

/**
 * A payload for a wait whose every pending registration on `path` has expired: no worker has
 * timed it out yet, but the payload is late for it (the wait would not take it: wait-step.ts), so
 * it is refused before anything changes, and the user is told how the run goes on.
 */
async function refuseLateDelivery(log: EventLog, run: RunRecord, path: string, now: number): Promise<void> {
  const waits = (await pendingSuspensions(log, run)).waits.filter((w) => w.payload.path === path);
  // In time up to its expiry instant, as a wait takes a delivery received then (wait-step.ts).
  if (waits.length === 0 || waits.some((w) => w.payload.expiresAt >= now)) return;
  const expired = Math.max(...waits.map((w) => w.payload.expiresAt));
  throw new RunUnavailableError(
    `run ${run.runId} waits on ${path}, which timed out at ${instantText(expired)}: your payload is too late for it and was not used; ` +
      `\`reqon resume ${run.runId}\` without --payload (or a worker) carries the run on as timed out`,
    'late',
  );
}

/**
 * A payload by hand to a pause whose timer is past due: its timer has won, as it does over a
 * webhook delivery received after it (pause-step.ts), whether or not a worker woke it yet — so
 * the run goes on as timed out, the same whenever the worker looks, and the payload is refused
 * before anything changes.
 */
function refusePausePayloadLate(run: RunRecord, created: StoredEvent<'pause.created'>, now: number): void {
  const { dueAt, pauseId } = created.payload;
  if (!timerDueBy(dueAt, now)) return;
  throw new RunUnavailableError(
    `run ${run.runId}'s pause ${pauseId} came due at ${instantText(dueAt!)} (its timer): your payload is too late for it and was not used; ` +
      `\`reqon resume ${run.runId}\` without --payload (or a worker) carries the run on as timed out`,
    'late',
  );
}

/** The id of the delivery a payload to `run`, suspended as it is, becomes: by the suspension, or the id it was given. */
function deliveryIdOf(run: RunRecord, eventId?: string): string {
  return eventId === undefined ? `resume:${run.runId}:${run.lastSeq}` : `resume:${run.runId}:id:${eventId}`;
}

/** What the branches of a suspended run still wait on: pauses made and not resumed, waits registered and not completed. */
export interface PendingSuspensions {
  pauses: StoredEvent<'pause.created'>[];
  waits: StoredEvent<'wait.registered'>[];
}

/**
 * Everything a suspended run waits on: the pause or wait it suspended on, and any other branch's
 * (a parallel stage, a concurrent loop) that suspended with it. From the log's summary index: the
 * four event types only, never the whole run.
 */
export async function pendingSuspensions(log: EventLog, run: RunRecord): Promise<PendingSuspensions> {
  const events = await log.read(run.runId, { types: ['pause.created', 'pause.resumed', 'wait.registered', 'wait.completed'], toSeq: run.lastSeq });
  const ended = new Set<string>();
  for (const e of events) {
    if (e.type === 'pause.resumed') ended.add(`pause:${e.payload.pauseId}`);
    if (e.type === 'wait.completed') ended.add(`wait:${e.payload.waitId}`);
  }
  return {
    pauses: events.filter((e): e is StoredEvent<'pause.created'> => e.type === 'pause.created' && !ended.has(`pause:${e.payload.pauseId}`)),
    waits: events.filter((e): e is StoredEvent<'wait.registered'> => e.type === 'wait.registered' && !ended.has(`wait:${e.payload.waitId}`)),
  };
}

async function pendingPauses(log: EventLog, run: RunRecord): Promise<StoredEvent<'pause.created'>[]> {
  return (await pendingSuspensions(log, run)).pauses;
}

/**
 * What of a suspended run's pending suspensions a webhook delivery can end: its pauses resumed by
 * a webhook, and the paths of its waits.
 */
export async function pendingHooks(log: EventLog, run: RunRecord): Promise<{ pauses: StoredEvent<'pause.created'>[]; waitPaths: string[] }> {
  const { pauses, waits } = await pendingSuspensions(log, run);
  return { pauses: pauses.filter((e) => e.payload.webhookPath !== undefined), waitPaths: [...new Set(waits.map((e) => e.payload.path))] };
}

/** The run's pending pause `pauseId` (pendingPauses), if it is one. */
async function pendingPauseNamed(log: EventLog, run: RunRecord, pauseId: string): Promise<StoredEvent<'pause.created'> | undefined> {
  return (await pendingPauses(log, run)).find((e) => e.payload.pauseId === pauseId);
}

/** The `pause.created` a run suspended on `pause:<id>` waits on (pendingPauses, by the summary index). */
async function pendingPause(log: EventLog, run: RunRecord): Promise<StoredEvent<'pause.created'> | undefined> {
  if (!run.waitingOn?.startsWith('pause:')) return undefined;
  return pendingPauseNamed(log, run, run.waitingOn.slice('pause:'.length));
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
