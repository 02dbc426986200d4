/**
 * Store writes (§C.6) with their guarantees:
 * - memory, sql, nosql: the record and its `store.write` event commit in ONE log transaction,
 *   together with the sync checkpoints the records cover → exactly once.
 * - file, postgrest: a durable `store.intent` first, then the idempotent write, then the
 *   `store.write` events; a crash in between re-applies the same keyed write on replay.
 * Keys never depend on time or randomness (stores/keys.ts), so a replay writes the same keys.
 */
import { passCheckpoints } from './step-runtime.js';
import type { StoreStep } from '../lang/ast.js';
import { evaluate } from '../eval/evaluate.js';
import type { EvalContext } from '../eval/scope.js';
import type { CommitEntry } from '../log/log.js';
import { mayBeRefused } from '../log/store-rules.js';
import { storedPayloadJson, type EventPayloads, type StoredEvent } from '../log/events.js';
import { storeWritePayloadJson } from '../log/rows.js';
import { Effect } from '../journal/effect.js';
import { effectId } from '../journal/effect-id.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { assertRecord, storeKey } from '../stores/keys.js';
import { mergeUpsert, prepareRecord, resolveStoredRecord } from '../stores/merge.js';
import { canonicalJson, describeValue } from '../eval/values.js';
import { evalContext, type Frame, type PendingCheckpoint, type StepRuntime } from './step-runtime.js';
import { noteStored, recordedWithStore, takeCheckpoint } from './checkpoints.js';
import { replayRecordedFailure } from './store-runtime.js';
import type { StepOutcome } from './step-runtime.js';
import { CHECKPOINT_STORE } from '../lang/builtin-names.js';
import { storeSyncState } from './sync-state.js';

export interface PlannedWrite {
  effectId: string;
  key: string;
  /** Ignored by a 'delete' (`delete S[k]`, store-delete-step.ts). */
  record: Record<string, unknown>;
  op: 'set' | 'upsert' | 'delete';
}

/**
 * Records a step writes to a memory, sql or nosql store per batch (one commit of the log each).
 * A batch's planned writes, commit entries and events are held in memory until it commits, about
 * 1.5 KB a record: written as one batch, a 62 MB answer of 4.5M small records took the process
 * past a 2 GB heap. A file or PostgREST store is written as one batch (each batch rewrites its file).
 */
export const STORE_BATCH_RECORDS = 10_000;

export async function runStore(step: StoreStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  // The undeclared checkpoint store (sync-state.ts): a write sets a checkpoint.
  if (step.store.name === CHECKPOINT_STORE && !rt.model.stores.has(CHECKPOINT_STORE)) return storeSyncState(step, path, frame, rt);
  // One context for the source and the keys: the same scope, response and journaled inputs.
  const ctx = evalContext(rt, frame, path);
  const value = evaluate(step.source, ctx);
  const items = Array.isArray(value) ? value : [value];
  const kind = rt.stores.kind(step.store.name);
  const keyed = new ContentKeys();
  if (items.length <= STORE_BATCH_RECORDS || kind === 'file' || kind === 'postgrest') {
    await writeRecords(step.store.name, planWrites(step, items, 0, path, frame, rt, keyed, ctx), path, frame, rt);
  } else {
    // As writeRecords does for one batch: the records are noted once, for the whole step.
    if (!frame.inIteration) noteStored(frame.checkpoints, items.length);
    await withCheckpointsHeld(frame, async () => {
      for (let first = 0; first < items.length; first += STORE_BATCH_RECORDS) {
        const batch = items.slice(first, first + STORE_BATCH_RECORDS);
        await writeRecords(step.store.name, planWrites(step, batch, first, path, frame, rt, keyed, ctx), path, frame, rt);
        await rt.journal.maybeFlush();
      }
    });
    await advanceCheckpoints(recordedWithStore(frame, path, rt), path, rt);
  }
  keyed.warn(path, rt);
  return {};
}

/**
 * One page of a streamed `store response -> S` (MissionModel.streamedStore): the same writes —
 * effect ids, keys, records — that runStore makes for these items at their positions in the
 * whole response, written as one batch. The checkpoint waits for finishStreamedStore.
 */
