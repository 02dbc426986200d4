/**
 * `pause { duration, resumeOn: timeout | webhook "/path" }` (§C.10), durable.
 *
 * Live: the due instant (recorded `now` + duration) goes into a durable `pause.created`, then the
 * run commits its suspension (status `suspended`, `wakeAt`, `waitingOn: pause:<id>`) and the
 * process may exit. Whoever resumes it — the worker when the timer is due, a webhook, the CLI, the
 * studio — appends `pause.resumed` with a compare-and-set on that `waitingOn` (exactly one wins),
 * and the run replays up to here and carries on with the resume payload as `response`.
 * No process holds a timer: a 30-day pause is a row in the database, not a `setTimeout`.
 */
import { DeliveryClaimedError } from '../log/errors.js';
import type { StoredEvent } from '../log/events.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import type { PauseStep } from '../lang/ast.js';
import { Effect } from '../journal/effect.js';
import { effectId } from '../journal/effect-id.js';
import { commitSuspension, SuspendSignal } from './signals.js';
import type { Frame, StepRuntime } from './step-runtime.js';
import type { StepOutcome } from './step-runtime.js';
import { instantText } from '../env/instant-text.js';

/**
 * A pause on a timer and a webhook (`resumeOn: timeout | webhook "/x"`) whose timer was due by
 * the instant a delivery came: the timer came first and resumes it, as a wait's timeout comes
 * before a delivery after it (helper 96: a late delivery still resumed it, with its payload).
 */
export function timerDueBy(dueAt: number | undefined, receivedAt: number): boolean {
  return dueAt !== undefined && dueAt <= receivedAt;
}

export function pauseWaitingOn(pauseId: string): string {
  return `pause:${pauseId}`;
}

export async function runPause(step: PauseStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const turn = rt.crash.turn('suspension', path);
  if (turn) await turn;
  const pauseId = effectId(rt.journal.identityRunId(path), path, 'pause', 0);
  const now = rt.journal.record(path, 'value.recorded', () => ({ source: 'now', value: rt.env.clock.now() })).value as number;
  const byTimer = step.resumeOn.length === 0 || step.resumeOn.some((t) => t.kind === 'timeout');
  const webhook = step.resumeOn.find((t) => t.kind === 'webhook');
  const dueAt = byTimer ? now + (step.duration?.ms ?? 0) : undefined;

  // The pause is an external effect: its timer must be on disk before the run says it suspended.
  const effect = new Effect(rt.journal, rt.crash, { kind: 'suspension', key: pauseId, path, external: true });
  const webhookPath = webhook?.kind === 'webhook' ? webhook.path.value : undefined;
  const asked = { dueAt, webhookPath };
  const recordedBefore = effect.takeIntent('pause.created', () => true, (recorded) => assertSamePause(recorded, asked, path, rt, () => rt.model.stepLine(frame.action, step.start)));
  if (!recordedBefore) {
    await effect.recordIntent('pause.created', {
      pauseId,
      ...(dueAt === undefined ? {} : { dueAt }),
      ...(webhookPath === undefined ? {} : { webhookPath }),
    });
  }
  effect.pass('before-wait');

  // The run suspended here before: once, or again each time another branch's pause was resumed
  // first (a parallel stage's, `reqon resume --pause`), which ended that suspension.
  let suspendedRecorded: StoredEvent<'run.suspended'> | undefined;
  while (rt.journal.peek(path)?.type === 'run.suspended') suspendedRecorded = rt.journal.take(path, 'run.suspended');
  // A recorded suspension with no pause.resumed of this pause after it still holds only in a
  // verify (nothing goes live). In a run carried on live it was ended by another branch's resume:
  // the run must suspend here anew, or it was left `running` with nobody carrying it on.
  const suspendedBefore = suspendedRecorded !== undefined && rt.journal.verifying ? suspendedRecorded : undefined;
  const resumed = rt.journal.peek(path)?.type === 'pause.resumed' ? rt.journal.take(path, 'pause.resumed') : undefined;
  if (resumed) {
    if (resumed.payload.payload !== undefined) frame.response = resumed.payload.payload;
    return { response: frame.response };
  }
  const waitingOn = pauseWaitingOn(pauseId);
  if (!suspendedBefore && webhook?.kind === 'webhook') {
    // A delivery that arrived before the run got here resumes it now, claimed once (as a wait
    // does) — one that came once the timer was due does not (timerDueBy; helper 97: a run killed
    // before it suspended, or a parallel stage's second pause, took a late one).
    const early = await claimEarlyDelivery(webhook.path.value, pauseId, dueAt, path, rt);
    if (early) {
      if (early.payload !== undefined) frame.response = early.payload;
      return { response: frame.response };
    }
  }
  // Inside concurrent branches, siblings may still be working: the executor commits the run's
  // suspension once every branch has ended or suspended (signals.ts), not this step.
  const deferred = !suspendedBefore && rt.journal.inConcurrent;
  if (recordedBefore && dueAt !== undefined && !rt.journal.verifying && dueAt <= rt.env.clock.now()) {
    // Carried on live after its timer came due, and not resumed: it fired, as a worker would have
    // said, so the run goes on instead of suspending until an instant past — killed between the
    // pause's record and its suspension (helper 94: `reqon resume` exited 10 on it), or a branch
    // whose suspension ended when a sibling's pause was resumed first (helper 104: the run
    // suspended again on this timer, already due). A pause met for the first time suspends
    // whatever its duration, as it always has.
    rt.journal.emit('pause.resumed', path, { pauseId, by: 'timer' });
    return { response: frame.response };
  }
  if (!suspendedBefore && !deferred) await commitSuspension(rt.journal, path, { reason: byTimer ? 'timer' : 'webhook', waitingOn, wakeAt: dueAt ?? null });
  const wakes = dueAt !== undefined ? `wakes at ${instantText(dueAt)}` : undefined;
  const hook = webhook?.kind === 'webhook' ? `on webhook ${webhook.path.value}` : undefined;
  rt.progress(`paused at ${path}: ${wakes !== undefined && hook !== undefined ? `${wakes} or ${hook}` : (wakes ?? `waiting ${hook ?? ''}`.trim())}`);
  throw new SuspendSignal(byTimer ? 'timer' : 'webhook', waitingOn, dueAt ?? null, deferred ? path : undefined, webhook?.kind === 'webhook' ? webhook.path.value : undefined);
}

