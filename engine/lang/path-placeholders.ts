/**
 * The syntax of a request path's placeholders (§C.1.3): `{x}` and `{x.y.z}` in a string-literal
 * path. Here, below both, so the checker (which names unbound ones) and the evaluator (which
 * fills them) read one definition.
 */

/** One placeholder; group 1 is its dotted name. Global: use with `matchAll`/`replace`. */
export const PLACEHOLDER = /\{([A-Za-z_$][\w$]*(?:\.[\w$]+)*)\}/g;

const NONE: readonly string[] = Object.freeze([]);

/**
 * The placeholders of a template as written (`"x"`, `"x.y.z"`), each once, in order: what
 * `matchAll(PLACEHOLDER)` finds, scanned by hand because `reqon check` runs this per request and
 * the regex iterator's match objects were most of what the checker allocated.
 */
export function pathPlaceholders(template: string): readonly string[] {
  let open = template.indexOf('{');
  if (open < 0) return NONE;
  let found: string[] | undefined;
  while (open >= 0) {
    const close = placeholderEnd(template, open);
    if (close < 0) {
      open = template.indexOf('{', open + 1);
      continue;
    }
    const name = template.slice(open + 1, close);
    if (found === undefined) found = [name];
    else if (!found.includes(name)) found.push(name);
    open = template.indexOf('{', close + 1);
  }
  return found ?? NONE;
}

/**
 * The `{…}` of a template that are no placeholder — `{}`, `{a b}`, `{1}`, a `{` never closed —
 * each as written (up to its `}`, else to the end), in order: the request sends them as text.
 */
export function strayBraces(template: string): string[] {
  const stray: string[] = [];
  for (let open = template.indexOf('{'); open >= 0; ) {
    const close = placeholderEnd(template, open);
    if (close >= 0) {
      open = template.indexOf('{', close + 1);
      continue;
    }
    const end = template.indexOf('}', open + 1);
    const next = template.indexOf('{', open + 1);
    // `{a{b}`: the piece ends before the next `{`, which may open a placeholder of its own.
    const stop = end >= 0 && (next < 0 || end < next) ? end + 1 : next >= 0 ? next : template.length;
    stray.push(template.slice(open, stop));
    open = next;
  }
  return stray;
}

const isNameStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36; // A-Z a-z _ $
const isNamePart = (c: number): boolean => isNameStart(c) || (c >= 48 && c <= 57); // \w and $

/** Index of the `}` of the placeholder whose `{` is at `open`, or -1 when none is written there. */
function placeholderEnd(t: string, open: number): number {
  let i = open + 1;
  if (!isNameStart(t.charCodeAt(i))) return -1;
  i++;
  while (isNamePart(t.charCodeAt(i))) i++;
  while (t.charCodeAt(i) === 46 && isNamePart(t.charCodeAt(i + 1))) { // .part
    i += 2;
    while (isNamePart(t.charCodeAt(i))) i++;
  }
  return t.charCodeAt(i) === 125 ? i : -1; // }
}
