/**
 * `postgrest("table")` stores: rows in a real PostgREST endpoint (Supabase and the like).
 *
 * - upsert → the row is read (`GET ?<keyColumn>=eq.<key>`), the record applied to it as a JSON
 *   Merge Patch (merge.ts: the rule of every store kind — nested objects, i.e. json columns,
 *   merged key by key, arrays replaced, null deletes), and the result written with `PUT`. A
 *   field the patch deletes is a column the PUT leaves out, which the database sets to its
 *   default (NULL): a row cannot lose a column. Re-applying the same patch gives the same row.
 *   With no row yet: `POST /<table>?on_conflict=<keyColumn>` with
 *   `Prefer: resolution=merge-duplicates`, so a row another writer created meanwhile is merged.
 * - set    → `PUT /<table>?<keyColumn>=eq.<key>`: PostgREST's single-row upsert, which replaces
 *   the whole row.
 * - delete → `DELETE /<table>?<keyColumn>=eq.<key>` (`delete S[k]`).
 * Both are idempotent by key, which is what makes a replayed write harmless. Writes go one
 * request per record, in order, so a batch that writes one key twice ends as a local store would.
 * The endpoint comes from the run's auth file or the environment (resolvePostgrestConfig); there
 * is no fallback to any other kind of store.
 */
import { TransportError, type HttpRequest, type HttpResponse, type HttpTransport } from '../env/env.js';
import { parseJsonInput } from '../env/json-input.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../http/client.js';
import { assertRecord, describeValue } from './keys.js';
import { mergeUpsert } from './merge.js';
import { StoreError } from './store-error.js';
import { compareKeys, type ExternalStore, type StoredRecord, type StoreWrite, type StoreWriteResult } from './store-adapter.js';

export interface PostgrestConfig {
  /** Base URL of the PostgREST API, e.g. `https://x.supabase.co/rest/v1` or `http://127.0.0.1:3000`. */
  url: string;
  apiKey?: string;
  table: string;
  /** The column holding the store key; `id` unless configured. Must be the table's unique key. */
  keyColumn?: string;
}

