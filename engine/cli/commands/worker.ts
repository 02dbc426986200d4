/**
 * `reqon worker [MISSION…] [--once] [--listen PORT]` — wake due timers, take over runs whose owner
 * died (lease expired), fire schedules, and serve webhooks on 127.0.0.1:PORT. Missions given here
 * register their `schedule:` in the log (with `--source`/`--env` for the runs it starts); every
 * worker on the database then fires them. `--once` stops when nothing is due and nothing is
 * running; of a schedule it fires only what was due when it started (one due every second would
 * otherwise come due again during each run, and the pass never end). A log database that cannot
 * be reached yet is waited for (`--once`: 5 looks, then exit 1). A `--once` pass exits 1 when a run
 * it carried failed or could not be carried on, naming them; 12 when it was stopped with runs it
 * carried released unfinished; else 0. SIGTERM/SIGINT: finish each run's current step, release,
 * exit 0 (a `--once` pass that released a run: 12).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { defaultOwner, missionHash, modelFor } from '../../executor/run-mission.js';
import { MissionInvalidError } from '../../executor/mission-cache.js';
import { missionPaths } from '../../lang/loader.js';
import { MissionLoadError } from '../../lang/mission-load-error.js';
import type { MissionFiles, RunOptions } from '../../log/log.js';
import { describeSchedule, registerSchedule, ScheduleError } from '../../worker/schedules.js';
import {
  DEFAULT_INBOX_MAX_AGE_MS,
  DEFAULT_INBOX_MAX_PER_PATH,
  startWebhookServer,
  WebhookConfigError,
  type WebhookServer,
} from '../../worker/webhook-server.js';
import { Worker } from '../../worker/worker.js';
import type { EventLog } from '../../log/log.js';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { checkAuthFile, checkSourceOverrides, cliEnv, collectEnv, collectSources, dataDir, openCliLogWaiting, readMissionFiles } from '../engine-context.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { parseHorizon } from '../prune-horizon.js';
import { progressTo, reportRunError } from '../run-output.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('[missions...]', 'mission files, folder missions or folders of missions whose `schedule:` this worker registers')
      .option('--source <NAME=URL>', "for scheduled runs: override a source's base URL (repeatable)", collectSources, {})
      .option('--env <K=V>', 'for scheduled runs: an environment value for env("K") (repeatable)', collectEnv, {})
      .option('--auth <file>', 'for scheduled runs: credentials file (JSON, with $VAR interpolation)')
      .option('--once', 'stop when idle: do what is due now (schedule firings due at the start included), carry those runs until each ends or suspends, then exit')
      .option('--listen <port>', 'serve webhooks on 127.0.0.1:PORT (0 picks a free port)')
      .option('--host <address>', 'address to serve webhooks on (any but loopback needs REQON_WEBHOOK_SECRET)', '127.0.0.1')
      .option('--allow-browsers', 'accept webhooks from web pages (Origin / Sec-Fetch-Site headers, non-JSON content types)')
      .option('--inbox-max <n>', 'unclaimed webhook deliveries kept per path (429 past it)', String(DEFAULT_INBOX_MAX_PER_PATH))
      .option('--inbox-expiry-hours <h>', 'unclaimed webhook deliveries are dropped after this many hours', String(DEFAULT_INBOX_MAX_AGE_MS / 3_600_000))
      .option('--concurrency <n>', 'runs in flight at once', '8')
      .option('--poll <ms>', 'how often to look for due work', '200')
      .option('--lease-ttl <ms>', "how long this worker's hold on a run lasts unrenewed (at least 3000; renewed every third of it): after it, by the log's clock, another worker takes the run over", '30000')
      .option('--idle-poll <ms>', 'on a log that signals new work (PostgreSQL): the longest sleep between looks', '5000')
      .option('--prune-completed-before <duration>', 'also prune runs that completed or failed longer ago than this (30d, 12h, P30D), as reqon prune does, in the background')
      .option('--prune-every <duration>', 'with --prune-completed-before: how often to prune (first at start)', '1h')
      .option('--parent-pid <pid>', 'stop, as on SIGTERM, once process PID (which started this worker: the studio) is gone')
      .option('--quiet', 'no progress on stderr');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const prune = pruneOption(options);
    const env = cliEnv();
    const progress = progressTo(io, options.quiet === true);
    let missions: MissionFiles[];
    try {
      missions = ((args[0] as string[] | undefined) ?? []).flatMap((arg) => scheduledMissions(arg, progress));
    } catch (e) {
      // A mission of a folder that the engine refuses: its diagnostics, as when it is named alone.
      const code = reportRunError(e, io);
      if (code === undefined) throw e;
      return code;
    }
    if (typeof options.auth === 'string') checkAuthFile(resolve(options.auth), env, io, missions);
    const pollMs = positive(options.poll, '--poll');
    // Usage is checked before the log is opened (or created).
    const leaseTtlMs = leaseTtl(options.leaseTtl);
    const concurrency = positive(options.concurrency, '--concurrency');
    const idlePollMs = positive(options.idlePoll, '--idle-poll');
    const once = options.once === true;
    if (options.parentPid !== undefined) stopWithParent(positive(options.parentPid, '--parent-pid'));
    // A worker is a service: a log database not up yet (a restart, a machine booting) is waited
    // for, each look said, with the delay the loop uses when it goes away later. A --once pass
    // gives up as that loop does (exit 1); SIGTERM while waiting stops it (exit 0).
    const stopWaiting = new AbortController();
    const stopWhileWaiting = () => stopWaiting.abort();
    process.once('SIGTERM', stopWhileWaiting);
    process.once('SIGINT', stopWhileWaiting);
    let log: EventLog | undefined;
    try {
      log = await openCliLogWaiting(options.db, {
        progress,
        ...(once ? { maxLooks: ONCE_LOOKS } : {}),
        delayMs: (looks) => Math.min(30_000, pollMs * 2 ** looks),
        sleep: (ms) => env.clock.sleep(ms, stopWaiting.signal).then(() => false, () => true),
      });
    } finally {
      process.off('SIGTERM', stopWhileWaiting);
      process.off('SIGINT', stopWhileWaiting);
    }
    if (log === undefined || stopWaiting.signal.aborted) {
      // Asked to stop while waiting (or while the look that reached it was under way).
      await log?.close();
      progress('stopping: asked to stop while waiting for the log database; no run was taken');
      return EXIT_OK;
    }
    try {
      checkSourceOverrides(missions, options.source as Record<string, string>);
      // A schedule is registered by mission name: two different missions of one name would
      // replace each other, and one would never fire. Refused before either is registered.
      const named = new Map<string, { entry: string; hash: string }>();
      for (const files of missions) {
        const name = modelFor(files).mission.name.name;
        const hash = missionHash(files);
        const other = named.get(name);
        if (other && other.hash !== hash) {
          throw new CliError(`${other.entry} and ${files.entry} both hold mission "${name}": a worker registers a schedule by mission name, so one would replace the other; rename one of them`);
        }
        named.set(name, { entry: files.entry, hash });
      }
      for (const files of missions) {
        // Another worker on this log may have registered another text of this mission (another
        // file, an older version): the last registration wins, so say whose it replaces.
        const before = await log.getSchedule(modelFor(files).mission.name.name);
        const registered = await registerSchedule(
          log,
          files,
          {
            sources: options.source as Record<string, string>,
            env: options.env as Record<string, string>,
            ...(typeof options.auth === 'string' ? { authFile: resolve(options.auth) } : {}),
          },
          env.clock.now(),
        );
        const next = registered.nextFireAt === null ? 'nothing left to fire' : `next ${new Date(registered.nextFireAt).toISOString()}`;
        io.stdout(`schedule ${registered.mission}: ${describeSchedule(registered.spec)}; ${next}\n`);
        if (before !== undefined && before.missionHash !== registered.missionHash) {
          io.stderr(`schedule ${registered.mission}: replaces the one registered from ${before.missionFiles.entry} at ${new Date(before.updatedAt).toISOString()} (another text of mission "${registered.mission}"): its firings now start ${files.entry}\n`);
        }
        // Another mission's schedule registered from this very file: the mission was renamed, and
        // the old name still fires the old text on every worker (helper 91). Said, with the remedy.
        for (const stale of (await log.listSchedules()).filter((s) => s.mission !== registered.mission && s.missionFiles.entry === files.entry)) {
          io.stderr(
            `schedule ${stale.mission}: registered from ${files.entry}, which now holds mission "${registered.mission}" — it still fires its old text on every worker of this log; \`reqon schedules remove ${stale.mission}\` stops it\n`,
          );
        }
        const changed = before === undefined ? [] : changedRunOptions(before.options, registered.options);
        if (changed.length > 0) {
          // Every worker on the log fires it with these now: another worker's firings go to these sources too.
          io.stderr(`schedule ${registered.mission}: replaces the options it was registered with at ${new Date(before!.updatedAt).toISOString()}: ${changed.join('; ')} — every worker on this log now fires it with these\n`);
        }
      }
    } catch (e) {
      await log.close();
      if (e instanceof ScheduleError) throw new CliError(e.message);
      const code = reportRunError(e, io);
      if (code === undefined) throw e;
      return code;
    }
    const failed = new Set<string>();
    const erred = new Set<string>();
    const released = new Set<string>();
    const worker = new Worker({
      log,
      env,
      dataDir: dataDir(),
      owner: defaultOwner(env),
      concurrency,
      pollMs,
      idlePollMs,
      leaseTtlMs,
      progress,
      ...(prune ? { prune } : {}),
      // What a --once pass exits with: 1 if a run it carried failed, or could not be carried on.
      onRunEnd: (result) => {
        erred.delete(result.runId); // tried again in this pass, and it ended
        if (result.status === 'failed') failed.add(result.runId);
      },
      onRunError: (runId) => erred.add(runId),
      onRunReleased: (runId) => released.add(runId),
    });
    let server: WebhookServer | undefined;
    const stop = () => {
      progress('stopping: finishing current steps and releasing runs');
      worker.stop();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    try {
      if (options.listen !== undefined) {
        const port = Number(options.listen);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--listen expects a port number, got "${String(options.listen)}"`);
        server = await startWebhookServer({
          log,
          env,
          worker,
          dataDir: dataDir(),
          host: options.host as string,
          port,
          ...(process.env.REQON_WEBHOOK_SECRET ? { secret: process.env.REQON_WEBHOOK_SECRET } : {}),
          allowBrowsers: options.allowBrowsers === true,
          inbox: {
            maxPerPath: positive(options.inboxMax, '--inbox-max'),
            maxAgeMs: positive(options.inboxExpiryHours, '--inbox-expiry-hours') * 3_600_000,
          },
          progress,
        }).catch((e: unknown) => {
          throw e instanceof WebhookConfigError ? new CliError(e.message) : e;
        });
        io.stdout(`webhooks on ${server.url}\n`);
      }
      await worker.loop(once);
      // A --once pass is a cron job's: its exit code says whether every run it carried ended
      // well (completed or suspended again), as `run` and `resume` say of one run.
      if (once && failed.size + erred.size > 0) {
        const parts = [
          ...(failed.size > 0 ? [`${failed.size} run(s) it carried failed (${[...failed].join(', ')})`] : []),
          ...(erred.size > 0 ? [`${erred.size} could not be carried on (${[...erred].join(', ')})`] : []),
          ...(released.size > 0 ? [`${released.size} released unfinished as it stopped (${[...released].join(', ')})`] : []),
        ];
        // A run that could not be carried on is as it was (its resume refused): the line above says why, not its log.
        io.stderr(`worker --once: ${parts.join('; ')}; ${erred.size > 0 ? 'the lines above say why' : '`reqon show RUN_ID` says why'}\n`);
        return EXIT_FAILED;
      }
      // Stopped (SIGTERM, SIGINT) before the runs it carried ended: the pass did not do its work,
      // whatever became of the rest — not 0, which a cron job reads as "every run ended well".
      if (once && released.size > 0) {
        io.stderr(`worker --once: stopped with ${released.size} run(s) it carried released unfinished (${[...released].join(', ')}); any worker, or \`reqon resume RUN_ID\`, carries them on\n`);
        return EXIT_INTERRUPTED;
      }
      return EXIT_OK;
    } finally {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      await server?.close();
      await log.close();
    }
  },
};

/** Looks at an unreachable log database before a --once pass gives up (as Worker.loop does mid-pass). */
const ONCE_LOOKS = 5;

