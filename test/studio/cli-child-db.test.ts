/**
 * The studio's CLI children (run, resume, fork, its worker) get the log by $REQON_DB, never by
 * `--db` on their command line: a command line is readable by every user of the machine (`ps`),
 * and a PostgreSQL URL may hold a password — a user who kept it out of their own command line
 * with `export REQON_DB=…` saw the studio put it on its worker's.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, resumeArgs, runArgs, type CliLauncher } from '../../engine/server/cli-process.js';

const launcher: CliLauncher = { cliPath: '/x/main.js', cwd: '/tmp', dbPath: 'postgres://reqon:s3cret@db.internal:5432/reqon' };

describe('the studio\'s CLI children', () => {
  it('carry the log in their environment, not on their command line', () => {
    for (const args of [runArgs(launcher, { missionPath: '/m.vague', sources: { Api: 'http://127.0.0.1:1' } }), resumeArgs(launcher, 'run_1', { payload: { ok: true } })]) {
      expect(args.join(' ')).not.toContain('s3cret');
      expect(args).not.toContain('--db');
    }
    expect(cliEnv(launcher)['REQON_DB']).toBe(launcher.dbPath);
  });
});