export async function storeStreamedPage(step: StoreStep, items: unknown[], firstIndex: number, path: string, frame: Frame, rt: StepRuntime): Promise<void> {
  await withCheckpointsHeld(frame, async () => {
    const keyed = new ContentKeys();
    await writeRecords(step.store.name, planWrites(step, items, firstIndex, path, frame, rt, keyed), path, frame, rt);
    keyed.warn(path, rt);
  });
  await rt.journal.maybeFlush();
}

/** Batches of one step's writes: the action's pending checkpoints are noted for the step, not per batch. */
async function withCheckpointsHeld(frame: Frame, write: () => Promise<void>): Promise<void> {
  const held = frame.checkpoints.splice(0);
  try {
    await write();
  } finally {
    frame.checkpoints.push(...held);
  }
}

/** After the last page: the fetch's checkpoint advances, covering every record stored. */
export async function finishStreamedStore(records: number, path: string, frame: Frame, rt: StepRuntime): Promise<void> {
  if (frame.inIteration) return;
  const legacy = recordedWithStore(frame, path, rt);
  if (legacy.length > 0) await advanceCheckpoints(legacy, path, rt, records);
  // The store is its action's last step: the action's end advances the checkpoint (checkpoints.ts).
  else noteStored(frame.checkpoints, records, true);
}

/**
 * What one store step's records share, said once it has written them. Keys of records keyed by
 * their content (no `key:`, no id), to tell identical ones apart: two identical rows of one answer
 * (two coffees of one day) are one record (a second run of a sync overwrites the first's, never
 * doubles it). And, within one page or batch, a key two *different* records were given under a
 * replacing write (`{id: 7, sku: "apple"}` then `{id: 7, sku: "pear"}`): the store keeps the
 * later, and without a word the earlier was lost as if it had never been sent.
 */
class ContentKeys {
  private seen: Set<string> | undefined;
  private merged = 0;
  private replaced = 0;
  private firstReplaced: string | undefined;

  note(key: string): void {
    this.seen ??= new Set();
    if (this.seen.has(key)) this.merged++;
    else this.seen.add(key);
  }

  noteReplaced(key: string): void {
    this.replaced++;
    this.firstReplaced ??= key;
  }

  warn(path: string, rt: StepRuntime): void {
    if (this.merged > 0) {
      rt.progress(
        `warning: ${path}: ${this.merged} record(s) identical to another of the same write, with no id and no key:, were stored as one — records without a key are keyed by their content; give the store step a key: to keep each`,
      );
    }
    if (this.replaced > 0) {
      rt.progress(
        `warning: ${path}: ${this.replaced} record(s) had the key of another, different record of the same write (key ${JSON.stringify(this.firstReplaced)} first): a store keeps one record per key, so each replaced the one before it — check the step's key: (or the records' id), or use upsert: true to merge them`,
      );
    }
  }
}

/** The writes of `items` (positions `firstIndex`…) into the step's store. */
function planWrites(
  step: StoreStep,
  items: unknown[],
  firstIndex: number,
  path: string,
  frame: Frame,
  rt: StepRuntime,
  keyed: ContentKeys,
  ctx: EvalContext = evalContext(rt, frame, path),
): PlannedWrite[] {
  // Runs again for every record on replay (the keys are checked against the log): a plain loop.
  // `partial: true` is a partial update: merged into the stored record like an upsert (merge.ts).
  const op = step.upsert || step.partial === true ? 'upsert' : 'set';
  const writes: PlannedWrite[] = new Array<PlannedWrite>(items.length);
  // Keys this page or batch gave, to notice two different records under one (ContentKeys).
  const given = op === 'set' && items.length > 1 ? new Map<string, Record<string, unknown>>() : undefined;
  for (let offset = 0; offset < items.length; offset++) {
    const item: unknown = items[offset];
    const index = firstIndex + offset;
    assertRecord(item, `record #${index} of the store step at ${path}`);
    const id = effectId(rt.journal.identityRunId(path), path, 'store', index);
    const keyValue = step.key ? { value: evaluate(step.key, { ...ctx, current: item }), step: path } : undefined;
    const key = storeKey(item, index, id, keyValue);
    if (keyValue === undefined && (item['id'] === undefined || item['id'] === null)) keyed.note(key);
    else if (given !== undefined) {
      const before = given.get(key);
      if (before !== undefined && canonicalJson(before) !== canonicalJson(item)) keyed.noteReplaced(key);
      given.set(key, item);
    }
    writes[offset] = { effectId: id, key, record: prepareRecord(item, step.partial), op };
  }
  return writes;
}

