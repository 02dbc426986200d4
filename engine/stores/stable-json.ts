/**
 * Canonical JSON text for store files: object keys sorted (recursively), two-space indentation,
 * a final newline. The same contents always give the same bytes, so a replayed write that changes
 * nothing can be detected by comparing text, and diffs of store files stay readable.
 */

export function stableStringify(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

/** The same canonical form on one line, no spaces: what a record's content key hashes (keys.ts). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  // toJSON (Dates and the like) decides its own representation before we sort anything.
  const plain = (value as { toJSON?: unknown }).toJSON;
  if (typeof plain === 'function') return sortKeys((value as { toJSON(): unknown }).toJSON());
  // A null-prototype object keeps a key named "__proto__" as an ordinary field.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).sort()) {
    out[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return out;
}
