/**
 * `wait { path, timeout, expectedEvents, eventFilter, storage, retry }` (§C.9), durable.
 *
 * Webhook deliveries land in the log's inbox (committed before the sender gets its 2xx, deduped
 * by delivery id), whether or not a run is waiting yet. The waiting run claims matching deliveries
 * in the same transaction as the `webhook.received` events that record them, so a delivery is
 * consumed exactly once even if it arrived early, was sent twice, or two runs wait on one path.
 * Until enough have arrived the run is suspended (`waitingOn: wait:<path>`, `wakeAt` = expiry);
 * the worker wakes it when a delivery arrives or the wait expires.
 *
 * The `eventFilter` gates completion (a fix of the original): a delivery that does not pass it
 * — or whose filter throws — is left unclaimed and does not count.
 *
 * `timeout: 0` is a check, not a wait (upstream's webhook-payment: "non-blocking check for
 * existing webhooks"): it takes the deliveries that have arrived, never suspends, and when none
 * has it carries on with `response` and `webhook` null rather than failing (`nonBlocking` on its
 * `wait.completed`, so runs recorded before, whose such wait failed, replay as they ran).
 */
import { hash } from 'node:crypto';
import type { WaitStep } from '../lang/ast.js';
import { evaluate } from '../eval/evaluate.js';
import { storeKey } from '../stores/keys.js';
import { isTruthy } from '../eval/values.js';
import { Effect } from '../journal/effect.js';
import type { StoredEvent } from '../log/events.js';
import { STABLE_WAIT_PATH_FORMAT, WAIT_AND_UNTIL_RULES_FORMAT } from '../log/events.js';
import { DeliveryClaimedError } from '../log/errors.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { effectId } from '../journal/effect-id.js';
import { commitSuspension, RetrySignal, StepError, SuspendSignal } from './signals.js';
import { evalContext, type Frame, type StepRuntime } from './step-runtime.js';
import type { EvalContext } from '../eval/scope.js';
import type { StepOutcome } from './step-runtime.js';
import { writeRecords, type PlannedWrite } from './store-step.js';
import { instantText } from '../env/instant-text.js';

const DEFAULT_TIMEOUT_MS = 300_000;

export function waitWaitingOn(path: string): string {
  return `wait:${path}`;
}

/**
 * Replay reached a recorded wait: the mission must still ask for the same one — path, expiry (its
 * `now` is replayed, so a changed timeout moves it) and the number of events. Before, such an
 * edit replayed as a match while the run stayed suspended on what it recorded.
 */
function assertSameWait(recorded: StoredEvent<'wait.registered'>, asked: { path: string; expiresAt: number; expectedEvents: number }, path: string, rt: StepRuntime, line: () => number): void {
  const was = recorded.payload;
  if (was.path === asked.path && was.expiresAt === asked.expiresAt && was.expectedEvents === asked.expectedEvents) return;
  const describe = (w: { path: string; expiresAt: number; expectedEvents: number }): string => `a wait for ${w.expectedEvents} event(s) on ${w.path} until ${instantText(w.expiresAt)}`;
  throw new NondeterminismError(rt.runId, path, recorded.seq, describe(was), describe(asked), { line: line(), change: `${describe(was)} became ${describe(asked)}` });
}

/** `path` without its actions' attempt markers (`W~2/0` → `W/0`; journal/step-path.ts actionPath). */
/** The path of a wait with no `path:`: `/webhook/<the run that named it>/<its id>`. */
export function generatedWaitPath(runId: string, listensAs: string): string {
  return `/webhook/${runId}/${listensAs}`;
}

/** The run a wait's generated path names, if `path` is one (the webhook endpoint, a fork's copy). */
export function generatedWaitRunId(path: string): string | undefined {
  const generated = /^\/webhook\/([^/]+)\/[^/]+$/.exec(path);
  if (generated === null) return undefined;
  try {
    return decodeURIComponent(generated[1]!);
  } catch {
    return undefined;
  }
}

function withoutAttempts(path: string): string {
  return path.replace(/~\d+(?=\/|$)/g, '');
}

