import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openFileStore, storeFilePath } from '../../engine/stores/file-store.js';
import { StoreError } from '../../engine/stores/store-error.js';

let dataDir: string;
beforeEach(() => {
  dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-file-store-')), 'data');
});
afterEach(() => {
  fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

async function storeError(promise: Promise<unknown> | (() => unknown)): Promise<StoreError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('expected a StoreError');
}

describe('file store: contents and format', () => {
  it('writes one pretty-printed JSON object, records in insertion order with sorted fields, and a .gitignore', async () => {
    const store = openFileStore(dataDir, 'orders');
    expect(fs.existsSync(dataDir)).toBe(false); // opening touches nothing
    await store.write([
      { key: 'b', record: { total: 2, id: 'b' }, op: 'set' },
      { key: 'a', record: { z: { y: 1, x: 2 }, id: 'a' }, op: 'set' },
    ]);
    expect(store.path).toBe(path.join(dataDir, 'orders.json'));
    expect(fs.readFileSync(store.path, 'utf8')).toBe(
      '{\n  "b": {\n    "id": "b",\n    "total": 2\n  },\n  "a": {\n    "id": "a",\n    "z": {\n      "x": 2,\n      "y": 1\n    }\n  }\n}\n',
    );
    expect(fs.readFileSync(path.join(dataDir, '.gitignore'), 'utf8')).toBe('*\n');
    expect(fs.readdirSync(dataDir).sort()).toStrictEqual(['.gitignore', 'orders.json']); // no lock or temp left
  });

  it('set replaces, upsert merges, and write returns each record as stored', async () => {
    const store = openFileStore(dataDir, 'orders');
    await store.write([{ key: 'o1', record: { id: 'o1', status: 'new', total: 5 }, op: 'set' }]);
    const merged = await store.write([
      { key: 'o1', record: { status: 'paid', note: undefined }, op: 'upsert' },
      { key: 'o2', record: { id: 'o2', total: 7 }, op: 'upsert' },
    ]);
    expect(merged).toStrictEqual([
      { key: 'o1', record: { id: 'o1', status: 'paid', total: 5 } },
      { key: 'o2', record: { id: 'o2', total: 7 } },
    ]);
    const replaced = await store.write([{ key: 'o1', record: { id: 'o1', status: 'void' }, op: 'set' }]);
    expect(replaced).toStrictEqual([{ key: 'o1', record: { id: 'o1', status: 'void' } }]);
    expect(await store.list()).toStrictEqual([
      { key: 'o1', record: { id: 'o1', status: 'void' } },
      { key: 'o2', record: { id: 'o2', total: 7 } },
    ]);
    expect(await store.get('o2')).toStrictEqual({ id: 'o2', total: 7 });
    expect(await store.get('missing')).toBeUndefined();
  });

  it('a write of one key twice in a batch returns both intermediate states and keeps the last', async () => {
    const store = openFileStore(dataDir, 's');
    const out = await store.write([
      { key: 'k', record: { a: 1 }, op: 'upsert' },
      { key: 'k', record: { b: 2 }, op: 'upsert' },
    ]);
    expect(out.map((r) => r.record)).toStrictEqual([{ a: 1 }, { a: 1, b: 2 }]);
    expect(await store.get('k')).toStrictEqual({ a: 1, b: 2 });
  });

  it('is idempotent: replaying a batch leaves the same bytes and does not rewrite the file', async () => {
    const store = openFileStore(dataDir, 's');
    const batch = [
      { key: 'x', record: { n: 1 }, op: 'upsert' as const },
      { key: 'y', record: { n: 2 }, op: 'set' as const },
    ];
    const first = await store.write(batch);
    const bytes = fs.readFileSync(store.path, 'utf8');
    const inode = fs.statSync(store.path).ino;
    const second = await store.write(batch);
    expect(second).toStrictEqual(first);
    expect(fs.readFileSync(store.path, 'utf8')).toBe(bytes);
    expect(fs.statSync(store.path).ino).toBe(inode); // not replaced by a rename
  });

  it('a writer that keeps the file it wrote sees every change made since: another writer, an edit in place, a removal', async () => {
    // Each store keeps its last write's records (a loop of single writes no longer reads the whole file each time).
    const a = openFileStore(dataDir, 's');
    const b = openFileStore(dataDir, 's'); // another process's, as far as `a` can tell
    await a.write([{ key: 'k1', record: { n: 1 }, op: 'set' }]);
    await b.write([{ key: 'k2', record: { n: 2 }, op: 'set' }]);
    await a.write([{ key: 'k3', record: { n: 3 }, op: 'upsert' }]);
    expect((await a.list()).map((r) => r.key)).toEqual(['k1', 'k2', 'k3']);
    // Edited in place (the same inode), by hand or by a program that does not rename.
    const text = fs.readFileSync(a.path, 'utf8').replace('"n": 3', '"n": 33');
    fs.writeFileSync(a.path, text);
    await a.write([{ key: 'k4', record: { n: 4 }, op: 'set' }]);
    expect(Object.fromEntries((await b.list()).map((r) => [r.key, r.record]))).toEqual({ k1: { n: 1 }, k2: { n: 2 }, k3: { n: 33 }, k4: { n: 4 } });
    // Removed: the next write starts a new file.
    fs.rmSync(a.path);
    await a.write([{ key: 'k5', record: { n: 5 }, op: 'upsert' }]);
    expect((await b.list()).map((r) => r.key)).toEqual(['k5']);
    // A batch that changes nothing still leaves the file as it is.
    const inode = fs.statSync(a.path).ino;
    await a.write([{ key: 'k5', record: { n: 5 }, op: 'upsert' }]);
    expect(fs.statSync(a.path).ino).toBe(inode);
  });

  it('returns records as JSON stores them (dates as strings) and rejects what JSON cannot hold', async () => {
    const store = openFileStore(dataDir, 's');
    const [stored] = await store.write([{ key: 'd', record: { at: new Date(Date.UTC(2024, 0, 2)) }, op: 'set' }]);
    expect(stored!.record).toStrictEqual({ at: '2024-01-02T00:00:00.000Z' });
    expect(await store.get('d')).toStrictEqual(stored!.record);
    const err = await storeError(store.write([{ key: 'b', record: { big: 1n }, op: 'set' }]));
    expect(err.code).toBe('store.bad-record');
    expect(err.message).toMatch(/key "b"\): the record cannot be stored as JSON/);
  });

  it('rejects bad writes before touching the disk', async () => {
    const store = openFileStore(dataDir, 's');
    expect((await storeError(store.write([{ key: '', record: {}, op: 'set' }]))).code).toBe('store.bad-key');
    expect((await storeError(store.write([{ key: 'k', record: 128 as never, op: 'set' }]))).message).toMatch(
      /write #0 to .*s\.json: expected an object but got: number \(128\)/,
    );
    expect((await storeError(store.write([{ key: 'k', record: {}, op: 'merge' as never }]))).message).toMatch(/unknown op "merge"/);
    expect(fs.existsSync(dataDir)).toBe(false);
    expect(await store.write([])).toStrictEqual([]);
  });

  it('lists an absent store as empty', async () => {
    const store = openFileStore(dataDir, 'never/written');
    expect(await store.list()).toStrictEqual([]);
    expect(await store.get('a')).toBeUndefined();
  });
});

