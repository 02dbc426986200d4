/**
 * A cursor pagination whose cursor path is misspelt (`"meta.nxt"` where the API sends
 * `meta.next`) found no cursor on its first page, took it for the last, and the run completed
 * (exit 0) with one page of records and not a word. A full first page (the page size reached)
 * with nothing at the cursor path now says so on the run's output: the path, the page, and the
 * fields the page had there. It stays a warning, not an error: an API may leave the cursor out of
 * a last page that happens to be full. A correct path, or a cursor that is present but null, says
 * nothing — the contrast that shows the test can tell them apart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;

const mission = (cursorPath: string) => `mission Cursor {
  source Api { auth: none, base: "${server.base}" }
  store items: sql("items")
  action Sync {
    get "/items" { paginate: cursor(after, 2, "${cursorPath}") }
    store response -> items { key: .id }
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cursor-path-'));
  server = await startServer((req, res) => {
    const after = new URL(req.url, 'http://x').searchParams.get('after');
    if (after === null) return json(res, 200, { items: [{ id: 1 }, { id: 2 }], meta: { next: 'c2', count: 5 } });
    if (after === 'c2') return json(res, 200, { items: [{ id: 3 }, { id: 4 }], meta: { next: null, count: 5 } });
    json(res, 400, { error: `unknown cursor ${after}` });
  });
  fs.writeFileSync(path.join(dir, 'misspelt.vague'), mission('meta.nxt'));
  fs.writeFileSync(path.join(dir, 'right.vague'), mission('meta.next'));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });
const ids = async (run: CliResult) =>
  JSON.parse((await reqon('store', runIdOf(run), 'items', '--json')).stdout).map((r: { record: { id: number } }) => r.record.id);

describe('a cursor path that no page has', () => {
  it('warns on a full first page without it, naming the path and the fields the page had', async () => {
    const run = await reqon('run', 'misspelt.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(await ids(run)).toEqual([1, 2]);
    expect(run.stderr).toContain(
      `warning: Sync/0: page 1 (GET ${server.base}/items) is full (2 items) but has nothing at the cursor path "meta.nxt", so it was taken for the last page; "meta" has: next, count`,
    );
  });

  it('says nothing when the path is right, or the cursor is present but null on a full last page', async () => {
    const run = await reqon('run', 'right.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(await ids(run)).toEqual([1, 2, 3, 4]);
    expect(run.stderr).not.toContain('warning');
  });
});