export async function runWait(step: WaitStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const turn = rt.crash.turn('suspension', path);
  if (turn) await turn;
  // In a fork's copied stretch, the wait its recorder registered (journal/fork-identity.ts) — asked
  // once its registration time is taken, so a copy that ends between the two names its own wait,
  // at its own URL, not its parent's (helper 97); a run recorded before format 8 asked before.
  const namedFirst = rt.http.logFormat < WAIT_AND_UNTIL_RULES_FORMAT ? rt.journal.identityRunId(path) : undefined;
  const registeredAt = rt.journal.record(path, 'value.recorded', () => ({ source: 'now', value: rt.env.clock.now() })).value as number;
  const namedBy = namedFirst ?? rt.journal.identityRunId(path);
  const waitId = effectId(namedBy, path, 'wait', 0);
  // A generated path is the wait's across its action's attempts (`W~2/0` listens where `W/0` did):
  // the sender was given one URL, and a delivery to it after the first attempt timed out was kept
  // where the retry never listened (helper 82). Runs recorded before log format 7 keep one per attempt.
  const listensAs = rt.http.logFormat >= STABLE_WAIT_PATH_FORMAT ? effectId(namedBy, withoutAttempts(path), 'wait', 0) : waitId;
  const hookPath = step.path?.value ?? generatedWaitPath(namedBy, listensAs);
  const expected = step.expectedEvents ?? 1;
  const timeout = step.timeout ?? DEFAULT_TIMEOUT_MS;
  const expiresAt = registeredAt + timeout;

  const effect = new Effect(rt.journal, rt.crash, { kind: 'suspension', key: waitId, path, external: true });
  const asked = { path: hookPath, expiresAt, expectedEvents: expected };
  const registered = effect.takeIntent('wait.registered', () => true, (recorded) => assertSameWait(recorded, asked, path, rt, () => rt.model.stepLine(frame.action, step.start)));
  // A wait keeps the filter rule it registered with (events.ts): a run recorded before reads on as it ran.
  const filterOnDelivery = registered === undefined || registered.payload.filterOnDelivery === true;
  if (!registered) {
    await effect.recordIntent('wait.registered', { waitId, path: hookPath, expiresAt, expectedEvents: expected, filterOnDelivery: true });
    rt.progress(`waiting for ${expected} webhook event(s) on ${hookPath} (until ${instantText(expiresAt)})`);
  }
  effect.pass('before-wait');
  // While waiting, `response` describes the endpoint (as in the original).
  frame.response = { webhookId: waitId, webhookPath: hookPath };

  const received: { eventId: string; payload: unknown }[] = [];
  for (;;) {
    // Replay what the log holds for this wait.
    while (rt.journal.peek(path)?.type === 'webhook.received') {
      const event = rt.journal.take(path, 'webhook.received')!;
      const { eventId, payload } = event.payload;
      // A delivery the wait took must still pass its filter: an edited eventFilter that would
      // have left it unclaimed leaves the run waiting, not carrying on with it.
      if (!passesFilter(step, evalContext(rt, frame, path), { eventId, payload, receivedAt: event.payload.receivedAt ?? event.recordedAt }, filterOnDelivery)) {
        const line = rt.model.stepLine(frame.action, step.start);
        throw new NondeterminismError(rt.runId, path, event.seq, `the delivery ${eventId} on ${hookPath}, taken by the wait`, `a delivery that passes the wait's eventFilter`, {
          line,
          change: `the wait's eventFilter no longer passes the delivery ${eventId} it took, which would have left it unclaimed`,
        });
      }
      received.push({ eventId, payload });
    }
    const next = rt.journal.peek(path);
    if (next?.type === 'wait.completed') {
      const done = rt.journal.take(path, 'wait.completed')!;
      return finish(step, path, frame, rt, received, done.payload.timedOut, timeout, done.payload.nonBlocking === true);
    }
    if (next?.type === 'value.recorded') {
      rt.journal.take(path, 'value.recorded');
      if (rt.journal.peek(path)?.type === 'run.suspended') rt.journal.take(path, 'run.suspended');
      continue;
    }

    // Live: claim what has arrived, then complete, time out, or suspend.
    const claimed = await claimDeliveries(step, hookPath, expected - received.length, waitId, expiresAt, path, frame, rt, filterOnDelivery);
    received.push(...claimed);
    if (received.length >= expected) {
      rt.journal.emit('wait.completed', path, { waitId, events: received.length, timedOut: false });
      await rt.journal.commit({ durable: false });
      return finish(step, path, frame, rt, received, false, timeout);
    }
    const now = rt.journal.record(path, 'value.recorded', () => ({ source: 'now', value: rt.env.clock.now() })).value as number;
    if (now >= expiresAt) {
      const nonBlocking = timeout === 0;
      rt.journal.emit('wait.completed', path, { waitId, events: received.length, timedOut: true, ...(nonBlocking ? { nonBlocking } : {}) });
      await rt.journal.commit({ durable: false });
      return finish(step, path, frame, rt, received, true, timeout, nonBlocking);
    }
    // Inside concurrent branches the executor commits the suspension once every branch has ended
    // or suspended (signals.ts): a sibling may still be working under the lease.
    if (rt.journal.inConcurrent) throw new SuspendSignal('wait', waitWaitingOn(hookPath), expiresAt, path);
    await commitSuspension(rt.journal, path, { reason: 'wait', waitingOn: waitWaitingOn(hookPath), wakeAt: expiresAt });
    throw new SuspendSignal('wait', waitWaitingOn(hookPath), expiresAt);
  }
}

