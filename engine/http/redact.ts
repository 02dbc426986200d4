/**
 * Removes secrets from requests and responses before they are recorded or shown.
 *
 * Three rules, applied everywhere a recording is made:
 * 1. by name: headers Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-API-Key, and any
 *    header or query parameter whose name contains token, secret, password, api_key/apikey,
 *    access_key, private_key, or `auth` or `key` as a word (Cloudflare's X-Auth-Key, Azure's
 *    Ocp-Apim-Subscription-Key and x-functions-key, Google's `?key=`, `subscriptionKey`) — but
 *    not the engine's own Idempotency-Key, which is no secret and which replay compares;
 * 2. by value: every known secret of at least MIN_SECRET_LENGTH characters (and its URL-encoded
 *    forms) wherever it appears — URL, header values, body strings, nested JSON;
 * 3. by position: a shorter secret only where credentials go — a whole header value or a whole
 *    query parameter value. Searched for in data, a short one rewrites records that merely
 *    coincide with it (the token `a` turned the record id "a" into "[REDACTED]").
 * Bodies are redacted by value only: a response field such as `next_page_token` is data the
 * mission reads (a cursor) and must replay exactly.
 *
 * Invariants: the output of `request()`/`response()` contains none of the secrets given (short
 * ones: not where credentials go); a value nested too deep to inspect is never recorded — the
 * redactor throws `RedactionError` instead of passing it through.
 */

import { isSensitiveName } from '../env/credential-names.js';
import { setOwn } from '../eval/values.js';
import type { RecordedRequest, RecordedResponse } from '../log/events.js';

export { isSensitiveName };

export const REDACTED = '[REDACTED]';
/** Secrets shorter than this are redacted by position only (rule 3); credentials.ts warns about them. */
export const MIN_SECRET_LENGTH = 8;
/** Far beyond any JSON a run accepts (MAX_JSON_DEPTH); a value deeper than this is refused, not recorded. */
export const MAX_REDACT_DEPTH = 1024;

/** A value the redactor could not inspect whole: it must not be recorded. */
export class RedactionError extends Error {
  constructor() {
    super(`a value nested deeper than ${MAX_REDACT_DEPTH} levels cannot be checked for secrets, so it is not recorded`);
    this.name = 'RedactionError';
  }
}

