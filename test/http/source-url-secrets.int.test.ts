/**
 * A key given in a `--source` URL's query (`…/v1?api_key=…`) is a secret the run was given, as an
 * `--auth` one is (helper 75): an answer that echoes it is redacted in the log and so in an export,
 * and `reqon runs --json` / `reqon show --json` print the run's options with their secrets redacted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

const KEY = 'KeyViaUrl1234567';
const PASSWORD = 'hunter2-very-secret';
const MISSION = `mission Echo {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/items"
    store response -> out { key: .id }
  }
  run A
}
`;

let cli: string;
let dir: string;
let api: LocalServer;
beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-source-secrets-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
  // An API that echoes the request's URL in its answer, as many do (`self`).
  api = await startServer((req, res) => json(res, 200, [{ id: 1, self: req.url }]));
}, 180_000);
afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('a key in a --source URL', () => {
  it('is redacted wherever the run keeps or shows it', async () => {
    const ran = await reqon('run', 'm.vague', '--source', `Api=${api.base}/v1?api_key=${KEY}`, '--env', `DB_PASSWORD=${PASSWORD}`, '--quiet');
    expect(ran.code, describeResult(ran)).toBe(0);
    // The API was sent the key and echoed it.
    expect(api.requests[0]!.url).toContain(KEY);
    const runId = runIdOf(ran);
    const events = await reqon('events', runId, '--json');
    expect(events.stdout).toContain('[REDACTED]');
    const exported = await reqon('export', runId);
    const runs = await reqon('runs', '--json');
    const show = await reqon('show', runId, '--json');
    for (const [what, text] of [['events', events.stdout], ['export', exported.stdout], ['runs --json', runs.stdout], ['show --json', show.stdout]] as const) {
      expect(text, what).not.toContain(KEY);
      expect(text, what).not.toContain(PASSWORD);
    }
    // The run still resumes and verifies with the key it was given.
    expect((await reqon('verify', runId)).code).toBe(0);
  }, 60_000);
});
