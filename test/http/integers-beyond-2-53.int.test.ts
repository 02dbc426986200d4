/**
 * A JSON integer beyond 2^53 (Twitter's `next_cursor`, a snowflake message id) comes out of JSON
 * parsing with its last digits changed: `1489467234237774933` is the number 1489467234237774800.
 * A cursor walk asked for `?cursor=1489467234237774800`, which an API answers as an unknown cursor
 * with an empty list — the run completed (exit 0) with the rest of the records missing — and
 * `get "/messages/{m.id}/reactions"` sent two different ids as one wrong URL. Such a value, as a
 * next cursor or filling a request path, now fails the fetch before anything is sent, naming
 * where it came from and the string form to use; the string forms (`next_cursor_str`, `id_str`)
 * and safe integers work as before — the contrast that shows the test tells them apart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';
import { startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;

/** JSON written as text: the server's own numbers keep every digit, as an API's do. */
const raw = (res: ServerResponse, text: string) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(text);
};

const BIG = '1489467234237774933';
const BIG2 = '1489467234237774935';

const cursorMission = (cursorPath: string) => `mission Followers {
  source Api { auth: none, base: "${server.base}" }
  store out: sql("out")
  action A {
    get "/followers" { paginate: cursor(cursor, 200, "${cursorPath}") }
    store response -> out { key: .id_str }
  }
  run A
}
`;

/** The id as a query parameter (`params:`) and as a header, rather than in the path. */
const paramMission = (list: string, field: string) => `mission ReactionsByParam {
  source Api { auth: none, base: "${server.base}" }
  store out: sql("out")
  action A {
    get "${list}"
    for m in response.items {
      get "/messages/reactions" { params: { ref: m.${field} } }
      get "/messages/reactions" { headers: { "X-Ref": m.${field} } }
    }
  }
  run A
}
`;

