/**
 * The part of a request's identity that redaction by name would hide (journal/request-identity.ts
 * compares identities; this computes the one field that needs the redactor's rules).
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../eval/values.js';
import { isSensitiveName, queryName } from './redact.js';

/**
 * The sha256 of what redaction by name hides from an identity's URL and headers: the values of
 * query parameters and mission headers whose names mark a credential (`page_token`, `card_token`,
 * `X-Customer-Token`, `Cookie`), in order, each with every credential and setting of the run taken
 * out by `hide` (its `env()` values and known secrets, as `[REDACTED]`). So an edited value of such
 * a parameter is another request, while a key rotated between the run and its resume is not: it
 * comes from a setting, and settings never reach the hash. `url` is the request's URL before
 * redaction, `headers` the mission's headers before it.
 */
export function namedValuesSha256(url: string, headers: Readonly<Record<string, string>>, hide: (value: string) => string, isCredential: (name: string) => boolean = isSensitiveName): string {
  const named: [string, string, string][] = [];
  const q = url.indexOf('?');
  if (q >= 0) {
    const hashAt = url.indexOf('#', q);
    for (const pair of url.slice(q + 1, hashAt >= 0 ? hashAt : undefined).split('&')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const name = queryName(pair, eq);
      if (isCredential(name)) named.push(['query', name, hide(pair.slice(eq + 1))]);
    }
  }
  for (const name of Object.keys(headers).sort()) if (isCredential(name)) named.push(['header', name.toLowerCase(), hide(headers[name]!)]);
  return hash('sha256', canonicalJson(named), 'hex');
}
