/**
 * The API behind the durability fixtures, on the shared FakeApi (a real HTTP server on 127.0.0.1
 * that records every request and counts applied effects per Idempotency-Key).
 *
 *   GET  /items?since=0&offset=K   the seven ITEMS, three a page (offset pagination)
 *   GET  /extras?since=0           the two EXTRAS
 *   POST /effects                  applies one effect; answers `{ receipt: "r-<id>" }`
 *
 * Each test run starts on a fresh database, so `lastSync` is 0 and `since=0` is the only query
 * these routes need. `effectReport` turns the server's records into the facts the durability
 * assertions check: per key, how often it was applied and with which bodies.
 */
import { FakeApi, type RecordedRequest } from '../../support/fake-api.js';

export const ITEMS = Array.from({ length: 7 }, (_, i) => ({ id: `i-${i + 1}`, name: `item ${i + 1}`, qty: i * 3 + 1 }));
export const EXTRAS = [
  { id: 'x-1', label: 'first extra' },
  { id: 'x-2', label: 'second extra' },
];
export const PAGE_SIZE = 3;

/** Starts the API; the caller stops it. */
export async function startMissionApi(): Promise<FakeApi> {
  const api = new FakeApi();
  for (let offset = 0; offset <= ITEMS.length; offset += PAGE_SIZE) {
    api.on(`GET /items?since=0&offset=${offset}`, { body: ITEMS.slice(offset, offset + PAGE_SIZE) });
  }
  api.on('GET /extras?since=0', { body: EXTRAS });
  api.on('POST /effects', (req) => {
    const body = req.body as { id?: unknown } | undefined;
    if (typeof body?.id !== 'string') return { status: 400, body: { error: 'POST /effects needs a string id' } };
    return { status: 201, body: { receipt: `r-${body.id}` } };
  });
  return api.start();
}

export interface EffectReport {
  /** Idempotency-Key → how many times the server applied it. */
  applied: Map<string, number>;
  /** Idempotency-Key → every POST body sent with it, in order. */
  bodies: Map<string, unknown[]>;
  /** POST requests that carried no Idempotency-Key (must be none). */
  unkeyed: RecordedRequest[];
}

export function effectReport(api: FakeApi): EffectReport {
  const bodies = new Map<string, unknown[]>();
  const unkeyed: RecordedRequest[] = [];
  for (const req of api.requests) {
    if (req.method !== 'POST') continue;
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') {
      unkeyed.push(req);
      continue;
    }
    bodies.set(key, [...(bodies.get(key) ?? []), req.body]);
  }
  return { applied: new Map(api.applied), bodies, unkeyed };
}
