/**
 * `delete S[k]` where `S` is a declared store removes the record under key `k` from `S` (what
 * upstream's docs mean by it); it is no HTTP request. The parser cannot tell the two readings
 * apart (stores may be declared in another file of a folder mission), so it parses every `delete`
 * as a DELETE request, and this one rule — used by the checks, the mission model and the
 * executor — picks the store removal out: the path is an index into a bare name (no leading dot,
 * one part) that names a declared store. The store wins over a variable of the same name.
 * Any other `delete` (`delete "/dlq/{id}"`, `delete paths[0]`, `delete .x[0]`) is a request.
 */
import type { Expr, FetchStep, Step } from './ast.js';

export interface StoreDelete {
  store: string;
  key: Expr;
}

/** The store removal `step` is, or undefined when it is a request (or not a `delete`). */
export function storeDeleteOf(step: Step, isStore: (name: string) => boolean): StoreDelete | undefined {
  if (step.kind !== 'Fetch' || step.method !== 'DELETE') return undefined;
  const name = indexedName(step);
  return name !== undefined && isStore(name) ? { store: name, key: (step.path as Extract<Expr, { kind: 'Index' }>).index } : undefined;
}

/** `x` of a `delete x[…]` whose `x` is a bare one-part name, else undefined. */
export function indexedName(step: FetchStep): string | undefined {
  const target = step.path;
  if (target?.kind !== 'Index' || target.object?.kind !== 'Ref') return undefined;
  const ref = target.object;
  return ref.leadingDot || ref.parts.length !== 1 ? undefined : ref.parts[0];
}
