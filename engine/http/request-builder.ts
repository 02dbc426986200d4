/**
 * Builds the HTTP request of one fetch attempt from already-evaluated parts (§C.1.2).
 *
 * Invariants: URL = base with ONE trailing `/` removed + path (a leading `/` added when missing) +
 * query, where a base's own query (`…/v1?api-version=1`) stays a query, first, and its fragment goes; query order is since parameters, then pagination parameters, then auth parameters;
 * headers are the JSON defaults, then source headers, then `since` headers, then auth, then the
 * Idempotency-Key (names compared case-insensitively, later wins); a body is sent whenever the
 * value is not `undefined` — `0`, `false`, `""` and `null` are sent (the original dropped falsy
 * bodies).
 */

export type QueryParams = [string, string][];

export interface RequestParts {
  method: string;
  /** Effective base URL (after any `--source NAME=URL` override). */
  base: string;
  /** Path after interpolation. */
  path: string;
  sinceQuery?: QueryParams;
  pageQuery?: QueryParams;
  authQuery?: QueryParams;
  /** Source headers, values already evaluated. */
  sourceHeaders?: Record<string, string>;
  sinceHeaders?: Record<string, string>;
  authHeaders?: Record<string, string>;
  idempotencyKey?: string;
  body?: unknown;
}

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body as sent (serialised JSON), absent when there is none. */
  body?: string;
  /** The body value before serialisation (what gets recorded). */
  bodyValue?: unknown;
}

export class RequestBuildError extends Error {
  readonly code = 'bad-request';
  constructor(message: string) {
    super(message);
    this.name = 'RequestBuildError';
  }
}

