/** Shared fixtures for the log tests: runs and events (temp logs: test/support/temp-log.ts). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NewEvent } from '../../engine/log/events.js';
import type { CommitEntry, NewRun, TableStoreWrite } from '../../engine/log/log.js';

export function tempDir(prefix = 'reqon-log-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The one temp-log helper (test/support/temp-log.ts): openTempLog(backend = 'sqlite', opts). */
export { openTempLog, type TempLog } from '../support/temp-log.js';

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
