/**
 * The difference between two folded states of a run, as a flat list of paths.
 *
 * Paths read like property access: `stores.orders["o-1"].total`, `variables.page`,
 * `response[2].id`, `checkpoints.orders`. Stores are compared by key, then record fields (and
 * deeper for nested values); a record present on one side only is one 'added'/'removed' entry,
 * not one per field. Invariant: the list is empty exactly when the two states hold equal stores,
 * variables, response and checkpoints, and it is ordered (stores, variables, response,
 * checkpoints; keys sorted) so the same two states always give the same list.
 */
import type { RunState } from './state-at-data.js';

export interface StateDiffEntry {
  path: string;
  before: unknown;
  after: unknown;
  change: 'added' | 'removed' | 'changed';
}

export function diffStates(before: RunState, after: RunState): StateDiffEntry[] {
  const out: StateDiffEntry[] = [];
  diffStores(before, after, out);
  diffValue('variables', before.variables, after.variables, out);
  diffValue('response', normalise(before.response), normalise(after.response), out);
  diffValue(
    'checkpoints',
    Object.fromEntries(before.checkpoints.map((c) => [c.key, c.syncedAt])),
    Object.fromEntries(after.checkpoints.map((c) => [c.key, c.syncedAt])),
    out,
  );
  return out;
}

/** Only the store part, for comparing the final stores of two different runs. */
export function diffStoreContents(before: RunState['stores'], after: RunState['stores']): StateDiffEntry[] {
  const out: StateDiffEntry[] = [];
  diffStores({ stores: before }, { stores: after }, out);
  return out;
}

function diffStores(before: Pick<RunState, 'stores'>, after: Pick<RunState, 'stores'>, out: StateDiffEntry[]): void {
  const a = new Map(before.stores.map((s) => [s.name, new Map(s.records.map((r) => [r.key, r.record]))]));
  const b = new Map(after.stores.map((s) => [s.name, new Map(s.records.map((r) => [r.key, r.record]))]));
  for (const name of sortedUnion(a.keys(), b.keys())) {
    const ra = a.get(name) ?? new Map<string, unknown>();
    const rb = b.get(name) ?? new Map<string, unknown>();
    for (const key of sortedUnion(ra.keys(), rb.keys())) {
      diffValue(`stores${segment(name)}${segment(key)}`, ra.get(key), rb.get(key), out);
    }
  }
}

/** `undefined` and `null` both mean "no response" in a RunState. */
function normalise(value: unknown): unknown {
  return value === null ? undefined : value;
}

function diffValue(path: string, before: unknown, after: unknown, out: StateDiffEntry[]): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined) {
    out.push({ path, before: null, after, change: 'added' });
    return;
  }
  if (after === undefined) {
    out.push({ path, before, after: null, change: 'removed' });
    return;
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of sortedUnion(Object.keys(before), Object.keys(after))) {
      diffValue(`${path}${segment(key)}`, before[key], after[key], out);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i += 1) diffValue(`${path}[${i}]`, before[i], after[i], out);
    return;
  }
  if (!deepEqual(before, after)) out.push({ path, before, after, change: 'changed' });
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function segment(key: string): string {
  return IDENT.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function sortedUnion(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
