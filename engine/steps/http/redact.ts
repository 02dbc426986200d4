/**
 * Removes secrets from requests and responses before they are recorded or shown.
 *
 * Two rules, both applied everywhere a recording is made:
 * 1. by name: headers Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-API-Key, and any
 *    header or query parameter whose name contains token, secret, password, api_key/apikey;
 * 2. by value: every known secret (and its URL-encoded forms) wherever it appears — URL, header
 *    values, body strings, nested JSON.
 * Bodies are redacted by value only: a response field such as `next_page_token` is data the
 * mission reads (a cursor) and must replay exactly.
 *
 * Invariant: the output of `request()`/`response()` contains none of the secrets given.
 */

import type { RecordedRequest, RecordedResponse } from '../../log/events.js';

export const REDACTED = '[REDACTED]';

const SENSITIVE_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
const SENSITIVE_PART = /token|secret|passw(or)?d|api[-_]?key|apikey/i;

/** True for a header or query parameter name whose value must never be recorded. */
export function isSensitiveName(name: string): boolean {
  return SENSITIVE_HEADERS.has(name.toLowerCase()) || SENSITIVE_PART.test(name);
}

export interface Redactor {
  /** Replaces known secret values inside a string. */
  text(value: string): string;
  /** Redacts sensitive query parameters, userinfo and known secrets in a URL; keeps its encoding. */
  url(url: string): string;
  headers(headers: Record<string, string>): Record<string, string>;
  /** Deep copy of a JSON-like value with every secret value replaced inside strings. */
  value(value: unknown): unknown;
  request(req: { method: string; url: string; headers: Record<string, string>; body?: unknown }): RecordedRequest;
  response(res: { status: number; headers: Record<string, string>; body: unknown }): RecordedResponse;
}

/** Forms a secret can take inside a URL or a form body. */
function variants(secret: string): string[] {
  const out = new Set([secret]);
  out.add(encodeURIComponent(secret));
  out.add(new URLSearchParams({ s: secret }).toString().slice(2));
  return [...out];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * `secrets` may be a live getter so that tokens obtained later in the run (an OAuth refresh) are
 * redacted too.
 */
export function createRedactor(secrets: readonly string[] | (() => readonly string[])): Redactor {
  let cacheKey = '';
  let pattern: RegExp | undefined;

  const currentPattern = (): RegExp | undefined => {
    const list = (typeof secrets === 'function' ? secrets() : secrets).filter((s) => s.length > 0);
    const key = list.join('\u0000');
    if (key !== cacheKey) {
      cacheKey = key;
      const all = [...new Set(list.flatMap(variants))].sort((a, b) => b.length - a.length);
      pattern = all.length ? new RegExp(all.map(escapeRegExp).join('|'), 'g') : undefined;
    }
    return pattern;
  };

  const text = (value: string): string => {
    const p = currentPattern();
    return p ? value.replace(p, REDACTED) : value;
  };

  const url = (raw: string): string => {
    let out = raw;
    // userinfo: scheme://user:pass@host
    out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@?#]*)@/i, (_m, scheme: string) => `${scheme}${REDACTED}@`);
    const q = out.indexOf('?');
    if (q >= 0) {
      const hashAt = out.indexOf('#', q);
      const query = out.slice(q + 1, hashAt >= 0 ? hashAt : undefined);
      const rest = hashAt >= 0 ? out.slice(hashAt) : '';
      const pairs = query.split('&').map((pair) => {
        const eq = pair.indexOf('=');
        const rawName = eq >= 0 ? pair.slice(0, eq) : pair;
        let name = rawName;
        try {
          name = decodeURIComponent(rawName.replace(/\+/g, ' '));
        } catch {
          // keep the raw name: a malformed escape is still checked as written
        }
        return eq >= 0 && isSensitiveName(name) ? `${rawName}=${REDACTED}` : pair;
      });
      out = `${out.slice(0, q)}?${pairs.join('&')}${rest}`;
    }
    return text(out);
  };

  const headers = (h: Record<string, string>): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [name, v] of Object.entries(h)) out[name] = isSensitiveName(name) ? REDACTED : text(v);
    return out;
  };

  // The pattern is looked up once per body, not once per string: a page of a thousand records
  // holds thousands of strings, and each lookup asks every auth session for its secrets. The
  // walk still copies the body, so the recorded value never shares objects with the mission's.
  const valueWith = (p: RegExp | undefined, v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return p ? v.replace(p, REDACTED) : v;
    if (v === null || typeof v !== 'object' || depth > 200) return v;
    if (Array.isArray(v)) return v.map((x) => valueWith(p, x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[p ? k.replace(p, REDACTED) : k] = valueWith(p, x, depth + 1);
    return out;
  };
  const value = (v: unknown): unknown => valueWith(currentPattern(), v, 0);

  return {
    text,
    url,
    headers,
    value: (v) => value(v),
    request: (req) => {
      const out: RecordedRequest = { method: req.method, url: url(req.url), headers: headers(req.headers) };
      if (req.body !== undefined) out.body = value(req.body);
      return out;
    },
    response: (res) => ({ status: res.status, headers: headers(res.headers), body: value(res.body) }),
  };
}
