/**
 * The syntax of a request path's placeholders (§C.1.3): `{x}` and `{x.y.z}` in a string-literal
 * path. Here, below both, so the checker (which names unbound ones) and the evaluator (which
 * fills them) read one definition.
 */

/** One placeholder; group 1 is its dotted name. Global: use with `matchAll`/`replace`. */
export const PLACEHOLDER = /\{([A-Za-z_$][\w$]*(?:\.[\w$]+)*)\}/g;

const NONE: readonly string[] = Object.freeze([]);

/** The placeholders of a template as written (`"x"`, `"x.y.z"`), each once, in order. */
export function pathPlaceholders(template: string): readonly string[] {
  // Most paths have none: no regex iterator and no set for them (`reqon check` runs this per request).
  if (!template.includes('{')) return NONE;
  const seen = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER)) seen.add(match[1]!);
  return [...seen];
}