describe('file store: targets', () => {
  it('nested targets become nested folders under the data folder', async () => {
    const store = openFileStore(dataDir, 'exports/2024/orders');
    await store.write([{ key: '1', record: { id: 1 }, op: 'set' }]);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'exports', '2024', 'orders.json'), 'utf8'))).toStrictEqual({ '1': { id: 1 } });
    expect(fs.readFileSync(path.join(dataDir, '.gitignore'), 'utf8')).toBe('*\n');
    expect(fs.existsSync(path.join(dataDir, 'exports', '.gitignore'))).toBe(false);
  });

  const rejected: [string, RegExp][] = [
    ['../outside', /contains "\.\." \(it would leave the data folder\)/],
    ['a/../../outside', /contains "\.\."/],
    ['a/..', /contains "\.\."/],
    ['/etc/passwd', /is an absolute path/],
    ['C:/windows', /is an absolute path/],
    ['a\\b', /contains a backslash/],
    ['', /is empty/],
    ['a//b', /empty or "\." path segment/],
    ['./a', /empty or "\." path segment/],
    ['a/', /empty or "\." path segment/],
    ['a\0b', /NUL/],
  ];
  for (const [target, message] of rejected) {
    it(`rejects ${JSON.stringify(target)}`, async () => {
      const err = await storeError(() => openFileStore(dataDir, target));
      expect(err.code).toBe('store.bad-target');
      expect(err.message).toMatch(message);
      expect(err.message).toContain(JSON.stringify(target));
    });
  }

  it('keeps accepted names inside the root', () => {
    expect(storeFilePath('/data', 'a.b/c-d')).toBe(path.resolve('/data', 'a.b', 'c-d.json'));
    expect(storeFilePath('/data', '...')).toBe(path.resolve('/data', '....json'));
  });
});

