/**
 * Canonical JSON text for store files: object keys sorted (recursively), two-space indentation,
 * a final newline. The same contents always give the same bytes, so a replayed write that changes
 * nothing can be detected by comparing text, and diffs of store files stay readable.
 */

export function stableStringify(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

/**
 * A store file's text: one JSON object whose members are `entries` in the order given (a store's
 * insertion order, which a JavaScript object cannot keep: it lists integer-like keys first), each
 * value in the canonical form above. An empty store is `{}`.
 */
export function stableStringifyEntries(entries: Iterable<readonly [string, unknown]>): string {
  const members: string[] = [];
  for (const [key, value] of entries) members.push(memberText(key, value));
  return joinMembers(members);
}

/** One member of a store file's object, as stableStringifyEntries writes it (a writer may keep them). */
export function memberText(key: string, value: unknown): string {
  // JSON.stringify escapes newlines inside strings, so every "\n" here is between tokens.
  return `  ${JSON.stringify(key)}: ${JSON.stringify(sortKeys(value), null, 2).replaceAll('\n', '\n  ')}`;
}

/** A store file's text from its members' (memberText), in order. */
export function joinMembers(members: readonly string[]): string {
  return members.length === 0 ? '{}\n' : `{\n${members.join(',\n')}\n}\n`;
}

/**
 * The member names of the top-level JSON object in `text`, in the order they appear (first
 * occurrence of a repeated name). `text` must already have parsed as an object.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (!seen.has(key)) {
          seen.add(key);
          keys.push(key);
        }
        expectKey = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      depth++;
      if (depth === 1) expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return keys;
}

/**
 * The same canonical form on one line, no spaces: what a record's content key hashes (keys.ts).
 * Not eval/values' `canonicalJson`, though the two agree on most values: this one is built on a
 * JavaScript object, which lists integer-like keys first, in numeric order (`{"9":…,"10":…}`),
 * where that one sorts every key as text (`{"10":…,"9":…}`). Content keys are stored, so this
 * text must never change: with the other, a second run of a keyless sync into a store that
 * outlives runs added a copy of every such record, and older runs no longer verified (helper 60).
 */
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
