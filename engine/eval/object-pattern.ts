/**
 * Object patterns in `match` arms (`{ error: _, code: 401, message: m } -> …`), as upstream's docs
 * write them: a shape test on the subject that also collects the names it binds. Pure: the
 * caller decides where bindings go (docs/language.md, "Object patterns").
 */
import type { ObjectPattern, SubPattern } from '../lang/ast.js';

/**
 * An object pattern: the subject is an object (not an array, not null) and each named key
 * matches — `_` and a name need the key present and not null (a name binds the value), a literal
 * needs `===` (`null` also matches an absent key), a nested pattern recurses. Keys are own keys.
 */
export function matchesObjectPattern(pattern: ObjectPattern, subject: unknown, bound: Map<string, unknown>): boolean {
  if (subject === null || typeof subject !== 'object' || Array.isArray(subject)) return false;
  for (const { key, value: sub } of pattern.fields) {
    const value = Object.hasOwn(subject, key) ? (subject as Record<string, unknown>)[key] : undefined;
    if (!matchesSub(sub, value, bound)) return false;
  }
  return true;
}

function matchesSub(sub: SubPattern, value: unknown, bound: Map<string, unknown>): boolean {
  switch (sub.kind) {
    case 'Present':
      return value !== undefined && value !== null;
    case 'Bind':
      if (value === undefined || value === null) return false;
      bound.set(sub.name.name, value);
      return true;
    case 'Literal':
      return sub.value === null ? value === null || value === undefined : value === sub.value;
    case 'ObjectPattern':
      return matchesObjectPattern(sub, value, bound);
  }
}
