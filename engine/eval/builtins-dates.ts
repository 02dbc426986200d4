/**
 * Date built-ins: `addDays`, `subtractDays`, `addMonths`, `diffDays`, `formatDate`, `year`, `month`,
 * `day`, `hour`, `minute`, `isBefore`, `isAfter` (the date helpers of §D.6's doc-only list),
 * `fromUnix` (§D.6), `parseDate(text)`, and the durations upstream's examples write as functions:
 * `days(n)`, `hours(n)`, `minutes(n)`, `seconds(n)` are milliseconds, so `timestamp() - days(7)`
 * and `(now() - .created_at) / days(1)` mean what they say.
 *
 * Invariant: calendar arithmetic is in UTC, so results never depend on the machine's time zone.
 */
import { argInteger, argNumber, argString, finiteResult, type BuiltinCall, type BuiltinImpl } from './builtin-support.js';
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

/** `fn(date)`: one UTC component of the instant `date` gives. */
function component(fn: string, read: (d: Date) => number): BuiltinImpl {
  return (args, call) => read(new Date(toInstantMs(fn, args[0], call.argSpans[0] ?? call.span)));
}

/** A `YYYY-MM-DD` input keeps its form in a result; any other gives a full ISO timestamp. */
function sameForm(input: unknown, ms: number): string | null {
  const result = toIso(ms);
  if (result === null) return null;
  return typeof input === 'string' && parseIsoInstant(input)?.dateOnly === true ? result.slice(0, 10) : result;
}

function addDays(args: unknown[], call: BuiltinCall, sign: 1 | -1): string | null {
  const ms = toInstantMs(call.name, args[0], call.argSpans[0] ?? call.span);
  return sameForm(args[0], ms + sign * argInteger(call, 1, args[1]) * DAY_MS);
}

/**
 * `n` calendar months later (earlier for a negative `n`), in UTC, the day of the month kept where
 * the target month has it and else its last day: `addMonths("2024-01-31", 1)` is "2024-02-29".
 */
function addMonths(args: unknown[], call: BuiltinCall): string | null {
  const from = new Date(toInstantMs('addMonths', args[0], call.argSpans[0] ?? call.span));
  const months = from.getUTCMonth() + argInteger(call, 1, args[1]);
  const year = from.getUTCFullYear() + Math.floor(months / 12);
  const month = ((months % 12) + 12) % 12;
  // setUTCFullYear, not Date.UTC, which reads a year 0–99 as 1900–1999.
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month + 1, 0);
  const to = new Date(from.getTime());
  to.setUTCFullYear(year, month, Math.min(from.getUTCDate(), lastDay.getUTCDate()));
  return sameForm(args[0], to.getTime());
}

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The tokens `formatDate` replaces, longest first; `[text]` is kept as written. */
const FORMAT_TOKEN = /\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|m|ss|s|SSS|A|a|Z/g;

function pad(n: number, width: number): string {
  return n < 0 ? `-${String(-n).padStart(width, '0')}` : String(n).padStart(width, '0');
}

/**
 * `formatDate(date, "YYYY-MM-DD")`, `"MMM D, YYYY"`: the instant in UTC through day.js's tokens
 * (YYYY YY, MMMM MMM MM M, DD D, dddd ddd, HH H hh h, mm m, ss s, SSS, A a, Z as "+00:00"); other
 * characters, and text in `[brackets]`, as written. English names.
 */
function formatDate(args: unknown[], call: BuiltinCall): string {
  const d = new Date(toInstantMs('formatDate', args[0], call.argSpans[0] ?? call.span));
  const pattern = argString(call, 1, args[1]);
  const hour = d.getUTCHours();
  return pattern.replace(FORMAT_TOKEN, (token: string, literal: string | undefined) => {
    if (literal !== undefined) return literal;
    switch (token) {
      case 'YYYY': return pad(d.getUTCFullYear(), 4);
      case 'YY': return pad(Math.abs(d.getUTCFullYear()) % 100, 2);
      case 'MMMM': return MONTH_NAMES[d.getUTCMonth()]!;
      case 'MMM': return MONTH_NAMES[d.getUTCMonth()]!.slice(0, 3);
      case 'MM': return pad(d.getUTCMonth() + 1, 2);
      case 'M': return String(d.getUTCMonth() + 1);
      case 'DD': return pad(d.getUTCDate(), 2);
      case 'D': return String(d.getUTCDate());
      case 'dddd': return DAY_NAMES[d.getUTCDay()]!;
      case 'ddd': return DAY_NAMES[d.getUTCDay()]!.slice(0, 3);
      case 'HH': return pad(hour, 2);
      case 'H': return String(hour);
      case 'hh': return pad(hour % 12 || 12, 2);
      case 'h': return String(hour % 12 || 12);
      case 'mm': return pad(d.getUTCMinutes(), 2);
      case 'm': return String(d.getUTCMinutes());
      case 'ss': return pad(d.getUTCSeconds(), 2);
      case 's': return String(d.getUTCSeconds());
      case 'SSS': return pad(d.getUTCMilliseconds(), 3);
      case 'A': return hour < 12 ? 'AM' : 'PM';
      case 'a': return hour < 12 ? 'am' : 'pm';
      default: return '+00:00'; // Z: the instant is shown in UTC
    }
  });
}

function instantOrder(args: unknown[], call: BuiltinCall): number {
  return toInstantMs(call.name, args[0], call.argSpans[0] ?? call.span) - toInstantMs(call.name, args[1], call.argSpans[1] ?? call.span);
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
  addDays: (args, call) => addDays(args, call, 1),
  subtractDays: (args, call) => addDays(args, call, -1),
  addMonths,
  formatDate,
  year: component('year', (d) => d.getUTCFullYear()),
  /** 1–12. */
  month: component('month', (d) => d.getUTCMonth() + 1),
  day: component('day', (d) => d.getUTCDate()),
  hour: component('hour', (d) => d.getUTCHours()),
  minute: component('minute', (d) => d.getUTCMinutes()),
  isBefore: (args, call) => instantOrder(args, call) < 0,
  isAfter: (args, call) => instantOrder(args, call) > 0,
  /** Whole days from `b` to `a` (`a - b`), truncated toward zero: diffDays("2024-03-02", "2024-03-01") is 1. */
  diffDays: (args, call) => {
    const a = toInstantMs('diffDays', args[0], call.argSpans[0] ?? call.span);
    const b = toInstantMs('diffDays', args[1], call.argSpans[1] ?? call.span);
    return Math.trunc((a - b) / DAY_MS) + 0;
  },
};