describe('file store: damaged files', () => {
  const damaged: [string, RegExp][] = [
    ['{"a": {"id": 1}', /is not valid JSON/],
    ['', /is not valid JSON/],
    ['[1, 2]', /must hold a JSON object \{key: record\} but holds array \(2 items\)/],
    ['{"a": 5}', /holds number \(5\) under key "a" where a record object belongs/],
  ];
  for (const [text, message] of damaged) {
    it(`refuses to read or overwrite ${JSON.stringify(text)}`, async () => {
      const store = openFileStore(dataDir, 'orders');
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(store.path, text);
      for (const attempt of [() => store.list(), () => store.get('a'), () => store.write([{ key: 'b', record: { id: 2 }, op: 'set' }])]) {
        const err = await storeError(attempt);
        expect(err.code).toBe('store.corrupt');
        expect(err.message).toContain(store.path);
        expect(err.message).toMatch(message);
        expect(err.message).toMatch(/left untouched/);
      }
      expect(fs.readFileSync(store.path, 'utf8')).toBe(text);
      expect(fs.existsSync(`${store.path}.lock`)).toBe(false); // the lock was released
    });
  }
});

describe('file store: lock', () => {
  function deadPid(): number {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    return Number(child.stdout);
  }

  it('breaks a lock whose holder process is gone', async () => {
    const store = openFileStore(dataDir, 's', { timeoutMs: 5_000 });
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(`${store.path}.lock`, JSON.stringify({ pid: deadPid(), host: os.hostname(), token: 'old' }));
    await store.write([{ key: 'a', record: { v: 1 }, op: 'set' }]);
    expect(await store.get('a')).toStrictEqual({ v: 1 });
    expect(fs.existsSync(`${store.path}.lock`)).toBe(false);
  });

  it("breaks at once a lock naming this process's pid under a token it never held (a restarted container's pids reused)", async () => {
    const store = openFileStore(dataDir, 's', { timeoutMs: 5_000, staleMs: 60_000 });
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(`${store.path}.lock`, JSON.stringify({ pid: process.pid, host: os.hostname(), token: 'before-the-restart' }));
    const started = performance.now();
    await store.write([{ key: 'a', record: { v: 1 }, op: 'set' }]);
    expect(await store.get('a')).toStrictEqual({ v: 1 });
    // Not the 60 s of staleMs a live holder is given (generous: the machine is shared).
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(fs.existsSync(`${store.path}.lock`)).toBe(false);
  });

  it('waits for a live holder, then fails with a retryable timeout naming the lock', async () => {
    const store = openFileStore(dataDir, 's', { timeoutMs: 200, staleMs: 60_000 });
    fs.mkdirSync(dataDir, { recursive: true });
    const lock = `${store.path}.lock`;
    // The parent process: alive, and another process than this one.
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: os.hostname(), token: 'someone-else' }));
    const started = performance.now();
    const err = await storeError(store.write([{ key: 'a', record: {}, op: 'set' }]));
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(err.code).toBe('store.lock-timeout');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(lock);
    expect(err.message).toContain(`pid ${process.ppid}`);
    expect(fs.existsSync(lock)).toBe(true); // not ours to remove
    expect(fs.existsSync(store.path)).toBe(false);
  });

  it('proceeds as soon as a live holder releases', async () => {
    const store = openFileStore(dataDir, 's', { timeoutMs: 5_000, staleMs: 60_000 });
    fs.mkdirSync(dataDir, { recursive: true });
    const lock = `${store.path}.lock`;
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: os.hostname(), token: 'brief' }));
    const pending = store.write([{ key: 'a', record: { v: 1 }, op: 'set' }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fs.existsSync(store.path)).toBe(false);
    fs.unlinkSync(lock);
    await pending;
    expect(await store.get('a')).toStrictEqual({ v: 1 });
  });

  it('treats an unreadable lock as abandoned after staleMs', async () => {
    const store = openFileStore(dataDir, 's', { timeoutMs: 5_000, staleMs: 150 });
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(`${store.path}.lock`, ''); // holder died between open('wx') and writing its pid
    const started = performance.now();
    await store.write([{ key: 'a', record: { v: 1 }, op: 'set' }]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(await store.get('a')).toStrictEqual({ v: 1 });
  });

  it('removes temp files abandoned by dead writers, and keeps those of live ones', async () => {
    const store = openFileStore(dataDir, 's');
    fs.mkdirSync(dataDir, { recursive: true });
    const dead = path.join(dataDir, `.s.json.${deadPid()}.1.tmp`);
    const live = path.join(dataDir, `.s.json.${process.pid}.999.tmp`);
    fs.writeFileSync(dead, '{"torn":');
    fs.writeFileSync(live, '{');
    await store.write([{ key: 'a', record: {}, op: 'set' }]);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
  });

  it('serialises concurrent writers in one process across separate store instances', async () => {
    const writers = Array.from({ length: 4 }, () => openFileStore(dataDir, 'shared'));
    await Promise.all(
      writers.flatMap((store, w) =>
        Array.from({ length: 25 }, (_, i) => store.write([{ key: `w${w}-${String(i).padStart(2, '0')}`, record: { w, i }, op: 'set' }])),
      ),
    );
    const all = await writers[0]!.list();
    expect(all).toHaveLength(100);
    // Each writer's records in the order it wrote them (the writers interleave).
    for (let w = 0; w < 4; w++) {
      const mine = all.filter((entry) => entry.record['w'] === w).map((entry) => entry.key);
      expect(mine).toStrictEqual(Array.from({ length: 25 }, (_, i) => `w${w}-${String(i).padStart(2, '0')}`));
    }
  });
});

