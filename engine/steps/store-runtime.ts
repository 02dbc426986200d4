/**
 * The run's stores. `memory` stores are run-local state, rebuilt on replay from the run's own
 * `store.write` events (insertion order kept, as `for x in store` iterates it); `sql`/`nosql`
 * stores are tables in the log's database, written inside the log's commit; `file` and
 * `postgrest` stores are external adapters, opened lazily, written idempotently by key.
 */
import type { Env } from '../env/env.js';
import type { StoreDecl, StoreType } from '../lang/ast.js';
import type { EventLog } from '../log/log.js';
import type { Journal } from '../journal/journal.js';
import type { StoredEvent } from '../log/events.js';
import { RunMemory } from '../stores/run-memory.js';
import { openFileStore } from '../stores/file-store.js';
import { openPostgrestStore, resolvePostgrestConfig } from '../stores/postgrest-store.js';
import type { ExternalStore, StoredRecord } from '../stores/store-adapter.js';
import type { MissionModel } from './mission-model.js';
import { StepError } from './signals.js';

export interface StoreRuntimeOptions {
  dataDir: string;
  /** The parsed `--auth` file (postgrest endpoints live under its "stores" key). */
  authJson: unknown;
  httpTimeoutMs: number;
  /** When an edited mission replays a log: the model of the mission that recorded it. */
  recordedBy?: MissionModel;
}

export class StoreRuntime {
  private readonly memory = new RunMemory();
  private readonly external = new Map<string, ExternalStore>();
  private readonly written = new Set<string>();

  constructor(
    private readonly model: MissionModel,
    private readonly log: EventLog | null,
    private readonly env: Env,
    private readonly options: StoreRuntimeOptions,
  ) {}

  kind(store: string): StoreType {
    const decl = this.model.stores.get(store);
    if (!decl) throw new StepError('unknown-store', `store \`${store}\` is not declared in this mission`);
    return decl.type.kind;
  }

  target(store: string): string {
    return this.model.stores.get(store)!.target.value;
  }

  /**
   * How `store` is declared differently (kind or target) from the mission that recorded the log
   * an edited mission replays, or undefined. Writes are recorded under the store's name only, so
   * without this an edit from memory("o") to sql("o"), or to another table or file, replayed as a
   * match while the recorded records stayed where they were written.
   */
  redeclared(store: string): string | undefined {
    const was = this.options.recordedBy?.stores.get(store);
    const now = this.model.stores.get(store);
    if (!was || !now) return undefined;
    const declared = (d: StoreDecl): string => `${d.type.kind}(${JSON.stringify(d.target.value)})`;
    return declared(was) === declared(now) ? undefined : `the store \`${store}\` was ${declared(was)} when the run wrote to it and is ${declared(now)} now`;
  }

  /**
   * True until a write to `store` has committed in this run. Until then its writes commit at once,
   * so a table the log cannot write (absent, or of the other store kind: `sql("x")` and
   * `nosql("x")` on one log) fails THAT step. After one committed, the table exists with the
   * right shape, and a write of a valid record cannot fail (table-store.ts never fails on a
   * field's name) unless its key or width is one the database may refuse (store-rules.ts
   * `mayBeRefused`, committed at once too), so later writes may be buffered without risking the
   * commit they ride on.
   */
  firstWrite(store: string): boolean {
    return !this.written.has(store);
  }

  /** A write to `store` committed: its table is there and has the right shape (see firstWrite). */
  committed(store: string): void {
    this.written.add(store);
  }

  memoryGet(store: string, key: string): Record<string, unknown> | undefined {
    return this.memory.get(store, key);
  }

  /** A live write to a memory store (`record` null: `delete S[k]`); true if a record was there. */
  memoryWrite(store: string, key: string, record: Record<string, unknown> | null): boolean {
    return this.memory.write(store, key, record);
  }

  /** A memory store's write the log holds, replayed: it counts at its seq (run-memory.ts). */
  memoryReplay(event: StoredEvent<'store.write'>): void {
    const { store, key, op, record } = event.payload;
    this.memory.replay(store, key, op === 'delete' ? null : (record as Record<string, unknown>), event.seq);
  }

  memoryList(store: string): StoredRecord[] {
    return this.memory.list(store);
  }

  externalStore(store: string): ExternalStore {
    let adapter = this.external.get(store);
    if (adapter) return adapter;
    const kind = this.kind(store);
    const target = this.target(store);
    if (kind === 'file') adapter = openFileStore(this.options.dataDir, target);
    else if (kind === 'postgrest') {
      const config = resolvePostgrestConfig(store, target, this.options.authJson, this.env.vars);
      adapter = openPostgrestStore(config, this.env.http, this.options.httpTimeoutMs);
    } else throw new Error(`store \`${store}\` (${kind}) is not an external store`);
    this.external.set(store, adapter);
    return adapter;
  }

  /** Every record of a store as it is now (the caller records this read for replay). */
  async readAll(store: string): Promise<StoredRecord[]> {
    const kind = this.kind(store);
    switch (kind) {
      case 'memory':
        return this.memoryList(store);
      case 'sql':
      case 'nosql':
        return this.log ? this.log.readTable(kind, this.target(store)) : [];
      case 'file':
      case 'postgrest':
        return this.externalStore(store).list();
    }
  }
}

/**
 * On replay, a store step whose log shows it failed before any of its writes landed fails again
 * the same way, instead of writing: the failure may have come from outside the mission (a table
 * of the other store kind, a full disk, a PostgREST endpoint that refused), so only the log knows
 * it. Called before the recorded writes are taken.
 */
export function replayRecordedFailure(journal: Journal, path: string): void {
  const next = journal.peek(path);
  if (next?.type !== 'step.failed') return;
  const { error } = next.payload as { error: { code: string; message: string; retryable?: boolean } };
  throw new StepError(error.code, error.message, error.retryable ?? false);
}
