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
import { isUtf8 } from 'node:buffer';
import * as path from 'node:path';
import type { ActionDecl, MissionDecl, Program } from './ast.js';
import { checkMission } from './check.js';
import type { Diagnostic } from './diagnostics.js';
import { DiagnosticBag } from './diagnostics.js';
import { MissionLoadError } from './mission-load-error.js';
import type { MissionUnit, SourceFile } from './mission-unit.js';
import { parseProgram } from './parser.js';
import { spanOf } from './ast.js';
import { LineIndex } from './line-index.js';

export type { MissionUnit, SourceFile } from './mission-unit.js';
export { MissionLoadError } from './mission-load-error.js';

export interface LoadResult {
  unit?: MissionUnit;
  diagnostics: Diagnostic[];
}


export const ROOT_NAMES = ['mission.vague', 'mission.reqon'] as const;

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
export function loadMissionFromFiles(files: readonly SourceFile[], dir: string, folder = files.length > 1, unread: readonly string[] = []): LoadResult {
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
  if (unread.length > 0) {
    const at = first?.name ?? { start: 0, end: 0 };
    const ext = path.extname(files[0]!.path);
    for (const name of unread) {
      const bag = new DiagnosticBag(root.file); // one per file: a bag keeps one finding per offset
      const nested = name.includes('/');
      bag.error(
        'E3052',
        at,
        `${name} is not read: a folder mission reads the ${ext} files beside ${path.basename(files[0]!.path)}${nested ? ', not subfolders' : ''}`,
        nested ? `move it up beside ${path.basename(files[0]!.path)}${path.extname(name) === ext ? '' : ` as ${path.basename(name, path.extname(name))}${ext}`}` : `rename it ${path.basename(name, path.extname(name))}${ext} to make it part of the mission`,
      );
      fileDiagnostics.push(...bag.items);
    }
  }
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
  return loadMissionFromFiles(files, dir, true, unreadMissionFiles(dir, entries, ext, isFile));
}

/**
 * Files of a mission folder that look like parts of it but are not read (as upstream's loader
 * does not read them): the other mission extension beside the root, and mission files in a
 * subfolder (upstream's docs show `actions/fetch.reqon`). Named, so they are not lost in silence.
 */
function unreadMissionFiles(dir: string, entries: readonly fs.Dirent[], ext: string, isFile: (e: fs.Dirent) => boolean): string[] {
  const otherExtensions = new Set(ROOT_NAMES.map((n) => path.extname(n)).filter((e) => e !== ext));
  const unread: string[] = [];
  for (const entry of entries) {
    if (otherExtensions.has(path.extname(entry.name)) && isFile(entry)) unread.push(entry.name);
    if (!entry.isDirectory()) continue;
    let inner: string[];
    try {
      inner = fs.readdirSync(path.join(dir, entry.name));
    } catch {
      continue;
    }
    for (const name of inner.sort()) if (ROOT_NAMES.some((n) => path.extname(n) === path.extname(name))) unread.push(`${entry.name}/${name}`);
  }
  return unread.sort();
}

function readText(file: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new MissionLoadError(`Cannot read mission "${file}": ${describeFsError(e)}`, file);
  }
  return decodeMissionText(bytes, file);
}

/**
 * A mission file's text, which is UTF-8 (a UTF-8 byte-order mark is allowed). Read leniently, a
 * Latin-1 `get "/café"` checked clean and sent `/caf%EF%BF%BD`, and a UTF-16 file was reported as
 * "unexpected characters": either is said as what it is, with where, and nothing runs.
 */
export function decodeMissionText(bytes: Uint8Array, file: string): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new MissionLoadError(`${file}: the file is UTF-16 (it starts with a UTF-16 byte-order mark); missions are read as UTF-8 — save it as UTF-8`, file);
  }
  // Node's own check first (native, fast): the byte-by-byte scan runs only to say where it fails.
  const bad = isUtf8(bytes) ? -1 : firstInvalidUtf8(bytes);
  if (bad >= 0) {
    const before = Buffer.from(bytes.subarray(0, bad)).toString('utf8');
    const { line, column } = new LineIndex(before).position(before.length);
    throw new MissionLoadError(
      `${file}:${line}:${column}: the file is not valid UTF-8 (byte 0x${bytes[bad]!.toString(16).toUpperCase().padStart(2, '0')} here); missions are read as UTF-8 — save it as UTF-8 (a Latin-1 or Windows-1252 file needs converting, e.g. iconv -f latin1 -t utf-8)`,
      file,
    );
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence, or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // Lead byte: the sequence length and the range its second byte must fall in (no overlongs, no surrogates, ≤ U+10FFFF).
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k < n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n;
  }
  return -1;
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

/**
 * The missions a path names: a mission file or a folder mission (its mission.vague or
 * mission.reqon beside its action files) alone, or, for a folder of missions (`missions/`, as
 * `reqon check` and `reqon worker` take it), each `.vague`/`.reqon` file in it and each folder
 * mission directly under it, sorted. A folder with none is refused (MissionLoadError).
 */
export function missionPaths(at: string): string[] {
  const isDir = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  const isFolderMission = (p: string) => ROOT_NAMES.some((root) => fs.existsSync(path.join(p, root)));
  if (!isDir(at) || isFolderMission(at)) return [at];
  const found = fs
    .readdirSync(at, { withFileTypes: true })
    .filter((e) => (!e.isDirectory() && /\.(vague|reqon)$/.test(e.name)) || (isDir(path.join(at, e.name)) && isFolderMission(path.join(at, e.name))))
    .map((e) => path.join(at, e.name))
    .sort();
  if (found.length === 0) {
    throw new MissionLoadError(`${at}: no missions in this folder (no .vague or .reqon file, no folder mission with a mission.vague); give a mission file or a folder of them`, at);
  }
  return found;
}
