import { describe, expect, it } from 'vitest';
import { resolvePostgrestConfig } from '../../engine/stores/postgrest-store.js';
import { StoreError } from '../../engine/stores/store-error.js';

describe('resolvePostgrestConfig', () => {
  const cases: {
    name: string;
    store: string;
    auth: unknown;
    env: Record<string, string | undefined>;
    expected: { url: string; apiKey?: string; table: string; keyColumn: string };
  }[] = [
    {
      name: 'from the auth file',
      store: 'orders',
      auth: { stores: { orders: { url: 'https://x.supabase.co/rest/v1', apiKey: 'k1' } } },
      env: {},
      expected: { url: 'https://x.supabase.co/rest/v1', apiKey: 'k1', table: 'orders_tbl', keyColumn: 'id' },
    },
    {
      name: 'from the environment, name upper-cased with _ for other characters',
      store: 'my-orders',
      auth: undefined,
      env: { REQON_STORE_MY_ORDERS_URL: 'http://127.0.0.1:3000', REQON_STORE_MY_ORDERS_API_KEY: 'k2' },
      expected: { url: 'http://127.0.0.1:3000', apiKey: 'k2', table: 'orders_tbl', keyColumn: 'id' },
    },
    {
      name: 'the auth file wins field by field; the key may come from the environment',
      store: 'orders',
      auth: { stores: { orders: { url: 'http://auth-file:1', keyColumn: 'sku' } } },
      env: { REQON_STORE_ORDERS_URL: 'http://env:2', REQON_STORE_ORDERS_API_KEY: 'env-key' },
      expected: { url: 'http://auth-file:1', apiKey: 'env-key', table: 'orders_tbl', keyColumn: 'sku' },
    },
    {
      name: 'no API key is allowed (an open local PostgREST)',
      store: 'orders',
      auth: { other: true },
      env: { REQON_STORE_ORDERS_URL: 'http://127.0.0.1:3000' },
      expected: { url: 'http://127.0.0.1:3000', table: 'orders_tbl', keyColumn: 'id' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(resolvePostgrestConfig(c.store, 'orders_tbl', c.auth, c.env)).toStrictEqual(c.expected);
    });
  }

  it('errors clearly, naming both ways, when neither is set (no fallback)', () => {
    for (const [auth, env] of [
      [undefined, {}],
      [{ stores: {} }, { REQON_STORE_ORDERS_URL: '' }],
      [{ stores: { orders: { apiKey: 'k' } } }, { REQON_STORE_OTHER_URL: 'http://x' }],
    ] as const) {
      let caught: unknown;
      try {
        resolvePostgrestConfig('orders', 'orders_tbl', auth, env);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StoreError);
      expect((caught as StoreError).code).toBe('store.config');
      expect((caught as StoreError).message).toBe(
        'postgrest store "orders" (table "orders_tbl") has no endpoint: add "stores": {"orders": {"url": "…", "apiKey": "…"}} to the --auth file, or set REQON_STORE_ORDERS_URL (and REQON_STORE_ORDERS_API_KEY)',
      );
    }
  });

  const invalid: { name: string; auth: unknown; env: Record<string, string>; message: string | RegExp }[] = [
    { name: 'auth file not an object', auth: [1], env: {}, message: 'the auth file must hold a JSON object but holds array (1 item)' },
    { name: 'stores not an object', auth: { stores: 'x' }, env: {}, message: /"stores" in the auth file must be an object/ },
    { name: 'entry not an object', auth: { stores: { orders: 'http://x' } }, env: {}, message: /"stores\.orders" in the auth file must be an object \{url, apiKey\}/ },
    { name: 'apiKey not a string (and not echoed)', auth: { stores: { orders: { url: 'http://x', apiKey: 12345 } } }, env: {}, message: '"stores.orders.apiKey" in the auth file must be a string' },
    { name: 'url not a URL', auth: { stores: { orders: { url: 'not a url' } } }, env: {}, message: '"stores.orders.url" in the auth file is not a valid URL: "not a url"' },
    { name: 'url not http', auth: {}, env: { REQON_STORE_ORDERS_URL: 'ftp://x/' }, message: 'REQON_STORE_ORDERS_URL must be an http:// or https:// URL but is "ftp://x/"' },
    { name: 'url with a query', auth: {}, env: { REQON_STORE_ORDERS_URL: 'http://x/?a=1' }, message: /without a query or fragment/ },
  ];
  for (const c of invalid) {
    it(`rejects: ${c.name}`, () => {
      expect(() => resolvePostgrestConfig('orders', 'orders_tbl', c.auth, c.env)).toThrow(c.message);
    });
  }

  it('rejects a table name that is not an identifier', () => {
    expect(() => resolvePostgrestConfig('orders', 'public.orders', undefined, { REQON_STORE_ORDERS_URL: 'http://x' })).toThrow(
      /postgrest table "public\.orders" must be a plain identifier/,
    );
  });
});
