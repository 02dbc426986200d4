/**
 * The studio's channels for forking and sharing runs: `run.fork` (a `reqon fork` child process,
 * like every run the studio starts), `run.export` and `run.import` (run bundles,
 * engine/executor/run-bundle.ts — reading and writing the log only, nothing is executed).
 */
import path from 'node:path';
import { BundleError, exportRunText, importBundle, MAX_BUNDLE_BYTES, parseBundle, type RunBundle } from '../executor/run-bundle.js';
import { firstUnreadableEvent } from '../inspect/readable-events.js';
import type { StoredEvent } from '../log/events.js';
import type { EventLog } from '../log/log.js';
import { isPostgresUrl } from '../log/open-log.js';
import type { CliLauncher, CliProcess } from './cli-process.js';
import { missionFileFor } from './mission-request.js';
import { int, optStr, str, type Fields } from './request-fields.js';
import { StudioError } from './studio-error.js';

export interface RunSharingDeps {
  log: EventLog;
  launcher: CliLauncher;
  /** Where mission text sent by the page is saved. */
  textDir: string;
  /** Starts the CLI with these arguments and tracks the process (pushes, exit). */
  spawn(args: string[]): Promise<CliProcess>;
}

export class RunSharing {
  constructor(private readonly deps: RunSharingDeps) {}

  async fork(channel: string, req: Fields): Promise<{ runId: string }> {
    const runId = str(channel, req, 'runId');
    const atSeq = int(channel, req, 'atSeq', 1);
    const run = await this.deps.log.getRun(runId);
    if (!run) throw new StudioError('not-found', `${channel}: no run ${runId}`);
    if (atSeq > run.lastSeq) throw new StudioError('bad-request', `${channel}: run ${runId} has events 1–${run.lastSeq}; "atSeq" must be one of them`);
    const missionText = optStr(channel, req, 'missionText');
    const args = ['fork', runId, '--at', String(atSeq)];
    if (missionText !== undefined) args.push('--mission', missionFileFor(channel, { missionText }, { roots: [], cwd: this.deps.launcher.cwd, textDir: this.deps.textDir }));
    args.push('--json');
    const proc = await this.deps.spawn(args);
    return { runId: proc.runId };
  }

  async export(channel: string, req: Fields): Promise<{ fileName: string; text: string }> {
    const runId = str(channel, req, 'runId');
    try {
      // One string for the page to save, so a bundle no import would take (nor V8 hold as one
      // string) is refused by name rather than failing as an internal error: `reqon export` streams.
      const pieces: string[] = [];
      let length = 0;
      for await (const piece of exportRunText(this.deps.log, runId)) {
        length += piece.length;
        if (length > MAX_BUNDLE_BYTES) {
          throw new StudioError('bad-request', `${channel}: run ${runId}'s bundle is larger than ${MAX_BUNDLE_BYTES / 1024 / 1024} MB, more than an import takes; \`reqon export ${runId} --out FILE\` writes it`);
        }
        pieces.push(piece);
      }
      return { fileName: `${runId}.reqonrun`, text: pieces.join('') };
    } catch (e) {
      if (e instanceof BundleError) throw new StudioError('not-found', `${channel}: ${e.message}`);
      throw e;
    }
  }

  async import(channel: string, req: Fields): Promise<{ runId: string }> {
    const text = str(channel, req, 'text');
    try {
      const run = await importBundle(this.deps.log, parseReadableBundle(text));
      return { runId: run.runId };
    } catch (e) {
      if (e instanceof BundleError) {
        // A good bundle of a run this log holds: say so and where it is, not that the file is bad.
        if (e.alreadyHere) throw new StudioError('conflict', `${e.message}: open it from the runs list (a bundle is imported once)`);
        throw new StudioError('bad-request', `this file is not a run bundle the studio can open: ${e.message}`);
      }
      throw e;
    }
  }
}

/**
 * Where the studio saves mission text it was given (run.start, forks): beside a SQLite log, or
 * under `cwd`/.reqon for a log on a PostgreSQL server (the run keeps its text in the log either way).
 */
export function forkTextDir(dbPath: string, cwd: string): string {
  return isPostgresUrl(dbPath) ? path.join(cwd, '.reqon', 'studio-missions') : path.join(path.dirname(dbPath), 'studio-missions');
}

/**
 * A bundle's text as a bundle every view can read (`reqon import` and the studio's import): its
 * shape checked by parseBundle, then its events by the studio's folds — one they cannot read is
 * refused as "events[i].payload: …" (a BundleError) rather than imported to break every view of it.
 */
export function parseReadableBundle(text: string): RunBundle {
  const bundle = parseBundle(text);
  const { runId, missionFiles } = bundle.run;
  const found = firstUnreadableEvent(runId, missionFiles, bundle.events.map((e) => ({ ...e, runId }) as StoredEvent));
  if (found !== null) throw new BundleError(`events[${found.index}].payload`, `this ${found.type} (seq ${found.seq}) is not what this engine writes: ${found.message}`);
  return bundle;
}
