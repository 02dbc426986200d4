/**
 * Wall times in named time zones, for schedules: `at "2025-06-01T09:00"` with `timezone:` names
 * an instant, which the checker holds against now (E3037) and the worker fires at
 * (worker/schedules.ts). One definition for both, here at the bottom layer.
 *
 * Years 0–99 are those years (Date.UTC reads them as 1900–1999: `at "0050-06-01T00:00Z"` was
 * registered, fired and listed as 1950; helper 97).
 */

const AT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

const DAY_MS = 86_400_000;

/** True for ISO-8601 `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]` naming a real calendar instant. */
export function isDateTime(text: string): boolean {
  const m = AT.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59)) return false;
  if (m[6] !== undefined && Number(m[6]) > 59) return false;
  const offset = m[8] !== undefined && m[8] !== 'Z' ? m[8].replace(':', '') : undefined;
  if (offset !== undefined && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(3, 5)) > 59)) return false;
  return true;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** `text` as an instant: with `Z` or an offset as written; without one, wall time in `timezone`. Undefined when it is no ISO-8601 date-time. */
export function atInstant(text: string, timezone: string): number | undefined {
  const m = AT.exec(text);
  if (!m) return undefined;
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const wall = utcMs(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), ms);
  const offset = m[8];
  if (offset === 'Z') return wall;
  if (offset !== undefined) {
    const digits = offset.replace(':', '');
    const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
    return wall - (digits[0] === '-' ? -1 : 1) * minutes * 60_000;
  }
  // The instants whose wall time in the zone this is, from the offsets the zone has around it: one
  // as a rule; two in a fall-back overlap (the first is taken); none inside a spring-forward gap,
  // where the later candidate is taken — after the named time, as a cron in the zone fires (it
  // took the earlier: 02:30 in New York on the gap's day fired at 01:30 EST, an hour early).
  const candidates = [...new Set([zoneOffsetMs(timezone, wall - DAY_MS), zoneOffsetMs(timezone, wall + DAY_MS)])].map((o) => wall - o).sort((a, b) => a - b);
  const real = candidates.filter((instant) => instant + zoneOffsetMs(timezone, instant) === wall);
  return real.length > 0 ? real[0]! : candidates[candidates.length - 1]!;
}

const zoneClocks = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timezone` from UTC at `instant` (whole seconds), in ms, positive east of Greenwich. */
export function zoneOffsetMs(timezone: string, instant: number): number {
  if (timezone === 'UTC') return 0;
  let clock = zoneClocks.get(timezone);
  if (!clock) {
    clock = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', era: 'short', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    zoneClocks.set(timezone, clock);
  }
  const second = Math.floor(instant / 1000) * 1000;
  const parts = clock.formatToParts(second);
  const part = Object.fromEntries(parts.map((p) => [p.type, Number(p.value)]));
  // Intl counts years before 1 as eras (year 0 is 1 BC): back to astronomical years.
  const year = parts.find((p) => p.type === 'era')?.value === 'BC' ? 1 - part.year! : part.year!;
  return utcMs(year, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!) - second;
}

/**
 * Milliseconds since the epoch of a UTC calendar time, for every year 0000–9999 as written (the
 * date built-ins' too, eval/iso-dates.ts). `Date.UTC` (and `new Date(y, …)`) read a year 0–99 as
 * 1900–1999, so "0001-01-01" was 1901.
 */
export function utcMs(year: number, month0: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month0, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
