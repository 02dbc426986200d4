/**
 * `since: lastSync { updateFrom: … }` takes the server's instant for the checkpoint, but never one
 * later than the fetch's start: a record dated in the future (a local time labelled UTC, a clock
 * ahead, a 9999-12-31 placeholder) moved the checkpoint there, and every record changed before
 * that instant was never asked for again, in runs that completed. An earlier instant (the server
 * behind this clock) is still taken as it is. A path that names no instant in the answer (a
 * paginated fetch's answer is the list of its records, not a page) is said, not passed over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;
/** The instant the API gives as `meta.latest`. */
let latest = '2099-01-01T00:00:00Z';

const mission = (base: string) => `mission UpdateFrom {
  source Api { auth: none, base: "${base}" }
  store orders: sql("orders")
  action Sync {
    get "/orders" { since: lastSync("orders") { updateFrom: "meta.latest" } }
    store response.data -> orders { key: .id }
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-update-from-'));
  server = await startServer((_req, res) => json(res, 200, { data: [{ id: 1 }], meta: { latest } }));
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(server.base));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (db: string, ...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, db)], { cwd: dir });
const sinceOf = (i: number) => new URL(server.requests[i]!.url, 'http://x').searchParams.get('since')!;

describe('since updateFrom', () => {
  it('never takes an instant later than the fetch start; an earlier one as it is', async () => {
    const before = Date.now();
    expect((await reqon('future.db', 'run', 'm.vague')).code).toBe(0);
    expect((await reqon('future.db', 'run', 'm.vague')).code).toBe(0);
    const second = Date.parse(sinceOf(1));
    expect(second).toBeGreaterThanOrEqual(before - 1000);
    expect(second).toBeLessThanOrEqual(Date.now());

    latest = '2020-05-06T07:08:09.000Z';
    expect((await reqon('past.db', 'run', 'm.vague')).code).toBe(0);
    expect((await reqon('past.db', 'run', 'm.vague')).code).toBe(0);
    expect(sinceOf(3)).toBe(latest);
  });

  it('says so when updateFrom names no instant in the answer, and takes the fetch start', async () => {
    fs.writeFileSync(path.join(dir, 'miss.vague'), mission(server.base).replace('"meta.latest"', '"meta.newest"'));
    const run = await reqon('miss.db', 'run', 'miss.vague');
    expect(run.code).toBe(0);
    expect(run.stderr + run.stdout).toContain('warning: Sync/0: updateFrom "meta.newest" names no instant in the answer, so the checkpoint takes the fetch\'s start instead');
    const found = await reqon('found.db', 'run', 'm.vague');
    expect(found.stderr + found.stdout).not.toContain('names no instant');
  });
});
