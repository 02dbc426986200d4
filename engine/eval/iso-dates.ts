/**
 * ISO-8601 instants as Reqon sees them: ordering comparisons between two ISO strings compare
 * instants (§D.3 V2), `is date` and schema `date` fields accept them, `addDays`/`diffDays` use them.
 *
 * Invariant: the result never depends on the machine's time zone. A timestamp without an offset
 * is read as UTC (JavaScript would read it as local time, so two machines could disagree).
 */

import { utcMs } from '../lang/zone-time.js';

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

export interface IsoInstant {
  /** Milliseconds since the epoch. */
  ms: number;
  /** True for `YYYY-MM-DD` with no time part. */
  dateOnly: boolean;
}

/** Parses `YYYY-MM-DD` or an ISO timestamp; `undefined` for anything else or an impossible date. */
export function parseIsoInstant(text: string): IsoInstant | undefined {
  const m = ISO_PATTERN.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = h === undefined ? 0 : Number(h);
  const minute = mi === undefined ? 0 : Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  const base = utcMs(year, month - 1, day, hour, minute, second, millis);
  // The calendar rolls 2024-02-31 over into March; such a date does not exist.
  if (new Date(utcMs(year, month - 1, day)).getUTCDate() !== day) return undefined;
  let offsetMinutes = 0;
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return { ms: base - offsetMinutes * 60_000, dateOnly: h === undefined };
}

/**
 * Whether a string is a date: an ISO-8601 date or timestamp, or another format `Date.parse`
 * reads (RFC 2822 and the like) provided it names a four-digit year — V8 alone would accept "1".
 */
export function isDateString(text: string): boolean {
  return dateStringToMs(text) !== undefined;
}

/** ISO-shaped text is judged by the ISO rules only: `Date.parse` would roll 2024-02-31 into March. */
const ISO_SHAPED = /^\d{4}-\d{2}-\d{2}/;

/** Milliseconds since the epoch for any date string `isDateString` accepts, else `undefined`. */
export function dateStringToMs(text: string): number | undefined {
  const iso = parseIsoInstant(text) ?? parseIsoInstant(isoOfZonedText(text) ?? '');
  if (iso !== undefined) return iso.ms;
  // Date.parse, too, reads a year 00xx as 19xx or 20xx ("Jan 1, 0050" is 1950): no such date.
  if (ISO_SHAPED.test(text) || !/\d{4}/.test(text) || /(?<![\d+-])00\d\d(?!\d)/.test(text)) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  // V8 honours a zone only after the day: `UTC Mar 7 2024 10:00` is read in the machine's zone.
  const firstDigit = text.search(/\d/);
  if (LEGACY_ZONE.test(text.slice(firstDigit))) return ms;
  // V8 reads such text without a zone in the machine's zone: "March 7, 2024 23:30" was March 8 on
  // a New York host, and a run verified or resumed in another zone diverged. Read as UTC, as ISO
  // text without a zone is.
  const utc = Date.parse(`${text} GMT`);
  return Number.isNaN(utc) ? ms - new Date(ms).getTimezoneOffset() * 60_000 : utc;
}

/**
 * ISO-shaped text with its zone written after a space, as Ruby (`2024-03-07 23:30:00 UTC`,
 * `… +0000`) and Go (`2024-03-07 23:30:00.123456789 -0500 EST`) print instants, as ISO 8601 text
 * (the fraction cut to milliseconds); undefined for any other text. A sync's `updateFrom` and a
 * `sync_state` value took these through Date.parse before they were read by the ISO rules.
 */
function isoOfZonedText(text: string): string | undefined {
  // After a numeric offset Go names the zone (`-0500 EST`, `+0530 IST`, `-0300 -03`): the offset decides.
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?\s+(?:(UTC|GMT|Z)|([+-]\d{2}):?(\d{2})(?:\s+(?:[A-Z]{1,6}|[+-]\d{2}(?:\d{2})?))?)$/i.exec(text.trim());
  if (m === null) return undefined;
  const fraction = m[3] === undefined ? '' : m[3].slice(0, 4);
  const zone = m[4] !== undefined ? 'Z' : `${m[5]}:${m[6]}`;
  return `${m[1]}T${m[2]}${fraction}${zone}`;
}

/**
 * A zone in text `Date.parse` reads (RFC 2822 and the like): a zone name it knows (`GMT`, `UTC`,
 * `Z`, the US zones) or a numeric offset after a time (`23:30:00 +0100`, `10:00 pm -05:00`,
 * `GMT+0100`) — not a `-2024` in `7-Mar-2024`.
 */
const LEGACY_ZONE = /(?:^|[\s\d,])(?:UTC?|GMT|Z|[ECMP][SD]T)(?=$|[\s+\-(),])|\d:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[AP]M\s*)?[+-]\d{1,2}(?::?\d{2})?(?!\d)/i;
