/**
 * `reqon check FILE|DIR…` — parse and statically check missions without running them.
 *
 * Besides the static checks, it reads the OpenAPI documents the sources name (http/openapi-check.ts).
 * Diagnostics go to stderr in the one rendered form (format.ts); one summary line per path goes
 * to stdout. Exit 0 when no path has errors (warnings allowed), 1 when some has, 2 when a path
 * cannot be read (the other paths are still checked).
 */
import type { Command } from 'commander';
import type { CliIo, CommandModule } from '../command-module.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { formatDiagnostics, summarize } from '../../lang/format.js';
import { loadMission, missionPaths, MissionLoadError } from '../../lang/loader.js';
import { checkOpenApiDocuments } from '../../http/openapi-check.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('<paths...>', 'mission files (.vague, .reqon), folder missions, or folders of missions (each mission in them)')
      .addHelpText('after', '\nExit status: 0 no errors (warnings allowed), 1 errors found, 2 a path could not be read.');
  },

  async run(args: unknown[], _options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const given = (args[0] as string[] | undefined) ?? [];
    let failed = false;
    let unreadable = false;
    // A folder of missions is each of its missions, as `reqon worker` takes it.
    const paths: string[] = [];
    for (const p of given) {
      try {
        paths.push(...missionPaths(p));
      } catch (e) {
        if (!(e instanceof MissionLoadError)) throw e;
        io.stderr(`reqon check: ${e.message}\n`);
        unreadable = true;
      }
    }
    for (const p of paths) {
      let result;
      try {
        result = loadMission(p);
      } catch (e) {
        if (!(e instanceof MissionLoadError)) throw e;
        io.stderr(`reqon check: ${e.message}\n`);
        unreadable = true;
        continue;
      }
      const texts = new Map((result.unit?.files ?? []).map((f) => [f.path, f.text]));
      const diagnostics = result.unit ? [...result.diagnostics, ...checkOpenApiDocuments(result.unit)] : result.diagnostics;
      const rendered = formatDiagnostics(diagnostics, texts);
      if (rendered) io.stderr(`${rendered}\n`);
      if (diagnostics.some((d) => d.severity === 'error')) failed = true;
      io.stdout(`${p}: ${summarize(diagnostics)}\n`);
    }
    if (unreadable) return EXIT_USAGE;
    return failed ? EXIT_FAILED : EXIT_OK;
  },
};
