/**
 * A run's mission, checked: the mission files a run remembers become a MissionModel once per
 * content. A model is read-only once built, so runs of the same mission share one: a worker
 * starting many runs of a mission parses and checks it once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { specFile } from '../http/openapi.js';
import type { MissionUnit } from '../lang/mission-unit.js';
import { formatDiagnostics } from '../lang/format.js';
import { loadMission, loadMissionFromFiles, MissionLoadError } from '../lang/loader.js';
import type { MissionFiles } from '../log/log.js';
import { MissionModel } from '../steps/mission-model.js';

/** The mission could not be loaded or failed its checks: nothing was started. */
export class MissionInvalidError extends Error {
  constructor(
    readonly rendered: string,
    /** No error, but no mission either: a file of actions only (a folder mission's part). */
    readonly noMission = false,
  ) {
    super(rendered);
    this.name = 'MissionInvalidError';
  }
}

export function missionHash(files: MissionFiles): string {
  const h = createHash('sha256');
  for (const f of files.files) h.update(f.path).update('\u0000').update(f.text).update('\u0000');
  // An attachment is part of what the run runs: another spec is another mission. (None: the hash
  // of a run recorded before attachments existed.)
  for (const f of files.attachments ?? []) h.update('attachment\u0000').update(f.path).update('\u0000').update(f.text).update('\u0000');
  return h.digest('hex');
}

const models = new Map<string, MissionModel>();
const MAX_CACHED_MODELS = 64;

/**
 * The model of the mission that recorded a run's log — to compare an edited mission's
 * declarations with (StoreRuntime.redeclared), to name its stores — or undefined when this engine
 * refuses that mission, and there is nothing to compare or name.
 */
export function recordedModelOf(files: MissionFiles): MissionModel | undefined {
  try {
    return modelFor(files);
  } catch (error) {
    if (error instanceof MissionInvalidError) return undefined;
    throw error;
  }
}

/** Parses and checks a run's mission files; throws MissionInvalidError with rendered diagnostics. */
export function modelFor(files: MissionFiles, hash: string = missionHash(files)): MissionModel {
  const key = `${files.entry}\u0000${hash}`;
  const cached = models.get(key);
  if (cached) return cached;
  const loaded = loadMissionFromFiles(files.files, dirname(files.entry));
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !loaded.unit?.mission) {
    const texts = new Map(files.files.map((f) => [f.path, f.text] as const));
    const shown = formatDiagnostics(errors.length > 0 ? errors : loaded.diagnostics, texts);
    // No error, no mission: a file of actions only (a folder mission's part). Its warning alone
    // read as if the run had been refused for nothing; say why it cannot run.
    throw new MissionInvalidError(
      errors.length > 0 ? shown : `${shown}\n${files.entry}: error: no mission to run here (the file holds no \`mission\`, only what a folder mission's other files use); run the folder that holds its mission.vague`,
      errors.length === 0,
    );
  }
  const model = new MissionModel(loaded.unit, loaded.unit.mission, files.attachments);
  if (models.size >= MAX_CACHED_MODELS) models.delete(models.keys().next().value!);
  models.set(key, model);
  return model;
}

/**
 * A mission's files read from disk (a `.vague`/`.reqon` file, or a folder mission's folder), as a
 * run remembers them. Throws MissionLoadError when they cannot be read.
 */
export function readMissionFiles(missionPath: string): MissionFiles {
  const { unit } = loadMission(resolve(missionPath));
  const files = unit?.files ?? [];
  if (files.length === 0) throw new MissionLoadError(`cannot read mission "${missionPath}"`, missionPath);
  const attachments = specAttachments(unit!);
  return { entry: files[0]!.path, files: files.map((f) => ({ path: f.path, text: f.text })), ...(attachments.length > 0 ? { attachments } : {}) };
}

/** The OpenAPI documents the mission's sources name, read now (one that cannot be read is left out: its run fails where it is used, saying why). */
function specAttachments(unit: MissionUnit): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const source of unit.mission?.sources ?? []) {
    if (!source.spec) continue;
    const file = specFile(source.spec.value, unit.dir);
    if (out.some((a) => a.path === file)) continue;
    try {
      out.push({ path: file, text: readFileSync(file, 'utf8') });
    } catch {
      // Said by the fetch that needs it (loadOpenApi), as before.
    }
  }
  return out;
}

/**
 * An edited mission (`--mission FILE`, the studio's edit or fork text) given with a run: a source
 * whose OpenAPI document could not be read where the edit names it (the file moved since, or the
 * edit was saved elsewhere, as the studio saves its texts) but whose `from "…"` is what the run's
 * own mission declared, takes the document the run remembered. Without it the edit read no
 * document, or another, and "diverged" at the first call though only a comment changed.
 */
export function withRememberedSpecs(edited: MissionFiles, recorded: MissionFiles): MissionFiles {
  const remembered = recorded.attachments ?? [];
  if (remembered.length === 0) return edited;
  let editedModel: MissionModel;
  let recordedModel: MissionModel;
  try {
    editedModel = modelFor(edited);
    recordedModel = modelFor(recorded);
  } catch (error) {
    if (error instanceof MissionInvalidError) return edited; // said where the mission is used
    throw error;
  }
  const attachments = [...(edited.attachments ?? [])];
  for (const [name, source] of editedModel.sources) {
    if (!source.spec) continue;
    const file = specFile(source.spec.value, editedModel.unit.dir);
    if (attachments.some((a) => a.path === file)) continue;
    const was = recordedModel.sources.get(name)?.spec;
    if (was?.value !== source.spec.value) continue;
    const text = remembered.find((a) => a.path === specFile(was.value, recordedModel.unit.dir))?.text;
    if (text !== undefined) attachments.push({ path: file, text });
  }
  return attachments.length === (edited.attachments ?? []).length ? edited : { ...edited, attachments };
}

