/**
 * Who owns a run: `host:pid:nonce`. A process on this machine that no longer exists owns nothing
 * (its runs are taken over at once); an owner on another host is never presumed dead — its lease
 * must expire.
 */
import { hostname } from 'node:os';
import type { Env } from '../env/env.js';

export function defaultOwner(env: Env): string {
  return `${hostname()}:${process.pid}:${env.random.id('w').slice(-6)}`;
}

/** True when `owner` names a process on this machine that no longer exists. */
export function ownerIsDead(owner: string): boolean {
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
