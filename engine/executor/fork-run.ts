/**
 * Forking a run (Temporal's reset): a new run whose log begins as a copy of another run's events
 * up to a seq, which then replays that prefix and carries on live — with the same mission or an
 * edited one. The parent is only read, never written.
 *
 * The fork has its own id, so what it does after the fork point is its own: effect ids, and with
 * them Idempotency-Keys and derived keys, hash the fork's id, while the copied prefix keeps the
 * ids its recorder gave (journal/fork-identity.ts; `run.started.forkedFrom` says where it came from
 * and which stretches other runs named). A prefix is copied as recorded — responses, values, store
 * writes — so replaying it sends nothing.
 *
 * Where the copy ends: at the seq asked for, except that it never ends inside a store batch (one
 * transaction in the parent, so a prefix holding half of one would be a log no run could have
 * written: it ends before that batch instead), and never on the parent's own end (`run.completed`,
 * `run.failed`, `run.suspended` at the tail are left out, so the fork goes on from there). A cut
 * between an effect's intent and its outcome is the same as a crash there: the fork sends that
 * request again, under the key it was recorded with. Nor does it end inside a wait still open
 * there whose path was generated (the parent's URL): it ends before that wait's step.
 */
import { realpathSync } from 'node:fs';
import { isImported } from './run-bundle.js';
import { assertRememberedMission } from './remembered-mission.js';
import { LOG_FORMAT, logFormatOf, type CredentialDigests, type NewEvent, type StoredEvent } from '../log/events.js';
import type { MissionFiles } from '../log/log.js';
import { forkIdentities } from '../journal/fork-identity.js';
import { DEFAULT_LEASE_TTL_MS, execute, RunUnavailableError, type EngineDeps, type RunResult } from './execute.js';
import { missionHash, modelFor, recordedModelOf, withRememberedSpecs } from './mission-cache.js';
import { defaultOwner } from './owner.js';
import { createRunResolved, prepareNewRun } from './run-start.js';
import { assertReplays } from './verify.js';
import { generatedWaitRunId } from '../steps/wait-step.js';
import { openFileStore } from '../stores/file-store.js';
import type { StoreWrite } from '../stores/store-adapter.js';
import type { RunRecord } from '../log/log.js';

/** The fork point is not a seq of the parent's log. */
export class ForkPointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForkPointError';
  }
}

export interface ForkOptions {
  /** Copy the parent's events up to this seq (see the header for where the copy really ends). */
  atSeq: number;
  /** An edited mission to carry on with; the parent's by default. */
  missionFiles?: MissionFiles;
}

/** The parent's events that a fork at `atSeq` copies (`events` holds the parent's log up to at least atSeq + 1). */
export function forkPrefix(events: readonly StoredEvent[], atSeq: number): StoredEvent[] {
  let cut = events.findIndex((e) => e.seq > atSeq);
  if (cut === -1) cut = events.length;
  // Inside a store batch (the next event continues it): end before the batch began.
  const continuesBatch = (i: number) => {
    const e = events[i];
    return e !== undefined && e.type === 'store.write' && e.payload.batch === undefined && events[i - 1]?.type === 'store.write' && events[i - 1]!.stepPath === e.stepPath;
  };
  while (cut > 0 && continuesBatch(cut)) cut--;
  // Each move back may reopen a wait whose completion it left out (a concurrent loop's): again until none.
  for (let moved = beforeOpenGeneratedWait(events, cut); moved !== cut; moved = beforeOpenGeneratedWait(events, cut)) cut = moved;
  while (cut > 1 && (['run.completed', 'run.failed', 'run.suspended'] as string[]).includes(events[cut - 1]!.type)) cut--;
  return events.slice(0, cut);
}

/**
 * A wait with a generated path registered in the copied stretch and still open there listens at
 * the parent's URL: the fork took deliveries sent to its parent, which waited on (helper 96). The
 * copy ends before such a wait's step, so the fork registers one of its own, at its own URL. (A
 * wait on a path the mission names is every run's of the mission, a parent's and a fork's alike.)
 */
