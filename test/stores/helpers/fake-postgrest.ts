/**
 * A small PostgREST look-alike on 127.0.0.1 for one table, enough to hold the store adapter to
 * PostgREST's contract: `apikey` + `Authorization: Bearer` checks, `POST ?on_conflict=col` with
 * `Prefer: resolution=merge-duplicates` (ON CONFLICT DO UPDATE of the columns sent; without it a
 * conflict is a 409), `PUT ?col=eq.v` single-row upsert (the body's key must match the filter;
 * the row is replaced), `GET ?order=col` and `GET ?col=eq.v`, and `Prefer: return=representation`.
 * Every request is recorded for the tests to assert on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  /** Path and query, e.g. `/items?on_conflict=id`. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface FakePostgrest {
  url: string;
  requests: SeenRequest[];
  rows: Map<string, Record<string, unknown>>;
  /** When set, every request answers with this status and body. */
  failWith?: { status: number; body: string };
  /** Ignore `return=representation` (answer 201/204 with no body), as some proxies do. */
  noRepresentation: boolean;
  /** A DELETE answers as if it worked but keeps the rows (row-level security with no DELETE policy). */
  keepOnDelete: boolean;
  /** PostgREST's `db-max-rows`: a GET answers at most this many rows, from `?offset=`. */
  maxRows?: number;
  /** Answer a GET as if `?<key>=gt.…` were not there (a proxy or server that drops filters). */
  ignoreFilters?: boolean;
  /** Leave Content-Range out, as a proxy in front of PostgREST may. */
  noContentRange?: boolean;
  /** Called after each GET is answered: a test changes the table between pages. */
  afterGet?: () => void;
  close(): Promise<void>;
}

export async function startFakePostgrest(options: { table: string; keyColumn?: string; apiKey?: string }): Promise<FakePostgrest> {
  const keyColumn = options.keyColumn ?? 'id';
  const fake: FakePostgrest = {
    url: '',
    requests: [],
    rows: new Map(),
    noRepresentation: false,
    keepOnDelete: false,
    close: async () => undefined,
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      fake.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const reply = (status: number, payload?: unknown): void => {
        res.writeHead(status, payload === undefined ? {} : { 'content-type': 'application/json' });
        res.end(payload === undefined ? '' : JSON.stringify(payload));
      };
      if (fake.failWith !== undefined) {
        res.writeHead(fake.failWith.status, { 'content-type': 'application/json' });
        res.end(fake.failWith.body);
        return;
      }
      if (options.apiKey !== undefined && (req.headers['apikey'] !== options.apiKey || req.headers['authorization'] !== `Bearer ${options.apiKey}`)) {
        reply(401, { message: 'Invalid API key', hint: 'Double check your Supabase `anon` or `service_role` API key.' });
        return;
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== `/${options.table}`) {
        reply(404, { code: '42P01', message: `relation "public.${url.pathname.slice(1)}" does not exist` });
        return;
      }
      const prefer = String(req.headers['prefer'] ?? '');
      const represent = prefer.includes('return=representation') && !fake.noRepresentation;
      const eq = url.searchParams.get(keyColumn);
      const eqValue = eq !== null && eq.startsWith('eq.') ? eq.slice(3) : undefined;

      switch (req.method) {
        case 'GET': {
          const order = url.searchParams.get('order');
          let rows = [...fake.rows.values()];
          if (eqValue !== undefined) rows = rows.filter((row) => String(row[keyColumn]) === eqValue);
          if (order !== null) rows.sort((a, b) => (String(a[order]) < String(b[order]) ? -1 : 1));
          // `?<key>=gt.<value>` (quoted when it holds a reserved character), compared as the sort is.
          const gt = eq !== null && eq.startsWith('gt.') ? eq.slice(3).replace(/^"(.*)"$/, '$1').replace(/\\(.)/g, '$1') : undefined;
          if (gt !== undefined && fake.ignoreFilters !== true) rows = rows.filter((row) => String(row[keyColumn]) > gt);
          // As PostgREST: the rows from ?offset=, at most db-max-rows of them, and which in Content-Range.
          const total = rows.length;
          const offset = Number(url.searchParams.get('offset') ?? 0);
          rows = rows.slice(offset, fake.maxRows === undefined ? undefined : offset + fake.maxRows);
          const counted = prefer.includes('count=exact') ? String(total) : '*';
          const range = rows.length === 0 ? `*/${counted}` : `${offset}-${offset + rows.length - 1}/${counted}`;
          res.writeHead(200, { 'content-type': 'application/json', ...(fake.noContentRange ? {} : { 'content-range': range }) });
          res.end(JSON.stringify(rows));
          fake.afterGet?.();
          return;
        }
        case 'POST': {
          const items = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[];
          const merge = prefer.includes('resolution=merge-duplicates');
          const onConflict = url.searchParams.get('on_conflict');
          const out: Record<string, unknown>[] = [];
          for (const item of items) {
            const key = String(item[keyColumn]);
            const existing = fake.rows.get(key);
            if (existing !== undefined && !(merge && onConflict === keyColumn)) {
              reply(409, { code: '23505', message: 'duplicate key value violates unique constraint' });
              return;
            }
            const row = { ...(existing ?? {}), ...item };
            fake.rows.set(key, row);
            out.push(row);
          }
          reply(201, represent ? out : undefined);
          return;
        }
        case 'PUT': {
          const item = body as Record<string, unknown>;
          if (eqValue === undefined || Array.isArray(body) || String(item[keyColumn]) !== eqValue) {
            reply(400, { code: 'PGRST115', message: 'Payload values do not match URL in primary key column(s)' });
            return;
          }
          fake.rows.set(eqValue, { ...item });
          reply(represent ? 200 : 204, represent ? [item] : undefined);
          return;
        }
        case 'DELETE': {
          // PostgREST deletes every row the filter matches (none: 200 with [] / 204) and, with
          // return=representation, answers the rows it deleted.
          const gone = [...fake.rows.values()].filter((row) => eqValue !== undefined && String(row[keyColumn]) === eqValue);
          if (!fake.keepOnDelete) for (const row of gone) fake.rows.delete(String(row[keyColumn]));
          reply(represent ? 200 : 204, represent ? gone : undefined);
          return;
        }
        default:
          reply(405, { message: `method ${req.method} not handled by the fake` });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return fake;
}
