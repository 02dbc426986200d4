/**
 * Credentials for sources: loaded from an `--auth FILE.json` (with `$VAR`, `${VAR}` and
 * `${VAR:-default}` interpolation) or discovered from `REQON_<SOURCE>_*` environment variables.
 *
 * Invariants: credentials never come from a mission; every problem (unset variable, wrong shape,
 * a type that contradicts the source's declared `auth:`) is an error naming the source, the file
 * and the field, and the message never contains a secret value.
 */

import { readFileSync } from 'node:fs';
import type { AuthKind } from '../lang/ast.js';
import { MIN_SECRET_LENGTH } from './redact.js';

export type Credentials =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'api_key'; key: string; header?: string; query?: string }
  | {
      type: 'oauth2';
      accessToken: string;
      refreshToken?: string;
      tokenEndpoint?: string;
      clientId?: string;
      clientSecret?: string;
    };

export type CredentialType = Credentials['type'];
export type CredentialsMap = Record<string, Credentials>;
type Vars = Readonly<Record<string, string | undefined>>;

export class CredentialsError extends Error {
  readonly code = 'credentials';
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

const VAR_PATTERN = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{([^}]*)\}?|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Replaces `$VAR`, `${VAR}` and `${VAR:-default}` (default when unset or empty, as in a shell);
 * `$$` is a literal `$`. `where` names the file and field for error messages.
 */
export function interpolateVars(text: string, vars: Vars, where: string): string {
  return text.replace(VAR_PATTERN, (match, braced?: string, fallback?: string, bad?: string, bare?: string) => {
    if (match === '$$') return '$';
    if (bad !== undefined) {
      // The reference is not quoted: what follows `${` may be the secret itself.
      throw new CredentialsError(`${where}: malformed variable reference (a "\${" without a valid NAME and "}"); write \${NAME} or \${NAME:-default}`);
    }
    const name = (braced ?? bare)!;
    const value = vars[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === '') return '';
    throw new CredentialsError(
      `${where} uses $${name}, which is not set; set ${name} in the environment or write \${${name}:-default}`,
    );
  });
}

const FIELDS: Record<CredentialType, { required: string[]; optional: string[] }> = {
  bearer: { required: ['token'], optional: [] },
  basic: { required: ['username', 'password'], optional: [] },
  api_key: { required: ['key'], optional: ['header', 'query'] },
  oauth2: { required: ['accessToken'], optional: ['refreshToken', 'tokenEndpoint', 'clientId', 'clientSecret'] },
};

function isCredentialType(t: unknown): t is CredentialType {
  return typeof t === 'string' && Object.hasOwn(FIELDS, t);
}

/** Checks one entry's shape and interpolates its string fields. */
function parseEntry(source: string, raw: unknown, file: string, vars: Vars): Credentials {
  const where = `${file}: "${source}"`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CredentialsError(`${where}: expected an object with a "type" but got: ${describe(raw)}`);
  }
  const entry = raw as Record<string, unknown>;
  const type = entry['type'];
  if (!isCredentialType(type)) {
    throw new CredentialsError(
      `${where}: unknown credential type ${JSON.stringify(type)}; expected one of bearer, basic, api_key, oauth2`,
    );
  }
  const spec = FIELDS[type];
  const out: Record<string, string> = { type };
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'type') continue;
    if (!spec.required.includes(key) && !spec.optional.includes(key)) {
      const allowed = [...spec.required, ...spec.optional].join(', ');
      throw new CredentialsError(`${where}: unknown field "${key}" for type ${type}; allowed: ${allowed}`);
    }
    if (typeof value !== 'string') {
      throw new CredentialsError(`${where}.${key}: expected a string but got: ${describe(value)}`);
    }
    out[key] = interpolateVars(value, vars, `${where}.${key}`);
  }
  for (const key of spec.required) {
    if (!out[key]) throw new CredentialsError(`${where}: type ${type} needs a non-empty "${key}"`);
  }
  if (type === 'api_key' && out['header'] !== undefined && out['query'] !== undefined) {
    throw new CredentialsError(`${where}: give "header" or "query" for an api_key, not both`);
  }
  return out as unknown as Credentials;
}