function beforeOpenGeneratedWait(events: readonly StoredEvent[], cut: number): number {
  // Cut between a wait's first events (its registration time) and its registration: the copy
  // would replay its clock and name its URL by the parent's stretch (helper 97). Before the step.
  const next = events[cut];
  if (next?.type === 'wait.registered' && generatedWaitRunId(next.payload.path) !== undefined) {
    const start = waitStepStart(events, cut, next.stepPath);
    if (start < cut) return start;
  }
  const completed = new Set<string>();
  for (let i = 0; i < cut; i++) {
    const e = events[i]!;
    if (e.type === 'wait.completed') completed.add(e.payload.waitId);
  }
  for (let i = 0; i < cut; i++) {
    const e = events[i]!;
    if (e.type !== 'wait.registered' || completed.has(e.payload.waitId) || generatedWaitRunId(e.payload.path) === undefined) continue;
    return waitStepStart(events, i, e.stepPath);
  }
  return cut;
}

/**
 * Where the wait step at `path` whose registration is (or would be) at index `at` began: its
 * `step.started` and its registration time before it, found among the events of other branches
 * that a concurrent loop interleaves with them (helper 99).
 */
function waitStepStart(events: readonly StoredEvent[], at: number, path: string): number {
  let start = at;
  for (let j = at - 1; j >= 0; j--) {
    const e = events[j]!;
    if (e.stepPath !== path) continue;
    if (e.type !== 'value.recorded' && e.type !== 'step.started') break;
    start = j;
    if (e.type === 'step.started') break;
  }
  return start;
}

/**
 * What to do when an edit parts from the prefix a fork would copy: not "resume with the original
 * mission" (a fork resumes nothing), but fork without the edit, or fork before where they part so
 * the edit takes over from there.
 */
function forkAdvice(parentRunId: string, atSeq: number, divergedAt: number | null): string {
  const earlier =
    divergedAt !== null && divergedAt > 1
      ? `or fork at an earlier seq, before seq ${divergedAt} where they part (\`reqon fork ${parentRunId} --at ${divergedAt - 1} --mission FILE\`), so the edit carries on from there`
      : 'or fork at an earlier seq, before the step where they part, so the edit carries on from there';
  return (
    `The edited mission does not replay what run ${parentRunId} did up to the fork point (seq ${atSeq}), so no fork was made. ` +
    `Fork without --mission to carry on with the run's own mission, ${earlier}; ` +
    `\`reqon verify ${parentRunId} --mission FILE\` shows where they part.`
  );
}

/** The parent is itself a fork of an imported run: what it copied of that run, this fork copies on. */
function parentCopiedImport(first: StoredEvent | undefined): boolean {
  const origin = first?.type === 'run.started' ? (first as StoredEvent<'run.started'>).payload.forkedFrom : undefined;
  return origin?.imported === true;
}

export async function forkRun(parentRunId: string, opts: ForkOptions, deps: EngineDeps): Promise<RunResult & { parentRunId: string; forkedAtSeq: number }> {
  const parent = await deps.log.getRun(parentRunId);
  if (!parent) throw new RunUnavailableError(`no run ${parentRunId} in this log`, 'not-found');
  await assertRememberedMission(deps.log, parent);
  if (!Number.isSafeInteger(opts.atSeq) || opts.atSeq < 1 || opts.atSeq > parent.lastSeq) {
    throw new ForkPointError(`run ${parentRunId} has events 1–${parent.lastSeq}; the fork point must be one of them, got ${opts.atSeq}`);
  }
  const events = await deps.log.read(parentRunId, { toSeq: opts.atSeq + 1 });
  const format = logFormatOf(events);
  if (format > LOG_FORMAT) {
    throw new RunUnavailableError(
      `run ${parentRunId} was recorded in log format ${format} by a newer engine; this one reads formats 1–${LOG_FORMAT}. Fork it with the newer engine`,
      'unreadable',
    );
  }
  const prefix = forkPrefix(events, opts.atSeq);
  const atSeq = prefix[prefix.length - 1]?.seq ?? 1;
  const files = opts.missionFiles ? withRememberedSpecs(opts.missionFiles, parent.missionFiles) : parent.missionFiles;
  const edited = missionHash(files) !== parent.missionHash;
  // An edit must replay the whole prefix before the fork exists: its walk would otherwise go live
  // in one branch of a concurrent loop (re-sending a request the prefix left in flight, under the
  // parent's key) while a later recorded iteration is still to be compared, and diverge after.
  if (edited) await assertReplays(deps.log, parentRunId, { missionFiles: files, env: deps.env, events: prefix, advise: (divergedAt) => forkAdvice(parentRunId, atSeq, divergedAt) });
  const prepared = prepareNewRun(files, parent.options, deps);
  await seedFileStores(prefix, parent, prepared.run.options.dataDir);
  const forkedFrom = { runId: parentRunId, atSeq, identities: forkIdentities(parentRunId, events[0], atSeq), ...(isImported(parent) || parentCopiedImport(events[0]) ? { imported: true as const } : {}) };
  const started = prepared.first[0] as NewEvent<'run.started'>;
  const first: NewEvent[] = [
    // The copied events were recorded in the parent's format; the fork's first event says so.
    // The parent's credentials stay known as such in the fork's copied events (given-credentials.ts).
    { ...started, payload: { ...started.payload, format, forkedFrom, ...forkCredentials(events[0], started) } },
    ...prefix.filter((e) => e.type !== 'run.started').map((e) => ({ type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt }) as NewEvent),
  ];
  const owner = deps.owner ?? defaultOwner(deps.env);
  const { lease, events: recorded } = await createRunResolved(deps, prepared.run, owner, deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, first);
  deps.onRunId?.(prepared.run.runId);
  const result = await execute(
    {
      runId: prepared.run.runId,
      model: modelFor(files, prepared.run.missionHash),
      // The fork's own: its sources and settings are its parent's, its data folder the forker's.
      options: prepared.run.options,
      lease,
      recorded,
      // Marks where live execution begins, as after any replay.
      resumed: { reason: 'manual', owner },
      ...(edited ? { recordedModel: recordedModelOf(parent.missionFiles) } : {}),
      // The fork's mission is its own: a divergence from the copied prefix is deterministic, so it
      // fails the fork once rather than leaving it to be retried.
      ownMission: true,
      journal: { skipFinished: !edited && !deps.crash, identities: forkedFrom.identities },
    },
    deps,
  );
  return { ...result, parentRunId, forkedAtSeq: atSeq };
}

