/**
 * An API whose every answer changes between calls — not the demo's: a ledger whose `GET /accounts`
 * stamps each account with the instant and a serial number of the read, and whose
 * `POST /transfers` answers a fresh transfer number and instant. Two runs of one mission against
 * it never see the same data, which is what the crash lab's verdict must cope with. Writes are
 * counted per Idempotency-Key (`applied`: a key seen again is not applied again), the server-side
 * truth a spec checks the lab's proxy against.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChangingApi {
  url: string;
  /** Requests received, as `METHOD /path`. */
  lines: string[];
  /** Applied writes per Idempotency-Key (1 is exactly-once). */
  applied: Map<string, number>;
  /** Requests per Idempotency-Key. */
  requestsByKey: Map<string, number>;
  close(): Promise<void>;
}

export async function startChangingApi(accounts = 4): Promise<ChangingApi> {
  let serial = 0;
  const lines: string[] = [];
  const applied = new Map<string, number>();
  const requestsByKey = new Map<string, number>();
  const answers = new Map<string, unknown>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      lines.push(`${method} ${url}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      serial += 1;
      if (method === 'GET' && url.startsWith('/accounts')) {
        return send(200, Array.from({ length: accounts }, (_, i) => ({ id: `acct-${i + 1}`, balance: 100 * (i + 1), observedAt: Date.now(), readSerial: serial })));
      }
      if (method === 'POST' && url.startsWith('/transfers')) {
        const key = req.headers['idempotency-key'];
        const k = Array.isArray(key) ? key[0] : key;
        if (k !== undefined) {
          requestsByKey.set(k, (requestsByKey.get(k) ?? 0) + 1);
          if (answers.has(k)) return send(201, answers.get(k));
          applied.set(k, 1);
        }
        const answer = { transferId: `t-${serial}`, at: Date.now() };
        if (k !== undefined) answers.set(k, answer);
        return send(201, answer);
      }
      send(404, { error: `no route ${method} ${url}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lines,
    applied,
    requestsByKey,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A mission for it (not the demo's): read the accounts, post one transfer per account (its body holds `now()`), store both. */
export const LEDGER_MISSION = `mission LedgerAudit {
  source Ledger { auth: none, base: "http://127.0.0.1:9" }

  store accounts: sql("ledger_accounts")
  store transfers: sql("ledger_transfers")

  action Audit {
    get "/accounts"
    for account in response {
      store account -> accounts { key: .id }
      post "/transfers" { body: { account: account.id, balance: account.balance, seen: account.observedAt, sentAt: now() } }
      store { id: account.id, transfer: response.transferId, at: response.at, checkedAt: now() } -> transfers { key: .id }
    }
  }

  run Audit
}
`;