/**
 * Where JSON.parse gave up, as `line L, column C` — from the position in its message, never the
 * excerpt of the text it quotes (where the secrets are) — or nothing when it names no position.
 */
function whereJsonBreaks(text: string, message: string): string {
  const at = /at position (\d+)/.exec(message);
  if (!at) return '';
  const before = text.slice(0, Number(at[1]));
  return ` at line ${before.split('\n').length}, column ${before.length - before.lastIndexOf('\n')}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The auth file's section of postgrest store endpoints, beside the sources' credentials. */
const STORES_KEY = 'stores';

/** Parses the text of an auth file. `file` is only used in messages. */
export function parseCredentialsFile(text: string, file: string, vars: Vars): CredentialsMap {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // JSON.parse's message may quote the text around the error, which is where the secrets are.
    throw new CredentialsError(`${file}: not valid JSON${whereJsonBreaks(text, (err as Error).message)}; its content is not shown, as it holds secrets`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CredentialsError(`${file}: expected an object keyed by source name but got: ${describe(parsed)}`);
  }
  const out: CredentialsMap = {};
  for (const [source, entry] of Object.entries(parsed)) {
    // "stores" holds postgrest store endpoints (stores/postgrest-store.ts reads it), not a source.
    if (source === STORES_KEY) continue;
    out[source] = parseEntry(source, entry, file, vars);
  }
  return out;
}

export function loadCredentialsFile(path: string, vars: Vars): CredentialsMap {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CredentialsError(`cannot read auth file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseCredentialsFile(text, path, vars);
}

