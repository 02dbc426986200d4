/**
 * Dotted paths into a JSON value, as the mission writes them for `itemsPath`, a cursor's path and
 * `updateFrom`: `a.b`, `data[-1].id`. Pure; a missing step is undefined, never an error.
 */

/**
 * Value at a dotted path (`a.b.0.c`), where a segment may end in array indexes, `[-1]` counting
 * from the end (`data[-1].id`: the last item's id, Stripe's cursor); undefined when any step is missing.
 */
export function getPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (part === '') continue;
    const indexed = INDEXED_SEGMENT.exec(part);
    const name = indexed ? indexed[1]! : part;
    if (name !== '') {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = Object.prototype.hasOwnProperty.call(cur, name) ? (cur as Record<string, unknown>)[name] : undefined;
    }
    if (indexed) {
      for (const [, digits] of indexed[2]!.matchAll(/\[(-?\d+)\]/g)) {
        if (!Array.isArray(cur)) return undefined;
        const index = Number(digits);
        cur = cur[index < 0 ? cur.length + index : index];
      }
    }
  }
  return cur;
}

/** `name[0]`, `name[-1][2]`, `[3]`: a field name followed by one or more array indexes. */
const INDEXED_SEGMENT = /^([^[\]]*)((?:\[-?\d+\])+)$/;