/** The decoded name of query pair `pair` whose `=` is at `eq` (as written when its escape is malformed). */
export function queryName(pair: string, eq: number): string {
  const raw = eq >= 0 ? pair.slice(0, eq) : pair;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

export interface Redactor {
  /** Replaces known secret values inside a string. */
  text(value: string): string;
  /** Redacts sensitive query parameters, userinfo and known secrets in a URL; keeps its encoding. */
  url(url: string): string;
  headers(headers: Record<string, string>): Record<string, string>;
  /** Deep copy of a JSON-like value with every secret value replaced inside strings. */
  value(value: unknown): unknown;
  /** Copies the body: the recording never shares objects with the mission's value. */
  request(req: { method: string; url: string; headers: Record<string, string>; body?: unknown }): RecordedRequest;
  /**
   * Takes the body over: pass a value nobody else holds (a fresh `JSON.parse`). It is recorded as
   * is when there is no secret to replace, and copied with replacements otherwise.
   */
  /** The response as recorded, and how many secrets its body held (each replaced: the run acts on the recorded body). */
  response(res: { status: number; headers: Record<string, string>; body: unknown }): { recorded: RecordedResponse; replacedInBody: number };
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
export function createRedactor(secrets: readonly string[] | (() => readonly string[]), isCredential: (name: string) => boolean = isSensitiveName): Redactor {
  let cacheKey = '';
  let pattern: RegExp | undefined;
  /** Secrets below MIN_SECRET_LENGTH, in every form: matched only as whole header or query values. */
  let short: ReadonlySet<string> = new Set();

  const currentPattern = (): RegExp | undefined => {
    const given = typeof secrets === 'function' ? secrets() : secrets;
    // No credentials (the usual case): nothing to build or compare.
    if (given.length === 0) {
      cacheKey = '';
      pattern = undefined;
      short = new Set();
      return undefined;
    }
    const list = given.filter((s) => s.length > 0);
    const key = list.join('\u0000');
    if (key !== cacheKey) {
      cacheKey = key;
      const long = list.filter((s) => s.length >= MIN_SECRET_LENGTH);
      short = new Set(list.filter((s) => s.length < MIN_SECRET_LENGTH).flatMap(variants));
      const all = [...new Set(long.flatMap(variants))].sort((a, b) => b.length - a.length);
      pattern = all.length ? new RegExp(all.map(escapeRegExp).join('|'), 'g') : undefined;
    }
    return pattern;
  };
  /** Rule 3: a whole header or query value that is a short secret. */
  const isShortSecret = (value: string): boolean => short.size > 0 && short.has(value);

  // Each entry point looks the pattern up once and hands it down: the lookup asks the secrets
  // getter (every auth session) for its list, and a request has a dozen strings to redact.
  const textWith = (p: RegExp | undefined, value: string): string => (p ? value.replace(p, REDACTED) : value);
  const text = (value: string): string => textWith(currentPattern(), value);

  const urlWith = (p: RegExp | undefined, raw: string): string => {
    let out = raw;
    // userinfo: scheme://user:pass@host
    if (out.includes('@')) out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@?#]*)@/i, (_m, scheme: string) => `${scheme}${REDACTED}@`);
    const q = out.indexOf('?');
    if (q >= 0) {
      const hashAt = out.indexOf('#', q);
      const query = out.slice(q + 1, hashAt >= 0 ? hashAt : undefined);
      const rest = hashAt >= 0 ? out.slice(hashAt) : '';
      const pairs = query.split('&').map((pair) => {
        const eq = pair.indexOf('=');
        return eq >= 0 && (isCredential(queryName(pair, eq)) || isShortSecret(pair.slice(eq + 1))) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
      });
      out = `${out.slice(0, q)}?${pairs.join('&')}${rest}`;
    }
    return textWith(p, out);
  };

  const headersWith = (p: RegExp | undefined, h: Record<string, string>): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const name of Object.keys(h)) setOwn(out, name, isCredential(name) || isShortSecret(h[name]!) ? REDACTED : textWith(p, h[name]!));
    return out;
  };

  /** `t` with every secret replaced, counted in `replaced.n`. */
  const inText = (p: RegExp | undefined, t: string, replaced: { n: number } | undefined): string => {
    if (!p) return t;
    const out = t.replace(p, REDACTED);
    if (replaced && out !== t) replaced.n += t.match(p)?.length ?? 1;
    return out;
  };
  /** `v` with every secret replaced; `replaced.n` counts the secrets found (keys included). */
  const valueWith = (p: RegExp | undefined, v: unknown, depth: number, replaced?: { n: number }): unknown => {
    if (typeof v === 'string') return inText(p, v, replaced);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= MAX_REDACT_DEPTH) throw new RedactionError();
    if (Array.isArray(v)) return v.map((x) => valueWith(p, x, depth + 1, replaced));
    const obj = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) setOwn(out, inText(p, k, replaced), valueWith(p, obj[k], depth + 1, replaced));
    return out;
  };
  const value = (v: unknown): unknown => valueWith(currentPattern(), v, 0);

  return {
    text,
    url: (raw) => urlWith(currentPattern(), raw),
    headers: (h) => headersWith(currentPattern(), h),
    value: (v) => value(v),
    request: (req) => {
      const p = currentPattern();
      const out: RecordedRequest = { method: req.method, url: urlWith(p, req.url), headers: headersWith(p, req.headers) };
      if (req.body !== undefined) out.body = valueWith(p, req.body, 0);
      return out;
    },
    response: (res) => {
      const p = currentPattern();
      // The body is the caller's fresh parse, held by nobody else: with no secret to replace,
      // copying it would only cost time (a page can hold thousands of records).
      if (!p) return { recorded: { status: res.status, headers: headersWith(p, res.headers), body: res.body }, replacedInBody: 0 };
      const replaced = { n: 0 };
      const body = valueWith(p, res.body, 0, replaced);
      return { recorded: { status: res.status, headers: headersWith(p, res.headers), body }, replacedInBody: replaced.n };
    },
  };
}

