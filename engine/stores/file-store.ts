/**
 * `file("target")` stores: one JSON object `{key: record}` at `<dataDir>/<target>.json`, its
 * members in insertion order (a rewrite of a key keeps its place), which is the order it is listed in.
 *
 * Every write rewrites the file atomically (atomic-file.ts) under a cross-process lock
 * (file-lock.ts), so: a crash leaves the old or the new file, never a torn one; two processes
 * writing at once lose no record; reads need no lock because they only ever see whole files.
 * Writes are idempotent by key, which is what lets replay re-apply a batch whose `store.write`
 * events did not reach the log. A file that is not a valid store is reported and left untouched.
 * Nothing between the data folder and the store file (folders, the file, its lock) may be a
 * symbolic link: checked before every read and write, so a link planted inside the data folder
 * cannot make a store read or write outside it.
 */
import { lstat, mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fsyncDir, removeAbandonedTemps, writeFileAtomic } from './atomic-file.js';
import { DEFAULT_LOCK_OPTIONS, errorCode, withFileLock, type FileLockOptions } from './file-lock.js';
import { processAlive } from '../env/process-alive.js';
import { assertRecord, describeValue } from './keys.js';
import { resolveStoredRecord } from './merge.js';
import { joinMembers, memberText, topLevelKeys } from './stable-json.js';
import { StoreError } from './store-error.js';
import type { ExternalStore, StoreWrite, StoreWriteResult } from './store-adapter.js';

export interface FileStore extends ExternalStore {
  readonly kind: 'file';
  /** Absolute path of the store's JSON file. */
  readonly path: string;
}

export type FileStoreOptions = Partial<FileLockOptions>;

/** Opens (without touching the disk) the file store for `target` under `dataDir`. */
export function openFileStore(dataDir: string, target: string, options: FileStoreOptions = {}): FileStore {
  const root = resolve(dataDir);
  const path = storeFilePath(root, target);
  const lockOptions: FileLockOptions = { ...DEFAULT_LOCK_OPTIONS, ...options };
  let prepared = false;
  // Writes from this instance queue here instead of polling the lock file against each other.
  let queue: Promise<unknown> = Promise.resolve();
  /**
   * The file as this instance last wrote it, its records and each one's member text, while the
   * file on disk is still that one (the same inode, size and times: every write, ours or another
   * process's, renames a new file in). A loop storing one record per step rewrote the file each
   * time, and read, parsed and serialised every record again: two thirds of its CPU. (An edit in
   * place that keeps the size, within one tick of the file clock after our write, would go unseen:
   * a store file is the engine's, written by rename.)
   */
  let written: { stamp: string; records: Map<string, Record<string, unknown>>; members: Map<string, string> } | undefined;

  async function prepare(): Promise<void> {
    if (prepared) return;
    await ensureFolders(root, dirname(path));
    await removeAbandonedTemps(path, processAlive);
    prepared = true;
  }

  async function writeLocked(writes: StoreWrite[]): Promise<StoreWriteResult[]> {
    // Before creating folders too: mkdir would follow a linked parent out of the data folder.
    await refuseSymlinks(root, path, target);
    await prepare();
    return withFileLock(`${path}.lock`, lockOptions, async () => {
      const known = written;
      written = undefined; // until this write is on disk: a failure leaves the file unknown
      const stamp = await fileStamp(path);
      const current = known !== undefined && stamp === known.stamp ? known : { ...(await readStoreFile(path)), members: new Map<string, string>() };
      const { records, members } = current;
      const results: StoreWriteResult[] = [];
      let changed = false;
      for (const write of writes) {
        const before = records.get(write.key);
        const beforeText = before === undefined ? undefined : (members.get(write.key) ?? memberText(write.key, before));
        members.delete(write.key);
        if (write.op === 'delete') {
          // The member leaves the file; written again later, it goes to the end (a Map's order).
          const removed = records.delete(write.key);
          changed ||= removed;
          results.push({ key: write.key, record: null, removed });
          continue;
        }
        const stored = resolveStoredRecord(write.op, before, write.record);
        records.set(write.key, stored);
        results.push({ key: write.key, record: stored });
        changed ||= beforeText !== memberFor(write.key, stored);
      }
      const next = joinMembers([...records.keys()].map((key) => memberFor(key, records.get(key)!)));
      // A replayed batch that changes nothing costs no disk write.
      const rewrite = changed || stamp === undefined;
      if (rewrite) await writeFileAtomic(path, next);
      written = { stamp: rewrite ? ((await fileStamp(path)) ?? '') : stamp, records, members };
      return results;

      function memberFor(key: string, record: Record<string, unknown>): string {
        let text = members.get(key);
        if (text === undefined) members.set(key, (text = memberText(key, record)));
        return text;
      }
    });
  }

  return {
    kind: 'file',
    path,
    async write(writes) {
      const normalised = writes.map((write, index) => normaliseWrite(write, index, path));
      if (normalised.length === 0) return [];
      const result = queue.then(() => writeLocked(normalised));
      queue = result.catch(() => undefined);
      return result;
    },
    async list() {
      await refuseSymlinks(root, path, target);
      const { records } = await readStoreFile(path);
      return [...records.entries()].map(([key, record]) => ({ key, record }));
    },
    async get(key) {
      await refuseSymlinks(root, path, target);
      return (await readStoreFile(path)).records.get(key);
    },
  };
}