const pathMission = (list: string, field: string) => `mission Reactions {
  source Api { auth: none, base: "${server.base}" }
  store out: sql("out")
  action A {
    get "${list}"
    for m in response.items {
      get "/messages/{m.${field}}/reactions"
      store { id: response.path } -> out
    }
  }
  run A
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-beyond-2-53-'));
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/followers') {
      const cursor = url.searchParams.get('cursor');
      if (cursor === null) return raw(res, `{"users":[{"id_str":"1"},{"id_str":"2"}],"next_cursor":${BIG},"next_cursor_str":"${BIG}"}`);
      if (cursor === BIG) return raw(res, `{"users":[{"id_str":"3"}],"next_cursor":null,"next_cursor_str":null}`);
      // An unknown cursor: an empty list, as Twitter answers one.
      return raw(res, `{"users":[],"next_cursor":null,"next_cursor_str":null}`);
    }
    if (url.pathname === '/messages') return raw(res, `{"items":[{"id":${BIG},"id_str":"${BIG}"},{"id":${BIG2},"id_str":"${BIG2}"}]}`);
    if (url.pathname === '/small') return raw(res, `{"items":[{"id":42},{"id":9007199254740991}]}`);
    if (url.pathname.startsWith('/messages/')) return raw(res, JSON.stringify({ path: url.pathname }));
    res.writeHead(404).end();
  });
  fs.writeFileSync(path.join(dir, 'cursor-number.vague'), cursorMission('next_cursor'));
  fs.writeFileSync(path.join(dir, 'cursor-string.vague'), cursorMission('next_cursor_str'));
  fs.writeFileSync(path.join(dir, 'path-number.vague'), pathMission('/messages', 'id'));
  fs.writeFileSync(path.join(dir, 'path-string.vague'), pathMission('/messages', 'id_str'));
  fs.writeFileSync(path.join(dir, 'path-safe.vague'), pathMission('/small', 'id'));
  fs.writeFileSync(path.join(dir, 'param-number.vague'), paramMission('/messages', 'id'));
  fs.writeFileSync(path.join(dir, 'param-string.vague'), paramMission('/messages', 'id_str'));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });
const stored = async (run: CliResult) =>
  JSON.parse((await reqon('store', runIdOf(run), 'out', '--json')).stdout).map((r: { key: string }) => r.key);
const urlsSince = (from: number) => server.requests.slice(from).map((r) => r.url);

describe('a next cursor that is an integer beyond 2^53', () => {
  it('fails the fetch naming the cursor path and its string form, and never sends it', async () => {
    const from = server.requests.length;
    const run = await reqon('run', 'cursor-number.vague');
    expect(run.code, describeResult(run)).toBe(1);
    expect(urlsSince(from)).toEqual(['/followers']);
    const out = run.stdout + run.stderr;
    expect(out).toContain(
      `page 1 (GET ${server.base}/followers) names its next cursor at "next_cursor" as a number: 1489467234237774800 is an integer beyond 2^53 (9007199254740991): a JSON number that large has lost its last digits`,
    );
    expect(out).toContain('not sent — page by the string the API sends beside it: cursor(cursor, 200, "next_cursor_str")');
    expect(await stored(run)).toEqual([]);
  });

  it('is walked as before by its string form', async () => {
    const from = server.requests.length;
    const run = await reqon('run', 'cursor-string.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(urlsSince(from)).toEqual(['/followers', `/followers?cursor=${BIG}`]);
    expect(await stored(run)).toEqual(['1', '2', '3']);
  });
});

describe('a request path filled with an integer beyond 2^53', () => {
  it('fails the fetch naming the placeholder and the string beside it, and never sends the request', async () => {
    const from = server.requests.length;
    const run = await reqon('run', 'path-number.vague');
    // Each iteration's fetch fails; a loop tolerates its iterations' failures by default, and says so.
    expect(run.code, describeResult(run)).toBe(0);
    expect(run.stdout).toContain('completed with 2 failures');
    expect(urlsSince(from)).toEqual(['/messages']);
    expect(run.stderr).toContain(
      'Path parameter {m.id} (line 7) was not sent: 1489467234237774800 is an integer beyond 2^53 (9007199254740991): a JSON number that large has lost its last digits',
    );
    expect(run.stderr).toContain('fill it from the string the API sends beside it: {m.id_str}');
  });

  it('sends string ids and safe integers (2^53 - 1 included) as they are', async () => {
    let from = server.requests.length;
    let run = await reqon('run', 'path-string.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(urlsSince(from)).toEqual(['/messages', `/messages/${BIG}/reactions`, `/messages/${BIG2}/reactions`]);
    from = server.requests.length;
    run = await reqon('run', 'path-safe.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(urlsSince(from)).toEqual(['/small', '/messages/42/reactions', '/messages/9007199254740991/reactions']);
  });
});

describe('a query parameter or header filled with an integer beyond 2^53 (params:, headers:)', () => {
  it('fails the fetch naming the parameter, and never sends the request; string ids are sent as they are', async () => {
    let from = server.requests.length;
    let run = await reqon('run', 'param-number.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(run.stdout).toContain('completed with 2 failures');
    expect(urlsSince(from)).toEqual(['/messages']);
    expect(run.stderr).toContain('query parameter "ref" is not sent: 1489467234237774800 is an integer beyond 2^53 (9007199254740991)');

    from = server.requests.length;
    run = await reqon('run', 'param-string.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(urlsSince(from)).toEqual(['/messages', `/messages/reactions?ref=${BIG}`, '/messages/reactions', `/messages/reactions?ref=${BIG2}`, '/messages/reactions']);
    expect(server.requests.slice(from).map((r) => r.headers['x-ref']).filter(Boolean)).toEqual([BIG, BIG2]);
  });

  it('refuses such a header value too', async () => {
    fs.writeFileSync(
      path.join(dir, 'header-number.vague'),
      paramMission('/messages', 'id').replace(/      get "\/messages\/reactions" \{ params: [^\n]*\n/, ''),
    );
    const from = server.requests.length;
    const run = await reqon('run', 'header-number.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(urlsSince(from)).toEqual(['/messages']);
    expect(run.stderr).toContain('header "X-Ref" is not sent: 1489467234237774800 is an integer beyond 2^53');
  });
});
