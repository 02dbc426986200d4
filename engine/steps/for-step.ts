/**
 * `for x in coll where … concurrency N onError … { … }` (§C.2, V2 semantics).
 *
 * The collection is recorded input: a memory store is run-local state (replayed), any other
 * store's contents are read once and recorded, and an expression evaluates over recorded values.
 * Each iteration's steps have the path `<for>[<index>]/…`, so concurrent iterations replay
 * independently of how they interleaved. `skip` (and `queue`) end the current iteration only;
 * `abort` fails the run whatever `onError` says.
 */
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { CredentialsError } from '../http/credentials.js';
import { asLogged } from '../log/loggable.js';
import type { Clock } from '../env/env.js';
import type { ForStep } from '../lang/ast.js';
import type { StoredEvent } from '../log/events.js';
import { TOLERATED_MINIMAL_FAILURE_FORMAT } from '../log/events.js';
import { evaluate } from '../eval/evaluate.js';
import { EVAL_RULES_FORMAT, withRecord } from '../eval/scope.js';
import { isConcurrent } from '../lang/check-bindings.js';
import { canonicalJson, describeValue, isTruthy } from '../eval/values.js';
import { iterationPath, loopConstruct } from '../journal/step-path.js';
import { ReplayExhausted } from '../journal/journal.js';
import { AbortError, endOfWalk, isEngineError, isFlowSignal, SkipSignal, StepError } from './signals.js';
import { evalContext, failedReadAt, type Frame, type StepRuntime } from './step-runtime.js';
import type { StepOutcome } from './step-runtime.js';
import { queueValue } from './store-step.js';
import { holdCheckpoints } from './checkpoints.js';
import { spanOf } from '../lang/ast.js';

/** How long a loop may hold the event loop before it yields a turn (checked every 1024 iterations). */
const YIELD_EVERY_MS = 50;

/**
 * Iterations that run synchronously (Executor.runSteps) never give the event loop a turn: asked
 * once per iteration, this returns a promise of one every 1024 iterations once YIELD_EVERY_MS has
 * passed, so timers (the lease's renewal) and signals (a worker's shutdown) get in during a long
 * loop; otherwise undefined (no promise, no cost).
 */
function pacer(clock: Clock): () => Promise<void> | undefined {
  let calls = 0;
  let last = clock.now();
  return () => {
    if ((++calls & 1023) !== 0 || clock.now() - last < YIELD_EVERY_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        last = clock.now();
        resolve();
      }),
    );
  };
}

