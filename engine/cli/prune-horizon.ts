/**
 * `--completed-before` (reqon prune) and `--prune-completed-before` (reqon worker): how long ago
 * a run must have finished to be pruned. Written as the language writes a pause's duration, with
 * a unit always (`30d`, `12h`, `90m`, `1.5h`: a bare `30` would be 30 ms, never what anyone
 * pruning means), or in ISO 8601 (`P30D`, `PT12H`, `P2W`, `P1DT6H`), or as an instant
 * (`2026-01-31`, `2026-01-31T12:00:00Z`): runs that finished before it. Months and years are
 * refused: their length depends on the calendar, so the horizon would be a guess.
 */
import { MAX_DURATION_MS } from '../lang/check-values.js';
import { parseDurationText } from '../lang/parser-steps-suspend.js';
import { CliError } from './cli-error.js';

export type Horizon = { kind: 'age'; ms: number } | { kind: 'instant'; at: number };

const ISO_DURATION = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;
const EXAMPLES = 'e.g. 30d, 12h, 90m, P30D, PT12H, or an instant such as 2026-01-31T00:00:00Z';

/** Parses the flag's value; a CliError (exit 2) saying what was expected otherwise. */
export function parseHorizon(value: unknown, flag: string): Horizon {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') throw new CliError(`${flag} expects a duration or an instant (${EXAMPLES})`);
  if (/^P/i.test(text)) return age(isoDuration(text, flag), text, flag);
  if (ISO_INSTANT.test(text)) {
    const at = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
    // Date.parse rolls 2026-02-30 over into March: a day that does not exist is a typo.
    const [y, mo, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
    const day = new Date(Date.UTC(y, mo - 1, d));
    if (Number.isNaN(at) || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) throw new CliError(`${flag}: "${text}" is not a date that exists (${EXAMPLES})`);
    return { kind: 'instant', at };
  }
  if (/^\s*[\d.]+\s*$/.test(text)) {
    throw new CliError(`${flag}: "${text}" has no unit; write it with one: ${text}d (days), ${text}h (hours), ${text}m (minutes) or ${text}s`);
  }
  const ms = parseDurationText(text);
  if (ms === undefined) {
    const months = /^\s*[\d.]+\s*(mo|months?|y|years?)\s*$/i.test(text);
    throw new CliError(
      months
        ? `${flag}: "${text}": months and years have no fixed length; write days instead (e.g. 30d, 365d)`
        : `${flag}: "${text}" is not a duration; expected a number with a unit ms, s, m, h or d (${EXAMPLES})`,
    );
  }
  return age(ms, text, flag);
}

/**
 * An age is at most 36500d, the longest duration a mission may give (GUARANTEES 17): a longer
 * one put the horizon before the date range and the log refused it as an internal error.
 */
function age(ms: number, text: string, flag: string): Horizon {
  if (!(ms <= MAX_DURATION_MS)) throw new CliError(`${flag}: "${text}" is longer than 36500d (about 100 years), the longest age a prune takes`);
  return { kind: 'age', ms };
}

/** The instant before which runs must have finished, for a horizon read at `now`. */
export function horizonInstant(horizon: Horizon, now: number): number {
  return horizon.kind === 'instant' ? horizon.at : now - horizon.ms;
}

/** A horizon as people read it back. */
export function describeHorizon(horizon: Horizon): string {
  if (horizon.kind === 'instant') return `before ${new Date(horizon.at).toISOString()}`;
  const { ms } = horizon;
  if (ms === 0) return 'at any time before now';
  const unit = ms % 86_400_000 === 0 ? [86_400_000, 'd'] : ms % 3_600_000 === 0 ? [3_600_000, 'h'] : ms % 60_000 === 0 ? [60_000, 'm'] : [1000, 's'];
  return `more than ${ms / (unit[0] as number)}${unit[1] as string} ago`;
}

function isoDuration(text: string, flag: string): number {
  if (/^P(?:[\d.]+[YM])/i.test(text) || /^P[^T]*[\d.]+[YM]/i.test(text)) {
    throw new CliError(`${flag}: "${text}": months and years have no fixed length; write days instead (e.g. P30D, P365D)`);
  }
  const m = ISO_DURATION.exec(text);
  if (m === null || text.length <= 1 || /T$/i.test(text)) {
    throw new CliError(`${flag}: "${text}" is not an ISO 8601 duration of weeks, days, hours, minutes or seconds (e.g. P30D, PT12H, P1DT6H)`);
  }
  const [, w, d, h, min, s] = m.map((part) => (part === undefined ? 0 : parseFloat(part)));
  return Math.round(((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + s!) * 1000);
}