/**
 * Whether a delivery passes the wait's eventFilter (every one does without one); a filter that
 * throws does not pass. The delivery is the filter's record: `.status` is its field even inside a
 * loop, whose item was the current record — so `eventFilter: .order == order.id` in a `for order`
 * compared the order with itself and passed every delivery or none. `onDelivery` false: the rule
 * of runs recorded before (wait.registered without `filterOnDelivery`).
 */
function passesFilter(step: WaitStep, ctx: EvalContext, delivery: { eventId: string; payload: unknown; receivedAt: number }, onDelivery: boolean): boolean {
  if (!step.eventFilter) return true;
  const { payload } = delivery;
  try {
    // What the filter reads besides the delivery is the delivery's own, never journaled: `now()`
    // is when it arrived and `random()` is drawn from its id, the same live and on replay (helper
    // 96: a filter's `now()` was recorded among the wait's own values, and a verify of an untouched
    // run said DIVERGED). Whether it passed is recorded anyway, by the claim.
    const inputs = ctx.inputs && (ctx.logFormat ?? WAIT_AND_UNTIL_RULES_FORMAT) >= WAIT_AND_UNTIL_RULES_FORMAT ? { ...ctx.inputs, now: () => delivery.receivedAt, random: () => unitFromId(delivery.eventId) } : undefined;
    const base: EvalContext = inputs ? { ...ctx, inputs } : ctx;
    const filterCtx: EvalContext = onDelivery ? { ...base, response: payload, current: payload, mapped: undefined, noRecord: undefined } : { ...base, response: payload };
    return isTruthy(evaluate(step.eventFilter, filterCtx));
  } catch {
    return false;
  }
}

/**
 * Claims up to `wanted` unclaimed deliveries on `hookPath` that pass the filter, with their events.
 * Another run waiting on the path may claim one first (its commit wins, this one writes nothing):
 * then the inbox is read again, without it — a lost race is no failure of this wait.
 */