/** `REQON_<SOURCE>_`: the source name upper-cased, every non-alphanumeric character turned into `_`. */
export function envPrefix(source: string): string {
  return `REQON_${source.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

/**
 * Credentials from `REQON_<SOURCE>_TYPE`, `_TOKEN`, `_API_KEY` (+ `_API_KEY_HEADER`/`_API_KEY_QUERY`),
 * `_USERNAME`/`_PASSWORD`, and for oauth2 `_REFRESH_TOKEN`, `_TOKEN_ENDPOINT`, `_CLIENT_ID`,
 * `_CLIENT_SECRET`. Without `_TYPE` the type follows the declared `auth:` kind, else what is set.
 */
export function discoverCredentials(source: string, vars: Vars, declared?: AuthKind): Credentials | undefined {
  const p = envPrefix(source);
  const get = (suffix: string) => {
    const v = vars[p + suffix];
    return v === undefined || v === '' ? undefined : v;
  };
  const explicit = get('TYPE');
  if (explicit !== undefined && !isCredentialType(explicit)) {
    throw new CredentialsError(`${p}TYPE is "${explicit}"; expected one of bearer, basic, api_key, oauth2`);
  }
  const token = get('TOKEN');
  const apiKey = get('API_KEY');
  const username = get('USERNAME');
  const password = get('PASSWORD');
  let type: CredentialType | undefined = explicit;
  if (!type && declared && declared !== 'none') {
    const wanted = declared as CredentialType;
    const present =
      (wanted === 'bearer' || wanted === 'oauth2') ? token : wanted === 'api_key' ? apiKey : username ?? password;
    if (present !== undefined) type = wanted;
  }
  if (!type) type = token ? 'bearer' : apiKey ? 'api_key' : username || password ? 'basic' : undefined;
  if (!type) return undefined;
  const need = (suffix: string, value: string | undefined): string => {
    if (value === undefined) throw new CredentialsError(`${p}TYPE is ${type} but ${p}${suffix} is not set`);
    return value;
  };
  switch (type) {
    case 'bearer':
      return { type, token: need('TOKEN', token) };
    case 'basic':
      return { type, username: need('USERNAME', username), password: need('PASSWORD', password) };
    case 'api_key': {
      const header = get('API_KEY_HEADER');
      const query = get('API_KEY_QUERY');
      return { type, key: need('API_KEY', apiKey), ...(header ? { header } : {}), ...(query ? { query } : {}) };
    }
    case 'oauth2': {
      const extra: Record<string, string> = {};
      for (const [suffix, key] of [
        ['REFRESH_TOKEN', 'refreshToken'],
        ['TOKEN_ENDPOINT', 'tokenEndpoint'],
        ['CLIENT_ID', 'clientId'],
        ['CLIENT_SECRET', 'clientSecret'],
      ] as const) {
        const v = get(suffix);
        if (v !== undefined) extra[key] = v;
      }
      return { type, accessToken: need('TOKEN', token), ...extra };
    }
    default: {
      const never: never = type;
      throw new Error(`unhandled credential type ${String(never)}`);
    }
  }
}

export interface ResolveCredentialsInput {
  source: string;
  /** The source's declared `auth:` kind. */
  declared: AuthKind;
  /** Parsed `--auth` file, if one was given, and its path for messages. */
  file?: CredentialsMap;
  fileName?: string;
  vars: Vars;
  /** When false, missing credentials yield `undefined` instead of an error (dry runs). Default true. */
  required?: boolean;
}

/**
 * The credentials a source uses: the auth file's entry if it has one, else the environment.
 * `auth: none` uses none; any other declared kind must match the credentials' type.
 */
export function resolveCredentials(input: ResolveCredentialsInput): Credentials | undefined {
  const { source, declared, file, fileName = 'the auth file', vars } = input;
  const fromFile = file && Object.hasOwn(file, source) ? file[source] : undefined;
  if (declared === 'none') {
    if (fromFile) {
      throw new CredentialsError(
        `source "${source}" declares auth: none but ${fileName} has credentials for it; remove the entry or declare auth: ${fromFile.type}`,
      );
    }
    return undefined;
  }
  const found = fromFile ?? discoverCredentials(source, vars, declared);
  if (!found) {
    if (input.required === false) return undefined;
    const p = envPrefix(source);
    const hint =
      declared === 'basic'
        ? `${p}USERNAME and ${p}PASSWORD`
        : declared === 'api_key'
          ? `${p}API_KEY`
          : `${p}TOKEN`;
    throw new CredentialsError(
      `source "${source}" declares auth: ${declared} but no credentials were found; pass --auth FILE.json with a "${source}" entry or set ${hint}`,
    );
  }
  if (found.type !== declared) {
    const origin = fromFile ? fileName : `the ${envPrefix(source)}* environment variables`;
    throw new CredentialsError(
      `source "${source}" declares auth: ${declared} but ${origin} ${fromFile ? 'gives' : 'give'} credentials of type ${found.type}; make them agree`,
    );
  }
  return found;
}

/**
 * Credentials too short to be secrets (under MIN_SECRET_LENGTH): they are redacted only where
 * credentials go (headers, query values), not searched for in data. One warning per source, or
 * undefined.
 */
export function shortSecretWarning(source: string, credentials: Credentials | undefined, what = 'a credential of source'): string | undefined {
  const short = secretsOf(credentials).some((s) => s.length < MIN_SECRET_LENGTH);
  if (!short) return undefined;
  return `warning: ${what} "${source}" is shorter than ${MIN_SECRET_LENGTH} characters, too short to be told apart from data; it is redacted in headers and query parameters only`;
}

/** Every secret value in a credential set (for redaction). */
export function secretsOf(credentials: Credentials | undefined): string[] {
  if (!credentials) return [];
  switch (credentials.type) {
    case 'bearer':
      return [credentials.token];
    case 'basic':
      return [
        credentials.password,
        Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64'),
      ];
    case 'api_key':
      return [credentials.key];
    case 'oauth2':
      return [credentials.accessToken, credentials.refreshToken, credentials.clientSecret].filter(
        (s): s is string => typeof s === 'string' && s.length > 0,
      );
    default: {
      const never: never = credentials;
      throw new Error(`unhandled credentials ${JSON.stringify(never)}`);
    }
  }
}
