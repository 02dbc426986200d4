/**
 * A throwaway PostgreSQL cluster for the tests: `initdb` + `pg_ctl` as a non-root system user
 * (PostgreSQL refuses to run as root), a data directory in a fresh temp dir owned by that user,
 * listening on 127.0.0.1 only, on a free port. Started once per test run (test/vitest.config.ts
 * globalSetup, which also stops it and deletes the directory); tests reach it through
 * `$REQON_TEST_PG_URL` and take a fresh database each (temp-log.ts).
 *
 * When the binaries are missing, `findPgBin` says why; the PostgreSQL half of the tests is then
 * skipped with that reason printed, never silently.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The system user the cluster runs as when the tests run as root. */
const PG_USER = 'reqonpg';

/** The directory holding initdb and pg_ctl, or a reason there is none. */
export function findPgBin(): { bin: string } | { missing: string } {
  // $REQON_TEST_PG_BIN names the folder outright (and lets one check the skip: point it nowhere).
  const only = process.env['REQON_TEST_PG_BIN'];
  if (only !== undefined && only !== '') {
    return fs.existsSync(path.join(only, 'initdb')) && fs.existsSync(path.join(only, 'pg_ctl'))
      ? { bin: only }
      : { missing: `no initdb/pg_ctl in $REQON_TEST_PG_BIN (${only})` };
  }
  const candidates: string[] = [];
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    for (const version of fs.readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(root, version, 'bin'));
  }
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) if (dir !== '') candidates.push(dir);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) {
      // /usr/local/bin wrappers may point at pg_wrapper, which needs a cluster config: prefer the real dir.
      return { bin: fs.realpathSync(dir) };
    }
  }
  return { missing: 'initdb/pg_ctl not found (install the Debian package postgresql, as .ci/run does)' };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface PgCluster {
  /** postgres://reqon@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  dir: string;
  bin: string;
  /** Runs a pg_ctl command (start/stop) on the cluster, as its user. */
  ctl(args: string[]): void;
  stop(): void;
}

function asUser(command: string, args: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', PG_USER, '--', command, ...args] : [command, ...args];
}

function run(argv: string[]): void {
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${argv.join(' ')} failed (exit ${result.status}): ${result.stderr || result.stdout || String(result.error)}`);
  }
}

export async function startPgCluster(): Promise<PgCluster> {
  const found = findPgBin();
  if ('missing' in found) throw new Error(found.missing);
  const { bin } = found;
  if (process.getuid?.() === 0) {
    if (spawnSync('id', ['-u', PG_USER]).status !== 0) run(['useradd', '-r', '-M', '-s', '/usr/sbin/nologin', PG_USER]);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', [PG_USER, dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  run(asUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'reqon', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']));
  const ctl = (args: string[]): void => run(asUser(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), ...args]));
  // Loopback only, the socket in our dir (not /var/run), enough connections for parallel files.
  ctl(['-w', '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=300 -c shared_buffers=64MB`, 'start']);
  return {
    url: `postgres://reqon@127.0.0.1:${port}/postgres`,
    port,
    dir,
    bin,
    ctl,
    stop: () => {
      try {
        ctl(['-w', '-m', 'fast', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
