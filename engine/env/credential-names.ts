/**
 * Which header, query parameter and setting names carry credentials: their values are never
 * recorded (http/redact.ts, rule 1), are not sent to another origin on a redirect, and a run's
 * settings so named are secrets its redactor knows (mission-env.ts). One rule for all of them.
 */

const SENSITIVE_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
// `auth` and `key` only as words of their own (`X-Auth-Key`, `auth_code`, `x-functions-key`,
// Azure's `KEY1`), never inside `author` or `monkey`; `Key` after a lower-case letter ends a
// camelCase word; the keys services name without a separator (`SUBSCRIPTIONKEY`, `clientkey`);
// and `code` alone: Azure Functions' `?code=` key, an OAuth authorization code.
const SENSITIVE_PART =
  /token|secret|passw(or)?d|api[-_]?key|apikey|access[-_]?key|private[-_]?key|(^|[-_.])(auth|key\d*)([-_.]|$)|(subscription|functions?|client|app|master|service|licen[cs]e|signing|encryption|consumer|account|shared|host|admin|session)[-_.]?key\d*$|^code$/i;
const CAMEL_KEY = /[a-z0-9]Key(?![a-z])/;
const NOT_SECRET = /^(x-)?idempotency[-_.]?key$/i;

// The rule before log format 4: `key` was no word of its own.
const SENSITIVE_PART_BEFORE_4 = /token|secret|passw(or)?d|api[-_]?key|apikey|access[-_]?key|private[-_]?key|(^|[-_.])auth([-_.]|$)/i;

/** The log format from which `key` is a credential word (events.ts LOG_FORMAT). */
export const KEY_WORD_FORMAT = 4;

/** A name rule: true for a header, query parameter or setting name whose value is a credential. */
export type CredentialNameRule = (name: string) => boolean;

/** Names already judged, per rule: the same few header names come back on every request. */
const SENSITIVE_CACHE_MAX = 512;

function cachedRule(judge: (name: string) => boolean): CredentialNameRule {
  const cache = new Map<string, boolean>();
  return (name) => {
    let sensitive = cache.get(name);
    if (sensitive === undefined) {
      sensitive = judge(name);
      // Bounded: names come from servers too, and a server may invent a new one per response.
      if (cache.size >= SENSITIVE_CACHE_MAX) cache.clear();
      cache.set(name, sensitive);
    }
    return sensitive;
  };
}

/** True for a header or query parameter name whose value must never be recorded (this engine's rule). */
export const isSensitiveName: CredentialNameRule = cachedRule(
  (name) => SENSITIVE_HEADERS.has(name.toLowerCase()) || ((SENSITIVE_PART.test(name) || CAMEL_KEY.test(name)) && !NOT_SECRET.test(name)),
);

const isSensitiveNameBefore4: CredentialNameRule = cachedRule((name) => SENSITIVE_HEADERS.has(name.toLowerCase()) || SENSITIVE_PART_BEFORE_4.test(name));

/**
 * The rule a run recorded in log format `format` redacts by. A run keeps the rule it started
 * with: its log's request identities were made by it, and a newer rule (a name newly a credential,
 * its value now `[REDACTED]`) made every such request of a run recorded before diverge on replay
 * — a resume after the upgrade failed the run.
 */
export function credentialNamesOf(format: number): CredentialNameRule {
  return format >= KEY_WORD_FORMAT ? isSensitiveName : isSensitiveNameBefore4;
}
