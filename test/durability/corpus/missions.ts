/**
 * The missions of the replay corpus and the APIs they were recorded against: the demo mission
 * (assets/demo, against the demo API) and the ten §H conformance missions (assets/conformance,
 * against the fake APIs their tests in test/conformance/ script — the same routes and answers).
 *
 * Used by the recorder (record.test.ts) and by the corpus tests that resume a stored log live
 * (replay-mutations.test.ts). Every API listens on 127.0.0.1 only and is stopped by `stop()`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FakeApi } from '../../support/fake-api.js';
import { REPO } from '../../support/built-engine.js';

/** Where the corpus lives, and its mission copies (the text each recording replays with). */
export const CORPUS_DIR = path.join(REPO, 'test/durability/corpus');
export const MISSIONS_DIR = path.join(CORPUS_DIR, 'missions');

export interface RunningApis {
  /** `--source NAME=URL` of the run. */
  sources: Record<string, string>;
  /** Environment of the CLI process (e.g. a PostgREST store's URL). */
  processEnv: Record<string, string>;
  stop(): Promise<void>;
}

export interface CorpusMission {
  /** The corpus id, e.g. "demo", "h4": the folder under missions/ and the prefix of its logs. */
  id: string;
  /** The files the mission is copied from (entry first; other files sit beside it, e.g. an OpenAPI spec). */
  from: string[];
  /** Starts the mission's API(s) with the answers its own tests script. */
  start(): Promise<RunningApis>;
  /** `--auth` file contents, when the mission's source needs credentials. */
  auth?: unknown;
  /** The `--payload` a run suspended in a `wait` is resumed with (a webhook delivery). */
  waitPayload?: unknown;
}

function conformance(name: string): string {
  return path.join(REPO, 'assets/conformance', `${name}.vague`);
}

async function single(routes: (api: FakeApi) => void, source = 'Api', suffix = ''): Promise<RunningApis> {
  const api = new FakeApi();
  routes(api);
  await api.start();
  return { sources: { [source]: `${api.url}${suffix}` }, processEnv: {}, stop: () => api.stop() };
}

const PENDING = { body: { id: 'j1', state: 'pending' } };