/** `queue S` / `onError queue S`: the value goes to S under its `id`, else a stable derived key. */
export async function queueValue(
  store: string,
  value: unknown,
  path: string,
  frame: Frame,
  rt: StepRuntime,
  /** `queue S { key: … }`: the key computed from the queued record. */
  keyOf?: (record: Record<string, unknown>) => unknown,
  /**
   * Which of the identical items of its loop's collection this is (1 for the first): a record keyed
   * by its content alone takes `~N` after that key from the second on, so equal items failing are
   * as many dead letters as failures.
   */
  occurrence = 1,
): Promise<void> {
  const record =
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  const id = effectId(rt.journal.identityRunId(path), path, 'store', 'queue');
  const byContent = keyOf === undefined && (record['id'] === undefined || record['id'] === null);
  const key = storeKey(record, 0, id, keyOf ? { value: keyOf(record), step: path } : undefined) + (byContent && occurrence > 1 ? `~${occurrence}` : '');
  await writeRecords(store, [{ effectId: id, key, record, op: 'set' }], path, frame, rt);
}

/** Writes a batch to `store` under the guarantees above, replaying recorded writes when present. */
export async function writeRecords(
  store: string,
  writes: PlannedWrite[],
  path: string,
  frame: Frame,
  rt: StepRuntime,
): Promise<void> {
  const kind = rt.stores.kind(store);
  const turn = rt.crash.turn(kind === 'file' || kind === 'postgrest' ? 'external-write' : 'table-write', path);
  if (turn) await turn;
  assertSameDeclaration(store, path, rt);
  const batchId = writes[0]?.effectId ?? effectId(rt.journal.identityRunId(path), path, 'store', 'empty');
  // A checkpoint advances at the end of its action, never with one store (steps/checkpoints.ts);
  // only a replay of an older log, which recorded it with the store, takes it here.
  if (!frame.inIteration) noteStored(frame.checkpoints, writes.length);
  const checkpoints: PendingCheckpoint[] = [];

  if (kind === 'file' || kind === 'postgrest') {
    // External: the intent (which keys, to which store) is durable before the store is touched.
    const effect = new Effect(rt.journal, rt.crash, { kind: 'external-write', key: batchId, path, external: true });
    const keys = writes.map((w) => w.key);
    const intent = effect.takeIntent('store.intent', () => true, (recorded) => assertSameBatch(recorded, store, keys, rt));
    if (!intent) await effect.recordIntent('store.intent', { effectId: batchId, store, keys });
    effect.pass('before-effect');
    const recorded = takeRecordedWrites(writes, store, path, rt);
    if (recorded.length === writes.length) {
      // Fully replayed: counted towards --crash-at POINT:N like the live pass was, never killing.
      if (writes.length > 0) {
        effect.pass('mid-store', false);
        effect.pass('after-effect', false);
      }
    } else {
      const adapter = rt.stores.externalStore(store);
      const pendingWrites = writes.slice(recorded.length);
      effect.pass('mid-store', true);
      const stored = await adapter.write(pendingWrites.map(({ key, record, op }) => ({ key, record, op })));
      effect.pass('after-effect', true);
      stored.forEach((s, i) =>
        rt.journal.emit('store.write', path, {
          effectId: pendingWrites[i]!.effectId,
          store,
          key: s.key,
          record: s.record,
          op: pendingWrites[i]!.op,
          ...(i === 0 ? { batch: batchId } : {}),
          ...(s.record === null && s.removed !== undefined ? { removed: s.removed } : {}),
          // What the store was sent: what it keeps may hold more (fields a server adds, a merge).
          ...(pendingWrites[i]!.op !== 'delete' ? { planned: pendingWrites[i]!.record } : {}),
        }),
      );
    }
    await advanceCheckpoints(recordedWithStore(frame, path, rt), path, rt);
    return;
  }

  // memory, sql, nosql: one atomic commit, the writes' own events its record (no intent: nothing
  // outside the log sees them, and a crash before the commit loses writes and events together).
  const effect = new Effect(rt.journal, rt.crash, { kind: 'table-write', key: batchId, path, external: false });
  const recorded = takeRecordedWrites(writes, store, path, rt);
  if (recorded.length === writes.length) {
    // Replayed: the batch's passes still count towards --crash-at POINT:N, but cannot kill.
    if (writes.length > 0) {
      effect.pass('before-effect', false);
      effect.pass('mid-store', false);
    }
    if (kind === 'memory') for (const event of recorded) rt.stores.memoryReplay(event);
    await advanceCheckpoints(recordedWithStore(frame, path, rt), path, rt);
    return;
  }
  if (recorded.length > 0) {
    // A commit is atomic, so a partially recorded batch means the batch itself changed.
    throw new NondeterminismError(rt.runId, path, recorded[recorded.length - 1]!.seq, `${recorded.length} store.write events`, `${writes.length} writes`);
  }
  effect.pass('before-effect', true);
  const extra: CommitEntry[] = [];
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    // The first write names the batch: the crash-point fold counts batches by it (journal/effects.ts).
    const batch = i === 0 ? { batch: batchId } : {};
    if (kind === 'memory') {
      if (w.op === 'delete') {
        const removed = rt.stores.memoryWrite(store, w.key, null);
        rt.journal.emit('store.write', path, { effectId: w.effectId, store, key: w.key, record: null, op: 'delete', ...batch, removed });
        continue;
      }
      const record = resolveStoredRecord(w.op, rt.stores.memoryGet(store, w.key), w.record);
      rt.stores.memoryWrite(store, w.key, record);
      rt.journal.emit('store.write', path, { effectId: w.effectId, store, key: w.key, record, op: w.op, ...batch, ...(w.op === 'upsert' ? { planned: w.record } : {}) });
    } else {
      extra.push({
        kind: 'store',
        write: {
          storeKind: kind,
          table: rt.stores.target(store),
          store,
          key: w.key,
          record: w.record,
          op: w.op,
          stepPath: path,
          effectId: w.effectId,
          recordedAt: rt.env.clock.now(),
          ...batch,
        },
      });
    }
  }
  for (const c of checkpoints) {
    extra.push({
      kind: 'event',
      event: { type: 'checkpoint.advanced', stepPath: path, payload: { key: c.key, syncedAt: c.syncedAt, records: writes.length, ...(c.api !== undefined ? { api: c.api } : {}) }, recordedAt: rt.env.clock.now() },
    });
  }
  // The outcome of a kill here equals one inside the transaction before COMMIT: nothing lands.
  effect.pass('mid-store', true);
  // A store's first write (until one has committed), and a write the log's database may refuse
  // however its table is (a key PostgreSQL cannot hold, a record too wide), commit at once so that
  // a refusal fails THIS step, in a commit of its own: what earlier steps buffered must not go down
  // with it, nor a later step's commit it would otherwise ride on.
  const alone = rt.stores.firstWrite(store) || extra.some((e) => e.kind === 'store' && mayBeRefused(e.write.key, e.write.record));
  if (checkpoints.length > 0 || alone) {
    // A checkpoint must have landed when `after-checkpoint` is reached.
    if (alone && rt.journal.hasPending) await rt.journal.commit({ durable: false });
    await rt.journal.commit({ durable: false, extra });
    rt.stores.committed(store);
  } else {
    // Writes inside the log's database need no commit of their own (GUARANTEES 5, 8): they ride
    // in the same transaction as their store.write events with the run's next commit, and a
    // crash before it loses both together, so replay redoes them exactly once.
    rt.journal.buffer(extra);
  }
  const passed = passCheckpoints(checkpoints, path, rt, true);
  if (passed) await passed;
}

