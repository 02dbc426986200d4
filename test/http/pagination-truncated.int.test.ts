/**
 * A paginated fetch cut off by a page limit says so in the run's output — which limit, whether the
 * mission set it, and that its `since` checkpoint stays — and the next run asks for everything
 * again; a fetch that runs out of pages advances the checkpoint (the contrast that shows the
 * test can tell the two apart). The default limit's own wording is unit-tested beside the
 * pagination loop (pagination-since.test.ts): hitting it takes 10,000 pages.
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
/** Items left to serve: Infinity answers every page full. */
let remaining = Infinity;

const mission = (base: string) => `mission Truncated {
  source Api { auth: none, base: "${base}" }
  store items: sql("items")
  action Sync {
    get "/items" { paginate: offset(offset, 2), maxPages: 3, since: lastSync { param: "since" } }
    store response -> items { key: .id }
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-truncated-'));
  server = await startServer((req, res) => {
    const offset = Number(new URL(req.url, 'http://x').searchParams.get('offset') ?? 0);
    const count = Math.max(0, Math.min(2, remaining - offset));
    json(res, 200, { items: Array.from({ length: count }, (_, i) => ({ id: offset + i })) });
  });
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(server.base));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
const sinceOfFirstRequest = (from: number) => new URL(server.requests[from]!.url, 'http://x').searchParams.get('since');

describe('a fetch cut off by maxPages', () => {
  it('says which limit stopped it and leaves the checkpoint, so the next run starts over; running out of pages advances it', async () => {
    const first = await reqon('run', 'm.vague');
    expect(first.code).toBe(0);
    expect(first.stdout + first.stderr).toContain('3 page(s), 6 record(s) (truncated at maxPages 3; the since checkpoint does not advance)');
    expect(server.requests).toHaveLength(3);
    const never = sinceOfFirstRequest(0); // what a run with no checkpoint sends

    const again = server.requests.length;
    const second = await reqon('run', 'm.vague');
    expect(second.code).toBe(0);
    expect(sinceOfFirstRequest(again)).toBe(never);

    remaining = 3; // the pages run out: offset 0 full, offset 2 short
    const third = await reqon('run', 'm.vague');
    expect(third.code).toBe(0);
    expect(third.stdout + third.stderr).not.toContain('truncated');
    const after = server.requests.length;
    const fourth = await reqon('run', 'm.vague');
    expect(fourth.code).toBe(0);
    expect(sinceOfFirstRequest(after)).not.toBe(never);
  });
});