/**
 * Replay reached a recorded pause: the mission must still ask for the same one — the same due
 * instant (its `now` is replayed, so a changed duration moves it) and the same webhook. Before,
 * an edit from `duration: "1h"` to `"5s"`, or from a timer to a webhook, replayed as a match
 * while the run stayed suspended on what it recorded.
 */
function assertSamePause(recorded: StoredEvent<'pause.created'>, asked: { dueAt: number | undefined; webhookPath: string | undefined }, path: string, rt: StepRuntime, line: () => number): void {
  const was = recorded.payload;
  if (was.dueAt === asked.dueAt && was.webhookPath === asked.webhookPath) return;
  const describe = (p: { dueAt?: number | undefined; webhookPath?: string | undefined }): string =>
    [p.dueAt !== undefined ? `due at ${instantText(p.dueAt)}` : undefined, p.webhookPath !== undefined ? `on webhook ${p.webhookPath}` : undefined].filter((s) => s !== undefined).join(' or ') || 'with no timer or webhook';
  throw new NondeterminismError(rt.runId, path, recorded.seq, `a pause ${describe(was)}`, `a pause ${describe(asked)}`, {
    line: line(),
    change: `the pause ${describe(was)} became a pause ${describe(asked)}`,
  });
}

/**
 * Claims the oldest unclaimed delivery on `hookPath` for this pause, with its `pause.resumed`, in
 * one commit. Undefined when there is none — or when another run claimed it first (that commit
 * wrote nothing, and this pause suspends as usual).
 */
async function claimEarlyDelivery(hookPath: string, pauseId: string, dueAt: number | undefined, path: string, rt: StepRuntime): Promise<{ payload: unknown } | undefined> {
  const delivery = (await rt.inbox(hookPath)).find((d) => !timerDueBy(dueAt, d.receivedAt));
  if (!delivery) return undefined;
  rt.journal.emit('pause.resumed', path, { pauseId, by: 'webhook', ...(delivery.payload !== undefined ? { payload: delivery.payload } : {}), eventId: delivery.eventId });
  try {
    await rt.journal.commit({ durable: false, extra: [{ kind: 'claim-webhook', path: hookPath, eventId: delivery.eventId, waitId: pauseId }] });
  } catch (error) {
    if (error instanceof DeliveryClaimedError) return undefined;
    throw error;
  }
  return { payload: delivery.payload };
}