describe('file store: delete S[k]', () => {
  it('removes only that member, idempotently, and a key written again goes to the end', async () => {
    const store = openFileStore(dataDir, 'orders');
    await store.write(['a', 'b', 'c'].map((key) => ({ key, record: { id: key }, op: 'set' as const })));
    expect(await store.write([{ key: 'a', record: {}, op: 'delete' }])).toStrictEqual([{ key: 'a', record: null, removed: true }]);
    expect((await store.list()).map((r) => r.key)).toStrictEqual(['b', 'c']);
    const before = fs.statSync(store.path).mtimeMs;
    const text = fs.readFileSync(store.path, 'utf8');
    // Again, and a key never stored: no error, nothing removed, the file left as it was.
    expect(await store.write([{ key: 'a', record: {}, op: 'delete' }, { key: 'zz', record: {}, op: 'delete' }])).toStrictEqual([
      { key: 'a', record: null, removed: false },
      { key: 'zz', record: null, removed: false },
    ]);
    expect(fs.readFileSync(store.path, 'utf8')).toBe(text);
    expect(fs.statSync(store.path).mtimeMs).toBe(before);
    // One batch: delete b, write a back, delete c — in order, as a Map would end.
    expect(
      await store.write([
        { key: 'b', record: {}, op: 'delete' },
        { key: 'a', record: { id: 'a', again: true }, op: 'set' },
        { key: 'c', record: {}, op: 'delete' },
      ]),
    ).toStrictEqual([
      { key: 'b', record: null, removed: true },
      { key: 'a', record: { id: 'a', again: true } },
      { key: 'c', record: null, removed: true },
    ]);
    expect(await store.list()).toStrictEqual([{ key: 'a', record: { id: 'a', again: true } }]);
    expect(await store.get('b')).toBeUndefined();
  });

  it('a delete still refuses an empty key', async () => {
    const store = openFileStore(dataDir, 'orders');
    const error = await storeError(store.write([{ key: '', record: {}, op: 'delete' }]));
    expect(error.message).toMatch(/the key must be a non-empty string/);
  });
});
