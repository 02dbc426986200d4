/**
 * Which header, query parameter and setting names carry credentials: their values are never
 * recorded (http/redact.ts, rule 1), are not sent to another origin on a redirect, and a run's
 * settings so named are secrets its redactor knows (mission-env.ts). One rule for all of them.
 */

const SENSITIVE_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
// `auth` and `key` only as words of their own (`X-Auth-Key`, `auth_code`, `x-functions-key`),
// never inside `author` or `monkey`; `Key` after a lower-case letter ends a camelCase word.
const SENSITIVE_PART = /token|secret|passw(or)?d|api[-_]?key|apikey|access[-_]?key|private[-_]?key|(^|[-_.])(auth|key)([-_.]|$)/i;
const CAMEL_KEY = /[a-z0-9]Key(?![a-z])/;
const NOT_SECRET = /^(x-)?idempotency[-_.]?key$/i;

/** Names already judged: the same few header names come back on every request. */
const sensitiveCache = new Map<string, boolean>();
const SENSITIVE_CACHE_MAX = 512;

/** True for a header or query parameter name whose value must never be recorded. */
export function isSensitiveName(name: string): boolean {
  let sensitive = sensitiveCache.get(name);
  if (sensitive === undefined) {
    sensitive = SENSITIVE_HEADERS.has(name.toLowerCase()) || ((SENSITIVE_PART.test(name) || CAMEL_KEY.test(name)) && !NOT_SECRET.test(name));
    // Bounded: names come from servers too, and a server may invent a new one per response.
    if (sensitiveCache.size >= SENSITIVE_CACHE_MAX) sensitiveCache.clear();
    sensitiveCache.set(name, sensitive);
  }
  return sensitive;
}
