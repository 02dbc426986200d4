/**
 * One mission run by the built CLI in a folder and a fresh log of its own: armed with `crashAt`
 * (it must die of SIGKILL there; `atKill` sees the log as the kill left it), resumed until it
 * completes, then verified whole — the skeleton of the crash-then-resume durability tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { StoredEvent } from '../../../engine/log/events.js';
import { tempLogTarget, type Backend } from '../../support/temp-log.js';
import { describeResult, runCli, runIdOf } from './cli-build.js';
import { readRunFacts, type RunFacts } from './run-facts.js';

export interface ArmedRun {
  cli: string;
  backend: Backend;
  /** A folder of its own (created here). */
  dir: string;
  missionText: string;
  apiUrl: string;
  crashAt?: string;
  /** sql tables to read at the end. */
  tables: string[];
  atKill?: (events: StoredEvent[]) => void;
}

export async function runArmedToEnd(o: ArmedRun): Promise<RunFacts & { runId: string }> {
  fs.mkdirSync(o.dir);
  const mission = path.join(o.dir, 'mission.vague');
  fs.writeFileSync(mission, o.missionText);
  const target = await tempLogTarget(o.backend, 'reqon-armed-run-log-');
  try {
    const db = target.target;
    const env = { REQON_DATA_DIR: path.join(o.dir, 'data') };
    let result = await runCli(o.cli, ['run', mission, '--source', `Api=${o.apiUrl}`, '--db', db, '--quiet', ...(o.crashAt ? ['--crash-at', o.crashAt] : [])], { cwd: o.dir, env });
    const runId = runIdOf(result);
    if (o.crashAt) {
      expect(result.signal, describeResult(result)).toBe('SIGKILL');
      o.atKill?.((await readRunFacts(db, runId, [])).events);
      result = await runCli(o.cli, ['resume', runId, '--db', db, '--quiet'], { cwd: o.dir, env });
    }
    expect(result.code, describeResult(result)).toBe(0);
    const verified = await runCli(o.cli, ['verify', runId, '--db', db], { cwd: o.dir, env });
    expect(verified.code, describeResult(verified)).toBe(0);
    expect(verified.stdout).toMatch(/^verified:/);
    return { runId, ...(await readRunFacts(db, runId, o.tables)) };
  } finally {
    await target.drop();
  }
}
