/**
 * The door through which non-deterministic built-ins (`now()`, `timestamp()`, `env()`, `any of`)
 * get their values. The engine's journal implements it: live, it asks `Env` and records the
 * answer; on replay, it answers from the log. The evaluator never touches the clock, randomness
 * or the process environment itself.
 */

/**
 * A store's records as an expression reads them (`length(orders)`, `orders where …`,
 * `products[id]`): in insertion order, and by key. The journal reads and records a persistent
 * store before the step that names it runs; a memory store is read as it is (replay rebuilds it).
 */
export interface StoreView {
  readonly records: readonly unknown[];
  /** The record stored under `key` (`1` and `"1"` are one key), undefined when there is none. */
  get(key: string): unknown;
}

/** A StoreView over `{ key, record }` pairs in their order. */
export function storeView(entries: readonly { key: string; record: unknown }[]): StoreView {
  const records = entries.map((e) => e.record);
  let byKey: Map<string, unknown> | undefined;
  return {
    records,
    get(key) {
      byKey ??= new Map(entries.map((e) => [e.key, e.record]));
      return byKey.get(key);
    },
  };
}

export interface EvalInputs {
  /** Milliseconds since the epoch; `now()` formats it as ISO-8601, `timestamp()` returns it. */
  now(): number;
  /** A float in [0, 1); `any of coll` without `where` picks index floor(r * length). */
  random(): number;
  /** The value of an environment variable for `env("NAME")`, `undefined` when unset. */
  env(name: string): string | undefined;
  /**
   * The record under `key` in the checkpoint store (`sync_state.get(key)`), recorded for replay
   * by whoever implements it; absent (and then every read is null) until the journal offers it.
   */
  syncState?(key: string): unknown;
  /**
   * The records of the declared store `name`, when `name` is one (a store name read as a value);
   * undefined for any other name, which then resolves as a field of `response` (§D.2).
   */
  store?(name: string): StoreView | undefined;
  /**
   * `generateId()`: an id that is a function of the run, the step and how many ids the step asked
   * for before (never random), so a replay gets the same ids. Absent: `generateId` is an error.
   */
  generateId?(): string;
}

export interface FixedInputsOptions {
  /** A fixed instant, or a function called on every `now()`. Default: 0 (the epoch). */
  now?: number | (() => number);
  /** A fixed value, a sequence used in turn (the last one repeats), or a function. Default: 0. */
  random?: number | readonly number[] | (() => number);
  env?: Record<string, string | undefined>;
  /** Store contents by store name, as `{ key, record }` pairs in insertion order. */
  stores?: Record<string, readonly { key: string; record: unknown }[]>;
}

/** Deterministic inputs for tests and for evaluating expressions outside a run (e.g. the checker). */
export function fixedInputs(options: FixedInputsOptions = {}): EvalInputs {
  const { now = 0, random = 0, env = {}, stores = {} } = options;
  let draws = 0;
  let ids = 0;
  return {
    now: () => (typeof now === 'function' ? now() : now),
    random: () => {
      if (typeof random === 'function') return random();
      if (typeof random === 'number') return random;
      if (random.length === 0) return 0;
      const value = random[Math.min(draws, random.length - 1)]!;
      draws += 1;
      return value;
    },
    env: (name) => (Object.prototype.hasOwnProperty.call(env, name) ? env[name] : undefined),
    store: (name) => (Object.prototype.hasOwnProperty.call(stores, name) ? storeView(stores[name]!) : undefined),
    generateId: () => `id-fixed-${ids++}`,
  };
}
