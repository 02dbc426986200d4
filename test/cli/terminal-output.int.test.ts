/**
 * Data an API answered reaches the terminal only as text: a store key or an `abort` message
 * holding ESC, BEL or NUL is printed with `\u` escapes when the CLI writes to a terminal (a pty
 * here, through util-linux `script`), so an API cannot clear the screen, retitle the window or
 * set the clipboard (OSC 52) of whoever reads `reqon run` or `reqon store`. Before, they were
 * written raw. A pipe still gets the data as it is.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const KEY = 'k\u001b]52;c;aGk=\u0007';
const MESSAGE = '\u001b[2J\u0000gone';

let cli: string;
let dir: string;
let server: http.Server;
let url: string;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-terminal-'));
  server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: KEY, msg: MESSAGE })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  source Api { auth: none, base: "http://127.0.0.1:9" }\n  store out: memory("out")\n  action A {\n    get "/x"\n    store response -> out { key: .id }\n    abort response.msg\n  }\n  run A\n}\n',
  );
}, 180_000);

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The command run on a pty: what a user's terminal would receive. (Async: the API is served by this process.) */
function onTerminal(args: string[]): Promise<string> {
  const line = [process.execPath, cli, ...args, '--db', path.join(dir, 'log.db')].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', line, '/dev/null'], { cwd: dir, env: { ...process.env, REQON_DATA_DIR: path.join(dir, 'data') }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return new Promise((resolve) => child.on('close', () => resolve(out)));
}

describe.skipIf(!hasScript)('API data on a terminal', () => {
  it('reqon run and reqon store print control characters as escapes; a pipe gets the key as it is', async () => {
    const run = await onTerminal(['run', 'm.vague', '--source', `Api=${url}`]);
    // The failure's place (file:line:col of the abort) comes before the message.
    expect(run).toMatch(/failed: \S*m\.vague:\d+:\d+: \\u001b\[2J\\u0000gone/);
    const store = await onTerminal(['store', (/run (run_\w+)/.exec(run) ?? [])[1] ?? 'missing', 'out']);
    expect(store).toContain('k\\u001b]52;c;aGk=\\u0007\t');
    for (const shown of [run, store]) {
      expect(shown).not.toMatch(/[\u0000\u0007\u001b]/);
    }
    const runs = await runCli(cli, ['runs', '--json', '--db', path.join(dir, 'log.db')], { cwd: dir });
    const runId = (JSON.parse(runs.stdout) as { runId: string }[])[0]!.runId;
    const piped = await runCli(cli, ['store', runId, 'out', '--json', '--db', path.join(dir, 'log.db')], { cwd: dir });
    expect((JSON.parse(piped.stdout) as { key: string }[])[0]!.key).toBe(KEY);
  });
});