function positive(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${flag} expects a positive whole number, got "${String(value)}"`);
  return n;
}

/**
 * The shortest `--lease-ttl`: a lease is renewed every third of it, and a live worker whose event
 * loop is held longer than its TTL (a big answer parsed, a loaded machine) loses a run it is
 * carrying on — another worker takes it over and sends its in-flight request again. At 600 ms
 * that happened every time in a test; at 1,000 ms 2 times in 5.
 */
export const MIN_LEASE_TTL_MS = 3_000;

function leaseTtl(value: unknown): number {
  const ms = positive(value, '--lease-ttl');
  if (ms < MIN_LEASE_TTL_MS) {
    throw new CliError(
      `--lease-ttl ${ms} is shorter than ${MIN_LEASE_TTL_MS} ms: the lease is renewed every third of it, and a worker busy for longer (parsing a big answer) would lose a run it is still carrying on, so another worker would send its in-flight request again`,
    );
  }
  return ms;
}

/** `--prune-completed-before` (an age: a worker runs for days, so an instant would soon mean nothing) and `--prune-every`. */
function pruneOption(options: Record<string, unknown>): { olderThanMs: number; everyMs: number } | undefined {
  if (options.pruneCompletedBefore === undefined) return undefined;
  const age = parseHorizon(options.pruneCompletedBefore, '--prune-completed-before');
  if (age.kind !== 'age') throw new CliError('--prune-completed-before: a worker prunes by age; give a duration such as 30d (an instant is for reqon prune)');
  const every = parseHorizon(options.pruneEvery, '--prune-every');
  if (every.kind !== 'age' || every.ms <= 0) throw new CliError(`--prune-every expects a duration longer than 0 such as 1h, got "${String(options.pruneEvery)}"`);
  return { olderThanMs: age.ms, everyMs: every.ms };
}

/**
 * The missions an argument gives the worker to schedule (a mission file, a folder mission, or a
 * folder of missions: loader.ts missionPaths). A mission named alone must have a
 * schedule (registering says so when it has none); from a folder of missions, a file that is no
 * mission (a folder mission's part) or a mission with no `schedule:` is passed over, said in the
 * progress — one such file refused the whole folder.
 */
function scheduledMissions(arg: string, progress: (line: string) => void): MissionFiles[] {
  let paths: string[];
  try {
    paths = missionPaths(arg);
  } catch (error) {
    if (error instanceof MissionLoadError) throw new CliError(error.message);
    throw error;
  }
  if (paths.length === 1 && paths[0] === arg) return [readMissionFiles(arg)];
  const found: MissionFiles[] = [];
  for (const path of paths) {
    const files = readMissionFiles(path);
    let model: ReturnType<typeof modelFor>;
    try {
      model = modelFor(files);
    } catch (error) {
      // A mission with errors is refused as it would be alone; a file with no mission is no mission.
      if (!(error instanceof MissionInvalidError && error.noMission)) throw error;
      progress(`${path}: no mission here (a folder mission's part?): passed over`);
      continue;
    }
    if (model.mission.schedules.length === 0) {
      progress(`${path}: mission "${model.mission.name.name}" has no \`schedule:\`: passed over`);
      continue;
    }
    found.push(files);
  }
  if (found.length === 0) throw new CliError(`${arg}: no mission in this folder has a \`schedule:\`; a worker registers the schedules of the missions it is given`);
  return found;
}

