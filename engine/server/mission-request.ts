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
 * folder mission keeps them), with the files it read besides (the OpenAPI document of a `source
 * S from "./pets.yaml"`, its attachments) where the mission finds them, relative to its own. The
 * crash lab re-runs the mission its reference run started with, whose action files the entry's
 * text alone lacked (E3036 at once), and whose document the saved text alone lacked (E3057).
 */
export function saveMissionFiles(
  channel: string,
  mission: { entry: string; files: readonly { path: string; text: string }[]; attachments?: readonly { path: string; text: string }[] },
  dir: string,
): string {
  const entry = mission.files.find((f) => f.path === mission.entry) ?? mission.files[0];
  if (entry === undefined) throw new StudioError('bad-request', `${channel}: the run has no mission files to start again`);
  const attachments = mission.attachments ?? [];
  if (mission.files.length === 1 && attachments.length === 0) return saveMissionText(entry.text, dir);
  const names = mission.files.map((f) => path.basename(f.path));
  if (new Set(names).size !== names.length || names.some((n) => n === '' || n === '.' || n === '..' || !MISSION_EXTENSIONS.has(path.extname(n).toLowerCase()))) {
    throw new StudioError('bad-request', `${channel}: the run's mission files (${names.join(', ')}) are not a folder mission's`);
  }
  // Laid out below the folder the mission and its documents share, as they were.
  const entryDir = path.dirname(path.resolve(entry.path));
  const root = commonFolder([entryDir, ...attachments.map((a) => path.dirname(path.resolve(a.path)))]);
  const home = path.relative(root, entryDir);
  const layout: [string, string][] = [
    ...mission.files.map((f, i): [string, string] => [path.join(home, names[i]!), f.text]),
    ...attachments.map((a): [string, string] => [path.relative(root, path.resolve(a.path)), a.text]),
  ];
  for (const [file] of layout) {
    if (file === '' || path.isAbsolute(file) || file.split(path.sep).some((part) => part === '..' || part === '')) {
      throw new StudioError('bad-request', `${channel}: the run's files cannot be laid out to start again (${file || 'an empty path'})`);
    }
  }
  const digest = crypto.createHash('sha256').update(JSON.stringify(layout)).digest('hex').slice(0, 16);
  const folder = path.join(dir, `mission-${digest}`);
  if (!fs.existsSync(folder)) {
    const staging = `${folder}.${process.pid}.tmp`;
    fs.rmSync(staging, { recursive: true, force: true });
    for (const [file, text] of layout) {
      fs.mkdirSync(path.dirname(path.join(staging, file)), { recursive: true });
      fs.writeFileSync(path.join(staging, file), text);
    }
    try {
      fs.renameSync(staging, folder);
    } catch (error) {
      // Another request saved the same mission first: its folder is this one.
      fs.rmSync(staging, { recursive: true, force: true });
      if (!fs.existsSync(folder)) throw error;
    }
  }
  // A folder mission is started by its folder, a one-file mission by its file.
  return mission.files.length > 1 ? path.join(folder, home) : path.join(folder, home, names[0]!);
}

/** The deepest folder holding every one of `folders` (absolute paths). */
function commonFolder(folders: readonly string[]): string {
  let common = folders[0]!;
  for (const folder of folders.slice(1)) {
    while (folder !== common && !folder.startsWith(common.endsWith(path.sep) ? common : `${common}${path.sep}`)) common = path.dirname(common);
  }
  return common;
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
