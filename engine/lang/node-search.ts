/**
 * Searches plain syntax-tree data (parser output: objects and arrays, no cycles) for the nodes a
 * test picks, wherever they sit — for the few checks that ask "does this arm read `v`" or "which
 * `call` steps does this action hold" across every step and expression kind.
 */

/** Every node under `node` (itself included) for which `test` holds, in document order. */
export function findNodes<T>(node: unknown, test: (candidate: object) => candidate is T & object, out: T[] = []): T[] {
  if (node === null || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) findNodes(item, test, out);
    return out;
  }
  if (test(node)) out.push(node);
  for (const value of Object.values(node)) findNodes(value, test, out);
  return out;
}
