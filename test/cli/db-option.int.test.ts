/**
 * `--db PATH` naming something that is not a Reqon log — a text file, a folder, a truncated or
 * damaged SQLite file — is one line naming the path and what SQLite said, exit 2, and the file is
 * left exactly as it was. Before, every command printed "internal error (please report it)"
 * with a stack trace and exited 1, the code of a failed run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli } from '../durability/support/cli-build.js';
import { FakeApi } from '../support/fake-api.js';

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-db-option-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, args, { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('--db that is not a log', () => {
  it('a text file, a truncated log and a folder: exit 2, one line naming the path, nothing changed', async () => {
    const good = path.join(dir, 'good.db');
    const made = await reqon('run', 'm.vague', '--db', good, '--quiet');
    expect(made.code, made.stderr).toBe(0);
    const text = path.join(dir, 'notes.db');
    fs.writeFileSync(text, 'my notes, not a database\n');
    const truncated = path.join(dir, 'truncated.db');
    fs.writeFileSync(truncated, fs.readFileSync(good).subarray(0, 200));
    const folder = path.join(dir, 'folder.db');
    fs.mkdirSync(folder);

    for (const db of [text, truncated, folder]) {
      const before = fs.statSync(db).isFile() ? fs.readFileSync(db) : null;
      for (const args of [['runs'], ['run', 'm.vague', '--quiet'], ['show', 'run_x']]) {
        const result = await reqon(...args, '--db', db);
        expect(result.code, `${args[0]} --db ${path.basename(db)}: ${result.stderr}`).toBe(2);
        expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr).toContain(db);
        expect(result.stderr).toMatch(/cannot be opened as a Reqon log/);
        expect(result.stdout).not.toMatch(/^run /m);
      }
      if (before) expect(fs.readFileSync(db).equals(before)).toBe(true);
    }
  });

  it("an empty --db and SQLite's in-memory database are refused: exit 2, one line, no run made anywhere (probe 112 K1, K5)", async () => {
    const sub = path.join(dir, 'empty-db');
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, 'm.vague'), fs.readFileSync(path.join(dir, 'm.vague')));
    const inSub = (args: string[], env: Record<string, string> = {}) => runCli(cli, args, { cwd: sub, env: { REQON_DATA_DIR: path.join(sub, 'data'), ...env } });
    for (const [args, env, said] of [
      [['run', 'm.vague', '--quiet', '--db', ''], {}, /^reqon: --db is empty: name a log file/],
      [['runs', '--db', ''], {}, /^reqon: --db is empty/],
      [['run', 'm.vague', '--quiet', '--db', ':memory:'], {}, /^reqon: --db :memory: keeps the log in this process's memory, gone when the command ends/],
      [['run', 'm.vague', '--quiet'], { REQON_DB: ':memory:' }, /^reqon: --db :memory: keeps the log/],
      [['worker', '--once', '--db', ':memory:'], {}, /^reqon: --db :memory: keeps the log/],
    ] as const) {
      const result = await inSub([...args], env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(said);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stdout).toBe('');
    }
    // Nothing was made in the working directory (the default log included).
    expect(fs.readdirSync(sub)).toEqual(['m.vague']);
    // An empty $REQON_DB is unset, as a shell means it: the default log.
    const unset = await inSub(['run', 'm.vague', '--quiet'], { REQON_DB: '' });
    expect(unset.code, unset.stderr).toBe(0);
    expect(fs.existsSync(path.join(sub, '.reqon', 'reqon.db'))).toBe(true);
  });

  it('a path through a file: exit 2, one line saying why its folder cannot be made (helper 86: an internal error with a stack)', async () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'not a folder\n');
    const result = await reqon('run', 'm.vague', '--quiet', '--db', path.join(file, 'log.db'));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe(`reqon: ${path.join(file, 'log.db')}: cannot be created: its folder ${file} cannot be made (a part of that path is a file, not a folder); give --db a path in a folder you can write\n`);
  });

  it("another program's SQLite database, whatever its user_version: exit 2, its tables and journal mode left as they were", async () => {
    const Database = (await import('better-sqlite3')).default;
    for (const version of [0, 3, 99]) {
      const other = path.join(dir, `other-${version}.db`);
      const db = new Database(other);
      db.exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'Ada'); PRAGMA user_version = ${version}`);
      db.close();
      const before = fs.readFileSync(other);
      for (const args of [['runs'], ['run', 'm.vague', '--quiet']]) {
        const result = await reqon(...args, '--db', other);
        expect(result.code, `${args[0]} on user_version ${version}: ${result.stderr}`).toBe(2);
        expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
        // A user_version past ours reads as a newer Reqon log only when it has Reqon's tables.
        expect(result.stderr).toMatch(/cannot be opened as a Reqon log: it is a SQLite database of another program \(tables customers/);
      }
      expect(fs.readFileSync(other).equals(before)).toBe(true);
      expect(fs.existsSync(`${other}-wal`)).toBe(false);
    }
  });

  it('a device or a URL of another scheme is refused, and no folder is made for it', async () => {
    const device = await reqon('runs', '--db', '/dev/null');
    expect(device.code, device.stderr).toBe(2);
    expect(device.stderr).toMatch(/\/dev\/null: cannot be opened as a Reqon log: it is not a regular file/);
    for (const url of ['postgress://reqon@127.0.0.1:5432/reqon', 'postgresql:/reqon@127.0.0.1/reqon', 'mysql://u:secret@127.0.0.1/db', 'sqlite:///tmp/x.db']) {
      const result = await reqon('run', 'm.vague', '--quiet', '--db', url);
      expect(result.code, `${url}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/URL is no log this engine opens; give a SQLite file path .* or a PostgreSQL URL, postgres:\/\//);
      expect(result.stderr).not.toContain('secret');
      expect(result.stdout).not.toMatch(/^run /m);
    }
    expect(fs.readdirSync(dir).filter((name) => name.includes(':'))).toEqual([]);
    // The studio refuses them as the commands do: one line, exit 2, nothing served or made.
    const Database = (await import('better-sqlite3')).default;
    const other = path.join(dir, 'studio-other.db');
    const raw = new Database(other);
    raw.exec('CREATE TABLE t (a)');
    raw.close();
    for (const db of ['sqlite:///tmp/x.db', other, '/dev/null']) {
      const studio = await runCli(cli, ['studio', '--no-open', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') }, timeoutMs: 30_000 });
      expect(studio.code, `studio --db ${db}: ${studio.stderr}`).toBe(2);
      expect(studio.stderr.trim().split('\n')).toHaveLength(1);
      expect(studio.stderr).not.toMatch(/internal error/);
    }
    expect(fs.readdirSync(dir).filter((name) => name.includes(':'))).toEqual([]);
  });

  it('a log SQLite can only read: run and fork exit 2, one line saying so, no run made (probe 112 K2: exit 1, "failed mid-command")', async (ctx) => {
    const db = path.join(dir, 'read-only.db');
    const made = await reqon('run', 'm.vague', '--db', db, '--quiet');
    expect(made.code, made.stderr).toBe(0);
    const parent = /^run (\S+)$/m.exec(made.stdout)![1]!;
    // Root writes through file modes: an immutable file is what it cannot write (chattr, where the file system has it).
    const root = process.getuid?.() === 0;
    const locked = root ? spawnSync('chattr', ['+i', db]).status === 0 : (fs.chmodSync(db, 0o444), fs.chmodSync(dir, 0o555), true);
    if (!locked) {
      const reason = '[db-option] skipping "a log SQLite can only read": chattr +i is not available here, and root writes any file whatever its mode';
      console.log(reason);
      ctx.skip(reason);
    }
    try {
      for (const args of [['run', 'm.vague', '--quiet', '--json'], ['fork', parent, '--at', '2', '--quiet', '--json']]) {
        const result = await reqon(...args, '--db', db);
        expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
        // (Without root, SQLite may refuse the folder's -shm at open already: said as it opens.)
        expect(result.stderr).toMatch(root ? /^reqon: \S+read-only\.db: the log cannot be written \(.*SQLITE_READONLY\); nothing was done/ : /^reqon: \S+read-only\.db: /);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stdout).toBe('');
      }
    } finally {
      if (root) spawnSync('chattr', ['-i', db]);
      else fs.chmodSync(dir, 0o755);
    }
    const runs = await reqon('runs', '--json', '--db', db);
    expect((JSON.parse(runs.stdout) as unknown[]).length, 'no run was made').toBe(1);
  });

  it('a log file deleted or replaced under a run: exit 1, saying what went with it — never "completed", exit 0 (probe 112 K3)', async () => {
    const api = new FakeApi();
    let db = '';
    const swap: Record<string, () => void> = {
      deleted: () => {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${db}${suffix}`, { force: true });
      },
      replaced: () => {
        fs.renameSync(db, `${db}.old`);
        fs.copyFileSync(`${db}.old`, db);
      },
    };
    let happen = () => {};
    api.on('GET /items', () => {
      happen();
      return { status: 200, body: [{ id: 'a' }] };
    });
    await api.start();
    try {
      fs.writeFileSync(path.join(dir, 'pull.vague'), 'mission Pull {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  store s: memory("s")\n  action A {\n    get "/items"\n    store response -> s { key: .id }\n  }\n  run A\n}\n');
      for (const [how, act] of Object.entries(swap)) {
        db = path.join(dir, `lost-${how}.db`);
        happen = () => {};
        expect((await reqon('run', 'pull.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet')).code).toBe(0);
        happen = act;
        const result = await reqon('run', 'pull.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet', '--json');
        expect(result.code, `${how}: ${result.stderr}`).toBe(1);
        expect(result.stderr).toBe(`reqon: the log file ${db} was ${how} while this command wrote to it: what it recorded went with the old file, and nothing can show or resume it\n`);
        expect(result.stdout).not.toMatch(/completed/);
      }
    } finally {
      await api.stop();
    }
  });

  it('a log another process holds locked: exit 2, one line that says so, no run made', async () => {
    const locked = path.join(dir, 'locked.db');
    const made = await reqon('run', 'm.vague', '--db', locked, '--quiet');
    expect(made.code, made.stderr).toBe(0);
    const Database = (await import('better-sqlite3')).default;
    const holder = new Database(locked);
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const result = await reqon('run', 'm.vague', '--quiet', '--db', locked);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/the log is locked by another process .*nothing was done/);
      expect(result.stderr).not.toMatch(/stays resumable|internal error/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    const runs = await reqon('runs', '--db', locked, '--json');
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout.match(/run_/g)?.length).toBe(1);
  }, 60_000);

  it('a --db file that does not exist: the commands that read runs say so and make nothing; run makes it', async () => {
    const missing = path.join(dir, 'typo', 'reqn.db');
    for (const args of [['show', 'run_x'], ['events', 'run_x'], ['store', 'run_x', 's'], ['verify', 'run_x'], ['export', 'run_x'], ['resume', 'run_x'], ['prune', '--completed-before', '30d']]) {
      const result = await reqon(...args, '--db', missing);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`${missing}: no log there (no such file); check --db`);
    }
    const runs = await reqon('runs', '--db', missing);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/^no log at .* yet: the first `reqon run MISSION.vague` makes it/);
    expect((await reqon('runs', '--db', missing, '--json')).stdout.trim()).toBe('[]');
    expect(fs.existsSync(path.dirname(missing))).toBe(false);
    const made = await reqon('run', 'm.vague', '--quiet', '--db', missing);
    expect(made.code, made.stderr).toBe(0);
    expect(fs.existsSync(missing)).toBe(true);
  });
});

