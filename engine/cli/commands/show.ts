/** `reqon show RUN_ID [--json]` — one run's status and position (its summary, from the log's counts). */
import type { Command } from 'commander';
import { readRunSummary, statusLabel, withRunRecord } from '../../inspect/run-summary.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, openCliLog } from '../engine-context.js';
import { EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { instantText } from '../../env/instant-text.js';
import { isOrphaned, runCarrier } from '../../executor/owner.js';
import { importedOpenState, isImported, shownOptions, shownStatusOf } from '../../executor/run-bundle.js';
import { failureText } from '../../log/events.js';
import { pendingPauseText, pendingSuspensions } from '../../executor/run-resume.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>').option('--json', 'print JSON');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const runId = args[0] as string;
    const log = await openCliLog(options.db, { existing: true });
    try {
      const record = await log.getRun(runId);
      if (!record) {
        io.stderr(`reqon: no run ${runId} in this log; list runs with \`reqon runs\`\n`);
        return EXIT_USAGE;
      }
      // Counted by the log, not folded here: a 100k-event run reads only its few summary events.
      const counted = (await readRunSummary(log, runId)).summary;
      const summary = withRunRecord(counted, record);
      const last = counted.lastSeq === 0 ? undefined : (await log.read(runId, { fromSeq: counted.lastSeq, toSeq: counted.lastSeq }))[0];
      const position = last ? { seq: last.seq, type: last.type, stepPath: last.stepPath } : null;
      const carrier = runCarrier(record.status, record.owner, record.leaseExpiresAt, cliEnv().clock.now());
      // Every pause and wait its branches are still on, with the ids `reqon resume --pause` takes.
      const open = record.status === 'suspended' || record.status === 'running' ? await pendingSuspensions(log, record) : { pauses: [], waits: [] };
      // An imported run that had not finished is 'running' under a lease that never runs out, which
      // keeps everything from carrying it on: say where its log ends, and that it is read-only.
      const importedOpen = isImported(record) && record.status === 'running';
      if (options.json === true) {
        const pending = {
          pauses: open.pauses.map((e) => ({ pauseId: e.payload.pauseId, stepPath: e.stepPath, webhookPath: e.payload.webhookPath ?? null, dueAt: e.payload.dueAt ?? null })),
          waits: open.waits.map((e) => ({ waitId: e.payload.waitId, path: e.payload.path, stepPath: e.stepPath, expiresAt: e.payload.expiresAt })),
        };
        // An imported run is what its log says it is (probe 106 K1: "running", which a script polls
        // for ever), marked read-only; one stopped before its end stays 'running', as the row does.
        const imported = isImported(record) ? { imported: true, status: shownStatusOf(record, position?.type) } : {};
        // `waitingOn` in the words `run`, `runs` and `resume --json` use (`pause:ID`, `wait:/path`),
        // so a script can compare them (probe 106 K10); the studio's words (`timer`, `webhook:/path`)
        // beside it, as `waitingOnText`.
        const waiting = { waitingOn: record.status === 'suspended' ? record.waitingOn : null, waitingOnText: summary.waitingOn };
        io.stdout(`${JSON.stringify({ ...summary, ...waiting, owner: record.owner, leaseExpiresAt: record.leaseExpiresAt, orphaned: isOrphaned(record.status, record.owner), position, options: shownOptions(record.options), pending, ...imported })}\n`);
        return EXIT_OK;
      }
      const status = importedOpen
        ? `${importedOpenState(position?.type)} (imported from a bundle: read-only)`
        : `${statusLabel(summary)}${summary.error ? `: ${summary.error}` : ''}`;
      const lines = [
        `run       ${summary.runId}`,
        `mission   ${summary.mission} (${record.missionFiles.entry})`,
        `status    ${status}`,
        `started   ${instantText(summary.startedAt)}  (${summary.durationMs} ms)`,
        `progress  ${summary.steps} steps, ${summary.effects} effects, ${summary.resumes} resumes (${summary.crashesSurvived} after a crash)`,
        `position  seq ${position?.seq ?? 0}${position ? ` ${position.type} ${position.stepPath}` : ''}`,
      ];
      const first = summary.firstFailure;
      if (first && summary.status !== 'failed') {
        lines.push(`failure   ${first.stepPath} (seq ${first.seq}): ${failureText(first)}` + (summary.failures > 1 ? ` (first of ${summary.failures})` : ''));
      }
      if (summary.waitingOn) {
        lines.push(`waiting   on ${summary.waitingOn}` + (summary.wakeAt ? ` until ${instantText(summary.wakeAt)}` : ''));
      }
      for (const e of open.pauses) lines.push(`pause     ${pendingPauseText(e)}`);
      for (const e of open.waits) lines.push(`wait      ${e.payload.path} at ${e.stepPath} (until ${instantText(e.payload.expiresAt)})`);
      if (record.status === 'suspended' && !importedOpen) {
        // A bare --payload goes to what the run waits on: a pause only when that is the one; any
        // other pause is named (helper 88: a lone pause beside the wait the run waits on got the
        // approval meant for it delivered to the wait).
        const waitsOnPause = open.pauses.length === 1 && record.waitingOn === `pause:${open.pauses[0]!.payload.pauseId}`;
        if (waitsOnPause) lines.push(`resume    \`reqon resume ${runId} --payload JSON\``);
        else if (open.pauses.length > 0) lines.push(`resume    \`reqon resume ${runId} --pause ID --payload JSON\` (ID: ${open.pauses.length === 1 ? open.pauses[0]!.payload.pauseId : 'one of the pauses above'})`);
        if (record.waitingOn?.startsWith('wait:')) lines.push(`deliver   \`reqon resume ${runId} --payload JSON\` delivers to the wait on ${record.waitingOn.slice('wait:'.length)} (or a delivery there at \`reqon worker --listen PORT\`)`);
        // Another branch's wait: no `resume --payload` reaches it (that goes to what the run waits
        // on), a delivery to its path at a listening worker does.
        for (const path of new Set(open.waits.map((e) => e.payload.path))) {
          if (record.waitingOn !== `wait:${path}`) lines.push(`deliver   a delivery to ${path} at \`reqon worker --listen PORT\` completes the wait there (\`reqon resume --payload\` goes to what the run waits on)`);
        }
      }
      const takeOver = `\`reqon resume ${runId}\` or a worker carries it on`;
      if (importedOpen) lines.push(`owner     ${record.owner}: nothing continues it; \`reqon fork ${runId} --at SEQ\` starts a new run from its log`);
      else if (carrier === 'none') lines.push(`owner     none: no process is running it; ${takeOver}`);
      else if (carrier === 'gone') lines.push(`owner     ${record.owner} — that process is gone; ${takeOver}`);
      else if (carrier === 'lapsed') lines.push(`owner     ${record.owner} (its lease ran out at ${instantText(record.leaseExpiresAt ?? 0)}: the owner stopped renewing it; a worker takes it over)`);
      else if (record.owner) lines.push(`owner     ${record.owner} (lease until ${instantText(record.leaseExpiresAt ?? 0)})`);
      io.stdout(`${lines.join('\n')}\n`);
      return EXIT_OK;
    } finally {
      await log.close();
    }
  },
};