/**
 * `<root>/<target>.json`. `target` is a relative path with `/` between folders; absolute paths,
 * `..`, `.`, empty segments, backslashes and NUL are rejected so a mission cannot write outside
 * its data folder.
 */
export function storeFilePath(root: string, target: string): string {
  const reject = (why: string): never => {
    throw new StoreError('store.bad-target', `file store target ${JSON.stringify(target)} ${why}; use a relative path such as "orders" or "exports/orders"`);
  };
  if (target === '') reject('is empty');
  if (target.includes('\0')) reject('contains a NUL character');
  if (target.includes('\\')) reject('contains a backslash (use "/" between folders)');
  if (isAbsolute(target) || /^[A-Za-z]:/.test(target)) reject('is an absolute path');
  for (const segment of target.split('/')) {
    if (segment === '..') reject('contains ".." (it would leave the data folder)');
    if (segment === '' || segment === '.') reject('contains an empty or "." path segment');
  }
  const path = resolve(root, `${target.split('/').join(sep)}.json`);
  const rel = relative(root, path);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) reject('resolves outside the data folder');
  return path;
}

/** Validates one write and gives its record the exact shape it will have on disk. */
function normaliseWrite(write: StoreWrite, index: number, path: string): StoreWrite {
  const where = `write #${index} to ${path}`;
  if (typeof write.key !== 'string' || write.key === '') {
    throw new StoreError('store.bad-key', `${where}: the key must be a non-empty string but got: ${describeValue(write.key)}`);
  }
  if (write.op === 'delete') return { key: write.key, op: 'delete', record: {} };
  if (write.op !== 'set' && write.op !== 'upsert') {
    throw new StoreError('store.bad-record', `${where}: unknown op ${JSON.stringify(write.op)} (expected "set", "upsert" or "delete")`);
  }
  assertRecord(write.record, where);
  let record: unknown;
  try {
    // What a later read returns: Dates become strings, undefined fields disappear.
    record = JSON.parse(JSON.stringify(write.record));
  } catch (error) {
    throw new StoreError('store.bad-record', `${where} (key "${write.key}"): the record cannot be stored as JSON: ${(error as Error).message}`);
  }
  assertRecord(record, where);
  return { key: write.key, op: write.op, record };
}

async function readStoreFile(path: string): Promise<{ text: string | undefined; records: Map<string, Record<string, unknown>> }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { text: undefined, records: new Map() };
    throw new StoreError('store.io', `cannot read the store file ${path}: ${(error as Error).message}`, false, { cause: error });
  }
  const corrupt = (why: string): never => {
    throw new StoreError('store.corrupt', `store file ${path} ${why}; it was left untouched — fix it or move it away, then retry`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    corrupt(`is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    corrupt(`must hold a JSON object {key: record} but holds ${describeValue(parsed)}`);
  }
  // The file lists its records in insertion order; the parsed object would put "2" before "10".
  const records = new Map<string, Record<string, unknown>>();
  for (const key of topLevelKeys(text)) {
    const record = (parsed as Record<string, unknown>)[key];
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      corrupt(`holds ${describeValue(record)} under key ${JSON.stringify(key)} where a record object belongs`);
    }
    records.set(key, record as Record<string, unknown>);
  }
  return { text, records };
}

/** The file's identity and version (inode, size, times to the nanosecond), or undefined when there is none. */
async function fileStamp(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new StoreError('store.io', `cannot read the store file ${path}: ${(error as Error).message}`, false, { cause: error });
  }
}

/** Creates the data folder (with its `.gitignore`) and the store's folder, durably. */
/** Refuses a store whose folders, file or lock below `root` include a symbolic link. */
async function refuseSymlinks(root: string, path: string, target: string): Promise<void> {
  let at = root;
  const checked: string[] = [];
  for (const segment of relative(root, path).split(sep)) {
    at = join(at, segment);
    checked.push(at);
  }
  checked.push(`${path}.lock`);
  for (const entry of checked) {
    let isLink = false;
    try {
      isLink = (await lstat(entry)).isSymbolicLink();
    } catch (error) {
      if (errorCode(error) === 'ENOENT') continue; // not there (yet): nothing to follow
      throw new StoreError('store.io', `cannot inspect ${entry}: ${(error as Error).message}`, false, { cause: error });
    }
    if (isLink) {
      throw new StoreError(
        'store.bad-target',
        `file store target ${JSON.stringify(target)} goes through the symbolic link ${entry}, which could lead outside the data folder; replace the link with a real folder or file`,
      );
    }
  }
}

async function ensureFolders(root: string, folder: string): Promise<void> {
  let created: string | undefined;
  try {
    created = await mkdir(folder, { recursive: true });
  } catch (error) {
    throw new StoreError('store.io', `cannot create the store folder ${folder}: ${(error as Error).message}`, false, { cause: error });
  }
  if (created !== undefined) {
    // New folder entries are durable only once their parents are fsync'd.
    for (let dir = folder; ; dir = dirname(dir)) {
      await fsyncDir(dirname(dir));
      if (dir === created || dirname(dir) === dir) break;
    }
  }
  try {
    const handle = await open(join(root, '.gitignore'), 'wx');
    try {
      await handle.writeFile('*\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsyncDir(root);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') {
      throw new StoreError('store.io', `cannot write ${join(root, '.gitignore')}: ${(error as Error).message}`, false, { cause: error });
    }
  }
}
