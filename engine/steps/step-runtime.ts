/**
 * What a step sees while it runs: the run's services (journal, env, stores, HTTP, crash points),
 * the mission model, and the frame of the action or iteration it runs in. The executor builds
 * these; steps never reach up into it — nested steps run through `runSteps`, a callback.
 */
import type { Env } from '../env/env.js';
import type { EvalContext } from '../eval/scope.js';
import { Scope } from '../eval/scope.js';
import { storeView, type EvalInputs, type StoreView } from '../eval/inputs.js';
import { asLogged } from '../log/loggable.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { Effect } from '../journal/effect.js';
import { derivedId } from '../journal/derived-id.js';
import type { Journal } from '../journal/journal.js';
import type { CrashInjector } from '../journal/crash-points.js';
import type { ErrorInfo, StoredEvent } from '../log/events.js';
import type { LastCheckpoint } from '../log/log.js';
import type { MissionModel, StepReads } from './mission-model.js';
import { StepError } from './signals.js';
import type { StoreRuntime } from './store-runtime.js';
import { lastCheckpointOf, type HttpRuntime } from './http-runtime.js';
import type { Step } from '../lang/ast.js';

/** What a step reports in its `step.completed` event. */
export interface StepOutcome {
  response?: unknown;
  bind?: { name: string; value: unknown };
}

/** A sync checkpoint waiting for the store write that covers its records (§C.1.6). */
export interface PendingCheckpoint {
  key: string;
  syncedAt: number;
  /** The API it belongs to: the base URL the fetch's source fetched from (HttpRuntime.checkpointApi). */
  api?: string;
  /** Of a bare lastSync: the request's query, redacted (checkpoint.advanced's `query`), and its sha256. */
  query?: string;
  querySha256?: string;
}

/** The mutable state of one action attempt or loop iteration. */
export class Frame {
  response: unknown = undefined;
  /** Status of the last HTTP response, for `match` status arms. */
  lastStatus: number | undefined = undefined;
  /** How many `generateId()`s each step path of this frame asked for (journaledInputs). */
  idCounts: Map<string, number> | undefined = undefined;
  /**
   * What a directive written as a step (`queue bad`, `abort e`) acts on inside a `validate … or`
   * block (the validated value) or a `match` arm's block (the matched value), until a step of
   * the block sets `response` (`responseAtEntry` is what it was when the block began): then, as
   * elsewhere, the current `response`. Not inherited by a loop iteration.
   */
  flowSubject: { value: unknown; responseAtEntry: unknown } | undefined = undefined;
  /**
   * In a loop iteration: which of the identical items of its collection this one is (1 for the
   * first), for a dead letter a `queue` directive keys by content (for-step.ts occurrenceOf).
   */
  occurrence: (() => number) | undefined = undefined;

  constructor(
    readonly action: string,
    readonly scope: Scope,
    /** Shared by an action and its iterations. */
    readonly checkpoints: PendingCheckpoint[],
    /**
     * True inside a loop iteration. A store there covers one item, not everything the fetch
     * returned, so it must not advance the action's checkpoints: they wait for a store at the
     * action's own level, or for the end of the action.
     */
    readonly inIteration = false,
  ) {}

  /** A loop iteration: own scope (`isolated` for a concurrent loop's), inherits `response` and the last status. */
  child(isolated = false): Frame {
    const frame = new Frame(this.action, this.scope.child(isolated), this.checkpoints, true);
    frame.response = this.response;
    frame.lastStatus = this.lastStatus;
    return frame;
  }
}

/** What prefetchReads read for one step: stores by name, checkpoints (ISO instants or null) by key. */
export interface PrefetchedReads {
  readonly stores: ReadonlyMap<string, StoreView>;
  readonly checkpoints: ReadonlyMap<string, string | null>;
}

/** A failure that a `for … onError continue` tolerated: reported in the run result. */
export interface ToleratedError extends ErrorInfo {
  stepPath: string;
}