async function claimDeliveries(
  step: WaitStep,
  hookPath: string,
  wanted: number,
  waitId: string,
  expiresAt: number,
  path: string,
  frame: Frame,
  rt: StepRuntime,
  filterOnDelivery: boolean,
): Promise<{ eventId: string; payload: unknown; receivedAt: number }[]> {
  const ctx = evalContext(rt, frame, path);
  // `reqon resume RUN --payload P` is P for this run (resume:RUN:…, run-resume.ts deliveryIdOf):
  // taken before older deliveries on the path, which the next wait there takes (helper 96: the
  // run took an older one and completed, and P was left to the mission's next run).
  const ours = `resume:${rt.runId}:`;
  for (;;) {
    const inbox = await rt.inbox(hookPath);
    const taken: { eventId: string; payload: unknown; receivedAt: number }[] = [];
    for (const delivery of [...inbox.filter((d) => d.eventId.startsWith(ours)), ...inbox.filter((d) => !d.eventId.startsWith(ours))]) {
      if (taken.length >= wanted) break;
      // One that arrived after the wait expired was not in time for it (a worker would have timed
      // the wait out first): it stays in the inbox, for a later wait on the path (a retry's).
      if (delivery.receivedAt > expiresAt) continue;
      if (!passesFilter(step, ctx, delivery, filterOnDelivery)) continue;
      taken.push(delivery);
    }
    if (taken.length === 0) return [];
    // What the walk buffered commits on its own first: a claim that loses writes nothing, and must
    // not take earlier events (or the resume's marker) down with it.
    if (rt.journal.hasPending) await rt.journal.commit({ durable: false });
    for (const t of taken) rt.journal.emit('webhook.received', path, { waitId, eventId: t.eventId, payload: t.payload, receivedAt: t.receivedAt });
    try {
      await rt.journal.commit({
        durable: false,
        extra: taken.map((t) => ({ kind: 'claim-webhook' as const, path: hookPath, eventId: t.eventId, waitId })),
      });
      return taken;
    } catch (error) {
      if (!(error instanceof DeliveryClaimedError)) throw error;
    }
  }
}

async function finish(
  step: WaitStep,
  path: string,
  frame: Frame,
  rt: StepRuntime,
  received: { eventId: string; payload: unknown }[],
  timedOut: boolean,
  timeout: number,
  nonBlocking = false,
): Promise<StepOutcome> {
  if (timedOut && received.length === 0 && nonBlocking) {
    // `timeout: 0`, upstream's "non-blocking check for existing webhooks": nothing had arrived.
    frame.response = null;
    frame.scope.set('webhook', null);
    rt.progress(`${path}: no webhook event had arrived on ${step.path?.value ?? 'its path'}; a \`timeout: 0\` wait carries on without one (\`webhook\` is null)`);
    return { response: null };
  }
  if (timedOut && received.length === 0) {
    if (step.retry) throw new RetrySignal(step.retry, step.start);
    // With a filter, "no events received" was false of a wait whose deliveries it refused (they stay unclaimed in the inbox).
    const what = step.eventFilter ? "no event that passes the wait's eventFilter (deliveries it refused stay unclaimed in the inbox)" : 'no events';
    throw new StepError('webhook-timeout', `Webhook timeout: ${what} received within ${timeout}ms`);
  }
  const bodies = received.map((r) => r.payload);
  frame.response = bodies.length === 1 ? bodies[0] : bodies;
  // Upstream's docs name what a wait received `webhook` (`match webhook { … }`, `webhook.data.id`):
  // the steps after it see it so, as after `let webhook = response` (docs/language.md).
  frame.scope.set('webhook', frame.response);
  if (step.storage) {
    const ctx = evalContext(rt, frame, path);
    const writes: PlannedWrite[] = received.map(({ eventId, payload: body }, index) => {
      const id = effectId(rt.journal.identityRunId(path), path, 'store', index);
      const key = step.storage!.key ? evaluate(step.storage!.key, { ...ctx, response: body, current: body }) : eventId;
      if (key === undefined || key === null) throw new StepError('bad-key', `wait storage key evaluated to ${String(key)} for webhook event ${eventId}`);
      const record = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : { value: body };
      // The rules of every store step's key (stores/keys.ts): an object or an integer past 2^53
      // is refused, never "[object Object]" or a rounded id that merges deliveries (helper 96).
      const stored = rt.http.logFormat >= WAIT_AND_UNTIL_RULES_FORMAT ? storeKey(record, index, id, { value: key, step: `${path} (wait storage)` }) : String(key);
      return { effectId: id, key: stored, record, op: 'set' };
    });
    await writeRecords(step.storage.target.name, writes, path, frame, rt);
  }
  return { response: frame.response };
}

/** A number in [0, 1) drawn from `id` (a filter's `random()`: the same for a delivery every time). */
function unitFromId(id: string): number {
  return hash('sha256', id, 'buffer').readUInt32BE(0) / 2 ** 32;
}