/** A write recorded at this step went to the store as the recording mission declared it: an edit must not move it. */
function assertSameDeclaration(store: string, path: string, rt: StepRuntime): void {
  const change = rt.stores.redeclared(store);
  if (change === undefined) return;
  const recorded = rt.journal.peek(path);
  if (recorded?.type !== 'store.write' && recorded?.type !== 'store.intent') return;
  const payload = recorded.payload as { store: string };
  throw new NondeterminismError(rt.runId, path, recorded.seq, `a write to \`${payload.store}\` as the run declared it`, `a write to \`${store}\` declared anew`, { change });
}

/** A recorded file/postgrest batch intent must name the same store and keys as the batch asked for. */
function assertSameBatch(recorded: StoredEvent<'store.intent'>, store: string, keys: string[], rt: StepRuntime): void {
  const was = recorded.payload;
  if (was.store === store && was.keys.length === keys.length && was.keys.every((k, i) => k === keys[i])) return;
  throw new NondeterminismError(
    rt.runId,
    recorded.stepPath,
    recorded.seq,
    `a batch of ${was.keys.length} write(s) to \`${was.store}\``,
    `a batch of ${keys.length} write(s) to \`${store}\``,
    { change: `the batch written to \`${was.store}\` (keys ${shortKeys(was.keys)}) became a batch to \`${store}\` (keys ${shortKeys(keys)})` },
  );
}

function shortKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, 3).map((k) => JSON.stringify(k)).join(', ');
  return keys.length > 3 ? `${shown}, … ${keys.length} in all` : shown || 'none';
}

/** Consumes the recorded `store.write` events of this batch, checking they are the same writes. */
function takeRecordedWrites(writes: PlannedWrite[], store: string, path: string, rt: StepRuntime): StoredEvent<'store.write'>[] {
  if (rt.journal.replaying) replayRecordedFailure(rt.journal, path);
  const out: StoredEvent<'store.write'>[] = [];
  const kind = rt.stores.kind(store);
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    // `take`, not `peek`: it refuses a different recorded event here, and refuses to go live while
    // recorded events elsewhere are unconsumed — a divergent replay must not write before it stops.
    const event = rt.journal.take(path, 'store.write');
    if (!event) break;
    if (recordedAsPlanned(event, w, i === 0 ? w.effectId : undefined, store, kind)) {
      out.push(event);
      continue;
    }
    if (event.payload.key !== w.key || event.payload.store !== store) {
      throw new NondeterminismError(
        rt.runId,
        path,
        event.seq,
        `a write of key "${event.payload.key}" to \`${event.payload.store}\``,
        `a write of key "${w.key}" to \`${store}\``,
        { change: `the write of key "${event.payload.key}" to \`${event.payload.store}\` became a write of key "${w.key}" to \`${store}\`` },
      );
    }
    // A removal is no write.
    if ((event.payload.op === 'delete') !== (w.op === 'delete')) {
      const was = event.payload.op === 'delete' ? 'a delete' : 'a write';
      const now = w.op === 'delete' ? 'a delete' : 'a write';
      throw new NondeterminismError(
        rt.runId,
        path,
        event.seq,
        `${was} of key "${event.payload.key}" in \`${store}\``,
        `${now} of key "${w.key}" in \`${store}\``,
        { change: `${was} of key "${w.key}" in \`${store}\` became ${now}` },
      );
    }
    if (w.op === 'delete') {
      assertSameEffect(event, w, store, path, rt);
      out.push(event);
      continue;
    }
    // A set made an upsert (or back) stores another record whenever the store held one under the
    // key: the record alone does not tell (a set of {id, a: 3} is recorded as such, and the
    // upsert's fields are all in it), so the kind of write is compared.
    if (event.payload.op !== undefined && event.payload.op !== w.op) {
      const kindOf = (op: string) => (op === 'upsert' ? 'an upsert (merged into the stored record)' : 'a set (replacing the stored record)');
      throw new NondeterminismError(
        rt.runId,
        path,
        event.seq,
        `${kindOf(event.payload.op)} of key "${event.payload.key}" in \`${store}\``,
        `${kindOf(w.op)} of key "${w.key}" in \`${store}\``,
        { change: `the write of key "${w.key}" to \`${store}\` was ${kindOf(event.payload.op)} and became ${kindOf(w.op)}` },
      );
    }
    if (!sameRecord(w, event.payload, kind)) {
      throw new NondeterminismError(
        rt.runId,
        path,
        event.seq,
        `the record ${describeValue(event.payload.planned ?? event.payload.record)} under key "${w.key}" in \`${store}\``,
        `the record ${describeValue(w.record)}`,
        { change: `the record written under key "${w.key}" to \`${store}\` changed` },
      );
    }
    assertSameEffect(event, w, store, path, rt);
    out.push(event);
  }
  return out;
}

