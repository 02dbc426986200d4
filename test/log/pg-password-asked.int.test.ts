/**
 * A `--db postgres://USER@…` without a password, against a server that asks for one (SCRAM):
 * `pg` gave up with "client password must be a string" but left its socket to the server's
 * authentication_timeout, so every command hung a minute before its exit 2, saying the server might
 * be down. It is one line saying a password is needed and where to put it, at once.
 *
 * The server here is a stand-in on 127.0.0.1 that speaks just enough of the protocol: it asks for
 * SCRAM-SHA-256, answers the client's first message with a server-first message, then says
 * nothing more — as a real server waits for the client's proof.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';

let server: net.Server;
let port: number;
let dir: string;
const sockets = new Set<net.Socket>();

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-pg-password-'));
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let startup = true;
    socket.on('data', (data) => {
      if (startup) {
        startup = false;
        // AuthenticationSASL: SCRAM-SHA-256.
        socket.write(message('R', Buffer.concat([int32(10), Buffer.from('SCRAM-SHA-256\0\0', 'latin1')])));
        return;
      }
      // SASLInitialResponse: "n,,n=*,r=NONCE" — answer AuthenticationSASLContinue, then wait.
      const nonce = /r=([^,\0]+)/.exec(data.toString('latin1'))?.[1] ?? 'x';
      const first = `r=${nonce}server,s=${Buffer.from('salt').toString('base64')},i=4096`;
      socket.write(message('R', Buffer.concat([int32(11), Buffer.from(first, 'latin1')])));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a PostgreSQL server that asks for a password the URL does not give', () => {
  it('is one line saying so, exit 2, at once', async () => {
    // No password anywhere: not in the URL, $PGPASSWORD or a ~/.pgpass.
    const env: Record<string, string> = { HOME: dir, PGPASSWORD: '', PGPASSFILE: path.join(dir, 'none') };
    // The stand-in never closes the connection: a process that waits on it is killed at 30 s, and fails below.
    const result = await runCli(builtCli(), ['runs', '--db', `postgres://reqon@127.0.0.1:${port}/reqon`], { cwd: dir, env, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/the server asks for a password and none was given; put it in the URL .*\$PGPASSWORD or in ~\/\.pgpass/);
  }, 60_000);
});
