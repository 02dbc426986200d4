/**
 * `--db postgres://…` (and `$REQON_DB`) on the CLI: a reachable PostgreSQL log is used by every
 * log command like a SQLite file; an unreachable one is one clear line and exit 2 (a worker --once
 * looks 5 times first, then exit 1) — no stack,
 * no password echoed, nothing created in the working directory; so is one the engine may not set
 * up (a role without CREATE on the schema, a search_path naming no schema), and one that never
 * answers is given up after the 10 s connection timeout. The URL is read as
 * libpq reads it: a database name with %2F is decoded, a socket folder given as ?host= after a
 * user and no host is taken. (`reqon studio --db postgres://` is tested with the studio.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli, runIdOf } from '../durability/support/cli-build.js';
import { backends, tempLogTarget } from '../support/temp-log.js';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-pg-url-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  action A { let x = 1 }\n  run A\n}\n');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('--db postgres:// that cannot be reached', () => {
  let url: string;
  beforeAll(async () => {
    url = `postgres://user:s3cret@127.0.0.1:${await deadPort()}/reqon`;
  });

  function expectUnreachable(result: { code: number | null; stdout: string; stderr: string }): void {
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^reqon: cannot reach the log database postgres:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/reqon: .*ECONNREFUSED.*; check that the server is running/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.stderr + result.stdout).not.toContain('s3cret');
  }

  for (const args of [['runs'], ['show', 'r1'], ['events', 'r1'], ['run', 'm.vague']]) {
    it(`reqon ${args.join(' ')}: one line, exit 2`, async () => {
      expectUnreachable(await runCli(builtCli(), [...args, '--db', url], { cwd: dir }));
    });
  }

  // A worker waits for its database (test/worker/worker-db-down.int.test.ts); a --once pass looks
  // 5 times, saying each, then gives up: exit 1 (the log failed), not 2 (nothing was misused).
  it('reqon worker --once: looks again a few times, saying so, then one line and exit 1', async () => {
    const result = await runCli(builtCli(), ['worker', '--once', '--poll', '20', '--db', url], { cwd: dir });
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(5);
    for (const line of lines.slice(0, 4)) expect(line).toMatch(/^cannot reach the log database postgres:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/reqon: .*ECONNREFUSED.* \(looking again in [\d.]+ s\)$/);
    expect(lines[4]).toMatch(/^reqon: cannot reach the log database postgres:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/reqon: .*ECONNREFUSED.*; check that the server is running.* \(gave up after 5 looks\)$/);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.stderr + result.stdout).not.toContain('s3cret');
  });

  it('from $REQON_DB too, and nothing is created in the working directory', async () => {
    expectUnreachable(await runCli(builtCli(), ['runs'], { cwd: dir, env: { REQON_DB: url } }));
    expect(fs.readdirSync(dir).sort()).toEqual(['m.vague']);
  });

  it('a password with @ : / # left raw: one line saying to percent-encode it, exit 2, the password not echoed', async () => {
    const result = await runCli(builtCli(), ['runs', '--db', 'postgres://user:p@ss:w/rd#x@127.0.0.1:5432/reqon'], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^reqon: --db: 'postgres:\/\/…' is not a valid PostgreSQL URL; expected postgres:\/\/USER@HOST:PORT\/DB, with @ : \/ \? # % in a user name or password percent-encoded \(%40 %3A %2F %3F %23 %25\)\n$/);
    expect(result.stderr).not.toContain('ss:w');
  });

  it('a server that takes the connection and never answers: one line after the 10 s connection timeout, exit 2', async () => {
    // A loopback stand-in for a host that drops packets: TCP accepts, PostgreSQL's startup never answers.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const silentUrl = `postgres://user:s3cret@127.0.0.1:${(silent.address() as net.AddressInfo).port}/reqon`;
      const started = Date.now();
      const result = await runCli(builtCli(), ['runs', '--db', silentUrl], { cwd: dir, timeoutMs: 40_000 });
      const seconds = (Date.now() - started) / 1000;
      expect(result.signal, result.stderr).toBeNull();
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/^reqon: cannot reach the log database postgres:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/reqon: .*time.*; check that the server is running/i);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr + result.stdout).not.toContain('s3cret');
      // Waited for the timeout, not for ever (the bound is the contract; the machine's speed is not).
      expect(seconds).toBeGreaterThanOrEqual(9);
      expect(sockets.length, 'the CLI did connect to the silent server').toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 60_000);

  it('--help offers PostgreSQL', async () => {
    const help = await runCli(builtCli(), ['runs', '--help'], { cwd: dir });
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/a SQLite file, or postgres:\/\/USER@HOST:PORT\/DB for a log shared by many workers/);
  });
});

describe.runIf(backends.includes('postgres'))('--db postgres:// on a running server', () => {
  it('reqon run writes the run there; runs, show and events read it back, from --db and from $REQON_DB', async () => {
    const db = await tempLogTarget('postgres');
    try {
      const run = await runCli(builtCli(), ['run', 'm.vague', '--db', db.target], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const runId = runIdOf(run);
      const runs = await runCli(builtCli(), ['runs'], { cwd: dir, env: { REQON_DB: db.target } });
      expect(runs.code, runs.stderr).toBe(0);
      expect(runs.stdout).toContain(runId);
      expect(runs.stdout).toMatch(/completed/);
      const events = await runCli(builtCli(), ['events', runId, '--db', db.target], { cwd: dir });
      expect(events.code, events.stderr).toBe(0);
      expect(events.stdout).toMatch(/run\.started[\s\S]*run\.completed/);
      // No SQLite file appeared beside the mission.
      expect(fs.readdirSync(dir).sort()).toEqual(['m.vague']);
    } finally {
      await db.drop();
    }
  });
});

describe.runIf(backends.includes('postgres'))('reqon worker on a server that answers no', () => {
  it('no such database: one line and exit 2 at once — not waited for as a server that is down is', async () => {
    const db = await tempLogTarget('postgres');
    try {
      const missing = new URL(db.target);
      missing.pathname = `/no_such_db_${randomBytes(4).toString('hex')}`;
      const result = await runCli(builtCli(), ['worker', '--db', missing.toString()], { cwd: dir, timeoutMs: 20_000 });
      expect(result.signal, result.stderr).toBeNull();
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/^reqon: cannot reach the log database postgres:\/\/\S+: database "no_such_db_\w+" does not exist; /);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await db.drop();
    }
  });
});

describe.runIf(backends.includes('postgres'))('--db postgres:// the engine may not set up', () => {
  async function admin(url: string, statements: string[]): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end();
    }
  }

  it('a role without CREATE on the schema, a search_path naming no schema: one line naming the database, exit 2, no stack', async () => {
    const db = await tempLogTarget('postgres');
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(db.target))![1]!;
    const role = `no_create_${randomBytes(4).toString('hex')}`;
    await admin(db.target, [`CREATE ROLE ${role} LOGIN PASSWORD 's3cret'`, `GRANT USAGE ON SCHEMA ${schema} TO ${role}`]);
    try {
      const asRole = new URL(db.target);
      asRole.username = role;
      asRole.password = 's3cret';
      const noSchema = `${db.target.slice(0, db.target.indexOf('?'))}?options=${encodeURIComponent('-c search_path=no_such_schema')}`;
      for (const [url, reason] of [
        [asRole.toString(), /permission denied for schema/],
        [noSchema, /no schema has been selected to create in/],
      ] as const) {
        for (const args of [['runs'], ['run', 'm.vague']]) {
          const result = await runCli(builtCli(), [...args, '--db', url], { cwd: dir });
          expect(result.code, result.stderr).toBe(2);
          expect(result.stderr).toMatch(/^reqon: cannot set up the run log in postgres:\/\/\S+: /);
          expect(result.stderr).toMatch(reason);
          expect(result.stderr.trim().split('\n')).toHaveLength(1);
          expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
          expect(result.stderr + result.stdout).not.toContain('s3cret');
        }
      }
    } finally {
      await db.drop();
      await admin(db.target.slice(0, db.target.indexOf('?')), [`DROP ROLE ${role}`]);
    }
  });
});

describe.runIf(backends.includes('postgres'))('--db postgres:// whose statements hit a limit the server sets', () => {
  it('a lock_timeout as the run is made: one line saying the log failed and nothing was done, exit 2, no stack (probe 113 K2: exit 1, the code of a failed run)', async () => {
    const db = await tempLogTarget('postgres');
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(db.target))![1]!;
    const holder = new pg.Client({ connectionString: db.target });
    try {
      expect((await runCli(builtCli(), ['runs', '--db', db.target], { cwd: dir })).code).toBe(0); // migrated
      await holder.connect();
      // Another session (an administrator's, a migration) holds the runs table: every statement on it waits.
      await holder.query(`BEGIN; LOCK TABLE ${schema}.reqon_runs IN ACCESS EXCLUSIVE MODE`);
      const limited = `${db.target.slice(0, db.target.indexOf('?'))}?options=${encodeURIComponent(`-c search_path=${schema} -c lock_timeout=300`)}`;
      const result = await runCli(builtCli(), ['run', 'm.vague', '--db', limited], { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe('reqon: the log database failed before a run was made (canceling statement due to lock timeout): nothing was done — try again once it is back\n');
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    } finally {
      await holder.end().catch(() => undefined);
      await db.drop();
    }
  });
});

describe.runIf(backends.includes('postgres'))('--db postgres:// in the forms libpq takes', () => {
  async function query<R extends pg.QueryResultRow>(config: pg.ClientConfig, sql: string): Promise<R[]> {
    const client = new pg.Client(config);
    await client.connect();
    try {
      return (await client.query<R>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it('a database name with a percent-encoded / (%2F) names that database, decoded', async () => {
    const db = await tempLogTarget('postgres');
    const base = new URL(db.target);
    const name = `reqon/enc_${randomBytes(4).toString('hex')}`;
    const admin = { host: base.hostname, port: Number(base.port), user: base.username, database: 'postgres' };
    await query(admin, `CREATE DATABASE "${name}"`);
    try {
      const url = `postgres://${base.username}@${base.host}/${encodeURIComponent(name)}`;
      expect(url).toContain('%2F');
      const run = await runCli(builtCli(), ['run', 'm.vague', '--db', url], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const runs = await query<{ run_id: string }>({ ...admin, database: name }, 'SELECT run_id FROM reqon_runs');
      expect(runs.map((r) => r.run_id)).toEqual([runIdOf(run)]);
    } finally {
      await query(admin, `DROP DATABASE "${name}" WITH (FORCE)`);
      await db.drop();
    }
  });

  it('a Unix-socket URL (postgres://USER@/DB?host=/socket/dir) is taken, and printed without a password', async () => {
    const db = await tempLogTarget('postgres');
    try {
      const tcp = new URL(db.target);
      const [{ unix_socket_directories: dirs }] = await query<{ unix_socket_directories: string }>({ connectionString: db.target }, 'SHOW unix_socket_directories');
      const socketDir = dirs.split(',')[0]!.trim();
      const options = tcp.searchParams.get('options')!;
      const url = `postgres://${tcp.username}@${tcp.pathname}?host=${encodeURIComponent(socketDir)}&port=${tcp.port}&options=${encodeURIComponent(options)}`;
      const run = await runCli(builtCli(), ['run', 'm.vague', '--db', url], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      // The same log over TCP holds the run.
      const runs = await runCli(builtCli(), ['runs', '--db', db.target], { cwd: dir });
      expect(runs.stdout).toContain(runIdOf(run));
      // Unreachable in that form: the one line names it (not 'postgres://…'), without the password.
      const dead = `postgres://${tcp.username}:s3cret@/nowhere?host=${encodeURIComponent(path.join(dir, 'no-socket'))}`;
      const refused = await runCli(builtCli(), ['runs', '--db', dead], { cwd: dir });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/^reqon: cannot reach the log database postgres:\/\/reqon:\*\*\*@\/nowhere\?host=/);
      expect(refused.stderr).not.toContain('s3cret');
    } finally {
      await db.drop();
    }
  });
});
