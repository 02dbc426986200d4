/**
 * A stored run log (a fixture, a corpus recording) put back into a real log (a temp log,
 * test/support/temp-log.ts), the run created through the log API with the recorded `run.started`, then every
 * other recorded event appended under its lease in one commit — the same seqs, types, paths,
 * payloads and recordedAt, so verify, resume and the folds read it as the run that wrote it.
 *
 * Store writes come back as `store.write` events only (their tables stay empty): what a replay
 * reads. The run's status is set as asked, its lease released (or held by a dead process, as a
 * crash leaves it), so a resume may take it at once.
 */
import { hostname } from 'node:os';
import type { NewEvent, StoredEvent } from '../../../engine/log/events.js';
import type { EventLog, MissionFiles, RunOptions, StatusChange } from '../../../engine/log/log.js';
import { deadPid } from '../../support/dead-pid.js';

export interface StoredRun {
  events: readonly StoredEvent[];
  missionFiles: MissionFiles;
  /** The run row's hash (default: the recorded run.started's). */
  missionHash?: string;
  options: RunOptions;
  /** Default: completed/failed by its last event, else running (a crashed run). */
  status?: StatusChange;
  /**
   * Left as a crash leaves it: owned, under a live lease, by a process of this host that no longer
   * exists (a resume takes it over at once, as from a killed CLI). Otherwise the lease is released.
   */
  crashed?: boolean;
}


/** The one temp-log helper (test/support/temp-log.ts). */
export { openTempLog, type TempLog } from '../../support/temp-log.js';

/** Inserts `run` into `log`; returns its run id. Throws if the log would not number it as recorded. */
export async function insertStoredRun(log: EventLog, run: StoredRun): Promise<string> {
  const [first, ...rest] = run.events;
  if (!first || first.type !== 'run.started') throw new Error('a stored run log starts with its run.started');
  const started = first.payload as { mission: string; missionHash: string };
  const last = run.events[run.events.length - 1]!;
  const { lease } = await log.createRun(
    {
      runId: first.runId,
      mission: started.mission,
      missionHash: run.missionHash ?? started.missionHash,
      missionFiles: run.missionFiles,
      options: run.options,
      createdAt: first.recordedAt,
    },
    run.crashed ? `${hostname()}:${deadPid()}:stored-log` : 'stored-log:0:loader',
    60_000,
    [asNew(first)],
  );
  const status: StatusChange = run.status ?? {
    status: last.type === 'run.completed' ? 'completed' : last.type === 'run.failed' ? 'failed' : 'running',
  };
  await log.commit(
    lease,
    rest.map((event) => ({ kind: 'event', event: asNew(event) })),
    { durable: false, status: run.crashed ? status : { ...status, releaseLease: true } },
  );
  const stored = await log.read(first.runId);
  const moved = stored.find((e, i) => e.seq !== run.events[i]!.seq || e.type !== run.events[i]!.type);
  if (stored.length !== run.events.length || moved) {
    throw new Error(`the stored run ${first.runId} did not load as recorded (seq ${moved?.seq ?? stored.length})`);
  }
  return first.runId;
}

function asNew(event: StoredEvent): NewEvent {
  return { type: event.type, stepPath: event.stepPath, payload: structuredClone(event.payload), recordedAt: event.recordedAt } as NewEvent;
}