export interface PostgrestStore extends ExternalStore {
  readonly kind: 'postgrest';
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A store is read whole into memory: past this many rows, a read fails rather than exhaust it. */
const MAX_LIST_ROWS = 5_000_000;

/** A value as a PostgREST filter takes it: quoted when it holds a character the filter syntax reserves. */
function filterValue(value: unknown): string {
  const text = String(value);
  return /[,.:()"\\\s]/.test(text) ? `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"` : text;
}

/** `Content-Range: 0-999/5000` (or `…/*`, total unknown; `*\/0` for no rows): its total, when it says one. */
function contentRange(header: string | undefined): { total?: number } | undefined {
  const match = header === undefined ? null : /^\s*(?:\d+-\d+|\*)\/(\d+|\*)\s*$/.exec(header);
  if (match === null) return undefined;
  return match[1] !== '*' ? { total: Number(match[1]) } : {};
}

export function openPostgrestStore(config: PostgrestConfig, http: HttpTransport, timeoutMs: number): PostgrestStore {
  const table = checkIdentifier(config.table, 'table');
  const keyColumn = checkIdentifier(config.keyColumn ?? 'id', 'key column');
  const base = `${checkUrl(config.url, `postgrest table "${table}"`).replace(/\/+$/, '')}/${table}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (config.apiKey !== undefined && config.apiKey !== '') {
    headers['apikey'] = config.apiKey;
    headers['Authorization'] = `Bearer ${config.apiKey}`;
  }
  const byKey = (key: string): string => `${base}?${keyColumn}=eq.${encodeURIComponent(key)}`;

  async function send(method: string, url: string, body?: unknown, prefer?: string): Promise<unknown> {
    return (await exchange(method, url, body, prefer)).value;
  }

  /** One request: its JSON answer (undefined for an empty body) and its headers. */
  async function exchange(method: string, url: string, body?: unknown, prefer?: string): Promise<{ value: unknown; headers: Record<string, string> }> {
    // A table is read whole into memory: bounded as a source's answer is, or one huge answer
    // takes the process down (helper 42: 200 MB of rows, 6.9 GB RSS, an abort, the run left running).
    const request: HttpRequest = { method, url, headers: { ...headers }, timeoutMs, maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES };
    if (body !== undefined) {
      request.headers['Content-Type'] = 'application/json';
      request.body = JSON.stringify(body);
    }
    if (prefer !== undefined) request.headers['Prefer'] = prefer;
    let response: HttpResponse;
    try {
      response = await http.send(request);
    } catch (error) {
      if (error instanceof TransportError) {
        const retryable = error.code !== 'aborted' && error.code !== 'too-large';
        const why = error.code === 'too-large' ? ` (a PostgREST table is read whole; at most ${DEFAULT_MAX_RESPONSE_BYTES} bytes of rows a read)` : '';
        throw new StoreError('store.transport', `PostgREST ${method} ${url} failed: ${error.message}${why}`, retryable, { cause: error });
      }
      throw error;
    }
    if (response.status < 200 || response.status > 299) {
      const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
      throw new StoreError('store.http', `PostgREST ${method} ${url} answered ${response.status}: ${excerpt(response.body)}`, retryable);
    }
    if (response.body.trim() === '') return { value: undefined, headers: response.headers };
    // What a run reads goes into its log: as deep, and with numbers, as the log can hold (json-input.ts).
    try {
      return { value: parseJsonInput(response.body), headers: response.headers };
    } catch (error) {
      if (error instanceof SyntaxError) throw new StoreError('store.http', `PostgREST ${method} ${url} answered ${response.status} with a body that is not JSON: ${excerpt(response.body)}`);
      throw new StoreError('store.http', `PostgREST ${method} ${url} answered ${response.status} with rows the run cannot take: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  function rows(value: unknown, what: string): Record<string, unknown>[] {
    if (!Array.isArray(value)) {
      throw new StoreError('store.http', `PostgREST ${what} returned ${describeValue(value)} where an array of rows was expected`);
    }
    return value.map((row, index) => {
      assertRecord(row, `PostgREST ${what}, row #${index}`);
      return row;
    });
  }

  async function get(key: string): Promise<Record<string, unknown> | undefined> {
    return rows(await send('GET', byKey(key)), `get "${key}" from "${table}"`)[0];
  }

  /**
   * `delete S[k]`: `DELETE /<table>?<keyColumn>=eq.<key>`, idempotent (a second one matches no
   * row). `removed` from the deleted rows PostgREST returns; a proxy that drops
   * `return=representation` leaves it unknown (absent), after a read shows the row is gone.
   */
  async function deleteOne(write: StoreWrite): Promise<StoreWriteResult> {
    const answer = await send('DELETE', byKey(write.key), undefined, 'return=representation');
    if (answer !== undefined) return { key: write.key, record: null, removed: rows(answer, `delete "${write.key}" from "${table}"`).length > 0 };
    if ((await get(write.key)) !== undefined) {
      throw new StoreError('store.http', `PostgREST DELETE of "${write.key}" from "${table}" succeeded but the row is still there; check the table's row-level security for DELETE`);
    }
    return { key: write.key, record: null };
  }

  async function writeOne(write: StoreWrite, index: number): Promise<StoreWriteResult> {
    if (write.op === 'delete') return deleteOne(write);
    assertRecord(write.record, `write #${index} to postgrest table "${table}"`);
    const own = write.record[keyColumn];
    if (own !== undefined && own !== null && String(own) !== write.key) {
      throw new StoreError(
        'store.bad-key',
        `write #${index} to postgrest table "${table}": the record's "${keyColumn}" is ${describeValue(own)} but its store key is "${write.key}"; make the step's key: match "${keyColumn}", or set "keyColumn" for this store in the auth file`,
      );
    }
    // The key column carries the key; when the record holds it as a number, keep the number.
    const row = { ...write.record, [keyColumn]: own ?? write.key };
    let answer: unknown;
    switch (write.op) {
      case 'upsert': {
        const existing = await get(write.key);
        if (existing === undefined) {
          answer = await send('POST', `${base}?on_conflict=${keyColumn}`, mergeUpsert(undefined, row), 'resolution=merge-duplicates,return=representation');
        } else {
          answer = await send('PUT', byKey(write.key), { ...mergeUpsert(existing, row), [keyColumn]: existing[keyColumn] ?? row[keyColumn] }, 'return=representation');
        }
        break;
      }
      case 'set':
        answer = await send('PUT', byKey(write.key), row, 'return=representation');
        break;
      default: {
        const never: never = write.op;
        throw new StoreError('store.bad-record', `unknown store op ${JSON.stringify(never)}`);
      }
    }
    // A proxy that drops `Prefer: return=representation` answers 201/204 with no body: read the row back.
    const stored = answer === undefined ? await get(write.key) : rows(answer, `${write.op} "${write.key}" into "${table}"`)[0];
    if (stored === undefined) {
      throw new StoreError('store.http', `PostgREST ${write.op} of "${write.key}" into "${table}" succeeded but the row cannot be read back; check the table's row-level security for SELECT`);
    }
    return { key: write.key, record: stored };
  }

  /**
   * Every row, page by page: PostgREST answers at most its `db-max-rows` rows a request (Supabase:
   * 1,000), and one request read only the first page — a loop over the store took 3 of 10 rows as
   * all of them. So the read goes on from the last key it got (`?<key>=gt.<last>`, keyset: a row
   * written meanwhile can neither come twice nor push one out, as with offsets) until a page says,
   * by `Content-Range: …/REMAINING`, that it held the rest, or comes back empty. An answer without
   * Content-Range (a proxy that drops it, or no PostgREST at all) says nothing either way, so the
   * read asks on once more: an empty page, or the same rows again (a server that ignores the
   * filter answered whole), ends it; new rows go on paging. A page that repeats some of the rows
   * it gave among new ones fails the read rather than loop or double them.
   */
  async function listAll(): Promise<Record<string, unknown>[]> {
    const all: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    let after: unknown;
    for (;;) {
      const from = after === undefined ? '' : `&${keyColumn}=gt.${encodeURIComponent(filterValue(after))}`;
      const { value, headers } = await exchange('GET', `${base}?order=${keyColumn}${from}`, undefined, 'count=exact');
      const page = rows(value, `list of "${table}"`);
      const range = contentRange(headers['content-range']);
      // Asked on past an answer that said no paging: all of it again is a server that ignores the filter.
      if (range === undefined && after !== undefined && page.length > 0 && page.every((row) => seen.has(String(row[keyColumn])))) return all;
      for (const row of page) {
        const key = row[keyColumn];
        if (key === undefined || key === null) {
          throw new StoreError('store.http', `PostgREST list of "${table}": row #${all.length} has no "${keyColumn}"; is "${keyColumn}" the table's key column?`);
        }
        if (seen.has(String(key))) {
          throw new StoreError('store.http', `PostgREST list of "${table}": row "${String(key)}" came twice (asked for the rows after "${String(after)}"); the store cannot be read whole`);
        }
        seen.add(String(key));
        all.push(row);
      }
      // A page with nothing, or the rest all here (the count is of the rows asked for).
      if (page.length === 0 || (range?.total !== undefined && range.total <= page.length)) return all;
      if (all.length > MAX_LIST_ROWS) {
        throw new StoreError('store.http', `PostgREST list of "${table}": more than ${MAX_LIST_ROWS} rows; a store is read whole into memory, and this one is too big for that`);
      }
      after = page[page.length - 1]![keyColumn];
    }
  }

  return {
    kind: 'postgrest',
    async write(writes) {
      const results: StoreWriteResult[] = [];
      for (const [index, write] of writes.entries()) results.push(await writeOne(write, index));
      return results;
    },
    async list() {
      // listAll saw every row's key.
      return (await listAll())
        .map((record): StoredRecord => ({ key: String(record[keyColumn]), record }))
        .sort((a, b) => compareKeys(a.key, b.key));
    },
    get,
  };
}

/**
 * The endpoint of the `postgrest(...)` store named `storeName`: from the auth file's
 * `"stores": {"<storeName>": {"url", "apiKey", "keyColumn"}}`, else from the environment's
 * `REQON_STORE_<NAME>_URL` and `REQON_STORE_<NAME>_API_KEY` (NAME upper-cased, other characters
 * as `_`). The auth file wins field by field. Neither set → an error saying how to set one.
 */
export function resolvePostgrestConfig(
  storeName: string,
  table: string,
  authJson: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Required<Pick<PostgrestConfig, 'url' | 'table' | 'keyColumn'>> & Pick<PostgrestConfig, 'apiKey'> {
  const envName = `REQON_STORE_${storeName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  const entry = authEntry(storeName, authJson);
  const fromEnv = (suffix: string): string | undefined => {
    const value = env[`${envName}_${suffix}`];
    return value === undefined || value === '' ? undefined : value;
  };
  const url = entry.url ?? fromEnv('URL');
  if (url === undefined) {
    throw new StoreError(
      'store.config',
      `postgrest store "${storeName}" (table "${table}") has no endpoint: add "stores": {"${storeName}": {"url": "…", "apiKey": "…"}} to the --auth file, or set ${envName}_URL (and ${envName}_API_KEY)`,
    );
  }
  const where = entry.url !== undefined ? `"stores.${storeName}.url" in the auth file` : `${envName}_URL`;
  const apiKey = entry.apiKey ?? fromEnv('API_KEY');
  return {
    url: checkUrl(url, where),
    table: checkIdentifier(table, 'table'),
    keyColumn: checkIdentifier(entry.keyColumn ?? 'id', 'key column'),
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}

function authEntry(storeName: string, authJson: unknown): { url?: string; apiKey?: string; keyColumn?: string } {
  if (authJson === undefined || authJson === null) return {};
  if (typeof authJson !== 'object' || Array.isArray(authJson)) {
    throw new StoreError('store.config', `the auth file must hold a JSON object but holds ${describeValue(authJson)}`);
  }
  const stores = (authJson as Record<string, unknown>)['stores'];
  if (stores === undefined) return {};
  if (typeof stores !== 'object' || stores === null || Array.isArray(stores)) {
    throw new StoreError('store.config', `"stores" in the auth file must be an object {storeName: {url, apiKey}} but is ${describeValue(stores)}`);
  }
  const entry = (stores as Record<string, unknown>)[storeName];
  if (entry === undefined) return {};
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new StoreError('store.config', `"stores.${storeName}" in the auth file must be an object {url, apiKey} but is ${describeValue(entry)}`);
  }
  const out: { url?: string; apiKey?: string; keyColumn?: string } = {};
  for (const field of ['url', 'apiKey', 'keyColumn'] as const) {
    const value = (entry as Record<string, unknown>)[field];
    if (value === undefined || value === '') continue;
    // Never echo the value: it may be a secret.
    if (typeof value !== 'string') throw new StoreError('store.config', `"stores.${storeName}.${field}" in the auth file must be a string`);
    out[field] = value;
  }
  return out;
}

function checkUrl(url: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreError('store.config', `${where} is not a valid URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new StoreError('store.config', `${where} must be an http:// or https:// URL but is ${JSON.stringify(url)}`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new StoreError('store.config', `${where} must be the API's base URL without a query or fragment but is ${JSON.stringify(url)}`);
  }
  return url;
}

function checkIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new StoreError('store.config', `postgrest ${what} ${JSON.stringify(name)} must be a plain identifier (letters, digits, _)`);
  }
  return name;
}

function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat === '' ? '(empty body)' : flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
