/**
 * The evaluation context: variables in a parent chain, plus what an expression can see besides
 * them (`response`, the current record, and the recorded non-deterministic inputs).
 *
 * Invariants: `set` writes to this scope only, never to a parent; `let` sets the nearest binding
 * of its name, searching no further out than a concurrent loop's iteration (`isolated`), else binds
 * here — so a sequential loop's `let total = total + x` totals, while iterations that run at once
 * never race on an outer variable (docs/language.md, "let in a loop"). A variable `set` to
 * `undefined` counts as absent everywhere (get, has, let, snapshot), so lookup falls through to
 * the parent, as §D.2 specifies; a `let` or `bind` of an absent value binds absence instead,
 * which stops the lookup there (`boundAbsent`).
 */
import type { EvalInputs } from './inputs.js';
import type { SchemaTable } from './schema-match.js';

export class Scope {
  private readonly vars = new Map<string, unknown>();
  /** Names bound here to an absent value (`bind`): they hide outer bindings, the record's fields and `response`'s. */
  private absent: Set<string> | undefined;

  constructor(
    private readonly parent?: Scope,
    /** A concurrent loop's iteration: a `let` in it never sets a variable outside it. */
    private readonly isolated = false,
  ) {}

  /** The nearest binding that is not `undefined`, or `undefined`. */
  get(name: string): unknown {
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      const value = scope.vars.get(name);
      if (value !== undefined) return value;
      if (scope.absent?.has(name)) return undefined;
    }
    return undefined;
  }

  /**
   * Binds `name` here even to an absent value (a lambda's parameter, a match arm's name): unlike
   * `set`, an absent one is a binding too, so `x` reads as absent rather than falling through to
   * an outer `x` or the last response's field (§D.2) — `map(xs, x => x ?? "none")`.
   */
  bind(name: string, value: unknown): void {
    if (value === undefined) {
      this.vars.delete(name);
      (this.absent ??= new Set()).add(name);
    } else {
      this.absent?.delete(name);
      this.vars.set(name, value);
    }
  }

  /** Whether the nearest binding of `name` is one `bind` made to an absent value. */
  boundAbsent(name: string): boolean {
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      if (scope.vars.get(name) !== undefined) return false;
      if (scope.absent?.has(name)) return true;
    }
    return false;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, value: unknown): void {
    this.vars.set(name, value);
  }

  /**
   * A `let` step: sets the nearest binding of `name` (see the header), else binds it here. A `let`
   * of an absent value binds absence (`bind`): `let note = o.note` with no note reads as absent,
   * never as an outer `note`, a record's field or the response's (§D.2 fell through to them).
   */
  let(name: string, value: unknown): void {
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      if (scope.vars.get(name) !== undefined || scope.absent?.has(name)) {
        scope.bind(name, value);
        return;
      }
      if (scope.isolated) break;
    }
    this.bind(name, value);
  }

  child(isolated = false): Scope {
    return new Scope(this, isolated);
  }

  /** Every visible variable, nearest binding winning (for the inspector). */
  snapshot(): Record<string, unknown> {
    const chain: Scope[] = [];
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) chain.push(scope);
    const out: Record<string, unknown> = {};
    // Outermost first, so nearer scopes overwrite; undefined never overwrites (it counts as absent).
    for (const scope of chain.reverse()) {
      for (const [name, value] of scope.vars) {
        if (value !== undefined) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
      }
    }
    return out;
  }
}

/**
 * `ctx` with `record` as the current record. An absent one is null there: `.x` of a missing
 * `o.customer` (in a `validate`, a `match` guard, a filter, a transform's guard) is absent as of
 * a null one, never the response's `x`, which §D.2 fell through to when there was no record.
 */
export function withRecord(ctx: EvalContext, record: unknown): EvalContext {
  return { ...ctx, current: record === undefined ? null : record };
}

export interface EvalContext {
  scope: Scope;
  /** The action's current `response`. */
  response: unknown;
  /** The record being iterated, mapped, validated or keyed (§D.2); `undefined` when there is none. */
  current?: unknown;
  /**
   * The value a `map` or an `apply` reads its fields from. While it is the current record and is
   * no record (an array, a string), a `.field` read of it fails (R4001) rather than fall through
   * to a variable or `response` — `.total` of `[{ total: 7 }]` was absent and `.currency ?? "USD"`
   * a default. A map that reads no field of it (`{ n: count(response) }`) maps as before.
   */
  mapped?: unknown;
  /**
   * A `map` of null or absent (`map response -> Report { total: total }` in an action that made
   * no request): there is no record, so a `.field` read — or a bare name that is no variable and
   * would fall through to `response`'s field — fails (R4001), while a map of variables and
   * aggregates builds its record as upstream's missions expect.
   */
  noRecord?: { state: 'null' | 'absent'; /** The mapped source as written, when it is a name (`o.customer`). */ source?: string };
  inputs: EvalInputs;
  /** Declared schemas: a name in an object pattern that names one tests it (object-pattern.ts). */
  schemas?: SchemaTable;
  /** Declared store names (expressions do not read stores; kept for callers that share the context). */
  stores?: ReadonlySet<string>;
  /**
   * The log format of the run evaluating (events.ts LOG_FORMAT): a rule changed with a format is
   * kept as that run was recorded by, so it replays as it ran. Absent: this engine's rules.
   */
  logFormat?: number;
}

/**
 * The log format from which these read as they do now: `in` and `includes` compare items as `==`
 * does, a match expression's arm that names a schema tests it, a failure in a transform's field
 * or a source's header names it, and a loop's dead letters of equal items are keyed apart.
 */
export const EVAL_RULES_FORMAT = 7;

/** The log format from which `store[true]` reads the record keyed "true", as a boolean key is stored (evaluate.ts). */
export const BOOLEAN_STORE_INDEX_FORMAT = 10;

/** True when `ctx` evaluates for a run recorded before `format` (its rules are that run's). */
export function recordedBefore(ctx: EvalContext, format: number): boolean {
  return ctx.logFormat !== undefined && ctx.logFormat < format;
}
