/**
 * Incremental sync helpers (§C.1.6): how a `lastSync` instant is written into a request, which
 * checkpoint key a fetch uses, and which instant a successful fetch records.
 *
 * Invariants: formatting is a pure function of the instant (UTC, never the local zone); the
 * checkpoint key is derived from the program and the interpolated path only, so the same fetch
 * always advances the same key; an `updateFrom` value that is not a readable date yields
 * `undefined` (the caller falls back to the fetch's start time) rather than a wrong checkpoint.
 */

import type { SinceFormat } from '../lang/ast.js';
import type { QueryParams } from './request-builder.js';
import { getPath } from './pagination.js';
import { dateStringToMs } from '../eval/iso-dates.js';

export const DEFAULT_SINCE_PARAM = 'since';

/** The largest distance from the epoch a Date holds (ms). */
const MAX_INSTANT_MS = 8.64e15;
/** 10000-01-01T00:00:00Z: the first instant an HTTP date's four-digit year cannot write. */
const HTTP_DATE_END_MS = 253402300800000;

/**
 * The format a `lastSync` value takes when the mission names none: an HTTP date in a conditional
 * request header (RFC 9110 §13.1.3: a server ignores If-Modified-Since unless it is one, so an
 * ISO instant there made every run fetch everything), else ISO-8601.
 */
export function defaultSinceFormat(header: string | undefined): SinceFormat {
  return header !== undefined && /^if-(un)?modified-since$/i.test(header) ? 'http-date' : 'iso';
}

export function formatLastSync(ms: number, format: SinceFormat = 'iso'): string {
  if (!Number.isFinite(ms)) throw new RangeError(`lastSync instant must be a finite number of ms, got ${ms}`);
  if (Math.abs(ms) > MAX_INSTANT_MS) throw new RangeError(`lastSync checkpoint ${ms} is no instant a date can hold (at most ±${MAX_INSTANT_MS} ms from 1970)`);
  switch (format) {
    case 'iso':
      return new Date(ms).toISOString();
    case 'unix':
      return String(Math.floor(ms / 1000));
    case 'unix-ms':
      return String(Math.floor(ms));
    case 'date-only':
      return new Date(ms).toISOString().slice(0, 10);
    case 'http-date':
      // IMF-fixdate, e.g. `Thu, 01 Jan 1970 00:00:00 GMT` (a four-digit year: Date's range past 9999 is no HTTP date).
      if (ms < 0 || ms >= HTTP_DATE_END_MS) throw new RangeError(`lastSync checkpoint ${new Date(ms).toISOString()} has no HTTP date (years 1970 to 9999)`);
      return new Date(ms).toUTCString();
    default: {
      const never: never = format;
      throw new RangeError(`unknown lastSync format ${String(never)}`);
    }
  }
}

export interface CheckpointKeyInput {
  /** `lastSync("key")`. */
  explicitKey?: string;
  source: string;
  /** For `call Source.op`. */
  operationId?: string;
  /** The interpolated path (for `get`/`post`/…). */
  path?: string;
}

/** Explicit key, else `Source:operationId` for `call`, else `Source:<path without query and trailing slashes>`. */
export function checkpointKey(input: CheckpointKeyInput): string {
  if (input.explicitKey !== undefined && input.explicitKey !== '') return input.explicitKey;
  if (input.operationId) return `${input.source}:${input.operationId}`;
  if (input.path === undefined) throw new Error('checkpointKey needs a path or an operationId');
  const cut = input.path.search(/[?#]/);
  let p = cut >= 0 ? input.path.slice(0, cut) : input.path;
  p = p.replace(/\/+$/, '');
  return `${input.source}:${p}`;
}

export interface SincePlacementInput {
  /** Query parameter name (default `since`); ignored when `header` is given. */
  param?: string;
  /** Send the value as this request header instead (e.g. `If-Modified-Since`). */
  header?: string;
}

/** Where the formatted value goes: one query parameter, or one header. */
export function sincePlacement(
  where: SincePlacementInput,
  value: string,
): { query: QueryParams; headers: Record<string, string> } {
  if (where.header) return { query: [], headers: { [where.header]: value } };
  return { query: [[where.param ?? DEFAULT_SINCE_PARAM, value]], headers: {} };
}

/** `since: <expr>`: the value stringified, under `since`. */
export function sinceExprValue(value: unknown): string {
  if (value === null || value === undefined) throw new TypeError(`since expression evaluated to ${String(value)}; expected a date or string`);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The instant at `updateFrom` (dotted path) in a response body, in ms: ISO/RFC date strings,
 * numbers as epoch seconds (below 1e11), ms (below 1e14, the year 5138), µs (below 1e17), else ns.
 * Undefined when absent or not a date a Date can hold. Read as ms, a µs value was the year 55,000:
 * every later sync asked for changes since then and got none; a larger one failed every later run.
 */
export function extractUpdateFrom(body: unknown, path: string): number | undefined {
  const v = getPath(body, path);
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) {
    const ms = v < 1e11 ? v * 1000 : v < 1e14 ? v : Math.floor(v < 1e17 ? v / 1e3 : v / 1e6);
    return ms <= MAX_INSTANT_MS ? ms : undefined;
  }
  if (typeof v === 'string' && v.trim() !== '') {
    const trimmed = v.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return extractUpdateFrom({ v: Number(trimmed) }, 'v');
    // Text without a zone is UTC (dateStringToMs), never the machine's zone: read in New York, the
    // next sync asked from 5 hours later and never fetched what changed in between.
    const ms = dateStringToMs(trimmed);
    return ms !== undefined && ms <= MAX_INSTANT_MS ? ms : undefined;
  }
  return undefined;
}
