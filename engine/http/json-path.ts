/**
 * Dotted paths into a JSON value, as the mission writes them for `itemsPath`, a cursor's path and
 * `updateFrom`: `a.b`, `data[-1].id`. Pure; a missing step is undefined, never an error.
 */

/**
 * Value at a dotted path (`a.b.0.c`), where a segment may end in array indexes, `[-1]` counting
 * from the end (`data[-1].id`: the last item's id, Stripe's cursor); undefined when any step is missing.
 * A field whose name holds a dot is one step where the object has it (OData's `@odata.nextLink`):
 * read as two, the cursor was never found and the walk ended after its first page. Where both
 * readings exist, the first that reaches a value wins, the longest name first.
 */
export function getPath(value: unknown, path: string): unknown {
  return walkPath(value, path.split('.'), 0);
}

function walkPath(value: unknown, parts: string[], from: number): unknown {
  let cur = value;
  for (let i = from; i < parts.length; i++) {
    if (cur !== null && typeof cur === 'object' && !Array.isArray(cur) && i + 1 < parts.length) {
      // Names with dots in them, longest first, each followed to the end of the path.
      for (let last = parts.length - 1; last > i; last--) {
        const name = parts.slice(i, last + 1).join('.');
        if (!Object.prototype.hasOwnProperty.call(cur, name)) continue;
        const found = walkPath((cur as Record<string, unknown>)[name], parts, last + 1);
        if (found !== undefined) return found;
      }
    }
    const part = parts[i]!;
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
