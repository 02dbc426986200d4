/**
 * A bare `since: lastSync` keys its checkpoint by source and path alone. Two fetches of one path
 * with different queries in one run are refused (since-checkpoint-shared tests); across runs the
 * second read the checkpoint the first had advanced, fetched nothing older, and completed without
 * a word (helper 34: `status=closed` never got its old records). The checkpoint now records the
 * query that advanced it, and a run asking with another is told, by name, that it starts from it
 * and how to key each — a warning, not a failure: a query may change between runs for reasons
 * that select no other records (an edited page size). The same query says nothing. On both
 * backends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const MISSION = `mission Orders {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store orders: memory("orders")
  action Open {
    get "/orders" { params: { status: "open" }, since: lastSync }
    store response -> orders { key: .id }
  }
  action Closed {
    get "/orders" { params: { status: "closed" }, since: lastSync }
    store response -> orders { key: .id }
  }
  run Open if env("MODE") == "open" then Closed if env("MODE") == "closed"
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('a bare lastSync checkpoint an earlier run advanced with another query (%s)', (backend) => {
  it('is said, naming both queries and the fix; the same query says nothing', async () => {
    c = await openConformance({ backend });
    // Anything since the epoch: one old record per status; since a checkpoint: none.
    c.api.on('GET /orders?*', (req) => {
      const url = new URL(req.url, 'http://x');
      const fresh = (url.searchParams.get('since') ?? '').startsWith('1970');
      return { body: fresh ? [{ id: `${url.searchParams.get('status')}-old` }] : [] };
    });
    const files = c.mission('orders', MISSION);
    const run = async (mode: string) => {
      const lines: string[] = [];
      const result = await c!.start(files, { env: { MODE: mode } }, { progress: (line) => lines.push(line) });
      expect(result.status).toBe('completed');
      return lines.filter((l) => l.startsWith('warning:'));
    };

    expect(await run('open')).toEqual([]);
    // Open again: the checkpoint is its own.
    expect(await run('open')).toEqual([]);
    // The same parameters in another order ask for the same records: nothing to say (helper 35).
    const reordered = c.mission('orders', MISSION.replace('params: { status: "open" }', 'params: { sort: "id", status: "open" }'));
    await c.start(reordered, { env: { MODE: 'open' } });
    const quiet: string[] = [];
    const again = await c.start(c.mission('orders', MISSION.replace('params: { status: "open" }', 'params: { status: "open", sort: "id" }')), { env: { MODE: 'open' } }, { progress: (l) => quiet.push(l) });
    expect(again.status).toBe('completed');
    expect(quiet.filter((l) => l.startsWith('warning:'))).toEqual([]);
    await c.start(files, { env: { MODE: 'open' } });
    const warned = await run('closed');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^warning: Closed\/0: checkpoint "Api:\/orders" of since: lastSync was last advanced by \/orders\?status=open \(an earlier run\); this request, \/orders\?status=closed, starts from it\./);
    expect(warned[0]).toContain('give each its own key, since: lastSync("…")');
  });

  it('compares queries as the server reads them, and sees values redacted as credentials (helper 36)', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /items?*', { body: [] });
    const warnings = async (pathAndQuery: string) => {
      const lines: string[] = [];
      const text = `mission Items {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store items: memory("items")
  action Pull {
    get "${pathAndQuery}" { since: lastSync }
    store response -> items { key: .id }
  }
  run Pull
}
`;
      const result = await c!.start(c!.mission('items', text), {}, { progress: (line) => lines.push(line) });
      expect(result.status).toBe('completed');
      return lines.filter((l) => l.startsWith('warning:'));
    };
    expect(await warnings('/items?q=a b')).toEqual([]);
    // The same request, written otherwise: nothing to say.
    expect(await warnings('/items?q=a%20b')).toEqual([]);
    expect(await warnings('/items?q=a+b')).toEqual([]);
    // Another tenant's key, which the log shows redacted: said, saying why the two look alike.
    expect(await warnings('/items?api_key=tenantA')).toHaveLength(1);
    const tenant = await warnings('/items?api_key=tenantB');
    expect(tenant).toHaveLength(1);
    expect(tenant[0]).toContain('they differ in the value of a parameter redacted as a credential');
    expect(tenant[0]).not.toContain('tenantA');
  });
});
