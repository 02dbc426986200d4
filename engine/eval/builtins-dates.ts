/**
 * Date built-ins: `addDays(date, n)` and `diffDays(a, b)` (date helpers of §D.6's doc-only list),
 * `fromUnix` (§D.6), `parseDate(text)`, and the durations upstream's examples write as functions:
 * `days(n)`, `hours(n)`, `minutes(n)`, `seconds(n)` are milliseconds, so `timestamp() - days(7)`
 * and `(now() - .created_at) / days(1)` mean what they say.
 *
 * Invariant: calendar arithmetic is in UTC, so results never depend on the machine's time zone.
 */
import { argInteger, argNumber, finiteResult, type BuiltinImpl } from './builtin-support.js';
import { DURATION_FUNCTION_MS } from '../lang/builtin-names.js';
import { parseIsoInstant } from './iso-dates.js';
import { toInstantMs } from './operators.js';

const DAY_MS = DURATION_FUNCTION_MS.days;

function duration(unitMs: number): BuiltinImpl {
  return (args, call) => finiteResult(call, argNumber(call, 0, args[0]) * unitMs);
}

function toIso(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export const DATE_BUILTINS: Record<string, BuiltinImpl> = {
  days: duration(DURATION_FUNCTION_MS.days),
  hours: duration(DURATION_FUNCTION_MS.hours),
  minutes: duration(DURATION_FUNCTION_MS.minutes),
  seconds: duration(DURATION_FUNCTION_MS.seconds),
  /**
   * The ISO instant of a date string (`YYYY-MM-DD`, an ISO timestamp with or without an offset,
   * read as UTC without one) or of epoch milliseconds; null for anything else.
   */
  parseDate: ([x]) => {
    if (typeof x === 'number') return Number.isFinite(x) ? toIso(x) : null;
    if (typeof x !== 'string') return null;
    const instant = parseIsoInstant(x.trim());
    return instant === undefined ? null : toIso(instant.ms);
  },
  /** ISO string of epoch seconds; a non-numeric or non-finite input (or one beyond year 275760) gives null. */
  fromUnix: (args) => {
    const [secs] = args;
    const n = typeof secs === 'number' ? secs : typeof secs === 'string' && secs.trim() !== '' ? Number(secs) : NaN;
    return Number.isFinite(n) ? toIso(n * 1000) : null;
  },
  /** A `YYYY-MM-DD` input gives a `YYYY-MM-DD` result; anything else gives a full ISO timestamp. */
  addDays: (args, call) => {
    const ms = toInstantMs('addDays', args[0], call.argSpans[0] ?? call.span);
    const days = argInteger(call, 1, args[1]);
    const result = toIso(ms + days * DAY_MS);
    if (result === null) return null;
    const dateOnly = typeof args[0] === 'string' && parseIsoInstant(args[0])?.dateOnly === true;
    return dateOnly ? result.slice(0, 10) : result;
  },
  /** Whole days from `b` to `a` (`a - b`), truncated toward zero: diffDays("2024-03-02", "2024-03-01") is 1. */
  diffDays: (args, call) => {
    const a = toInstantMs('diffDays', args[0], call.argSpans[0] ?? call.span);
    const b = toInstantMs('diffDays', args[1], call.argSpans[1] ?? call.span);
    return Math.trunc((a - b) / DAY_MS) + 0;
  },
};
