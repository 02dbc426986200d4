/**
 * The `reqon` program: parses the arguments and runs one command. Importing it runs the CLI; the
 * bin (`main.ts`) does that, either from the one-file bundle of this program or from the
 * compiled modules (cli-bundle.ts says which).
 *
 * Commands are listed once in COMMANDS; each lives in its own module under `commands/` and only
 * the invoked one is imported, so `reqon check` starts without loading SQLite or HTTP code. Every
 * command takes `--db PATH`. Exit codes follow ARCHITECTURE.md (exit-codes.ts); expected failures
 * (bad usage, unreadable paths) print one line, never a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { CliError } from './cli-error.js';
import { hostId } from '../executor/owner.js';
import { terminalSafe } from './terminal-text.js';
import type { CliIo, CommandModule } from './command-module.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type ExitCode } from './exit-codes.js';
import { MissionLoadError } from '../lang/mission-load-error.js';
import { isLogFailure, logUnreachable, UnreadableEventError } from '../log/errors.js';
import { versionLine } from './version.js';

interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<CommandModule>;
  /**
   * Its work is more than what it prints (a run, a worker, a prune): when its stdout goes away
   * (`reqon run m.vague | head -1` takes the run id and closes the pipe) it carries on without it.
   */
  worksWithoutStdout?: true;
}

/** One line per command; add a command by adding its module and one entry here. */
const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'check',
    summary: 'parse and statically check missions (files or folders)',
    load: async () => (await import('./commands/check.js')).command,
  },
  {
    name: 'run',
    worksWithoutStdout: true,
    summary: 'start a new run of a mission',
    load: async () => (await import('./commands/run.js')).command,
  },
  {
    name: 'resume',
    worksWithoutStdout: true,
    summary: 'continue a run: after a crash, or resume its pause (with a payload)',
    load: async () => (await import('./commands/resume.js')).command,
  },
  {
    name: 'fork',
    worksWithoutStdout: true,
    summary: "start a new run from another run's log up to a seq (its prefix replayed), then live",
    load: async () => (await import('./commands/fork.js')).command,
  },
  {
    name: 'export',
    summary: 'one run as a bundle (mission, options without secrets, events): reqon export ID > run.reqonrun',
    load: async () => (await import('./commands/export.js')).command,
  },
  {
    name: 'import',
    worksWithoutStdout: true,
    summary: 'a run bundle into this log, read-only (every view and verify work on it)',
    load: async () => (await import('./commands/import.js')).command,
  },
  {
    name: 'runs',
    summary: 'list runs',
    load: async () => (await import('./commands/runs.js')).command,
  },
  {
    name: 'show',
    summary: "one run's status and position",
    load: async () => (await import('./commands/show.js')).command,
  },
  {
    name: 'events',
    summary: "a run's log (NDJSON with --json)",
    load: async () => (await import('./commands/events.js')).command,
  },
  {
    name: 'store',
    summary: "a store's records at the end of a run or at a seq",
    load: async () => (await import('./commands/store.js')).command,
  },
  {
    name: 'worker',
    worksWithoutStdout: true,
    summary: 'wake due timers, take over abandoned runs, serve webhooks',
    load: async () => (await import('./commands/worker.js')).command,
  },
  {
    name: 'schedules',
    summary: 'the schedules workers registered on this log; `reqon schedules remove MISSION` stops one',
    load: async () => (await import('./commands/schedules.js')).command,
  },
  {
    name: 'verify',
    summary: 'replay a run against its log without effects and report any divergence',
    load: async () => (await import('./commands/verify.js')).command,
  },
  {
    name: 'prune',
    worksWithoutStdout: true,
    summary: 'delete whole finished runs older than a duration (never one that can resume): reqon prune --completed-before 30d',
    load: async () => (await import('./commands/prune.js')).command,
  },
  {
    name: 'log',
    worksWithoutStdout: true,
    summary: 'copy a whole log to another database (reqon log copy --from FILE --to postgres://…), verified',
    load: async () => (await import('./commands/log.js')).command,
  },
  { name: 'studio', worksWithoutStdout: true, summary: 'open the studio (Electron, or the browser build on 127.0.0.1)', load: async () => (await import('./commands/studio.js')).command },
];

const DB_HELP =
  'the event-log database: a SQLite file, or postgres://USER@HOST:PORT/DB for a log shared by many workers ' +
  '(default: $REQON_DB, else .reqon/reqon.db under the working directory; commands that keep no log ignore it)';

/** The command the arguments name (`reqon help X` names X), or undefined. */
function invokedName(argv: readonly string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const program = new Command('reqon')
    .description('Reqon: durable execution for API missions')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showSuggestionAfterError(true)
    .version(versionLine(), '-V, --version', 'print the version and the log format this engine writes');
  const invoked = invokedName(argv);
  let exitCode: ExitCode = EXIT_OK;
  for (const entry of COMMANDS) {
    const cmd = program.command(entry.name).description(entry.summary).option('--db <path>', DB_HELP);
    if (entry.name !== invoked) continue;
    const mod = await entry.load();
    mod.configure(cmd);
    cmd.action(async (...params: unknown[]) => {
      const self = params[params.length - 1] as Command;
      refuseFlagAsValue(self);
      checkHostId();
      exitCode = await mod.run(self.processedArgs, self.opts(), io);
    });
  }
  if (argv.length === 0) {
    io.stderr(program.helpInformation());
    return EXIT_USAGE;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander's `help` command takes its exit code from process.exitCode, which stays a
      // failure until a command settles (below): help asked for a known command is a success.
      const helpAsked = e.code === 'commander.help' && (invoked === undefined || COMMANDS.some((c) => c.name === invoked));
      return e.exitCode === 0 || helpAsked ? EXIT_OK : EXIT_USAGE;
    }
    throw e;
  }
  return exitCode;
}