function forkCredentials(parentFirst: StoredEvent | undefined, started: NewEvent<'run.started'>): { credentials?: CredentialDigests[] } {
  const inherited = parentFirst?.type === 'run.started' ? ((parentFirst as StoredEvent<'run.started'>).payload.credentials ?? []) : [];
  const all = [...inherited, ...(started.payload.credentials ?? [])];
  return all.length === 0 ? {} : { credentials: all };
}

/**
 * Whether two folders are one, however spelt (a symbolic link, macOS's /tmp and /private/tmp):
 * seeding the parent's own folder would put back records the parent changed after the fork point.
 */
function sameFolder(a: string, b: string): boolean {
  if (a === b) return true;
  const real = (p: string): string => {
    try {
      return realpathSync.native(p);
    } catch {
      return p; // not there (yet): only its spelling can be compared
    }
  };
  return real(a) === real(b);
}

/**
 * A fork made in another data folder than its parent's (another working directory, another
 * machine's import): the file stores its copied prefix wrote to get those writes there — each
 * record as the parent stored it, or its removal — since a replayed prefix applies nothing, and
 * the fork's files would otherwise lack what its log says they hold (helper 94: a fork from
 * another folder held only its own live writes, while `reqon store` and verify showed all).
 * In the parent's own folder they are there already; a parent that recorded no folder (before
 * runs remembered theirs) resumed in its resumer's, so nothing is known to be missing. An
 * imported parent's are on the machine it was exported from: seeded always (helper 95).
 */
async function seedFileStores(prefix: readonly StoredEvent[], parent: RunRecord, forkDataDir: string | undefined): Promise<void> {
  if (forkDataDir === undefined) return;
  // An imported parent's folder is another machine's (a bundle does not carry it): never here.
  if (!isImported(parent)) {
    const parentDataDir = parent.options.dataDir;
    if (parentDataDir === undefined || sameFolder(parentDataDir, forkDataDir)) return;
  }
  const model = recordedModelOf(parent.missionFiles);
  if (!model) return;
  const writes = new Map<string, StoreWrite[]>();
  for (const event of prefix) {
    if (event.type !== 'store.write') continue;
    const { store, key, record, op } = (event as StoredEvent<'store.write'>).payload;
    const decl = model.stores.get(store);
    if (decl?.type.kind !== 'file') continue;
    const target = decl.target.value;
    let list = writes.get(target);
    if (!list) writes.set(target, (list = []));
    list.push(op === 'delete' ? { key, record: {}, op: 'delete' } : { key, record: record as Record<string, unknown>, op: 'set' });
  }
  for (const [target, list] of writes) await openFileStore(forkDataDir, target).write(list);
}