export const CORPUS_MISSIONS: readonly CorpusMission[] = [
  {
    id: 'demo',
    from: [path.join(REPO, 'assets/demo/orders.vague')],
    start: async () => {
      const file = pathToFileURL(path.join(REPO, 'assets/demo/demo-api.mjs')).href;
      const mod = (await import(file)) as { startDemoApi: (o?: { port?: number }) => Promise<{ url: string; close: () => Promise<void> }> };
      const api = await mod.startDemoApi({ port: 0 });
      return { sources: { Shop: api.url }, processEnv: {}, stop: () => api.close() };
    },
  },
  {
    id: 'h1',
    from: [conformance('h1')],
    start: () =>
      single(
        (api) =>
          api.on('GET /v1/people', {
            body: [
              { id: 1, first: 'Ada', last: 'L', age: 36 },
              { id: 2, first: 'Tim', last: 'B', age: 12 },
              { id: 3, first: 'Old', last: 'Timer', age: 70 },
            ],
          }),
        'Api',
        '/v1/',
      ),
  },
  {
    id: 'h2',
    from: [conformance('h2')],
    auth: { Api: { type: 'bearer', token: 't0k' } },
    start: () =>
      single((api) =>
        api
          .on('GET /items?offset=0', { body: { items: [{ sku: 'a', n: 1 }, { sku: 'b', n: 2 }] } })
          .on('GET /items?offset=2', [{ status: 503, body: {} }, { body: { items: [{ sku: 'c', n: 3 }] } }]),
      ),
  },
  {
    id: 'h3',
    from: [conformance('h3')],
    start: () =>
      single((api) =>
        api
          .on('GET /events?updated_since=0', { body: { data: [{ id: 'e1' }, { id: 'e2' }], meta: { next: 'c2' } } })
          .on('GET /events?updated_since=0&after=c2', { body: { data: [{ id: 'e3' }], meta: { next: null } } })
          .on('GET /pages?p=1', { body: { results: [{ id: 1 }, { id: 2 }] } })
          .on('GET /pages?p=2', { body: { results: [{ id: 3 }] } }),
      ),
  },
  {
    id: 'h4',
    from: [conformance('h4')],
    start: () =>
      single((api) =>
        api
          .on('GET /orders', { body: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }] })
          .on('GET /orders/1', { body: { id: 1, total: 50 } })
          .on('GET /orders/2', { status: 404, body: { detail: 'nf' } })
          .on('GET /orders/3', { body: { id: 3, total: 5000 } })
          .on('GET /orders/4', { body: { id: 4, total: -5 } }),
      ),
  },
  {
    id: 'h5',
    from: [conformance('h5')],
    start: () =>
      single((api) =>
        api
          .on('GET /job', [PENDING, PENDING, { body: { id: 'j1', state: 'done' } }])
          .on('GET /health', { body: { ok: false } })
          .on('GET /report', { body: { id: 'r1', state: 'failed' } })
          .on('POST /notify', { body: { ok: true } })
          .on('GET /normal', { body: {} })
          .on('GET /final', { body: {} }),
      ),
  },
  {
    id: 'h6',
    from: [conformance('h6')],
    start: () =>
      single((api) =>
        api.on('GET /payments', {
          body: [
            { id: 'p1', brand: 'visa', last4: '4242', score: 820, tags: ['vip'] },
            { id: 'p2', iban: 'GB00BANK', score: 510 },
            { id: 'p3', iban: 'X1', score: null, tags: ['a', 'b'] },
          ],
        }),
      ),
  },
  {
    id: 'h7',
    from: [conformance('h7')],
    waitPayload: { eventId: 'ev1', paymentId: 'pay_1', status: 'succeeded' },
    start: () => single((api) => api.on('POST /payments', { body: { id: 'pay_1' } })),
  },
  {
    id: 'h8',
    from: [conformance('h8')],
    start: () =>
      single((api) =>
        api
          .on('GET /history?offset=0', { body: { rows: [{ id: 1 }, { id: 2 }] } })
          .on('GET /history?offset=2', { body: { rows: [{ id: 3 }] } })
          .on('POST /approvals', { body: { ticket: 'T9' } })
          .on('POST /approvals/T9/finalize', { body: { ok: true } }),
      ),
  },
  {
    id: 'h9',
    from: [conformance('h9')],
    start: async () => {
      const api = new FakeApi()
        .on('POST /tasks', { body: { id: 7, title: 'A' } })
        .on('PUT /tasks/7', { body: { id: 7, title: 'B' } })
        .on('PATCH /tasks/7', { body: { id: 7, done: true } })
        .on('GET /changes?since=2024-01-01', { body: { changes: [{ id: 'c1', op: 'delete' }] } });
      const legacy = new FakeApi().on('DELETE /tasks/2', { body: {} });
      // A PostgREST table `remote` keyed by id (test/conformance/h9.int.test.ts).
      const rows = new Map<string, Record<string, unknown>>();
      const postgrest = new FakeApi();
      postgrest.on('PUT /remote?id=eq.c1', (req) => {
        const row = req.body as Record<string, unknown>;
        rows.set(String(row.id), row);
        return { body: [row] };
      });
      postgrest.on('GET /remote?id=eq.c1', () => ({ body: rows.has('c1') ? [rows.get('c1')] : [] }));
      postgrest.on('GET /remote?order=id', () => ({ body: [...rows.values()] }));
      await Promise.all([api.start(), legacy.start(), postgrest.start()]);
      return {
        sources: { Api: api.url, Legacy: legacy.url },
        processEnv: { REQON_STORE_REMOTE_URL: postgrest.url },
        stop: async () => {
          await Promise.all([api.stop(), legacy.stop(), postgrest.stop()]);
        },
      };
    },
  },
  {
    id: 'h10',
    from: [conformance('h10'), path.join(REPO, 'assets/conformance/pets.yaml')],
    start: () =>
      single(
        (api) =>
          api
            .on('GET /api/pets', { body: { pets: [{ id: 'a', name: 'Rex' }, { id: 'b', name: '' }], next: null } })
            .on('GET /api/pets/a', { body: { id: 'a', name: 'Rex' } })
            .on('GET /api/pets/b', { body: { id: 'b', name: '' } })
            .on('GET /api/unused', { body: {} })
            .on('GET /unused', { body: {} }),
        'Store',
        '/api',
      ),
  },
];

/** The corpus copy of a mission's entry file (what its recordings were recorded with). */
export function corpusEntry(mission: CorpusMission): string {
  return path.join(MISSIONS_DIR, mission.id, path.basename(mission.from[0]!));
}

/** Copies a mission's files into the corpus (the recorder does, before recording it). */
export function copyMission(mission: CorpusMission): void {
  const dir = path.join(MISSIONS_DIR, mission.id);
  fs.mkdirSync(dir, { recursive: true });
  for (const file of mission.from) fs.copyFileSync(file, path.join(dir, path.basename(file)));
}
