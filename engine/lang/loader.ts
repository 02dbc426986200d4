/**
 * Loads a mission from a file or a folder, parses every file, merges a folder's action files
 * into the mission and runs the static checks (§B.9).
 *
 * A folder mission is `mission.vague` (else `mission.reqon`) plus every other file of the folder
 * with the same extension (subfolders are not read); those files may hold only top-level
 * `action`s, which join the mission's actions. Diagnostics of every file come back sorted by
 * file (root first) and offset; a check finding at an offset where the parser already complained
 * is dropped, and so are the findings a parse error implies (see CASCADES), so one mistake reads
 * as one message.
 *
 * Only an unreadable path throws (MissionLoadError); everything wrong *inside* the files is a
 * diagnostic.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ActionDecl, MissionDecl, Program } from './ast.js';
import { checkMission } from './check.js';
import type { Diagnostic } from './diagnostics.js';
import { DiagnosticBag } from './diagnostics.js';
import { MissionLoadError } from './mission-load-error.js';
import type { MissionUnit, SourceFile } from './mission-unit.js';
import { parseProgram } from './parser.js';
import { spanOf } from './ast.js';

export type { MissionUnit, SourceFile } from './mission-unit.js';
export { MissionLoadError } from './mission-load-error.js';

export interface LoadResult {
  unit?: MissionUnit;
  diagnostics: Diagnostic[];
}


const ROOT_NAMES = ['mission.vague', 'mission.reqon'] as const;

export function loadMission(missionPath: string): LoadResult {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(missionPath);
  } catch (e) {
    throw new MissionLoadError(`Cannot read mission "${missionPath}": ${describeFsError(e)}`, missionPath);
  }
  if (stat.isDirectory()) return loadFolder(missionPath);
  if (!stat.isFile()) {
    throw new MissionLoadError(`Cannot read mission "${missionPath}": not a file or folder`, missionPath);
  }
  const text = readText(missionPath);
  return loadMissionFromFiles([{ path: missionPath, text }], path.dirname(missionPath));
}

export function loadMissionFromText(text: string, file: string): LoadResult {
  return loadMissionFromFiles([{ path: file, text }], path.dirname(file));
}

/** Parse + check in one call: every diagnostic of a single-file mission. */
export function checkSource(text: string, file: string): Diagnostic[] {
  return loadMissionFromText(text, file).diagnostics;
}

/**
 * Builds a mission from files already read: the first is the root, the others are action files
 * (a folder mission). No I/O.
 */
export function loadMissionFromFiles(files: readonly SourceFile[], dir: string, folder = files.length > 1): LoadResult {
  if (files.length === 0) throw new MissionLoadError(`No mission file in "${dir}"`, dir);
  const parsed = files.map((f) => parseProgram(f.text, f.path));
  const root = parsed[0]!.program;
  const parseDiagnostics = parsed.flatMap((p) => p.diagnostics);

  const extra: ActionDecl[] = [];
  const fileDiagnostics: Diagnostic[] = [];
  for (const { program } of parsed.slice(1)) {
    const bag = new DiagnosticBag(program.file);
    for (const item of program.items ?? []) {
      if (!item) continue;
      if (item.kind === 'Action') {
        extra.push(item.file ? item : { ...item, file: program.file });
        continue;
      }
      bag.error(
        'E3031',
        itemSpan(item),
        `Action file ${program.file} may contain only \`action\` declarations, found a ${describeItem(item.kind)}`,
        item.kind === 'Mission' ? `the mission belongs in ${files[0]!.path}` : `move it into the mission in ${files[0]!.path}`,
      );
    }
    fileDiagnostics.push(...bag.items);
  }

  const first = root.items?.find((i): i is MissionDecl => i?.kind === 'Mission');
  const mission = first && extra.length > 0 ? { ...first, actions: [...(first.actions ?? []), ...extra] } : first;
  const unit: MissionUnit = { root, mission, files: [...files], dir, ...(folder ? { folder } : {}) };
  const checkDiagnostics = [...fileDiagnostics, ...checkMission(unit)];
  return { unit, diagnostics: merge(parseDiagnostics, checkDiagnostics, files) };
}

function loadFolder(dir: string): LoadResult {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new MissionLoadError(`Cannot read mission folder "${dir}": ${describeFsError(e)}`, dir);
  }
  const isFile = (e: fs.Dirent) => e.isFile() || (e.isSymbolicLink() && safeIsFile(path.join(dir, e.name)));
  const rootName = ROOT_NAMES.find((n) => entries.some((e) => e.name === n && isFile(e)));
  if (!rootName) {
    throw new MissionLoadError(
      `Cannot read mission folder "${dir}": it has no mission.vague or mission.reqon`,
      dir,
    );
  }
  const ext = path.extname(rootName);
  const others = entries
    .filter((e) => e.name !== rootName && path.extname(e.name) === ext && isFile(e))
    .map((e) => e.name)
    .sort();
  const files = [rootName, ...others].map((name) => {
    const p = path.join(dir, name);
    return { path: p, text: readText(p) };
  });
  return loadMissionFromFiles(files, dir, true);
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new MissionLoadError(`Cannot read mission "${file}": ${describeFsError(e)}`, file);
  }
}

function safeIsFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function describeFsError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a folder';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    default:
      return e instanceof Error ? e.message : String(e);
  }
}

function describeItem(kind: Program['items'][number]['kind']): string {
  switch (kind) {
    case 'Mission':
      return '`mission`';
    case 'Source':
      return '`source`';
    case 'Store':
      return '`store`';
    case 'Schema':
      return '`schema`';
    case 'Transform':
      return '`transform`';
    case 'Action':
      return '`action`';
    case 'Import':
      return '`import`';
    case 'TopLevelLet':
      return '`let`';
  }
}

/** The declared name's span where there is one (a short caret), else the whole item. */
function itemSpan(item: Program['items'][number]): { start: number; end: number } {
  const name = 'name' in item ? item.name : undefined;
  return spanOf(name ?? item);
}

/**
 * "No mission" and "no run pipeline" are what a file looks like when its `mission` or `run` line
 * failed to parse; after a parse error in that file they would only repeat it.
 */
const CASCADES: ReadonlySet<string> = new Set(['E3001', 'E3003']);

/**
 * Parse diagnostics first at each position, check findings at an offset the parser already
 * reported dropped; ordered by file (as loaded), then offset. The sort is stable, so findings at
 * one offset keep their production order.
 */
function merge(parse: Diagnostic[], check: Diagnostic[], files: readonly SourceFile[]): Diagnostic[] {
  const taken = new Set(parse.map((d) => `${d.file}\u0000${d.span.start}`));
  const brokenFiles = new Set(parse.filter((d) => d.severity === 'error').map((d) => d.file));
  const kept = check.filter(
    (d) => !taken.has(`${d.file}\u0000${d.span.start}`) && !(CASCADES.has(d.code) && brokenFiles.has(d.file)),
  );
  const all = [...parse, ...kept];
  const fileOrder = new Map(files.map((f, i) => [f.path, i]));
  return all
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        (fileOrder.get(a.d.file) ?? files.length) - (fileOrder.get(b.d.file) ?? files.length) ||
        a.d.span.start - b.d.span.start ||
        a.i - b.i,
    )
    .map(({ d }) => d);
}
