/**
 * What a `reqon run` child would refuse as a usage error (exit 2), checked in the studio before
 * anything is spawned, so the page gets a 400 that says what is wrong — never the 500 a child
 * that "exited with code 2 before naming its run" used to be: the mission's own diagnostics
 * (file:line:col), a crash point that is not `POINT[:N]` (with the accepted forms), a `sources`
 * URL that is not an absolute http(s) URL or names a source the mission does not declare, an
 * `env`/`sources` name the command line cannot carry. The messages are the CLI's own, so the
 * page and a terminal say the same. What only the child can tell is still mapped from its exit 2
 * (cli-process.ts, CliRefusedError).
 */
import { CrashSpecError, parseCrashSpec } from '../journal/crash-points.js';
import { MissionLoadError } from '../lang/loader.js';
import type { MissionFiles } from '../log/log.js';
import { MissionInvalidError, modelFor, readMissionFiles } from '../executor/mission-cache.js';
import type { RunArgs } from './cli-process.js';
import { StudioError } from './studio-error.js';

/** A crash point as `--crash-at` takes it (`POINT[:N]` or `random`), else a 400 naming the field. */
export function checkCrashAt(channel: string, crashAt: string | undefined, field = 'crashAt'): void {
  if (crashAt === undefined) return;
  try {
    parseCrashSpec(crashAt, () => 0);
  } catch (error) {
    if (error instanceof CrashSpecError) throw new StudioError('bad-request', `${channel}: "${field}": ${error.message.replace('invalid --crash-at', 'invalid crash point')}`);
    throw error;
  }
}

/** The mission's files, read and checked as `reqon run` reads and checks them; a 400 with its diagnostics otherwise. */
export function checkedMission(channel: string, missionPath: string): MissionFiles {
  let files: MissionFiles;
  try {
    files = readMissionFiles(missionPath);
  } catch (error) {
    if (error instanceof MissionLoadError) throw new StudioError('bad-request', `${channel}: ${error.message}`);
    throw error;
  }
  try {
    modelFor(files);
  } catch (error) {
    if (error instanceof MissionInvalidError) throw new StudioError('bad-request', `${channel}: the mission does not pass its checks:\n${error.rendered}`);
    throw error;
  }
  return files;
}

/**
 * Everything of a run request `reqon run` would refuse before it names a run: the mission, the
 * crash point, each source override (an absolute http(s) URL without credentials, for a source
 * the mission declares — one that matches none would be ignored and the run would go to the
 * mission's own base URL) and each env name. Returns the mission's files.
 */
export function checkRunArgs(channel: string, run: RunArgs): MissionFiles {
  checkCrashAt(channel, run.crashAt);
  for (const name of Object.keys(run.env ?? {})) checkPairName(channel, 'env', name);
  for (const name of Object.keys(run.sources ?? {})) checkPairName(channel, 'sources', name);
  const files = checkedMission(channel, run.missionPath);
  checkSources(channel, files, run.sources ?? {});
  return files;
}

/** `NAME=VALUE` on the child's command line: a name that is empty or holds `=` would be read as another name. */
function checkPairName(channel: string, field: string, name: string): void {
  if (name === '' || name.includes('=') || name.startsWith('-')) {
    throw new StudioError('bad-request', `${channel}: "${field}": ${JSON.stringify(name)} is not a name (it must be non-empty, hold no "=" and not start with "-")`);
  }
}

function checkSources(channel: string, files: MissionFiles, sources: Record<string, string>): void {
  const names = Object.keys(sources);
  if (names.length === 0) return;
  const declared = [...modelFor(files).sources.keys()];
  for (const name of names) {
    const value = sources[name]!;
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      // Not a URL at all: refused below.
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new StudioError('bad-request', `${channel}: "sources.${name}": ${JSON.stringify(value)} is not an absolute http(s) URL; give one such as http://127.0.0.1:8080/api`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new StudioError('bad-request', `${channel}: "sources.${name}": the URL carries a user name or password, which would be stored with the run; give the URL without them`);
    }
    if (!declared.includes(name)) {
      const its = declared.length > 0 ? `its sources: ${declared.join(', ')}` : 'it declares none';
      throw new StudioError('bad-request', `${channel}: "sources.${name}": the mission declares no source named "${name}" (${its})`);
    }
  }
}
