/**
 * Who owns a run: `host:pid:nonce`, where `host` is this machine's identity (`$REQON_HOST_ID`,
 * else its hostname — read here and nowhere else).
 *
 * Takeover never depends on seeing the owner's process: every lease expires by the log's clock
 * (on PostgreSQL, the database's), and an expired lease is taken over by whichever worker asks
 * first. Seeing the PID is only a shortcut, on the owner's own host: a process there that no
 * longer exists owns nothing, and its runs are taken over at once instead of when the lease
 * runs out. An owner on another host is never presumed dead — another machine cannot see its
 * processes, so it waits for the lease.
 */
import { hostname } from 'node:os';
import type { Env } from '../env/env.js';
import { processAlive } from '../env/process-alive.js';

/** The hostname, read once: a system call per run started was 2 % of the concurrent store steps' CPU. */
let machineName: string | undefined;

/** This machine's identity in owner strings: `$REQON_HOST_ID` (tests simulate other machines with it), else the hostname. */
export function hostId(): string {
  const configured = process.env.REQON_HOST_ID;
  if (configured === undefined || configured === '') return (machineName ??= hostname());
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(configured)) {
    throw new Error(`REQON_HOST_ID must be 1–64 letters, digits, '.', '_' or '-' (it names this machine in run owners), got ${JSON.stringify(configured.slice(0, 80))}`);
  }
  return configured;
}

export function defaultOwner(env: Env): string {
  return `${hostId()}:${process.pid}:${env.random.id('w').slice(-6)}`;
}

/** The host and process an owner string names (null when it is not of the `host:pid:nonce` form). */
export function parseOwner(owner: string): { host: string; pid: number } | null {
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (!host || !Number.isInteger(pid) || pid <= 0) return null;
  return { host, pid };
}

/** True when `owner` names a process on this host that no longer exists. */
export function ownerIsDead(owner: string): boolean {
  return ownerGoneUnder(owner, hostId());
}

/**
 * True when `owner` names a process under host id `host` — one this machine's processes run
 * under (its own, or one it gave its children, as the crash lab does) — that no longer exists.
 */
export function ownerGoneUnder(owner: string, host: string): boolean {
  const parsed = parseOwner(owner);
  if (parsed === null || parsed.host !== host || parsed.pid === process.pid) return false;
  return !processAlive(parsed.pid);
}

/**
 * Who carries a `running` run on: its live owner ('live'), or nobody — no owner ('none'), an owner
 * process on this host that is gone ('gone'), or a lease nobody renewed ('lapsed': an owner,
 * perhaps elsewhere, that stopped; a worker takes it over). A run in any other status is 'live':
 * nothing has to carry it on. 'none' and 'gone' are what the studio and `show` call orphaned.
 */
export function runCarrier(status: string, owner: string | null, leaseExpiresAt: number | null, now: number): 'live' | 'none' | 'gone' | 'lapsed' {
  if (status !== 'running') return 'live';
  if (owner === null) return 'none';
  if (ownerIsDead(owner)) return 'gone';
  if (leaseExpiresAt !== null && leaseExpiresAt < now) return 'lapsed';
  return 'live';
}

/** A `running` run no process carries on: no owner, or an owner process on this host that is gone. */
export function isOrphaned(status: string, owner: string | null): boolean {
  return status === 'running' && (owner === null || ownerIsDead(owner));
}
