/**
 * The replay corpus on disk: manifest.json lists every recording — which mission (a copy under
 * missions/), which crash points it died at, the run options it was recorded with — and each
 * recording's full event log is one NDJSON file under logs/ (`reqon events RUN --json`).
 *
 * Written by record.test.ts (UPDATE_CORPUS=1); read by the corpus tests. Frozen entries (logs of
 * an older engine, e.g. log format 1) are never re-recorded: they are what an older engine wrote.
 */
import { missionHash } from '../../../engine/executor/mission-cache.js';
import fs from 'node:fs';
import path from 'node:path';
import type { StoredEvent } from '../../../engine/log/events.js';
import type { MissionFiles, RunOptions, RunStatus } from '../../../engine/log/log.js';
import { REPO } from '../../support/built-engine.js';
import { CORPUS_DIR } from './missions.js';

export const MANIFEST = path.join(CORPUS_DIR, 'manifest.json');

export interface Recording {
  /** `<mission>.<plan>`, e.g. "demo.after-effect-3", also the log's file name. */
  id: string;
  /** The corpus mission id (missions/<mission>/). */
  mission: string;
  /** Repository-relative path of the mission's entry file as the corpus keeps it. */
  entry: string;
  /** The absolute entry path the run recorded (part of the mission hash in its run.started). */
  recordedEntry: string;
  /** Repository-relative path of the NDJSON log. */
  log: string;
  /** The `--crash-at` of the first process, then of each resume that had one ([] = no crash). */
  crashes: string[];
  /** Log format (events.ts LOG_FORMAT) the run recorded in. */
  format: number;
  events: number;
  /** How the run ended. */
  status: RunStatus;
  /** The `reason` of each `run.resumed`, in order (crash, pause, manual …). */
  resumes: string[];
  /** The run's options as recorded (sources and env; the auth file, a temp path, is left out). */
  options: Pick<RunOptions, 'sources' | 'env'>;
  /** Recorded by an older engine: never re-recorded. */
  frozen?: boolean;
  note?: string;
}

export interface Manifest {
  about: string;
  recordings: Recording[];
}

export function readManifest(): Manifest {
  return JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest;
}

export function writeManifest(manifest: Manifest): void {
  fs.writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 1)}\n`);
}

export function parseNdjson(text: string): StoredEvent[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StoredEvent);
}

export interface LoadedRecording {
  recording: Recording;
  events: StoredEvent[];
  /**
   * The mission as the run remembered it: at the path it was recorded at, with the documents
   * beside it it remembered (an OpenAPI spec), as the hash its log names says — a run row whose
   * files do not hash to that is a damaged log (executor/remembered-mission.ts).
   */
  files: MissionFiles;
  text: string;
}

export function loadRecording(recording: Recording): LoadedRecording {
  const stored = path.join(REPO, recording.entry);
  const text = fs.readFileSync(stored, 'utf8');
  const events = parseNdjson(fs.readFileSync(path.join(REPO, recording.log), 'utf8'));
  const entry = recording.recordedEntry;
  const alone: MissionFiles = { entry, files: [{ path: entry, text }] };
  // Runs recorded since runs remembered their documents hash them too.
  const documents = fs
    .readdirSync(path.dirname(stored))
    .filter((name) => !/\.(vague|reqon)$/.test(name))
    .sort()
    .map((name) => ({ path: path.join(path.dirname(entry), name), text: fs.readFileSync(path.join(path.dirname(stored), name), 'utf8') }));
  const recordedHash = (events[0]?.payload as { missionHash?: string } | undefined)?.missionHash;
  const files = documents.length > 0 && missionHash({ ...alone, attachments: documents }) === recordedHash ? { ...alone, attachments: documents } : alone;
  return { recording, events, files, text };
}

/** The same mission files with `text` instead (an edit of the stored mission). */
export function withText(files: MissionFiles, text: string): MissionFiles {
  return { ...files, files: [{ path: files.entry, text }] };
}