/**
 * The effect id is a write's identity (what verify and the studio's diff show, what a store's
 * idempotency rests on): derived again, it must be the one recorded. Asked after the checks that
 * say what changed in words (a key, a delete, an op, a record), which change the id too. In a
 * fork's concurrent branches recorded by an older engine, which named them by how the branches
 * interleaved, a differing id is taken as recorded (Journal.takesEffectId; verify says so).
 */
function assertSameEffect(event: StoredEvent<'store.write'>, w: PlannedWrite, store: string, path: string, rt: StepRuntime): void {
  if (rt.journal.takesEffectId(event.payload.effectId, w.effectId)) return;
  throw new NondeterminismError(
    rt.runId,
    path,
    event.seq,
    `the write of key "${event.payload.key}" to \`${store}\` as effect ${event.payload.effectId}`,
    `the write of key "${w.key}" to \`${store}\` as effect ${w.effectId}`,
  );
}

/**
 * Whether the recorded write's stored text is, byte for byte, the text this write records: a
 * `set` into a store of the log's own database records exactly the JSON of {effectId, store, key,
 * record, op, batch} (rows.ts storeWritePayloadJson; a memory store's write event serialises to
 * the same), so then every check of takeRecordedWrites holds and the payload need not be parsed.
 * Any other text — an older log's, another write's, a payload already parsed — goes through
 * those checks.
 */
function recordedAsPlanned(event: StoredEvent<'store.write'>, w: PlannedWrite, batch: string | undefined, store: string, kind: string): boolean {
  if (w.op !== 'set' || (kind !== 'memory' && kind !== 'sql' && kind !== 'nosql')) return false;
  const text = storedPayloadJson(event);
  if (text === undefined) return false;
  let recordJson: string;
  try {
    recordJson = JSON.stringify(w.record);
  } catch {
    return false; // not JSON: the checks say what the record is
  }
  return text === storeWritePayloadJson({ effectId: w.effectId, store, key: w.key, op: w.op, batch, record: w.record }, recordJson);
}

/**
 * Whether the recorded write is this write. A `set` into a store of the log's own database stores
 * exactly the planned record; an upsert (and any write to a file or PostgREST store, whose rows
 * may carry fields the server added) records what it planned beside what it stored (`planned`),
 * compared exactly. A log from before `planned` holds only the stored merge: there the planned
 * fields applied again to it must change nothing (a JSON Merge Patch is idempotent) — a field the
 * edit dropped goes unnoticed, which verify names as not checked (verify.ts).
 */
function sameRecord(w: PlannedWrite, payload: EventPayloads['store.write'], kind: string): boolean {
  if (payload.planned !== undefined) return canonicalJson(w.record) === canonicalJson(payload.planned);
  const recorded = payload.record;
  const exact = w.op === 'set' && (kind === 'memory' || kind === 'sql' || kind === 'nosql');
  // Fast path: the recorded record is the planned one's JSON read back, key order kept.
  if (exact && JSON.stringify(w.record) === JSON.stringify(recorded)) return true;
  const asRecorded = exact ? resolveStoredRecord('set', undefined, w.record) : mergeUpsert(recorded as Record<string, unknown>, w.record);
  return canonicalJson(asRecorded) === canonicalJson(recorded);
}

/** Checkpoints that ride with a batch: replayed from the log, or committed with it. */
async function advanceCheckpoints(checkpoints: PendingCheckpoint[], path: string, rt: StepRuntime, records?: number): Promise<void> {
  let live = 0;
  for (const c of checkpoints) {
    if (takeCheckpoint(c, path, rt)) continue;
    rt.journal.emit('checkpoint.advanced', path, { key: c.key, syncedAt: c.syncedAt, ...(records !== undefined ? { records } : {}), ...(c.api !== undefined ? { api: c.api } : {}) });
    live++;
  }
  if (live > 0 || !rt.journal.replaying) await rt.journal.commit({ durable: false });
  const passed = passCheckpoints(checkpoints, path, rt, !rt.journal.replaying);
  if (passed) await passed;
}