export async function runFor(step: ForStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const items = await collection(step, path, frame, rt);
  // Positions of the items the loop runs, in order (holes of a sparse array are skipped, as
  // forEach skips them). Plain indices: a replay walks every iteration again, so the loop's own
  // bookkeeping stays out of the way.
  const selected: number[] = [];
  // The filter sees each item as the current record (`.status`) and, as the body does, as the loop
  // variable: `for t in xs where t != null` keeps the items that are there.
  const ctx = step.where ? evalContext(rt, frame, path) : undefined;
  const filterScope = ctx?.scope.child();
  for (let index = 0; index < items.length; index++) {
    if (!(index in items)) continue;
    if (!ctx) {
      selected.push(index);
      continue;
    }
    filterScope!.bind(step.variable.name, items[index]);
    if (isTruthy(evaluate(step.where!, withRecord({ ...ctx, scope: filterScope! }, items[index])))) selected.push(index);
  }

  /** One iteration; undefined when it ran synchronously to its end (Executor.runSteps). */
  const runOne = (index: number): Promise<void> | undefined => {
    const iterPath = iterationPath(path, index);
    const item = items[index];
    const child = frame.child(isConcurrent(step));
    child.scope.set(step.variable.name, item);
    child.occurrence = () => occurrenceOf(index);
    // A marker for the inspector, not an input: the item comes from the (recorded) collection.
    // (`record` without its closure: replayed from the log, else written.)
    if (rt.fullTrace && !rt.journal.take(iterPath, 'loop.iteration')) {
      rt.journal.emit('loop.iteration', iterPath, { index, key: iterationKey(item, index) });
    }
    const failed = (error: unknown) => iterationFailed(error, index, iterPath, item, child);
    let running: Promise<void> | undefined;
    try {
      running = rt.runSteps(step.body, iterPath, child);
    } catch (error) {
      return failed(error);
    }
    return running?.catch(failed);
  };

  /**
   * Set (synchronously, as the failure is decided) once an iteration ends the loop: a concurrent
   * loop starts no iteration after it (runPool).
   */
  let ended = false;
  const endLoop = (error: unknown): never => {
    if (!(error instanceof ReplayExhausted)) ended = true;
    throw error;
  };

  /**
   * What a failed iteration does: `skip` ends it; other failures end the loop or are tolerated
   * (onError). An `abort` is never tolerated: it fails the run (reference §C.8).
   */
  const iterationFailed = async (error: unknown, index: number, iterPath: string, item: unknown, child: Frame): Promise<void> => {
    if (error instanceof SkipSignal) return;
    // Credentials a source cannot use fail every item alike: the run's setup, not the item's data.
    if (isFlowSignal(error) || isEngineError(error) || error instanceof AbortError || error instanceof CredentialsError) endLoop(error);
    const mode = step.onError?.mode ?? 'continue';
    if (mode === 'abort') endLoop(error);
    const message = error instanceof Error ? error.message : String(error);
    const at = (error as { at?: unknown }).at;
    const tolerated = { code: (error as { code?: string }).code ?? 'error', message, ...(typeof at === 'string' ? { at } : {}) };
    rt.tolerated.push({ stepPath: iterPath, ...tolerated });
    // Under `trace: minimal` a pure step's failure logs nothing, and `reqon runs`/`show` said the run
    // completed without failures where it had printed "completed with 1 failure" (helper 79). The
    // iteration's own `step.failed` records it (counted once beside a traced step's, which it encloses).
    if (!rt.fullTrace && rt.http.logFormat >= TOLERATED_MINIMAL_FAILURE_FORMAT) {
      rt.journal.markFailure(iterPath, () => ({ stepType: 'For', error: tolerated }), false);
    }
    rt.journal.forgetFailuresIn(iterPath);
    holdCheckpoints(child.checkpoints);
    // Named by its step path (`A/1[0]` is the first item) and counted from one for people.
    rt.progress(`iteration ${iterPath} (item ${index + 1}) failed and was skipped: ${message}`);
    // (Runs recorded before log format 7 keyed equal items as one: kept, or their replay writes other keys.)
    const occurrence = rt.http.logFormat >= EVAL_RULES_FORMAT ? occurrenceOf(index) : 1;
    if (step.onError?.mode === 'queue') await queueValue(step.onError.store.name, item, iterPath, child, rt, undefined, occurrence);
  };

  /**
   * Which identical item of the collection the item at `index` is (1 for the first): two failed
   * items with neither id nor key and the same content (two equal order lines, two equal scalars)
   * were one dead letter, keyed by content, where the run counted two failures (helper 79).
   * Worked out once, on the loop's first queued failure.
   */
  let occurrences: Map<number, number> | undefined;
  const occurrenceOf = (index: number): number => {
    if (occurrences === undefined) {
      occurrences = new Map();
      const seen = new Map<string, number>();
      for (const i of selected) {
        const content = canonicalJson(items[i] ?? null);
        const n = (seen.get(content) ?? 0) + 1;
        seen.set(content, n);
        if (n > 1) occurrences.set(i, n);
      }
    }
    return occurrences.get(index) ?? 1;
  };

  const concurrency = step.concurrency ?? 1;
  // On a resume, a finished iteration need not be walked again (Journal.skipFinishedIteration):
  // its events are the record of everything it did. Only where the log tells all of it — every
  // step traced (a pure step's tolerated failure leaves no event under `trace: minimal`), no
  // interleaving, and nothing in the body that leaves state for later steps besides store
  // writes (MissionModel.iterationsSkippable).
  const skippable = concurrency <= 1 && rt.fullTrace && rt.model.iterationsSkippable(step);
  const skipFinished = (index: number, next: number): boolean => {
    const skipped = rt.journal.skipFinishedIteration(iterationPath(path, index), iterationPath(path, next));
    if (skipped) reapplyMemoryWrites(skipped, rt);
    return skipped !== undefined;
  };
  const pace = pacer(rt.env.clock);
  if (concurrency <= 1) {
    for (let k = 0; k < selected.length; k++) {
      const index = selected[k]!;
      const next = selected[k + 1];
      if (skippable && next !== undefined && rt.journal.replaying && skipFinished(index, next)) continue;
      const running = runOne(index);
      if (running) await running;
      const turn = pace();
      if (turn) await turn;
    }
  } else {
    /**
     * Whether iteration `index` starts now: not once an iteration ended the loop (those in flight
     * finish). A replay follows the log instead, where it can tell: a failure can be seen sooner
     * or later in a replay than it was live (a recorded answer comes at once, a request took its
     * time), so an iteration the log shows started starts, and, in a loop the log shows failed,
     * one it does not show never does. (Under `trace: minimal` an iteration leaves no marker.)
     */
    const mayStart = (index: number): boolean => {
      if (rt.fullTrace && rt.journal.replaying) {
        if (rt.journal.peek(iterationPath(path, index))?.type === 'loop.iteration') return true;
        if (rt.journal.peek(path)?.type === 'step.failed') return false;
      }
      return !ended;
    };
    const construct = loopConstruct(path);
    rt.journal.enterConcurrent(construct);
    // Armed with a crash point, the iterations take turns at it (CrashInjector.turn).
    const turns = rt.crash.enterBranches(construct, selected.map((index) => iterationPath(path, index)));
    try {
      await runPool(
        selected,
        concurrency,
        (index) => {
          const running = turns ? turns.settle(iterationPath(path, index), runOne(index)) : runOne(index);
          const turn = pace();
          return running || turn ? Promise.all([running, turn]).then(() => undefined) : undefined;
        },
        mayStart,
      );
    } finally {
      rt.crash.leaveBranches(turns);
      rt.journal.leaveConcurrent(construct);
    }
  }
  return {};
}

