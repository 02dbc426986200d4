/**
 * Whether a process of this host still runs: what takes a dead owner's run over (executor/owner.ts)
 * and breaks a dead holder's file lock (stores/file-lock.ts). `kill(pid, 0)` alone says yes for a
 * zombie — a process that has exited and that its parent has not reaped yet, which holds nothing
 * and will never renew a lease — so on Linux its state in /proc is read too.
 */
import { readFileSync } from 'node:fs';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !exitedUnreaped(pid);
}

/** Linux: the state letter after the command name in /proc/PID/stat is Z (zombie) or X (dead). */
function exitedUnreaped(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return false; // no /proc (not Linux), or gone since the kill: kill's answer stands
  }
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X';
}