export interface StepRuntime {
  readonly runId: string;
  readonly model: MissionModel;
  readonly journal: Journal;
  readonly env: Env;
  readonly crash: CrashInjector;
  readonly stores: StoreRuntime;
  readonly http: HttpRuntime;
  readonly tolerated: ToleratedError[];
  /**
   * `trace: full` (the default): every step writes `step.started`/`step.completed` and every loop
   * iteration a `loop.iteration`. False for `trace: minimal`: pure steps write no events of their
   * own (see executor.ts, "Trace modes").
   */
  readonly fullTrace: boolean;
  /**
   * The persistent stores read for the step at each path while it runs (prefetchStoreReads),
   * by store name: what `journaledInputs(rt, path).store(name)` answers.
   */
  readonly storeReads: Map<string, PrefetchedReads>;
  /** Environment as the mission's `env("NAME")` sees it: the run's `--env` over the process's. */
  envVar(name: string): string | undefined;
  /** Every value `env("…")` could return in this run (missionEnvValues). */
  envValues(): readonly string[];
  /** The latest sync checkpoint under `key` of `api` (PendingCheckpoint.api) from earlier runs of this mission (ms), if any. */
  lastSync(key: string, api?: string): Promise<LastCheckpoint | undefined>;
  /** Unclaimed webhook deliveries on `path`, oldest first. */
  inbox(path: string): Promise<{ eventId: string; payload: unknown; receivedAt: number }[]>;
  /** Progress for people (stderr); never part of the log. */
  progress(line: string): void;
  /** Undefined when every step ran synchronously (see Executor.runSteps), else a promise of the rest. */
  runSteps(steps: readonly Step[], parentPath: string, frame: Frame): Promise<void> | undefined;
}

/**
 * Non-deterministic inputs for expressions at `stepPath`, recorded live and replayed after.
 * `frame` carries the per-step count of `generateId()` (without one, each call site counts alone).
 */
export function journaledInputs(rt: StepRuntime, stepPath: string, frame?: Frame): EvalInputs {
  let localIds = 0;
  return {
    generateId: () => {
      let n: number;
      if (frame) {
        const counts = (frame.idCounts ??= new Map());
        n = counts.get(stepPath) ?? 0;
        counts.set(stepPath, n + 1);
      } else n = localIds++;
      // A fork's copied stretch derives the ids its recorder derived (journal/fork-identity.ts).
      return derivedId(rt.journal.identityRunId(stepPath), stepPath, n);
    },
    now: () =>
      rt.journal.record(stepPath, 'value.recorded', () => ({ source: 'now', value: rt.env.clock.now() })).value as number,
    random: () =>
      rt.journal.record(stepPath, 'value.recorded', () => ({ source: 'random', value: rt.env.random.next() })).value as number,
    env: (name) => rt.envVar(name),
    syncState: (key) => {
      const read = rt.storeReads.get(stepPath)?.checkpoints;
      if (!read?.has(key)) throw new StepError('sync-state', `sync_state.get(${JSON.stringify(key)}) at ${stepPath}: the key must be a string literal, so the run can read the checkpoint before the step`);
      return read.get(key);
    },
    store: (name) => {
      const decl = rt.model.stores.get(name);
      if (!decl) return undefined;
      if (decl.type.kind === 'memory') return storeView(rt.stores.memoryList(name));
      const read = rt.storeReads.get(stepPath)?.stores.get(name);
      // The step's expressions were walked for store names (MissionModel.storesRead): a miss is ours.
      if (!read) throw new Error(`internal: store \`${name}\` was not read before the step at ${stepPath} ran`);
      return read;
    },
  };
}

/**
 * Before the step at `path` runs, what its expressions read (MissionModel.readsOf), each read
 * recorded as `for x in store` records its collection: a persistent store — buffered writes of
 * this run committed first so the read sees them — as `value.recorded` (source `store-read`,
 * `{ store, keys, records }`), a checkpoint (`sync_state.get("k")`) as `value.recorded` (source
 * `last-sync`, `{ key, at }`), each as the log will hold it; a replay answers from the log.
 * Undefined when there is nothing to read; the caller clears `rt.storeReads` after the step.
 */
