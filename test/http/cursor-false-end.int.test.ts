/**
 * A cursor walk whose last page says `"next": false` (APIs that write "no next page" as false)
 * asked for `?cursor=false`, which the API answered 400, and the run failed after storing every
 * record. `false` ends a cursor walk as `null` and `""` do — as it already ends the next link of
 * a page or offset walk (page-checks.ts) — while a cursor present on the page is still followed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cursor-false-'));
  server = await startServer((req, res) => {
    const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
    if (cursor === null) return json(res, 200, { items: [{ id: 1 }, { id: 2 }], next: 'abc' });
    if (cursor === 'abc') return json(res, 200, { items: [{ id: 3 }], next: false });
    json(res, 400, { error: `unknown cursor ${cursor}` });
  });
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    `mission M {
  source Api { auth: none, base: "${server.base}" }
  store out: sql("out")
  action A {
    get "/items" { paginate: cursor(cursor, 10, "next") }
    store response -> out { key: .id }
  }
  run A
}
`,
  );
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });

describe('a cursor walk whose last page says next: false', () => {
  it('ends there: no ?cursor=false request, the run completes with every record', async () => {
    const run = await reqon('run', 'm.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(server.requests.map((r) => r.url)).toEqual(['/items', '/items?cursor=abc']);
    const keys = JSON.parse((await reqon('store', runIdOf(run), 'out', '--json')).stdout).map((r: { key: string }) => r.key);
    expect(keys).toEqual(['1', '2', '3']);
    expect(run.stderr).not.toContain('warning');
  });
});