/**
 * An option whose value is missing takes the next word as its value, flag or not: `--db --json`
 * opened a log file named `--json` and printed no JSON. A value that is one of the command's own
 * flags (`--json`, `--mission=x`) is that mistake, refused as a usage error (a file of that
 * name is still reachable as `./--json`).
 */
function refuseFlagAsValue(cmd: Command): void {
  const flags = new Set(cmd.options.map((o) => o.long).filter((f): f is string => f !== undefined));
  for (const option of cmd.options) {
    if ((!option.required && !option.optional) || cmd.getOptionValueSource(option.attributeName()) !== 'cli') continue;
    const given: unknown = cmd.getOptionValue(option.attributeName());
    // Repeatable options collect into an array or (NAME=VALUE pairs) an object.
    const values = Array.isArray(given) ? given : typeof given === 'object' && given !== null ? Object.values(given) : [given];
    for (const value of values) {
      if (typeof value === 'string' && value.startsWith('--') && flags.has(value.split('=')[0]!)) {
        throw new CliError(`${option.long} needs a value, but the next word is the option ${value}`);
      }
    }
  }
}

/**
 * `$REQON_HOST_ID` names this machine in every run owner: a bad one is a usage error said before
 * the command does anything (it surfaced as an internal error from deep inside a run or a worker,
 * exit 1, after the worker had waited on the log for seconds).
 */
function checkHostId(): void {
  try {
    hostId();
  } catch (e) {
    throw new CliError(e instanceof Error ? e.message : String(e));
  }
}

function reportFatal(e: unknown, io: CliIo): ExitCode {
  if (e instanceof CliError) {
    io.stderr(`reqon: ${e.message}\n`);
    return e.exitCode;
  }
  if (e instanceof MissionLoadError) {
    io.stderr(`reqon: ${e.message}\n`);
    return EXIT_USAGE;
  }
  if (e instanceof UnreadableEventError) {
    io.stderr(`reqon: ${e.message}\n`);
    return EXIT_FAILED;
  }
  // The run is gone (a prune took it while its pages were read): its id names no run now, as for
  // a run id the log does not hold; what was printed before this line is cut.
  if (e instanceof Error && e.name === 'RunPrunedWhileReadError') {
    io.stderr(`reqon: ${e.message}\n`);
    return EXIT_USAGE;
  }
  if (isLogFailure(e)) {
    // The database went away mid-command (a restart, a network cut), or failed (a full disk, a
    // statement or lock timeout its administrator set): not our bug, and nothing was lost — what
    // was not committed was never acknowledged, and a run stays resumable.
    const reason = e instanceof Error ? e.message : String(e);
    io.stderr(
      `reqon: ${logUnreachable(e) ? 'lost the log database' : 'the log database failed'} mid-command: ${reason}\n` +
        'reqon: nothing after the last commit was written; if this command was carrying a run, it stays resumable — ' +
        '`reqon resume` with its id (or a worker, once its lease expires) carries it on when the database is back\n',
    );
    return EXIT_FAILED;
  }
  const detail = e instanceof Error ? (e.stack ?? e.message) : String(e);
  io.stderr(`reqon: internal error (please report it): ${detail}\n`);
  return EXIT_FAILED;
}

/** Set once a stream failed (a closed pipe, a full disk): what is left for it is dropped. */
const lost = { stdout: false, stderr: false };

const processIo: CliIo = {
  stdout: (text) => {
    if (!lost.stdout) process.stdout.write(process.stdout.isTTY ? terminalSafe(text) : text);
  },
  stderr: (text) => {
    if (!lost.stderr) process.stderr.write(process.stderr.isTTY ? terminalSafe(text) : text);
  },
};

// Exit 0 means the command finished and said so. Until it has, the process would exit with a
// failure: a command whose work was left with nothing pending (a lost callback) cannot pass for
// a success, and says that it ended without an outcome.
let settled = false;
process.exitCode = EXIT_FAILED;
process.once('beforeExit', () => {
  if (!settled) processIo.stderr('reqon: internal error (please report it): the command stopped before reaching an outcome\n');
});

// `reqon … | head` closes the pipe early: that is the reader's choice, not a crash to report. A
// command that only prints stops there (cut short, it did not finish, so it does not exit 0); one
// whose work goes beyond its output carries on without it. Any other failure to write (a full
// disk: ENOSPC) is said in one line on stderr, never as a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (lost.stdout) return;
  lost.stdout = true;
  if (e.code !== 'EPIPE') processIo.stderr(`reqon: cannot write to stdout (${e.code ?? e.message}); the rest of the output is dropped\n`);
  // Output that could not be written is a failure of a command that only prints, even one that
  // had settled (its last write failed after it); a closed pipe keeps the code it has.
  // (A run cut short here was left half done, and exited 1 though nothing failed: one whose work
  // goes beyond its output carries on, and exits as that work ended.)
  const invoked = invokedName(process.argv.slice(2));
  if (!COMMANDS.some((c) => c.name === invoked && c.worksWithoutStdout)) process.exit(e.code === 'EPIPE' ? process.exitCode : EXIT_FAILED);
});
// Progress and messages have nowhere to go: the command carries on without them.
process.stderr.on('error', () => {
  lost.stderr = true;
});

main(process.argv.slice(2), processIo).then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (e: unknown) => {
    settled = true;
    process.exitCode = reportFatal(e, processIo);
  },
);