/** How often a worker started with --parent-pid looks for its parent. */
const PARENT_CHECK_MS = 500;

/**
 * What a registration changes in the options a schedule's firings start runs with: the sources'
 * base URLs (shown), the settings (named, never shown: they may be secrets), the auth file.
 */
function changedRunOptions(was: RunOptions, now: RunOptions): string[] {
  const out: string[] = [];
  const sources = new Set([...Object.keys(was.sources), ...Object.keys(now.sources)]);
  for (const name of [...sources].sort()) {
    if (was.sources[name] !== now.sources[name]) out.push(`--source ${name} ${was.sources[name] ?? '(none)'} → ${now.sources[name] ?? '(none)'}`);
  }
  const settings = new Set([...Object.keys(was.env), ...Object.keys(now.env)]);
  const envChanged = [...settings].sort().filter((name) => was.env[name] !== now.env[name]);
  if (envChanged.length > 0) out.push(`--env ${envChanged.join(', ')}`);
  if (was.authFile !== now.authFile) out.push(`--auth ${was.authFile ?? '(none)'} → ${now.authFile ?? '(none)'}`);
  return out;
}

/**
 * A worker its parent started (the studio's) stops as on SIGTERM — finishing its steps, releasing
 * its runs — once that parent is gone: killed with -9, the studio left its worker running on the
 * shared log, reparented, unsupervised, its output going nowhere.
 */
function stopWithParent(parentPid: number): void {
  const gone = () => process.ppid !== parentPid;
  if (gone()) {
    process.kill(process.pid, 'SIGTERM');
    return;
  }
  const timer = setInterval(() => {
    if (!gone()) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_CHECK_MS);
  timer.unref();
}

