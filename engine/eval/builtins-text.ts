/**
 * String built-ins (the "doc-only" helpers of §D.6 that we implement, LANGUAGE.md decision 6):
 * lowercase, uppercase, trim, trimStart, trimEnd, slugify, substring, split, join, replace, startsWith,
 * endsWith, toString.
 *
 * Invariant: a missing input (null/undefined) to a one-string transformer gives null rather than
 * an error, so optional fields map through (`lowercase(.email)`); any other non-string is an error.
 */
import { argArray, argInteger, argString, type BuiltinCall, type BuiltinImpl } from './builtin-support.js';
import { displayString } from './values.js';

function stringOrMissing(
  fn: (text: string, args: unknown[], call: BuiltinCall) => unknown,
): BuiltinImpl {
  return (args, call) => {
    if (args[0] === null || args[0] === undefined) return null;
    return fn(argString(call, 0, args[0]), args, call);
  };
}

export const TEXT_BUILTINS: Record<string, BuiltinImpl> = {
  lowercase: stringOrMissing((s) => s.toLowerCase()),
  uppercase: stringOrMissing((s) => s.toUpperCase()),
  trim: stringOrMissing((s) => s.trim()),
  trimStart: stringOrMissing((s) => s.trimStart()),
  trimEnd: stringOrMissing((s) => s.trimEnd()),
  /**
   * `slugify("Café Déjà Vu!")` is "cafe-deja-vu": accents dropped (NFKD), lower case, every run of
   * other than a–z and 0–9 one `-`, none at either end.
   */
  slugify: stringOrMissing((s) =>
    s
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, ''),
  ),
  /** `substring(s, start, end?)`: code-unit indexes, end exclusive; out-of-range indexes clamp. */
  substring: stringOrMissing((s, args, call) => {
    const start = argInteger(call, 1, args[1]);
    const end = args.length > 2 && args[2] !== undefined && args[2] !== null ? argInteger(call, 2, args[2]) : s.length;
    const clamp = (n: number): number => Math.max(0, Math.min(s.length, n < 0 ? s.length + n : n));
    const from = clamp(start);
    const to = clamp(end);
    return to <= from ? '' : s.slice(from, to);
  }),
  split: stringOrMissing((s, args, call) => s.split(argString(call, 1, args[1]))),
  /** `join(arr, sep = ",")`: elements as display strings (null → ""). */
  join: (args, call) => {
    const items = argArray(call, 0, args[0]);
    const separator = args.length > 1 ? argString(call, 1, args[1]) : ',';
    return items.map(displayString).join(separator);
  },
  /** Every occurrence, literally (no patterns, `$` in the replacement is plain text). */
  replace: stringOrMissing((s, args, call) => {
    const find = argString(call, 1, args[1]);
    const replacement = argString(call, 2, args[2]);
    return s.replaceAll(find, () => replacement);
  }),
  startsWith: (args, call) => {
    if (args[0] === null || args[0] === undefined) return false;
    return argString(call, 0, args[0]).startsWith(argString(call, 1, args[1]));
  },
  endsWith: (args, call) => {
    if (args[0] === null || args[0] === undefined) return false;
    return argString(call, 0, args[0]).endsWith(argString(call, 1, args[1]));
  },
  /** Display form: null → "", arrays and objects → JSON. */
  toString: (args: unknown[]) => displayString(args[0]),
};
