/**
 * What the durability tests read back from a run's database once no CLI process is using it:
 * its events, its status, and the sql tables its stores wrote — read through the log's own API
 * (engine/log/log.ts), the same reads `reqon events` and `reqon store` make.
 */
import type { StoredEvent } from '../../../engine/log/events.js';
import type { RunRecord } from '../../../engine/log/log.js';
import { openLog } from '../../../engine/log/open-log.js';
// openLog loads the SQLite backend with a dynamic import. Loaded here once, up front: under Vitest,
// concurrent first imports of one module graph (three matrix cases at once) can observe it
// half-initialised ("Cannot access … before initialization").
import '../../../engine/log/sqlite/sqlite-log.js';

export interface RunFacts {
  run: RunRecord;
  events: StoredEvent[];
  tables: Record<string, { key: string; record: Record<string, unknown> }[]>;
}

/** Opens the log at `dbPath`, reads run `runId` and the named sql tables, and closes it again. */
export async function readRunFacts(dbPath: string, runId: string, sqlTables: string[]): Promise<RunFacts> {
  const log = await openLog(dbPath);
  try {
    const run = await log.getRun(runId);
    if (!run) throw new Error(`no run ${runId} in ${dbPath}`);
    const events = await log.read(runId);
    const tables: RunFacts['tables'] = {};
    for (const table of sqlTables) tables[table] = await log.readTable('sql', table);
    return { run, events, tables };
  } finally {
    await log.close();
  }
}

/** The ISO instant of the one `now()` recorded at or under `stepPath` (a loop iteration). */
export function recordedNowUnder(events: StoredEvent[], stepPath: string): string {
  const values = events.filter(
    (e): e is StoredEvent<'value.recorded'> =>
      e.type === 'value.recorded' &&
      (e.stepPath === stepPath || e.stepPath.startsWith(`${stepPath}/`)) &&
      (e.payload as { source: string }).source === 'now',
  );
  if (values.length !== 1) throw new Error(`expected one recorded now() under ${stepPath}, found ${values.length}`);
  return new Date(values[0]!.payload.value as number).toISOString();
}

/** The step path of the loop iteration whose recorded key is `key`. */
export function iterationPathOf(events: StoredEvent[], key: string): string {
  const found = events.filter((e) => e.type === 'loop.iteration' && (e.payload as { key: string }).key === key);
  if (found.length !== 1) throw new Error(`expected one loop iteration with key "${key}", found ${found.length}`);
  return found[0]!.stepPath;
}

/** Seqs 1..n without a gap, as the log guarantees per run. */
export function seqsAreContiguous(events: StoredEvent[]): boolean {
  return events.every((e, i) => e.seq === i + 1);
}

export function withoutAt(records: { key: string; record: Record<string, unknown> }[]): { key: string; record: Record<string, unknown> }[] {
  return records.map(({ key, record }) => {
    const { at: _at, ...rest } = record;
    return { key, record: rest };
  });
}