export function buildUrl(base: string, path: string, query: QueryParams = []): string {
  if (!/^https?:\/\/[^/]/i.test(base)) {
    throw new RequestBuildError(`base URL "${base}" is not an absolute http(s) URL; fix the source's base or --source override`);
  }
  // A base may carry a query (`https://api.example.com/v1?api-version=2024-01-01`, as Azure's
  // APIs want on every request) or a fragment: the path goes before them — appended after the
  // query, `/items` had become part of the query's last value and every request went to `/v1`.
  // The base's parameters come first, then the path's own; a fragment never reaches a server.
  const end = base.search(/[?#]/);
  const basePath = end < 0 ? base : base.slice(0, end);
  const baseQuery = end >= 0 && base[end] === '?' ? base.slice(end + 1).split('#')[0]! : '';
  const trimmed = basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
  // A `#` in a request path is data, never a fragment: nothing after it would reach the server
  // (`"/search/" + "C#"` was sent as `/search/C`, its query left in the fragment).
  const p = (path.startsWith('/') ? path : `/${path}`).replaceAll('#', '%23');
  let url = trimmed + p;
  if (baseQuery !== '') {
    const own = p.indexOf('?');
    url = own < 0 ? `${url}?${baseQuery}` : `${trimmed}${p.slice(0, own)}?${baseQuery}&${p.slice(own + 1)}`;
  }
  if (query.length > 0) {
    const qs = new URLSearchParams(query).toString();
    url += (url.includes('?') ? '&' : '?') + qs;
  }
  return url;
}

/** Header merge where names match case-insensitively and a later layer replaces an earlier one. */
export function mergeHeaders(...layers: (Record<string, string> | undefined)[]): Record<string, string> {
  // Result: each name keeps the position of its first occurrence and takes the spelling and value
  // of its last. Built straight into one object (this runs on every attempt); only when a later
  // layer spells a name differently, or a name is `__proto__`, does the generic merge run.
  const out: Record<string, string> = {};
  const spelling = new Map<string, string>();
  for (const layer of layers) {
    if (!layer) continue;
    for (const name of Object.keys(layer)) {
      const lower = name.toLowerCase();
      const seen = spelling.get(lower);
      if ((seen !== undefined && seen !== name) || name === '__proto__') return mergeRenaming(layers);
      spelling.set(lower, name);
      out[name] = layer[name]!;
    }
  }
  return out;
}

function mergeRenaming(layers: (Record<string, string> | undefined)[]): Record<string, string> {
  const byLower = new Map<string, [string, string]>();
  for (const layer of layers) {
    if (!layer) continue;
    for (const [name, value] of Object.entries(layer)) byLower.set(name.toLowerCase(), [name, value]);
  }
  return Object.fromEntries(byLower.values());
}

/** Case-insensitive header lookup. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/**
 * A header the mission gives must be one HTTP can carry (RFC 9110 §5): a name of token
 * characters, a value of tab, visible ASCII, space and bytes 0x80–0xFF. Checked before anything is
 * sent: the HTTP client refuses the rest as a transport error, which was retried three times and
 * reported as "invalid X-Tag header" with no word on what was wrong.
 */
function checkHeader(name: string, value: string, secret = false): void {
  const shownName = JSON.stringify(name);
  if (/[\r\n]/.test(value) || /[\r\n:]/.test(name)) {
    throw new RequestBuildError(`header ${shownName} has a line break or colon where none is allowed`);
  }
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new RequestBuildError(`header name ${shownName} has a character a header name cannot hold (letters, digits and !#$%&'*+.^_\`|~- only)`);
  }
  const bad = /[^\t\x20-\x7e\x80-\xff]/u.exec(value);
  if (bad !== null) {
    const char = bad[0];
    const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const what = char.codePointAt(0)! > 0xff ? `a character beyond Latin-1 (${secret ? code : `${JSON.stringify(char)}, ${code}`})` : `a control character (${code})`;
    throw new RequestBuildError(
      secret
        ? `header ${shownName}, made from the source's credentials, has ${what}, which HTTP headers cannot carry: check the credential (its value is not shown)`
        : `header ${shownName} has ${what} at position ${bad.index + 1} of its value, which HTTP headers cannot carry; send such text in the body or the query, or encode it for the header (RFC 8187, or base64 if the API reads it so)`,
    );
  }
}

/** The first layer of every request's headers. */
const JSON_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({ 'Content-Type': 'application/json', Accept: 'application/json' });

export function buildRequest(parts: RequestParts): BuiltRequest {
  const { sinceQuery, pageQuery, authQuery } = parts;
  const query =
    (sinceQuery?.length ?? 0) + (pageQuery?.length ?? 0) + (authQuery?.length ?? 0) === 0
      ? undefined
      : [...(sinceQuery ?? []), ...(pageQuery ?? []), ...(authQuery ?? [])];
  const url = buildUrl(parts.base, parts.path, query);
  const sourceHeaders = parts.sourceHeaders;
  if (sourceHeaders) for (const name of Object.keys(sourceHeaders)) checkHeader(name, sourceHeaders[name]!);
  // A credential's header (a token with a character a header cannot carry, an api key header
  // named with a space) fails alike, its value never shown.
  const authHeaders = parts.authHeaders;
  if (authHeaders) for (const name of Object.keys(authHeaders)) checkHeader(name, authHeaders[name]!, true);
  const headers = mergeHeaders(
    JSON_DEFAULTS,
    sourceHeaders,
    parts.sinceHeaders,
    parts.authHeaders,
    parts.idempotencyKey !== undefined ? { 'Idempotency-Key': parts.idempotencyKey } : undefined,
  );
  const method = parts.method.toUpperCase();
  if (parts.body === undefined) return { method, url, headers };
  let body: string | undefined;
  try {
    body = JSON.stringify(parts.body);
  } catch (err) {
    throw new RequestBuildError(`the request body of ${method} ${parts.path} cannot be sent as JSON: ${(err as Error).message}`);
  }
  if (body === undefined) {
    throw new RequestBuildError(`the request body of ${method} ${parts.path} has no JSON form (a function or symbol)`);
  }
  return { method, url, headers, body, bodyValue: parts.body };
}
