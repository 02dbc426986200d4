/**
 * A cross-process lock on one store file: `<file>.lock`, created with `open(path, 'wx')`, which
 * the file system grants to exactly one process.
 *
 * The lock file holds `{pid, host, token}`. Another writer may break it when it is stale: its
 * holder is a process on this host that no longer exists (killed mid-write), or it has shown the
 * same token for longer than `staleMs` (the holder hung, or lives on another host). Breaking goes
 * through a second lock (`<file>.lock.break`) and removes the lock only if it still holds the
 * token judged stale, so two waiters cannot both break it and one cannot remove a fresh lock.
 * Release removes the lock only if it still holds our token.
 *
 * Waiting uses real time on purpose: lock contention is between processes on this machine, not
 * part of a mission's logic, nothing about it is recorded, and a fake clock would stall it. The
 * monotonic `performance.now()` measures waits; the wall clock is never read.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as pause } from 'node:timers/promises';
import { StoreError } from './store-error.js';
import { processAlive } from '../env/process-alive.js';

export interface FileLockOptions {
  /** Give up (retryable error) after waiting this long for a live holder. */
  timeoutMs: number;
  /** A lock showing the same token this long is treated as abandoned. */
  staleMs: number;
}

export const DEFAULT_LOCK_OPTIONS: FileLockOptions = { timeoutMs: 60_000, staleMs: 30_000 };

interface LockHolder {
  pid: number;
  host: string;
  token: string;
}

let tokenCounter = 0;
/**
 * Tokens of the locks this process holds or is taking (from before its lock file can exist): a
 * lock naming this pid with another token is a previous process's — a container restarted, its
 * pids reused — and was waited on for `staleMs` as if it were alive.
 */
const heldHere = new Set<string>();

/** Runs `fn` while holding the lock at `lockPath`. */
export async function withFileLock<T>(lockPath: string, options: FileLockOptions, fn: () => Promise<T>): Promise<T> {
  const token = await acquire(lockPath, options);
  try {
    return await fn();
  } finally {
    await release(lockPath, token).finally(() => heldHere.delete(token));
  }
}

async function acquire(lockPath: string, options: FileLockOptions): Promise<string> {
  tokenCounter += 1;
  const token = `${process.pid}.${tokenCounter}.${process.hrtime.bigint()}`;
  const content = JSON.stringify({ pid: process.pid, host: hostname(), token } satisfies LockHolder);
  heldHere.add(token);
  try {
    return await acquireAs(lockPath, options, token, content);
  } catch (error) {
    heldHere.delete(token);
    throw error;
  }
}

async function acquireAs(lockPath: string, options: FileLockOptions, token: string, content: string): Promise<string> {
  const started = performance.now();
  let observed: { content: string; since: number } | undefined;
  let delayMs = 1;

  for (;;) {
    if (await tryCreate(lockPath, content)) return token;

    const current = await readIfExists(lockPath);
    if (current === undefined) continue; // released between our attempt and the read: try again now
    const now = performance.now();
    if (observed === undefined || observed.content !== current) observed = { content: current, since: now };

    const holder = parseHolder(current);
    const holderDead =
      holder !== undefined && holder.host === hostname() && (holder.pid === process.pid ? !heldHere.has(holder.token) : !processAlive(holder.pid));
    if (holderDead || now - observed.since > options.staleMs) {
      await breakStaleLock(lockPath, current);
      continue;
    }
    if (now - started > options.timeoutMs) {
      throw new StoreError(
        'store.lock-timeout',
        `timed out after ${Math.round(now - started)} ms waiting for the lock ${lockPath} (held by ${holder === undefined ? 'an unknown process' : `pid ${holder.pid} on ${holder.host}`}); retry, or remove the lock file if that process is gone`,
        true,
      );
    }
    await pause(delayMs);
    delayMs = Math.min(delayMs * 2, 50);
  }
}

async function release(lockPath: string, token: string): Promise<void> {
  const current = await readIfExists(lockPath);
  // If our lock was broken as stale and someone else holds it now, it is theirs to remove.
  if (current !== undefined && parseHolder(current)?.token === token) await unlinkIfExists(lockPath);
}

async function breakStaleLock(lockPath: string, staleContent: string): Promise<void> {
  const breakPath = `${lockPath}.break`;
  const breakerContent = JSON.stringify({ pid: process.pid, host: hostname(), token: 'break' } satisfies LockHolder);
  if (!(await tryCreate(breakPath, breakerContent))) {
    // Another waiter is breaking it. If that waiter died doing so, clear its marker and retry later.
    const breaker = parseHolder((await readIfExists(breakPath)) ?? '');
    if (breaker !== undefined && breaker.host === hostname() && !processAlive(breaker.pid)) await unlinkIfExists(breakPath);
    await pause(1);
    return;
  }
  try {
    if ((await readIfExists(lockPath)) === staleContent) await unlinkIfExists(lockPath);
  } finally {
    await unlinkIfExists(breakPath);
  }
}

async function tryCreate(path: string, content: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw new StoreError('store.io', `cannot create the lock file ${path}: ${(error as Error).message}`, false, { cause: error });
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return true;
}

function parseHolder(content: string): LockHolder | undefined {
  try {
    const value = JSON.parse(content) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.host === 'string' && typeof value.token === 'string') {
      return { pid: value.pid, host: value.host, token: value.token };
    }
  } catch {
    // Empty or half-written: the holder is between `open` and `write`, or died there. Only the
    // staleness timer can judge it.
  }
  return undefined;
}



async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new StoreError('store.io', `cannot read the lock file ${path}: ${(error as Error).message}`, false, { cause: error });
  }
}

async function unlinkIfExists(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
