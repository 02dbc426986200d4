/**
 * What the CLI takes from the user before a run exists: a malformed `--auth` file is refused
 * (exit 2) without printing a character of its secrets and without leaving a run behind; a
 * `--source` URL with a password is refused with a pointer to `--auth`, one that is no http(s) URL is
 * refused, one naming no source of the
 * mission is refused with the names it declares; a `--payload` nested too
 * deep is a usage error, not an internal one.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

const SECRET = 'SUPERSECRETVALUE-42';
const MISSION = `mission M {
  source Api { auth: bearer, base: "http://127.0.0.1:9" }
  action A { get "/x" }
  run A
}
`;

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cli-inputs-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('inputs checked before a run exists', () => {
  it('a malformed --auth file: exit 2, no secret characters, no run', async () => {
    fs.writeFileSync(path.join(dir, 'auth.json'), `{"Api": {"type": "bearer", "token": ${SECRET}}}`);
    const result = await reqon('run', 'm.vague', '--auth', 'auth.json');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not valid JSON');
    for (let i = 0; i + 4 <= SECRET.length; i++) expect(result.stderr + result.stdout).not.toContain(SECRET.slice(i, i + 4));
    expect(result.stdout).not.toMatch(/^run /m);
    const runs = await reqon('runs', '--json');
    expect(JSON.parse(runs.stdout || '[]')).toEqual([]);
  });

  it('a --source URL with a password: exit 2, pointing at --auth', async () => {
    const result = await reqon('run', 'm.vague', '--source', `Api=http://user:${SECRET}@127.0.0.1:9`);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--auth');
    expect(result.stderr).not.toContain(SECRET);
  });

  it('a --source value that is no http(s) URL: exit 2, no run', async () => {
    // Before, the run was created and failed at its first request (exit 1, a failed run in the log).
    for (const value of ['notaurl', 'ftp://127.0.0.1/x', '127.0.0.1:8080']) {
      const result = await reqon('run', 'm.vague', '--source', `Api=${value}`);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`--source Api: "${value}" is not an absolute http(s) URL`);
      expect(result.stdout).not.toMatch(/^run /m);
    }
    const runs = await reqon('runs', '--json');
    expect(JSON.parse(runs.stdout || '[]')).toEqual([]);
  });

  it('a --source naming no source of the mission: exit 2, naming the declared ones, no run, nothing sent', async () => {
    // Before, a misspelt override (`api=` for `Api`) was ignored and the run went to the
    // mission's own base URL: the production API a user meant to keep out of a test.
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    fs.writeFileSync(path.join(dir, 'base.vague'), MISSION.replace('auth: bearer, base: "http://127.0.0.1:9"', `auth: none, base: "http://127.0.0.1:${port}"`));
    try {
      const result = await reqon('run', 'base.vague', '--source', 'api=http://127.0.0.1:9', '--quiet');
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--source api: the mission declares no source named "api" \(its sources: Api\)/);
      expect(result.stdout).not.toMatch(/^run /m);
      expect(hits).toBe(0);
      const runs = await reqon('runs', '--json');
      expect(JSON.parse(runs.stdout || '[]')).toEqual([]);
      // A worker scheduling the mission refuses it the same way, and one given no mission at all.
      const worker = await reqon('worker', '--once', 'base.vague', '--source', 'api=http://127.0.0.1:9', '--quiet');
      expect(worker.code).toBe(2);
      expect(worker.stderr).toMatch(/--source api: the mission declares no source named "api" \(its sources: Api\)/);
      const idle = await reqon('worker', '--once', '--source', 'Api=http://127.0.0.1:9', '--quiet');
      expect(idle.code).toBe(2);
      expect(idle.stderr).toMatch(/--source Api: no mission is given to use it/);
      expect(hits).toBe(0);
      // The declared name is taken as before.
      const right = await reqon('run', 'base.vague', '--source', `Api=http://127.0.0.1:${port}`, '--quiet');
      expect(right.code).toBe(0);
      expect(hits).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a --payload nested too deep: a usage error without a stack trace', async () => {
    const result = await reqon('resume', 'run_x', '--payload', `${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nested deeper than 256 levels');
    expect(result.stderr).not.toContain('internal error');
  });
});
