/**
 * `reqon schedules [--json]` — the schedules workers registered on this log (each fired by every
 * worker on it); `reqon schedules remove MISSION` — stops one: no worker fires it again until a
 * worker given the mission registers it again. Without it, a schedule once registered fired for
 * ever, even from a worker started with no mission at all.
 */
import type { Command } from 'commander';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliLogExists, dbPath, openCliLog } from '../engine-context.js';
import { EXIT_FAILED, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { instantText } from '../../env/instant-text.js';
import { describeSchedule } from '../../worker/schedules.js';
import { CliError } from '../cli-error.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('[action]', 'list (the default), or remove')
      .argument('[mission]', 'with remove: the mission whose schedule to remove')
      .option('--json', 'print JSON');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const action = (args[0] as string | undefined) ?? 'list';
    const mission = args[1] as string | undefined;
    if (action !== 'list' && action !== 'remove') throw new CliError(`reqon schedules: unknown action "${action}"; expected list or remove`);
    if (action === 'remove' && (mission === undefined || mission === '')) throw new CliError('reqon schedules remove needs the mission whose schedule to remove (see `reqon schedules`)');
    if (action === 'list' && mission !== undefined) throw new CliError(`reqon schedules list takes no mission (got "${mission}")`);
    // No log there yet: said, and none made.
    const where = dbPath(options.db);
    if (!cliLogExists(where)) {
      if (action === 'remove') {
        io.stderr(`reqon: no log at ${where}, so no schedule of ${mission} to remove\n`);
        return EXIT_FAILED;
      }
      io.stdout(options.json === true ? '[]\n' : `no log at ${where} yet\n`);
      return EXIT_OK;
    }
    const log = await openCliLog(options.db);
    try {
      if (action === 'remove') {
        const before = await log.getSchedule(mission!);
        if (!(await log.removeSchedule(mission!))) {
          io.stderr(`reqon: no schedule of mission "${mission}" on this log (see \`reqon schedules\`)\n`);
          return EXIT_FAILED;
        }
        io.stdout(
          `removed the schedule of ${mission} (${describeSchedule(before!.spec)}, registered from ${before!.missionFiles.entry}): no worker fires it again; ` +
            `a worker started with that mission registers it again\n`,
        );
        return EXIT_OK;
      }
      const schedules = await log.listSchedules();
      // A failed run's retry still to fire is part of what a schedule has left (helper 91: a
      // one-shot whose run failed said "nothing left to fire", and the next pass retried it).
      const retries = new Map<string, { runId: string; dueAt: number; attempt: number }[]>();
      for (const s of schedules) {
        if (!s.spec.retry) continue;
        const delay = s.spec.retry.delaySeconds * 1000;
        retries.set(s.mission, (await log.retryCandidates(s.mission, s.spec.retry.maxRetries)).map((c) => ({ runId: c.runId, dueAt: c.failedAt + delay, attempt: c.attempt + 1 })));
      }
      if (options.json === true) {
        io.stdout(`${JSON.stringify(schedules.map(({ missionFiles, options: _options, ...rest }) => ({ ...rest, entry: missionFiles.entry, retries: retries.get(rest.mission) ?? [] })))}\n`);
        return EXIT_OK;
      }
      if (schedules.length === 0) io.stdout('no schedules: a worker registers the schedule of each mission it is given (`reqon worker missions/`)\n');
      for (const s of schedules) {
        const pending = retries.get(s.mission) ?? [];
        const retry = pending.map((r) => `retry ${r.attempt} of ${s.spec.retry!.maxRetries} of failed run ${r.runId} at ${instantText(r.dueAt)}`).join('; ');
        const next = s.nextFireAt === null ? (pending.length > 0 ? 'no firing left' : 'nothing left to fire') : `next ${instantText(s.nextFireAt)}`;
        io.stdout(`${s.mission}  ${describeSchedule(s.spec)}  ${next}${retry ? `; ${retry}` : ''}  ${s.missionFiles.entry}\n`);
      }
      return EXIT_OK;
    } finally {
      await log.close();
    }
  },
};
