/**
 * A symbolic link inside the data folder cannot lead a `file(...)` store outside it: a linked
 * folder on the way, a linked store file or a linked lock file is refused before anything is
 * created, read or written — and the place the link points at is left as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openFileStore } from '../../engine/stores/file-store.js';
import { StoreError } from '../../engine/stores/store-error.js';

let base: string;
let dataDir: string;
let outside: string;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-file-symlink-'));
  dataDir = path.join(base, 'data');
  outside = path.join(base, 'outside');
  fs.mkdirSync(dataDir);
  fs.mkdirSync(outside);
});
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

const write = (target: string) => openFileStore(dataDir, target).write([{ key: 'k', record: { v: 1 }, op: 'set' }]);

describe('file store and symbolic links', () => {
  it('refuses a folder on the way that is a link, creating nothing outside', async () => {
    fs.symlinkSync(outside, path.join(dataDir, 'exports'));
    const error = await write('exports/orders').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(/symbolic link .*exports/);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('refuses a link deeper down the way too (mkdir would follow it)', async () => {
    fs.mkdirSync(path.join(dataDir, 'a'));
    fs.symlinkSync(outside, path.join(dataDir, 'a', 'b'));
    await expect(write('a/b/c/orders')).rejects.toBeInstanceOf(StoreError);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('refuses a store file that is a link, and neither reads nor replaces what it points at', async () => {
    const victim = path.join(outside, 'victim.json');
    fs.writeFileSync(victim, '{"secret":{"v":"outside"}}');
    fs.symlinkSync(victim, path.join(dataDir, 'orders.json'));
    const store = openFileStore(dataDir, 'orders');
    await expect(store.list()).rejects.toBeInstanceOf(StoreError);
    await expect(store.get('secret')).rejects.toBeInstanceOf(StoreError);
    await expect(write('orders')).rejects.toBeInstanceOf(StoreError);
    expect(fs.readFileSync(victim, 'utf8')).toBe('{"secret":{"v":"outside"}}');
    expect(fs.lstatSync(path.join(dataDir, 'orders.json')).isSymbolicLink()).toBe(true);
  });

  it('refuses a lock file that is a link', async () => {
    fs.symlinkSync(path.join(outside, 'planted.lock'), path.join(dataDir, 'orders.json.lock'));
    await expect(write('orders')).rejects.toBeInstanceOf(StoreError);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('writes normally when the data folder itself is reached through a link', async () => {
    const linkedData = path.join(base, 'linked-data');
    fs.symlinkSync(dataDir, linkedData);
    await openFileStore(linkedData, 'orders').write([{ key: 'k', record: { v: 1 }, op: 'set' }]);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'orders.json'), 'utf8'))).toEqual({ k: { v: 1 } });
  });
});
