/**
 * JSON that enters a run from outside — a response body, a webhook body, a `--payload` — is
 * refused when it nests deeper than MAX_JSON_DEPTH arrays and objects.
 *
 * Why at the door: everything that reads a run's data back (the fold, stable keys, redaction, the
 * store commands, the studio's views) walks values recursively; a 3,000-level response was
 * accepted, then broke `reqon store` and the studio. Checked here once, every value a run holds
 * can be read back by every reader. Real APIs nest a few dozen levels at most.
 */

import { asLogged, jsonTextMayNeedLogging } from '../log/loggable.js';

export const MAX_JSON_DEPTH = 256;

export class JsonDepthError extends Error {
  constructor(readonly limit: number) {
    super(`the JSON is nested deeper than ${limit} levels of arrays and objects, the most a run accepts`);
    this.name = 'JsonDepthError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when `text` opens more than `limit` arrays/objects inside one another. A linear scan of
 * the text (strings skipped whole), so it never recurses itself; it does not validate the JSON.
 */
export function nestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote that closes the string opened at `open` (or the end of the text). */
function endOfString(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let slashes = 0;
    for (let j = at - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/**
 * `JSON.parse` for data entering a run: a SyntaxError as JSON.parse throws it, a JsonDepthError,
 * or an UnloggableValueError for a number the log cannot hold (`1e400`). The value comes back as
 * the log will hold it (log/loggable.ts: `-0` is 0), so a run acts on what its replay reads.
 */
export function parseJsonInput(text: string, limit: number = MAX_JSON_DEPTH): unknown {
  if (nestsDeeperThan(text, limit)) throw new JsonDepthError(limit);
  const value = JSON.parse(text) as unknown;
  return jsonTextMayNeedLogging(text) ? asLogged(value, 'the JSON') : value;
}