/**
 * What a skipped iteration changed in the run's memory, from its events: its writes to memory
 * stores (run-local state that later steps read), as the replay of its store steps would apply
 * them. Writes to other stores are in their database or files already.
 */
function reapplyMemoryWrites(events: readonly StoredEvent[], rt: StepRuntime): void {
  if (!rt.model.hasMemoryStores) return; // and the payloads stay unparsed
  for (const event of events) {
    if (event.type !== 'store.write' || rt.stores.kind(event.payload.store) !== 'memory') continue;
    rt.stores.memoryReplay(event);
  }
}

async function collection(step: ForStep, path: string, frame: Frame, rt: StepRuntime): Promise<unknown[]> {
  const expr = step.collection;
  if (expr.kind === 'Ref' && expr.parts.length === 1 && rt.model.stores.has(expr.parts[0]!)) {
    const store = expr.parts[0]!;
    if (rt.stores.kind(store) === 'memory') return rt.stores.memoryList(store).map((r) => r.record);
    failedReadAt(rt, path);
    const records = rt.journal.take(path, 'value.recorded');
    if (records) {
      // The loop read another store when it ran (helper 78: an edited `for o in archive` verified).
      const read = records.payload.store;
      if (read !== undefined && read !== store) {
        throw new NondeterminismError(rt.runId, path, records.seq, `the records of store \`${read}\``, `the records of store \`${store}\``, {
          change: `the loop iterates store \`${store}\`, where the run iterated \`${read}\``,
        });
      }
      return records.payload.value as unknown[];
    }
    // Store writes of this run may still be buffered: the read must see them.
    if (rt.journal.hasPending) await rt.journal.commit({ durable: false });
    // As the log will hold them (log/loggable.ts): the loop acts on what its replay reads back.
    const value = asLogged((await rt.stores.readAll(store)).map((r) => r.record), `the records read from store \`${store}\``);
    rt.journal.emit('value.recorded', path, { source: 'store-read', value, store });
    return value;
  }
  if (expr.kind === 'Ref' && expr.parts.length === 1 && expr.parts[0] !== 'response' && !frame.scope.has(expr.parts[0]!)) {
    // §C.2: a bare identifier names a variable (not a field of `response`); an unset one loops zero times.
    rt.progress(`\`for\` at ${path}: \`${expr.parts[0]}\` is not a variable or a store, so the loop runs zero times`);
    return [];
  }
  const value = evaluate(expr, evalContext(rt, frame, path));
  if (!Array.isArray(value)) {
    const text = rt.model.text(actionFile(rt, frame), spanOf(expr));
    // "absent (no value)", as everywhere else: the language has no `undefined` (values.ts).
    const fix = value === null || value === undefined ? `; loop over \`(${text} ?? [])\` to run zero times when it has none` : '';
    throw new StepError('not-an-array', `For loop collection must be an array, but \`${text}\` is ${describeValue(value)}${fix}`);
  }
  return value;
}

function actionFile(rt: StepRuntime, frame: Frame): string {
  return rt.model.actions.get(frame.action)?.file ?? rt.model.unit.root.file;
}

function iterationKey(item: unknown, index: number): string {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : String(index);
}

/**
 * Runs `fn` over `items`, in order, with at most `limit` in flight, while `mayStart` allows the
 * next (runFor: until an iteration ends the loop — a failure the loop does not tolerate, an
 * `abort`, a flow signal, a stop — as it is decided, not once its rejection is seen: a worker's
 * turn came in between, and started an iteration after the failure). Those in flight settle,
 * and the first rejection wins.
 *
 * A verify that reaches the log's end in one item (ReplayExhausted) is not such a rejection: the
 * log ends there because that item was still in flight when the run stopped, and the items after
 * it were started meanwhile and left their events in the log too. So the pool goes on starting
 * items, each replayed until it ends or reaches the log's end as well, and the end of the log is
 * thrown once every recorded iteration has been compared — before, the items after the first to
 * reach it were never walked, and verify called a log "matched" whose later iterations it had not
 * compared (a `resume --mission` that verify let through then diverged live, its edit adopted).
 */
async function runPool<T>(items: T[], limit: number, fn: (item: T) => Promise<void> | undefined, mayStart: (item: T) => boolean): Promise<void> {
  let next = 0;
  let failure: unknown;
  let logEnd: ReplayExhausted | undefined;
  const worker = async () => {
    while (next < items.length && mayStart(items[next]!)) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        if (error instanceof ReplayExhausted) logEnd ??= error;
        else failure = endOfWalk(failure, error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure;
  if (logEnd !== undefined) throw logEnd;
}
