/**
 * Replacing a file so that a crash at any instant leaves either the old or the new contents.
 *
 * The new text goes to a temp file in the same folder (rename is atomic only within one file
 * system), is fsync'd (its bytes are on disk before its name is), renamed over the target, and the
 * folder is fsync'd (the rename itself is on disk). Temp files a killed writer left behind are
 * named after its pid, so a later writer can tell they are abandoned and remove them.
 */
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { errorCode } from './file-lock.js';
import { StoreError } from './store-error.js';

let tempCounter = 0;

/** `mode`: the new file's exact permissions (a secrets file keeps its 0600); else 0644 less the umask. */
export async function writeFileAtomic(path: string, text: string, mode?: number): Promise<void> {
  const dir = dirname(path);
  tempCounter += 1;
  const temp = join(dir, `${tempPrefix(path)}${process.pid}.${tempCounter}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode ?? 0o644);
    try {
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new StoreError('store.io', `cannot write ${path}: ${(error as Error).message}`, isTransientIo(error), { cause: error });
  }
  await fsyncDir(dir);
}

/** Makes a folder's entries (a rename, a new file or subfolder) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Windows cannot open or fsync a directory; its rename is durable once it returns.
    if (process.platform === 'win32') return;
    throw new StoreError('store.io', `cannot fsync the folder ${dir}: ${(error as Error).message}`, false, { cause: error });
  } finally {
    await handle?.close();
  }
}

/** Removes temp files of `path` whose writing process no longer exists. */
export async function removeAbandonedTemps(path: string, processExists: (pid: number) => boolean): Promise<void> {
  const prefix = tempPrefix(path);
  const dir = dirname(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid > 0 && !processExists(pid)) await unlink(join(dir, name)).catch(() => undefined);
  }
}

function tempPrefix(path: string): string {
  return `.${basename(path)}.`;
}

function isTransientIo(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'EAGAIN' || code === 'EBUSY' || code === 'EMFILE' || code === 'ENFILE';
}
