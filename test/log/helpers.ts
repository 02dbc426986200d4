/** Shared fixtures for the log tests: temp databases, runs and events. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NewEvent } from '../../engine/log/events.js';
import type { CommitEntry, EventLog, NewRun, OpenLogOptions, TableStoreWrite } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';

export interface TempLog {
  dir: string;
  dbPath: string;
  log: EventLog;
  cleanup(): Promise<void>;
}

export function tempDir(prefix = 'reqon-log-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function openTempLog(opts: OpenLogOptions = {}): Promise<TempLog> {
  const dir = tempDir();
  const dbPath = path.join(dir, 'reqon.db');
  const log = await openLog(dbPath, opts);
  return {
    dir,
    dbPath,
    log,
    cleanup: async () => {
      await log.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function newRun(runId: string, createdAt = 1_000): NewRun {
  return {
    runId,
    mission: 'demo.vague',
    missionHash: 'sha256:abc',
    missionFiles: { entry: 'demo.vague', files: [{ path: 'demo.vague', text: 'mission demo {}' }] },
    options: { sources: { api: 'http://127.0.0.1:1' }, env: { K: 'V' } },
    createdAt,
  };
}

export function started(recordedAt = 1_000): NewEvent<'run.started'> {
  return { type: 'run.started', stepPath: '', payload: { mission: 'demo.vague', missionHash: 'sha256:abc' }, recordedAt };
}

export function value(v: unknown, recordedAt = 2_000, stepPath = 'main/0'): CommitEntry {
  return { kind: 'event', event: { type: 'value.recorded', stepPath, payload: { source: 'random', value: v }, recordedAt } };
}

export function storeWrite(partial: Partial<TableStoreWrite> & Pick<TableStoreWrite, 'key' | 'record'>): CommitEntry {
  return {
    kind: 'store',
    write: {
      storeKind: 'sql',
      table: 'orders',
      store: 'orders',
      op: 'set',
      stepPath: 'main/1',
      effectId: `eff-${partial.key}`,
      recordedAt: 3_000,
      ...partial,
    },
  };
}