export function prefetchReads(reads: StepReads, path: string, rt: StepRuntime): Promise<void> | undefined {
  if (reads.none) return undefined;
  return (async () => {
    const views = new Map<string, StoreView>();
    const checkpoints = new Map<string, string | null>();
    for (const store of reads.stores) {
      failedReadAt(rt, path);
      const recorded = rt.journal.take(path, 'value.recorded');
      let value: { store: string; keys: string[]; records: unknown[] };
      if (recorded) {
        value = recorded.payload.value as typeof value;
        if (recorded.payload.source !== 'store-read' || value?.store !== store || !Array.isArray(value.keys) || !Array.isArray(value.records)) {
          throw new NondeterminismError(rt.runId, path, recorded.seq, `a ${recorded.payload.source} value`, `a read of store \`${store}\``);
        }
      } else {
        if (rt.journal.hasPending) await rt.journal.commit({ durable: false });
        const rows = await rt.stores.readAll(store);
        value = asLogged({ store, keys: rows.map((r) => r.key), records: rows.map((r) => r.record) }, `the records read from store \`${store}\``);
        rt.journal.emit('value.recorded', path, { source: 'store-read', value });
      }
      views.set(store, storeView(value.keys.map((key, i) => ({ key, record: value.records[i] }))));
    }
    for (const key of reads.syncKeys) {
      failedReadAt(rt, path);
      const recorded = rt.journal.take(path, 'value.recorded');
      let value: { key: string; at: number | null };
      if (recorded) {
        value = recorded.payload.value as typeof value;
        if (recorded.payload.source !== 'last-sync' || value?.key !== key) {
          throw new NondeterminismError(rt.runId, path, recorded.seq, `a ${recorded.payload.source} value`, `checkpoint "${key}"`);
        }
      } else {
        const which = rt.http.syncStateApi();
        value = { key, at: (await lastCheckpointOf(key, which, (k, a) => rt.lastSync(k, a)))?.syncedAt ?? null };
        rt.journal.emit('value.recorded', path, { source: 'last-sync', value, ...(which.api !== undefined ? { api: which.api } : {}) });
      }
      checkpoints.set(key, value.at === null ? null : new Date(value.at).toISOString());
    }
    rt.storeReads.set(path, { stores: views, checkpoints });
  })();
}

/**
 * Replayed, a read whose live turn failed (a PostgREST table that answered 500, rows the log
 * could not hold) left no value but the step's failure: the step fails again as it did — its
 * recorded error thrown, which the executor records as the step.failed the log already holds.
 * Verify called such a run diverged on its own log.
 */
export function failedReadAt(rt: StepRuntime, path: string): void {
  const next = rt.journal.peek(path);
  if (next?.type !== 'step.failed' || next.stepPath !== path) return;
  const { code, message, retryable } = (next as StoredEvent<'step.failed'>).payload.error;
  throw new StepError(code, message, retryable ?? false);
}

export function evalContext(rt: StepRuntime, frame: Frame, stepPath: string, current?: unknown): EvalContext {
  return { scope: frame.scope, response: frame.response, current, inputs: journaledInputs(rt, stepPath, frame), schemas: rt.model.schemas, logFormat: rt.http.logFormat };
}

/**
 * Sync checkpoints advanced at `path` (each an effect of its own kind, journal/effects.ts, keyed by
 * its key) pass `after-checkpoint`, once it is their turn among concurrent branches (CrashInjector.turn).
 */
export function passCheckpoints(checkpoints: readonly { key: string }[], path: string, rt: StepRuntime, live: boolean): Promise<void> | undefined {
  if (checkpoints.length === 0) return undefined;
  const pass = () => {
    for (const c of checkpoints) new Effect(rt.journal, rt.crash, { kind: 'checkpoint', key: `${path}:${c.key}`, path, external: false }).pass('after-checkpoint', live);
  };
  const turn = rt.crash.turn('checkpoint', path);
  if (turn) return turn.then(pass);
  pass();
  return undefined;
}
