/** WalSync (engine/log/sqlite/wal-sync.ts): syncs the file the path names now, one sync at a time. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WalSync } from '../../engine/log/sqlite/wal-sync.js';
import { tempDir } from './helpers.js';

let dir: string;
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A WalSync over a new file `x.db-wal` in a temp folder. */
function walSync(): { file: string; sync: WalSync } {
  dir = tempDir('reqon-walsync-');
  const file = path.join(dir, 'x.db-wal');
  fs.writeFileSync(file, 'frames');
  return { file, sync: new WalSync(file) };
}

describe('WalSync', () => {
  it('reopens the file when the path names another one, and says which file it could not sync', async () => {
    const { file, sync } = walSync();
    const opens = vi.spyOn(fs, 'openSync');
    const syncs = vi.spyOn(fs, 'fdatasync');
    await sync.sync();
    await sync.sync();
    expect(opens).toHaveBeenCalledTimes(1);
    // Replaced: a new file (inode) at the path.
    fs.rmSync(file);
    fs.writeFileSync(file, 'new frames');
    await sync.sync();
    expect(opens).toHaveBeenCalledTimes(2);
    expect(syncs).toHaveBeenCalledTimes(3);
    expect(sync.syncs).toBe(3);
    fs.rmSync(file);
    await expect(sync.sync()).rejects.toThrow(/could not sync the log's WAL \(.*x\.db-wal\) to disk: ENOENT/);
    await sync.idle();
    sync.close();
  });

  it('runs one sync at a time; callers during a sync share the next one', async () => {
    const { sync } = walSync();
    const syncs = vi.spyOn(fs, 'fdatasync');
    const all = [sync.sync(), sync.sync(), sync.sync(), sync.sync()];
    expect(syncs).toHaveBeenCalledTimes(1); // the first started; the other three wait for the next
    await Promise.all(all);
    expect(syncs).toHaveBeenCalledTimes(2);
    await sync.idle();
    sync.close();
  });
});
