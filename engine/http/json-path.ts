/**
 * Dotted paths into a JSON value, as the mission writes them for `itemsPath`, a cursor's path and
 * `updateFrom`: `a.b`, `data[-1].id`. Pure; a missing step is undefined, never an error.
 */

/**
 * Value at a dotted path (`a.b.0.c`), where a segment may end in array indexes, `[-1]` counting
 * from the end (`data[-1].id`: the last item's id, Stripe's cursor); undefined when any step is missing.
 * A field whose name holds a dot is one step where the object has it (OData's `@odata.nextLink`):
 * read as two, the cursor was never found and the walk ended after its first page.
 */
export function getPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const dotted = dottedField(cur, parts, i);
    if (dotted !== undefined) {
      cur = (cur as Record<string, unknown>)[dotted[0]];
      i = dotted[1];
      continue;
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

/**
 * The longest run of `parts` from `from` on that, joined by dots, names a field of `object`
 * (`@odata.nextLink`), and the index of its last part; undefined when none of two parts or more does.
 */
function dottedField(object: unknown, parts: string[], from: number): [string, number] | undefined {
  if (object === null || typeof object !== 'object' || Array.isArray(object) || from + 1 >= parts.length) return undefined;
  for (let last = parts.length - 1; last > from; last--) {
    const name = parts.slice(from, last + 1).join('.');
    if (Object.prototype.hasOwnProperty.call(object, name)) return [name, last];
  }
  return undefined;
}

/** `name[0]`, `name[-1][2]`, `[3]`: a field name followed by one or more array indexes. */
const INDEXED_SEGMENT = /^([^[\]]*)((?:\[-?\d+\])+)$/;
