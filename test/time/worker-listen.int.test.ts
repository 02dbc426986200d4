/**
 * `reqon worker --listen PORT` on a port another program holds: one clear line naming the
 * address and what to do, exit 2 (a usage error), no stack trace and no "internal error".
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type CliBuild } from './support/build-cli.js';

let build: CliBuild;
let dir: string;
let holder: net.Server;
let port: number;

beforeAll(async () => {
  build = buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-listen-'));
  holder = net.createServer();
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen(0, '127.0.0.1', () => resolve());
  });
  port = (holder.address() as net.AddressInfo).port;
}, 300_000);

afterAll(async () => {
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('reqon worker --listen on a busy port', () => {
  it('prints one line saying the port is in use and exits 2', () => {
    const out = spawnSync(process.execPath, [build.cli, 'worker', '--listen', String(port), '--db', path.join(dir, 'log.db')], {
      cwd: dir,
      env: { ...process.env, REQON_DATA_DIR: path.join(dir, 'data') },
      encoding: 'utf8',
      timeout: 60_000, // a guard only: a worker that kept running would be killed and fail below
    });
    expect(out.signal).toBeNull();
    expect(out.status).toBe(2);
    expect(out.stderr).toBe(
      `reqon: cannot serve webhooks on 127.0.0.1:${port}: the port is in use by another program; pick another with --listen PORT (0 picks a free one)\n`,
    );
    expect(out.stdout).not.toContain('webhooks on http');
  });
});
