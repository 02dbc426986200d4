/**
 * An API's ids beyond 2^53 (database sequences, snowflakes) reach a mission as JSON numbers that
 * have lost their last digits: 9007199254740993 and 9007199254740992 parse to one number. Keyed
 * by such a number, the second record would silently overwrite the first, so the store step
 * refuses it with the way out (key by the string form) — and keyed by that string, both records
 * are kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli, runIdOf } from '../durability/support/cli-build.js';
import { startServer, type LocalServer } from '../http/local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;

// Written as text: JSON.stringify could not even express the two ids apart.
const BODY = '[{"id": 9007199254740993, "id_str": "9007199254740993", "name": "first"}, {"id": 9007199254740992, "id_str": "9007199254740992", "name": "second"}]';

const mission = (key: string) => `mission Big {
  source Api { auth: none, base: "${server.base}" }
  store users: sql("users")
  action Sync {
    get "/users"
    store response -> users ${key}
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-big-keys-'));
  server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BODY);
  });
  fs.writeFileSync(path.join(dir, 'by-id.vague'), mission(''));
  fs.writeFileSync(path.join(dir, 'by-id-str.vague'), mission('{ key: .id_str }'));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('ids beyond 2^53', () => {
  it('keyed by the rounded number: the run fails at the store, naming the key and the way out, and stores nothing', async () => {
    const run = await reqon('run', 'by-id.vague');
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/record id 9007199254740992 .* is an integer beyond 2\^53 .* key by the id as a string/);
    const stored = await reqon('store', runIdOf(run), 'users', '--json');
    expect(stored.code, stored.stderr).toBe(0);
    expect(JSON.parse(stored.stdout)).toEqual([]);
  });

  it('keyed by the string form: both records, each under its own id', async () => {
    const run = await reqon('run', 'by-id-str.vague');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const stored = await reqon('store', runIdOf(run), 'users', '--json');
    const records = JSON.parse(stored.stdout) as { key: string; record: { name: string } }[];
    // `reqon store` lists by key.
    expect(records.map((r) => [r.key, r.record.name])).toEqual([
      ['9007199254740992', 'second'],
      ['9007199254740993', 'first'],
    ]);
  });
});
