/**
 * Which mission a studio request may start: its text, or a path inside the folders the user
 * opened the studio on (its mission roots: the working directory, and the demo's folder with
 * `--demo`). The studio runs with the user's rights and a page could be talked into asking for
 * any path, so a path is resolved (symlinks too) and refused unless it lands inside a root and
 * names a mission — a `.vague`/`.reqon` file, or a folder mission's folder. The refusal names the
 * path and the roots and quotes nothing of the file: whatever it holds never reaches the page
 * (a mission's own parse errors, which do quote its lines, are about a mission the user opened).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StudioError } from './studio-error.js';

const MISSION_EXTENSIONS = new Set(['.vague', '.reqon']);

export interface MissionRoots {
  /** Folders whose missions may be started by path (resolved against `cwd`). */
  roots: readonly string[];
  cwd: string;
  /** Where mission text sent by the page is saved (content-addressed). */
  textDir: string;
}

/** The mission file for a request that gives exactly one of `missionPath` and `missionText`. */
export function missionFileFor(channel: string, given: { missionPath?: string; missionText?: string }, where: MissionRoots): string {
  const { missionPath, missionText } = given;
  if ((missionPath === undefined) === (missionText === undefined)) {
    throw new StudioError('bad-request', `${channel}: give exactly one of "missionPath" and "missionText"`);
  }
  if (missionText !== undefined) return saveMissionText(missionText, where.textDir);
  return checkedMissionPath(channel, missionPath!, where);
}

function checkedMissionPath(channel: string, missionPath: string, where: MissionRoots): string {
  if (missionPath.includes('\0')) throw new StudioError('bad-request', `${channel}: "missionPath" holds a NUL byte`);
  const asked = path.resolve(where.cwd, missionPath);
  const roots = where.roots.map((r) => realpathOrNull(path.resolve(where.cwd, r))).filter((r): r is string => r !== null);
  const real = realpathOrNull(asked);
  const inside = real !== null && roots.some((root) => isInsideOrEqual(root, real));
  if (!inside) {
    // Missing and outside look the same from here: the page learns nothing about files outside.
    throw new StudioError(
      'bad-request',
      `${channel}: ${asked} is not a mission inside the folders this studio was opened on (${where.roots.map((r) => path.resolve(where.cwd, r)).join(', ')}); ` +
        'start reqon studio in the mission\'s folder, or send the mission\'s text',
    );
  }
  const stat = fs.statSync(real);
  if (stat.isDirectory() ? !isFolderMission(real) : !(stat.isFile() && MISSION_EXTENSIONS.has(path.extname(real).toLowerCase()))) {
    throw new StudioError('bad-request', `${channel}: ${asked} is not a mission (a .vague or .reqon file, or a folder holding mission.vague)`);
  }
  return real;
}

function isFolderMission(dir: string): boolean {
  return [...MISSION_EXTENSIONS].some((ext) => fs.existsSync(path.join(dir, `mission${ext}`)));
}

/**
 * A recorded mission (a run's files, `reqon`'s MissionFiles) saved where a CLI child can load it,
 * content-addressed: its one file, or a folder mission's folder (its files side by side, as a
 * folder mission keeps them). The crash lab re-runs the mission its reference run started with,
 * whose action files the entry's text alone lacked (E3036 at once).
 */
export function saveMissionFiles(channel: string, mission: { entry: string; files: readonly { path: string; text: string }[] }, dir: string): string {
  const entry = mission.files.find((f) => f.path === mission.entry) ?? mission.files[0];
  if (entry === undefined) throw new StudioError('bad-request', `${channel}: the run has no mission files to start again`);
  if (mission.files.length === 1) return saveMissionText(entry.text, dir);
  const names = mission.files.map((f) => path.basename(f.path));
  if (new Set(names).size !== names.length || names.some((n) => n === '' || n === '.' || n === '..' || !MISSION_EXTENSIONS.has(path.extname(n).toLowerCase()))) {
    throw new StudioError('bad-request', `${channel}: the run's mission files (${names.join(', ')}) are not a folder mission's`);
  }
  const digest = crypto.createHash('sha256').update(JSON.stringify(mission.files.map((f, i) => [names[i], f.text]))).digest('hex').slice(0, 16);
  const folder = path.join(dir, `mission-${digest}`);
  if (!fs.existsSync(folder)) {
    const staging = `${folder}.${process.pid}.tmp`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true });
    mission.files.forEach((f, i) => fs.writeFileSync(path.join(staging, names[i]!), f.text));
    try {
      fs.renameSync(staging, folder);
    } catch (error) {
      // Another request saved the same mission first: its folder is this one.
      fs.rmSync(staging, { recursive: true, force: true });
      if (!fs.existsSync(folder)) throw error;
    }
  }
  return folder;
}

/** Content-addressed, so starting the same text twice reuses one file. */
function saveMissionText(text: string, dir: string): string {
  const digest = crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `mission-${digest}.vague`);
  if (!fs.existsSync(file)) fs.writeFileSync(file, text);
  return file;
}

function isInsideOrEqual(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function realpathOrNull(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}
